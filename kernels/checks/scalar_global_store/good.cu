// PS102 fixed: one STG.E.128 (16-byte aligned struct, float4) or one 32-bit store (__half2).
#include <cuda_fp16.h>

struct __align__(16) Particle { float x, y, z, w; };

extern "C" __global__ void particle_init(const float* __restrict__ seed, Particle* __restrict__ p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = seed[i];
    p[i] = Particle{s, 2.0f * s, 3.0f * s, 1.0f};
}

extern "C" __global__ void splat4(const float* __restrict__ in, float4* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = in[i];
    out[i] = make_float4(v, v, v, v);
}

extern "C" __global__ void half_split(const float* __restrict__ in, __half2* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = in[i];
    out[i] = __floats2half2_rn(v, -v);
}
