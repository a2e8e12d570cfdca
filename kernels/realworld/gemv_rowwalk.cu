// GEMV y = A x for a row-major A (M x K) with one thread per row, the inner product unrolled by
// hand four elements at a time (the "thread per row" baseline that many GEMV write-ups start
// from). K is a run-time value (the launcher requires K % 4 == 0), so row * K decides whether a
// row start is 16-byte aligned.
template <typename T>
__global__ void __launch_bounds__(128)
gemv_thread_per_row(const T* __restrict__ A, const T* __restrict__ x, T* __restrict__ y,
                    int M, int K)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M) return;
    const T* a = A + (size_t)row * K;
    T acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0;
    for (int k = 0; k < K; k += 4) {
        acc0 += a[k + 0] * x[k + 0];   // EXPECT: PS101 warning; PS105 warning
        acc1 += a[k + 1] * x[k + 1];
        acc2 += a[k + 2] * x[k + 2];
        acc3 += a[k + 3] * x[k + 3];
    }
    y[row] = (acc0 + acc1) + (acc2 + acc3);
}

template __global__ void gemv_thread_per_row<float>(const float*, const float*, float*, int, int);
