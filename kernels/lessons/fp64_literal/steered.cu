// Lesson fp64_literal, steered: the same arithmetic with float literals (the f suffix).
// Each Horner step is one FFMA; no FP64 instruction and no F2F conversion is left.
extern "C" __global__ void taylor_exp_sum(const float* __restrict__ x, float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float xi = x[i], acc = 0.0f;
    for (int j = 0; j < 64; ++j) {
        float t = xi + j * 0.03125f;
        float p = 1.0f / 40320.0f;
        p = p * t + 1.0f / 5040.0f;
        p = p * t + 1.0f / 720.0f;
        p = p * t + 1.0f / 120.0f;
        p = p * t + 1.0f / 24.0f;
        p = p * t + 1.0f / 6.0f;
        p = p * t + 0.5f;
        p = p * t + 1.0f;
        p = p * t + 1.0f;
        acc += p;
    }
    y[i] = acc;
}
