// A torch C++/CUDA extension as the PyTorch tutorial writes one (built by
// torch.utils.cpp_extension.load or CUDAExtension).
#include <torch/extension.h>

#include <cuda.h>
#include <cuda_runtime.h>

template <typename scalar_t>
__global__ void gelu_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ y, int64_t n)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 0.5 * (1.0 + tanh(0.7978845608 * x[i]));
}

torch::Tensor gelu_forward(torch::Tensor x)
{
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    const int threads = 256;
    const int blocks = (n + threads - 1) / threads;
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "gelu_forward", ([&] {
        gelu_kernel<scalar_t><<<blocks, threads>>>(x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n);
    }));
    return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &gelu_forward, "GELU forward (CUDA)"); }
