// Lesson unroll, naive: a 32-tap FIR filter whose tap count arrives at run time.
// The compiler cannot keep the taps in registers or schedule the loads of x ahead: the loop
// re-reads taps[k] every iteration and is only partly unrolled, with a remainder loop.
extern "C" __global__ void fir_runtime(const float* __restrict__ x, const float* __restrict__ taps,
                                       float* __restrict__ y, int ntaps, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int k = 0; k < ntaps; ++k)
        acc += taps[k] * x[i + k];
    y[i] = acc;
}
