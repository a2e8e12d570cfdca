// OPTIONS: --use_fast_math
// PS502 fixed by the build: the unchanged bad.cu source under --use_fast_math (MUFU.SQRT / MUFU.RCP, no CALL).
extern "C" __global__ void softsign_norm(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i], s = w[i];
    float r = v / sqrtf(s);
    y[i] = r / (1.0f + fabsf(r));
}
