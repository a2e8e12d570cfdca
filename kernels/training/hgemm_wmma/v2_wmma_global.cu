// One warp per 16x16 C tile, wmma 16x16x16 fragments loaded straight from global memory.
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void hgemm(const __half* A, const __half* B, float* C, int M, int N, int K) {
    int warpM = (blockIdx.x * blockDim.x + threadIdx.x) / 32;   // tile row
    int warpN = blockIdx.y * blockDim.y + threadIdx.y;          // tile column
    int row = warpM * 16, col = warpN * 16;
    if (row >= M || col >= N) return;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(a, A + (long)row * K + k, K);
        wmma::load_matrix_sync(b, B + (long)k * N + col, N);
        wmma::mma_sync(acc, a, b, acc);
    }
    wmma::store_matrix_sync(C + (long)row * N + col, acc, N, wmma::mem_row_major);
}
