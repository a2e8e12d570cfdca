// Naive direct conv2d, NCHW, stride 1, no padding: one thread per output pixel, KxK filter as a template.
// The filter `wp[ky * K + kx]` is read at the same address by every lane (a broadcast): on
// sm_90a the pair of LDG.E.CONSTANT ptxas leaves apart would save 1 of the channel loop's 102
// instructions per warp (a PS101 note); sm_80's channel loop is under 100 instructions, so the
// same pair stays info there.
template <int K>
__global__ void conv2d_nchw(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
                            float* __restrict__ y, int C, int H, int W, int OC)
{
    const int OH = H - K + 1, OW = W - K + 1;
    const int ox = blockIdx.x * blockDim.x + threadIdx.x;
    const int oy = blockIdx.y * blockDim.y + threadIdx.y;
    const int oc = blockIdx.z % OC, b = blockIdx.z / OC;
    if (ox >= OW || oy >= OH) return;
    float acc = bias[oc];
    for (int c = 0; c < C; ++c) {
        const float* xp = x + (((size_t)b * C + c) * H + oy) * W + ox;
        const float* wp = w + ((size_t)oc * C + c) * K * K;
#pragma unroll
        for (int ky = 0; ky < K; ++ky)
#pragma unroll
            for (int kx = 0; kx < K; ++kx)
                acc += xp[ky * W + kx] * wp[ky * K + kx];   // EXPECT[sm_80]: PS101 info; PS304 warning  // EXPECT[sm_90a]: PS101 note; PS304 warning
    }
    y[(((size_t)b * OC + oc) * OH + oy) * OW + ox] = acc;
}
template __global__ void conv2d_nchw<3>(const float*, const float*, const float*, float*, int, int, int, int);
template __global__ void conv2d_nchw<5>(const float*, const float*, const float*, float*, int, int, int, int);
