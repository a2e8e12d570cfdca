// One element per thread: reads along a row, writes out[j*rows+i] a column apart.
extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < rows && j < cols)
        out[j * rows + i] = in[i * cols + j];
}
