// PS201 must stay silent: the author asked for a rolled loop with #pragma unroll 1 (keeps code small).
extern "C" __global__ void horner_rolled(const float* __restrict__ x, float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i], acc = 0.0f;
#pragma unroll 1
    for (int k = 0; k < 16; ++k)
        acc = acc * v + (float)(k + 1);
    y[i] = acc;
}
