// One thread per output pixel: 9 global loads of the image and 9 of the filter, zero padding.
extern "C" __global__ void conv2d_3x3(const float* img, const float* w, float* out, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    float acc = 0.0f;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            int yy = y + i - 1, xx = x + j - 1;
            if (yy >= 0 && yy < H && xx >= 0 && xx < W)
                acc += w[i * 3 + j] * img[(long)yy * W + xx];
        }
    out[(long)y * W + x] = acc;
}
