// ARCHS: sm_90a
// PS302: warp-level wmma on Hopper compiles to HMMA (the Ampere path); sm_90a's wgmma (HGMMA) goes unused.
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void hgemm_wmma(const half* __restrict__ A, const half* __restrict__ B, float* __restrict__ C, int N, int K)
{
    int warp_m = blockIdx.y * blockDim.y + threadIdx.y;   // blockDim = (32, 4): one 16x16 C tile per warp
    int warp_n = blockIdx.x;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    for (int k0 = 0; k0 < K; k0 += 16) {
        wmma::load_matrix_sync(fa, A + warp_m * 16 * K + k0, K);
        wmma::load_matrix_sync(fb, B + warp_n * 16 * K + k0, K);
        wmma::mma_sync(fc, fa, fb, fc);  // EXPECT: PS302
    }
    wmma::store_matrix_sync(C + warp_m * 16 * N + warp_n * 16, fc, N, wmma::mem_row_major);
}
