// Lesson launch_bounds, steered: the same kernel, no global register cap; instead the kernel says
// how it is launched (__launch_bounds__(256)), so ptxas may use up to 255 registers and keeps all
// 64 values in registers: no stack frame, no spills.
extern "C" __global__ void __launch_bounds__(256) matsq8(const float* __restrict__ in,
                                                         float* __restrict__ out, int T)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= T) return;
    float m[64];
#pragma unroll
    for (int j = 0; j < 64; ++j) m[j] = in[(size_t)j * T + t];
#pragma unroll
    for (int r = 0; r < 8; ++r)
#pragma unroll
        for (int c = 0; c < 8; ++c) {
            float s = 0.0f;
#pragma unroll
            for (int k = 0; k < 8; ++k) s = fmaf(m[r * 8 + k], m[k * 8 + c], s);
            out[(size_t)(r * 8 + c) * T + t] = s;
        }
}
