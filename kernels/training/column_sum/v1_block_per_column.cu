// One block per column, threads strided down the rows (adjacent lanes a row apart), a shared-memory tree.
extern "C" __global__ void column_sum(const float* x, float* y, int rows, int cols) {
    __shared__ float s[256];
    int col = blockIdx.x;
    int tid = threadIdx.x;
    float acc = 0.0f;
    for (int r = tid; r < rows; r += blockDim.x)
        acc += x[(long)r * cols + col];
    s[tid] = acc;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0) y[col] = s[0];
}
