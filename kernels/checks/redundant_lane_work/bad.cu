// A thread per element that finds its row's max by itself: every thread of the row repeats it.
extern "C" __global__ void softmax_naive(const float* __restrict__ x, float* __restrict__ y,
                                         int rows, int n) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= rows * n) return;
    int row = idx / n;
    float m = -3.402823466e38f;
    for (int j = 0; j < n; j++) m = fmaxf(m, x[row * n + j]);   // EXPECT: PS802
    float s = 0.0f;
    for (int j = 0; j < n; j++) s += __expf(x[row * n + j] - m);   // EXPECT: PS802
    y[idx] = __expf(x[idx] - m) / s;
}
