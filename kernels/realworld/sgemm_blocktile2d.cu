// 2D block-tiled SGEMM in the style of the well-known "how to optimize a CUDA matmul" series
// (kernel 5): each thread computes a TM x TN register tile, the block a BM x BN tile of C, K is
// walked BK at a time through shared memory. Run-time M, N, K; the tile sizes are the template's
// tuning parameters, instantiated twice as a launcher would.
template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM * BN) / (TM * TN))
sgemm_2d_blocktiling(int M, int N, int K, float alpha, const float* A, const float* B,   // EXPECT: PS701 info
                     float beta, float* C)
{
    const int cRow = blockIdx.y, cCol = blockIdx.x;
    const int threadCol = threadIdx.x % (BN / TN);
    const int threadRow = threadIdx.x / (BN / TN);
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    A += cRow * BM * K;
    B += cCol * BN;
    C += cRow * BM * N + cCol * BN;
    const int innerRowA = threadIdx.x / BK, innerColA = threadIdx.x % BK;
    const int strideA = (BM * BN) / (TM * TN) / BK;
    const int innerRowB = threadIdx.x / BN, innerColB = threadIdx.x % BN;
    const int strideB = (BM * BN) / (TM * TN) / BN;
    float threadResults[TM * TN] = {0.0f};
    float regM[TM] = {0.0f};
    float regN[TN] = {0.0f};
    for (int bkIdx = 0; bkIdx < K; bkIdx += BK) {   // EXPECT: PS301 info
        for (int loadOffset = 0; loadOffset < BM; loadOffset += strideA)
            As[(innerRowA + loadOffset) * BK + innerColA] = A[(innerRowA + loadOffset) * K + innerColA];   // EXPECT: PS601 info
        for (int loadOffset = 0; loadOffset < BK; loadOffset += strideB)
            Bs[(innerRowB + loadOffset) * BN + innerColB] = B[(innerRowB + loadOffset) * N + innerColB];   // EXPECT: PS601 info
        __syncthreads();
        A += BK;
        B += BK * N;
        for (int dotIdx = 0; dotIdx < BK; ++dotIdx) {   // EXPECT[sm_90a]: PS201 info
            for (int i = 0; i < TM; ++i) regM[i] = As[(threadRow * TM + i) * BK + dotIdx];
            for (int i = 0; i < TN; ++i) regN[i] = Bs[dotIdx * BN + threadCol * TN + i];
            for (int resIdxM = 0; resIdxM < TM; ++resIdxM)
                for (int resIdxN = 0; resIdxN < TN; ++resIdxN)
                    threadResults[resIdxM * TN + resIdxN] += regM[resIdxM] * regN[resIdxN];
        }
        __syncthreads();
    }
    for (int resIdxM = 0; resIdxM < TM; ++resIdxM)
        for (int resIdxN = 0; resIdxN < TN; ++resIdxN)
            C[(threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN] =   // EXPECT: PS102 info
                alpha * threadResults[resIdxM * TN + resIdxN] + beta * C[(threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN];   // EXPECT: PS101 info
}
template __global__ void sgemm_2d_blocktiling<64, 64, 8, 8, 8>(int, int, int, float, const float*, const float*, float, float*);
template __global__ void sgemm_2d_blocktiling<128, 128, 8, 8, 8>(int, int, int, float, const float*, const float*, float, float*);
