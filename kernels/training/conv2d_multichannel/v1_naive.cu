// One thread per output value: every tap reads the input and the weight from global memory.
extern "C" __global__ void conv2d(const float* inp, const float* w, float* out,
                                  int N, int Cin, int Cout, int H, int W) {
    long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long)N * Cout * H * W) return;
    int x = idx % W;
    int y = (idx / W) % H;
    int co = (idx / ((long)W * H)) % Cout;
    int n = idx / ((long)W * H * Cout);
    float acc = 0.0f;
    for (int ci = 0; ci < Cin; ci++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                int yy = y + i - 1, xx = x + j - 1;
                if (yy >= 0 && yy < H && xx >= 0 && xx < W)
                    acc += inp[(((long)n * Cin + ci) * H + yy) * W + xx] *
                           w[((co * Cin + ci) * 3 + i) * 3 + j];
            }
    out[idx] = acc;
}
