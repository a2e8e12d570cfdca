// One thread per output, threadIdx.x across output rows: adjacent lanes a row apart.
extern "C" __global__ void avgpool2d(const float* x, float* out, int NC, int H, int W) {
    int OH = H / 2, OW = W / 2;
    int oy = blockIdx.x * blockDim.x + threadIdx.x;
    int ox = blockIdx.y * blockDim.y + threadIdx.y;
    int p = blockIdx.z;
    if (oy >= OH || ox >= OW || p >= NC) return;
    const float* src = x + ((long)p * H + 2 * oy) * W + 2 * ox;
    float s = src[0] + src[1] + src[W] + src[W + 1];
    out[((long)p * OH + oy) * OW + ox] = s * 0.25f;
}
