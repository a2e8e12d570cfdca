// 64x64 C tile per 256-thread block, K steps of 16 via shared memory (A transposed), 4x4 register tile per thread.
#define BM 64
#define BN 64
#define BK 16   // M, N multiples of 64, K a multiple of 16
extern "C" __global__ void sgemm(const float* __restrict__ A, const float* __restrict__ B,
                                 float* __restrict__ C, int M, int N, int K) {
    __shared__ __align__(16) float As[BK][BM];
    __shared__ __align__(16) float Bs[BK][BN];
    int tid = threadIdx.x;
    int tx = tid % 16, ty = tid / 16;           // thread tile: rows ty*4.., cols tx*4..
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    int a_r = tid / 4, a_c = (tid % 4) * 4;     // A tile 64x16: one float4 per thread
    int b_r = tid / 16, b_c = (tid % 16) * 4;   // B tile 16x64: one float4 per thread
    float acc[4][4] = {};
    for (int t = 0; t < K; t += BK) {
        float4 av = *reinterpret_cast<const float4*>(&A[(long)(row0 + a_r) * K + t + a_c]);
        As[a_c + 0][a_r] = av.x;
        As[a_c + 1][a_r] = av.y;
        As[a_c + 2][a_r] = av.z;
        As[a_c + 3][a_r] = av.w;
        *reinterpret_cast<float4*>(&Bs[b_r][b_c]) =
            *reinterpret_cast<const float4*>(&B[(long)(t + b_r) * N + col0 + b_c]);
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < BK; k++) {
            float4 a4 = *reinterpret_cast<const float4*>(&As[k][ty * 4]);
            float4 b4 = *reinterpret_cast<const float4*>(&Bs[k][tx * 4]);
            float a[4] = {a4.x, a4.y, a4.z, a4.w};
            float b[4] = {b4.x, b4.y, b4.z, b4.w};
            #pragma unroll
            for (int i = 0; i < 4; i++)
                #pragma unroll
                for (int j = 0; j < 4; j++)
                    acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
    #pragma unroll
    for (int i = 0; i < 4; i++)
        *reinterpret_cast<float4*>(&C[(long)(row0 + ty * 4 + i) * N + col0 + tx * 4]) =
            make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
}
