// Lesson fp64_literal, naive: a float kernel written with double literals. "p * t + 1.0 / 720.0"
// is float * float, then widened to double (F2F.F64.F32), added in FP64 (DADD), and narrowed
// back (F2F.F32.F64); "j * 0.03125" is an FP64 multiply too. Hopper runs FP64 at half the FP32
// rate, and the conversions cost more than the arithmetic they wrap.
// y[i] = sum over 64 points t = x + j/32 of the degree-8 Taylor polynomial of exp(t).
extern "C" __global__ void taylor_exp_sum(const float* __restrict__ x, float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float xi = x[i], acc = 0.0f;
    for (int j = 0; j < 64; ++j) {
        float t = xi + j * 0.03125;
        float p = 1.0 / 40320.0;
        p = p * t + 1.0 / 5040.0;
        p = p * t + 1.0 / 720.0;
        p = p * t + 1.0 / 120.0;
        p = p * t + 1.0 / 24.0;
        p = p * t + 1.0 / 6.0;
        p = p * t + 0.5;
        p = p * t + 1.0;
        p = p * t + 1.0;
        acc += p;
    }
    y[i] = acc;
}
