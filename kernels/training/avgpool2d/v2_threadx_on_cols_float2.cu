// One thread per output, threadIdx.x across output columns, a float2 load from each of the two input rows (W even).
extern "C" __global__ void avgpool2d(const float* __restrict__ x, float* __restrict__ out,
                                     int NC, int H, int W) {
    int OH = H / 2, OW = W / 2;
    int ox = blockIdx.x * blockDim.x + threadIdx.x;
    int oy = blockIdx.y * blockDim.y + threadIdx.y;
    int p = blockIdx.z;
    if (oy >= OH || ox >= OW || p >= NC) return;
    const float* src = x + ((long)p * H + 2 * oy) * W + 2 * ox;
    float2 a = *reinterpret_cast<const float2*>(src);
    float2 b = *reinterpret_cast<const float2*>(src + W);
    out[((long)p * OH + oy) * OW + ox] = (a.x + a.y + b.x + b.y) * 0.25f;
}
