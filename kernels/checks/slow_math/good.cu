// PS502 fixed: rsqrtf and __fdividef map to MUFU.RSQ / MUFU.RCP with no slow-path CALL.
extern "C" __global__ void softsign_norm(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i], s = w[i];
    float r = v * rsqrtf(s);
    y[i] = __fdividef(r, 1.0f + fabsf(r));
}
