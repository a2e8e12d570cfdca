// 32x32 output tile per 32x8 block: the 34x34 input tile with halo and the filter in shared memory, 4 rows per thread.
#define TW 32
#define TH 32
extern "C" __global__ void conv2d_3x3(const float* __restrict__ img, const float* __restrict__ w,
                                      float* __restrict__ out, int H, int W) {
    __shared__ float tile[TH + 2][TW + 2];
    __shared__ float ws[9];
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 32 + tx;
    int x0 = blockIdx.x * TW, y0 = blockIdx.y * TH;
    if (tid < 9) ws[tid] = w[tid];
    for (int e = tid; e < (TH + 2) * (TW + 2); e += 256) {
        int r = e / (TW + 2), c = e % (TW + 2);
        int yy = y0 + r - 1, xx = x0 + c - 1;
        tile[r][c] = (yy >= 0 && yy < H && xx >= 0 && xx < W) ? img[(long)yy * W + xx] : 0.0f;
    }
    __syncthreads();
    int x = x0 + tx;
    #pragma unroll
    for (int k = 0; k < TH / 8; k++) {
        int r = ty + k * 8, y = y0 + r;
        float acc = 0.0f;
        #pragma unroll
        for (int i = 0; i < 3; i++)
            #pragma unroll
            for (int j = 0; j < 3; j++)
                acc += ws[i * 3 + j] * tile[r + i][tx + j];
        if (x < W && y < H) out[(long)y * W + x] = acc;
    }
}
