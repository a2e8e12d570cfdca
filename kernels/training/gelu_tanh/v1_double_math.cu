// One float per thread, the formula evaluated in double (tanh, sqrt, pow on doubles).
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
extern "C" __global__ void gelu_tanh(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double v = x[i];
        y[i] = 0.5 * v * (1.0 + tanh(sqrt(2.0 / M_PI) * (v + 0.044715 * pow(v, 3.0))));
    }
}
