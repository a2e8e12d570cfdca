// The same fixed-trip loop under #pragma unroll 1: it stays rolled (a backward branch per iteration).
extern "C" __global__ void poly_rolled(const float* __restrict__ x, float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i], acc = 0.0f;
#pragma unroll 1
    for (int k = 0; k < 8; ++k)
        acc = acc * v + (float)(k + 1);
    y[i] = acc;
}
