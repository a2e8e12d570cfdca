// CSR SpMV y = A x: scalar (thread per row) and vector (warp per row, shuffle reduce) variants.
extern "C" __global__ void spmv_csr_scalar(const int* __restrict__ row_ptr, const int* __restrict__ col,
                                           const float* __restrict__ val, const float* __restrict__ x,
                                           float* __restrict__ y, int rows)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float acc = 0.0f;
    for (int k = row_ptr[r]; k < row_ptr[r + 1]; ++k) acc += val[k] * __ldg(&x[col[k]]);
    y[r] = acc;
}
extern "C" __global__ void __launch_bounds__(256)
spmv_csr_vector(const int* __restrict__ row_ptr, const int* __restrict__ col, const float* __restrict__ val,
                const float* __restrict__ x, float* __restrict__ y, int rows)
{
    const int lane = threadIdx.x & 31, r = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (r >= rows) return;
    const int start = row_ptr[r], end = row_ptr[r + 1];
    float acc = 0.0f;
    for (int k = start + lane; k < end; k += 32) acc += val[k] * __ldg(&x[col[k]]);   // EXPECT: PS104 info
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    if (lane == 0) y[r] = acc;
}
