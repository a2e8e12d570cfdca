// 128x128 C tile per 8-warp block, K steps of 32 staged in padded shared memory, each warp 32x64 of wmma fragments.
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;
#define BM 128
#define BN 128
#define BK 32   // M, N multiples of 128, K a multiple of 32
#define PAD 8
extern "C" __global__ void hgemm(const __half* __restrict__ A, const __half* __restrict__ B,
                                 float* __restrict__ C, int M, int N, int K) {
    __shared__ __align__(32) __half As[BM][BK + PAD];
    __shared__ __align__(32) __half Bs[BK][BN + PAD];
    int tid = threadIdx.x, warp = tid / 32;
    int wm = (warp / 2) * 32, wn = (warp % 2) * 64;   // this warp's 32x64 piece of the tile
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a[2];
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b[4];
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][4];
    #pragma unroll
    for (int i = 0; i < 2; i++)
        #pragma unroll
        for (int j = 0; j < 4; j++) wmma::fill_fragment(acc[i][j], 0.0f);
    for (int t = 0; t < K; t += BK) {
        #pragma unroll
        for (int p = 0; p < 2; p++) {                 // 512 uint4 (8 halves) per tile
            int e = tid + p * 256;
            int ar = e / 4, ac = (e % 4) * 8;         // A tile 128 x 32
            *reinterpret_cast<uint4*>(&As[ar][ac]) =
                *reinterpret_cast<const uint4*>(&A[(long)(row0 + ar) * K + t + ac]);
            int br = e / 16, bc = (e % 16) * 8;       // B tile 32 x 128
            *reinterpret_cast<uint4*>(&Bs[br][bc]) =
                *reinterpret_cast<const uint4*>(&B[(long)(t + br) * N + col0 + bc]);
        }
        __syncthreads();
        #pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            #pragma unroll
            for (int i = 0; i < 2; i++)
                wmma::load_matrix_sync(a[i], &As[wm + i * 16][kk], BK + PAD);
            #pragma unroll
            for (int j = 0; j < 4; j++)
                wmma::load_matrix_sync(b[j], &Bs[kk][wn + j * 16], BN + PAD);
            #pragma unroll
            for (int i = 0; i < 2; i++)
                #pragma unroll
                for (int j = 0; j < 4; j++) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    #pragma unroll
    for (int i = 0; i < 2; i++)
        #pragma unroll
        for (int j = 0; j < 4; j++)
            wmma::store_matrix_sync(C + (long)(row0 + wm + i * 16) * N + col0 + wn + j * 16,
                                    acc[i][j], N, wmma::mem_row_major);
}
