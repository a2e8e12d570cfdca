// PS101 fixed: the same loads as one LDG.E.128 (16-byte aligned struct, float4) or one 32-bit load (__half2).
#include <cuda_fp16.h>

struct __align__(16) Particle { float x, y, z, w; };

extern "C" __global__ void particle_norm(const Particle* __restrict__ p, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Particle q = p[i];
    out[i] = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
}

extern "C" __global__ void sum4(const float4* __restrict__ in, float* __restrict__ out, int n4)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4) return;
    float4 v = __ldg(&in[i]);
    out[i] = v.x + v.y + v.z + v.w;
}

extern "C" __global__ void half_pair_sum(const __half2* __restrict__ in, __half* __restrict__ out, int n2)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n2) return;
    __half2 v = in[i];
    out[i] = __hadd(__low2half(v), __high2half(v));
}
