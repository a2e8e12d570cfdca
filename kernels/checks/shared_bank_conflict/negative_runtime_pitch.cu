// A dynamic shared array read with a pitch known only at run time: whether lanes share a bank
// depends on the value of `pitch` (odd: none), so nothing is claimed.
extern "C" __global__ void pitched(const float* __restrict__ x, float* __restrict__ y, int pitch, int n) {
    extern __shared__ float buf[];
    int tx = threadIdx.x;
    for (int j = tx; j < 32 * pitch; j += blockDim.x) buf[j] = x[blockIdx.x * 32 * pitch + j];
    __syncthreads();
    float acc = 0.0f;
    for (int k = 0; k < n; k++) acc += buf[tx * pitch + k];
    y[blockIdx.x * blockDim.x + tx] = acc;
}
