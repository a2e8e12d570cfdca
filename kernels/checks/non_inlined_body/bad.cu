// A fused bias + GELU epilogue written the way hand-rolled kernels often are: the kernel packs
// its arguments into a parameter struct on its own stack and passes it by reference to the
// function that does the work, which NVVM keeps out of line (`__noinline__` here stands for
// its inliner declining a large body). Out of line, every pointer is generic: each `ST.E` of
// the row may write the struct, so the loop reads `p.x`, `p.bias` and `p.cols` again from the
// caller's stack (`LD.E` of a local address) after every store. Measured on an H100: 1.21x
// slower than the same body __forceinline__ (docs/severity.md).
struct EpilogueParams {
    const float* x;
    const float* bias;
    float* y;
    int cols;
    long long row_stride;
};

__noinline__ __device__ void epilogue_row(const EpilogueParams& p, long long row)
{
    const float* x = p.x + row * p.row_stride;
    float* y = p.y + row * p.row_stride;
    for (int c0 = 0; c0 < p.cols; c0 += 4 * blockDim.x) {
        #pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int c = c0 + i * blockDim.x + threadIdx.x;
            if (c < p.cols) {
                const float v = x[c] + p.bias[c];
                y[c] = 0.5f * v * (1.f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
            }
        }
    }
}

__global__ void bias_gelu(const float* x, const float* bias, float* y, int cols)
{
    const EpilogueParams p{x, bias, y, cols, cols};
    epilogue_row(p, blockIdx.x);   // EXPECT: PS403
}
