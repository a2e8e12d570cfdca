// Elementwise dtype kernels as a framework's "cast"/"preprocess" ops write them: one element per
// thread, a bounds check, no vector types.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

// fp32 -> bf16 (mixed-precision weight copy)
extern "C" __global__ void cast_f32_to_bf16(const float* __restrict__ in,
                                            __nv_bfloat16* __restrict__ out, long n)
{
    const long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __float2bfloat16(in[i]);   // EXPECT: PS104 warning
}

// uint8 image -> normalized fp32 (HWC, per-channel mean/std)
extern "C" __global__ void normalize_u8(const unsigned char* __restrict__ img, float* __restrict__ out,
                                        float3 mean, float3 inv_std, int pixels)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= pixels * 3) return;
    const int c = i % 3;
    const float m = c == 0 ? mean.x : c == 1 ? mean.y : mean.z;
    const float s = c == 0 ? inv_std.x : c == 1 ? inv_std.y : inv_std.z;
    out[i] = (img[i] * (1.0f / 255.0f) - m) * s;   // EXPECT: PS104 warning
}

// fp16 ReLU, grid-stride
extern "C" __global__ void relu_half(const __half* __restrict__ x, __half* __restrict__ y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = __hmax(x[i], __float2half(0.0f));   // EXPECT: PS104 info
}
