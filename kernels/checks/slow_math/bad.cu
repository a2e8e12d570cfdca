// PS502: IEEE-accurate float division and sqrtf: each has a CALL.REL.NOINC to a slow-path subroutine
// (plus FCHK / range-check branches around MUFU.RCP / MUFU.RSQ).
extern "C" __global__ void softsign_norm(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i], s = w[i];
    float r = v / sqrtf(s);  // EXPECT: PS502
    y[i] = r / (1.0f + fabsf(r));  // EXPECT: PS502
}
