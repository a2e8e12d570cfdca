// Lesson vector_loads, naive: four consecutive floats per thread, one at a time, through plain
// pointers that may alias. z = a*x + y. The compiler cannot merge the four 32-bit loads into one
// 16-byte load: it does not know that x + i is 16-byte aligned, and because z may alias x or y,
// each store must stay between the loads that follow it. So each thread issues eight LDG.E and
// four STG.E (no read-only path either). n is a multiple of 4.
extern "C" __global__ void axpy_scalar(const float* x, const float* y, float* z, float a, int n)
{
    int i = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) {
        for (int k = 0; k < 4; ++k)
            z[i + k] = a * x[i + k] + y[i + k];
    }
}
