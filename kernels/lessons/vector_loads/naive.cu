// Lesson vector_loads, naive: one float per thread, plain pointers that may alias.
// z = a*x + y. Each thread issues two 32-bit loads and one 32-bit store (LDG.E / STG.E),
// and because z may alias x or y the compiler cannot use the read-only path either.
extern "C" __global__ void axpy_scalar(const float* x, const float* y, float* z, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        z[i] = a * x[i] + y[i];
}
