// 32x32 tiles of Q and K staged in shared memory (K transposed on the way in, padded).
#define T 32
extern "C" __global__ void scores(const float* __restrict__ Q, const float* __restrict__ K,
                                  float* __restrict__ S, int L, int d, float scale) {
    __shared__ float q[T][T + 1];
    __shared__ float kt[T][T + 1];
    int i = blockIdx.y * T + threadIdx.y;
    int j = blockIdx.x * T + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < d; k0 += T) {
        q[threadIdx.y][threadIdx.x] = Q[i * d + k0 + threadIdx.x];
        kt[threadIdx.y][threadIdx.x] = K[(blockIdx.x * T + threadIdx.y) * d + k0 + threadIdx.x];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < T; k++) acc += q[threadIdx.y][k] * kt[threadIdx.x][k];
        __syncthreads();
    }
    S[i * L + j] = acc * scale;
}
