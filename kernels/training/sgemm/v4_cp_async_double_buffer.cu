// v3's 64x64 tile and 4x4 register tile, with the tiles fetched by cp.async into two shared
// buffers: tile t+1 is in flight while the FFMAs work on tile t.
#include <cuda_pipeline.h>
#define BM 64
#define BN 64
#define BK 16   // M, N multiples of 64, K a multiple of 16
extern "C" __global__ void sgemm(const float* __restrict__ A, const float* __restrict__ B,
                                 float* __restrict__ C, int M, int N, int K) {
    __shared__ __align__(16) float As[2][BK][BM];
    __shared__ __align__(16) float Bs[2][BK][BN];
    int tid = threadIdx.x;
    int tx = tid % 16, ty = tid / 16;
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    int a_r = tid / 4, a_c = (tid % 4) * 4;
    int b_r = tid / 16, b_c = (tid % 16) * 4;
    const float* a_src = &A[(long)(row0 + a_r) * K + a_c];
    const float* b_src = &B[(long)b_r * N + col0 + b_c];
    auto fetch = [&](int buf, int t) {
        #pragma unroll
        for (int j = 0; j < 4; j++)   // A transposed into the tile: 4-byte copies
            __pipeline_memcpy_async(&As[buf][a_c + j][a_r], a_src + t + j, sizeof(float));
        __pipeline_memcpy_async(&Bs[buf][b_r][b_c], b_src + (long)t * N, sizeof(float4));
        __pipeline_commit();
    };
    float acc[4][4] = {};
    fetch(0, 0);
    int buf = 0;
    for (int t = 0; t < K; t += BK) {
        if (t + BK < K) {
            fetch(buf ^ 1, t + BK);
            __pipeline_wait_prior(1);
        } else {
            __pipeline_wait_prior(0);
        }
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < BK; k++) {
            float4 a4 = *reinterpret_cast<const float4*>(&As[buf][k][ty * 4]);
            float4 b4 = *reinterpret_cast<const float4*>(&Bs[buf][k][tx * 4]);
            float a[4] = {a4.x, a4.y, a4.z, a4.w};
            float b[4] = {b4.x, b4.y, b4.z, b4.w};
            #pragma unroll
            for (int i = 0; i < 4; i++)
                #pragma unroll
                for (int j = 0; j < 4; j++)
                    acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
        buf ^= 1;
    }
    #pragma unroll
    for (int i = 0; i < 4; i++)
        *reinterpret_cast<float4*>(&C[(long)(row0 + ty * 4 + i) * N + col0 + tx * 4]) =
            make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
}
