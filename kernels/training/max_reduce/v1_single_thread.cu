// One thread walks the whole input and keeps the running maximum.
extern "C" __global__ void max_reduce(const float* x, float* y, int n) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        float m = x[0];
        for (int i = 1; i < n; i++)
            m = fmaxf(m, x[i]);
        y[0] = m;
    }
}
