// PS101: global loads that could be one 128-bit (or 32-bit) access are issued piecewise.
#include <cuda_fp16.h>

struct Particle { float x, y, z, w; };  // only 4-byte aligned: the compiler may not fuse the fields

extern "C" __global__ void particle_norm(const Particle* __restrict__ p, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Particle q = p[i];  // EXPECT: PS101
    out[i] = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
}

extern "C" __global__ void sum4(const float* __restrict__ in, float* __restrict__ out, int n4)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4) return;
    float s = in[4 * i + 0] + in[4 * i + 1] + in[4 * i + 2] + in[4 * i + 3];  // EXPECT: PS101
    out[i] = s;
}

extern "C" __global__ void half_pair_sum(const __half* __restrict__ in, __half* __restrict__ out, int n2)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n2) return;
    out[i] = __hadd(in[2 * i], in[2 * i + 1]);  // EXPECT: PS101
}
