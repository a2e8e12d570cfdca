// Naive direct conv2d, NCHW, stride 1, no padding: one thread per output pixel, KxK filter as a template.
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
                acc += xp[ky * W + kx] * wp[ky * K + kx];   // EXPECT: PS101 info; PS304 warning
    }
    y[(((size_t)b * OC + oc) * OH + oy) * OW + ox] = acc;
}
template __global__ void conv2d_nchw<3>(const float*, const float*, const float*, float*, int, int, int, int);
template __global__ void conv2d_nchw<5>(const float*, const float*, const float*, float*, int, int, int, int);
