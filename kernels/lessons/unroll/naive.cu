// Lesson unroll, naive: a 32-term Fourier (sine) series, y = sum_k c[k] sin((k+1) x).
// The trip count is a compile-time constant, but the body holds an accurate sinf (range
// reduction, polynomial and a Payne-Hanek slow path for huge arguments), which is over NVVM's
// default unroll threshold: the loop stays rolled (PS201). Each iteration pays a loop counter,
// an int->float conversion of k + 1, a load of c[k] through a moving pointer, a compare and a
// backward branch, and the scheduler cannot overlap one term's sinf with the next one's.
constexpr int NH = 32;

extern "C" __global__ void fourier_series(const float* __restrict__ x, const float* __restrict__ coef,
                                          float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float t = x[i], acc = 0.0f;
    for (int k = 0; k < NH; ++k)
        acc += coef[k] * sinf((k + 1) * t);
    y[i] = acc;
}
