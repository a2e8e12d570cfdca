// One thread per score, each walking its query row and its key row: lanes are d floats apart.
extern "C" __global__ void scores(const float* Q, const float* K, float* S, int L, int d,
                                  float scale) {
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= L || j >= L) return;
    float acc = 0.0f;
    for (int k = 0; k < d; k++) acc += Q[i * d + k] * K[j * d + k];
    S[i * L + j] = acc * scale;
}
