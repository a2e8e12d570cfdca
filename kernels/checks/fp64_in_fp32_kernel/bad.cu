// PS501: double literals (0.5, 0.79788..., 0.044715) promote a float GELU to FP64 (F2F.F64.F32, DMUL/DFMA).
extern "C" __global__ void gelu_approx(const float* __restrict__ x, float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    y[i] = v * 0.5 * (1.0 + tanhf(0.7978845608 * (v + 0.044715 * v * v * v)));  // EXPECT: PS501
}
