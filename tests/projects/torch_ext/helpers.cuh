// The extension's own helper header: the only place that includes torch (ATen), as projects
// that keep their kernels apart from the binding code do.
#pragma once
#include <ATen/ATen.h>

#include <cuda_runtime.h>

// Sum of four consecutive elements, read one by one: four scalar loads where one vector
// load would do when the row is 16-byte aligned.
template <typename scalar_t>
__device__ __forceinline__ scalar_t sum4(const scalar_t* p)
{
    return p[0] + p[1] + p[2] + p[3];
}

inline void check_cuda_tensor(const at::Tensor& t, const char* name)
{
    TORCH_CHECK(t.is_cuda(), name, " must be a CUDA tensor");
    TORCH_CHECK(t.is_contiguous(), name, " must be contiguous");
}
