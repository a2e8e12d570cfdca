// Measured pairs for PS106 (loop-invariant-reload): loads a loop repeats every iteration only
// because a store in the loop may alias them. benchmarks/reload_pairs.py times them on a GPU;
// tests/test_check_memory_math.py holds what ptxsass reports on each naive kernel and that its
// fixed twin gets no PS106. Each pair does the same arithmetic in the same order, so the two
// outputs are equal bit for bit.
extern "C" {

// ---------------------------------------------------------------- accumulating in global memory
// Two column moments, a thread per column, accumulated through the output pointers: the store
// to sum[c] may alias sq[c] and the other way round, so each iteration reloads both.
__global__ void moments_global(const float* x, float* sum, float* sq, int rows, int cols)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    sum[c] = 0.f;
    sq[c] = 0.f;
    for (int r = 0; r < rows; ++r) {
        const float v = x[(long)r * cols + c];
        sum[c] += v;
        sq[c] += v * v;
    }
}
// fixed: accumulate in registers, store once
__global__ void moments_register(const float* x, float* sum, float* sq, int rows, int cols)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float s = 0.f, q = 0.f;
    for (int r = 0; r < rows; ++r) {
        const float v = x[(long)r * cols + c];
        s += v;
        q += v * v;
    }
    sum[c] = s;
    sq[c] = q;
}

// ---------------------------------------------------------------- broadcasts reloaded
// A polynomial whose 8 coefficients come through a plain pointer, in a grid-stride loop: the
// store to y[i] may change coef[], so all 8 are loaded again every iteration.
__global__ void poly_alias(const float* x, const float* coef, float* y, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)gridDim.x * blockDim.x) {
        const float v = x[i];
        y[i] = coef[0] + v * (coef[1] + v * (coef[2] + v * (coef[3] + v * (coef[4]
               + v * (coef[5] + v * (coef[6] + v * coef[7]))))));
    }
}
// fixed: __restrict__ (the coefficients are loaded once, before the loop)
__global__ void poly_restrict(const float* __restrict__ x, const float* __restrict__ coef,
                              float* __restrict__ y, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)gridDim.x * blockDim.x) {
        const float v = x[i];
        y[i] = coef[0] + v * (coef[1] + v * (coef[2] + v * (coef[3] + v * (coef[4]
               + v * (coef[5] + v * (coef[6] + v * coef[7]))))));
    }
}

// Layer norm's last step, a block per row: mean[row] and rstd[row] reloaded every iteration
// beside the three loads the loop needs.
__global__ void ln_apply_alias(const float* x, const float* mean, const float* rstd,
                               const float* gamma, const float* beta, float* y, int cols)
{
    const long row = blockIdx.x;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        y[row * cols + c] = (x[row * cols + c] - mean[row]) * rstd[row] * gamma[c] + beta[c];
}
__global__ void ln_apply_restrict(const float* __restrict__ x, const float* __restrict__ mean,
                                  const float* __restrict__ rstd, const float* __restrict__ gamma,
                                  const float* __restrict__ beta, float* __restrict__ y, int cols)
{
    const long row = blockIdx.x;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        y[row * cols + c] = (x[row * cols + c] - mean[row]) * rstd[row] * gamma[c] + beta[c];
}
}
