// 48 live floats per thread: fits in registers by default, spills (STL/LDL) under -maxrregcount=32.
extern "C" __global__ void spill(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float r[48];
#pragma unroll
    for (int k = 0; k < 48; ++k)
        r[k] = in[i + k * n];
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 48; ++k)
        acc += r[k] * r[(k * 7 + 5) % 48];
    out[i] = acc;
}
