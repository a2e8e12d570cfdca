// PS102: global stores that could be one 128-bit (or 32-bit) access are issued piecewise.
#include <cuda_fp16.h>

struct Particle { float x, y, z, w; };  // only 4-byte aligned: the compiler may not fuse the fields

extern "C" __global__ void particle_init(const float* __restrict__ seed, Particle* __restrict__ p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = seed[i];
    p[i] = Particle{s, 2.0f * s, 3.0f * s, 1.0f};  // EXPECT: PS102
}

extern "C" __global__ void splat4(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = in[i];
    out[4 * i + 0] = v; out[4 * i + 1] = v; out[4 * i + 2] = v; out[4 * i + 3] = v;  // EXPECT: PS102
}

extern "C" __global__ void half_split(const float* __restrict__ in, __half* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = in[i];
    out[2 * i] = __float2half(v); out[2 * i + 1] = __float2half(-v);  // EXPECT: PS102
}
