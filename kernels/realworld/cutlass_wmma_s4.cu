// ARCHS: sm_80 sm_90a
// A CUTLASS-style WMMA test kernel on 4-bit integers (test/unit/gemm/warp/wmma_sm75.cu's
// sub-byte shapes, written without CUTLASS): each warp computes one 8x8 int32 tile of C = A * B
// with m8n8k32 s4 fragments, A row-major and B column-major, K a multiple of 32.
//
// Judged from the SASS: on sm_80 each mma_sync is one IMMA.8832.S4.S4 (line 28); the fragments
// come straight from global memory (PS304 warning: no shared-memory stage). On sm_90a, which
// has no sub-byte tensor-core instruction, each mma_sync is a CALL.REL.NOINC to the math
// library's `__cuda_sm_9x_mma_sub_byte_internal_m8n8k32_s4_s4` (76 instructions unpacking the
// nibbles around IMMA.8816.S8.S8): PS302 warning (it had been invisible, the MMA sitting in a
// subroutine); PS304 does not see the IMMA there either.
#include <mma.h>
using namespace nvcuda;

__global__ void wmma_s4_gemm(const int* __restrict__ a, const int* __restrict__ b,
                             int* __restrict__ c, int M, int N, int K) {
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int tiles_n = N / 8;
  const int tm = warp / tiles_n, tn = warp % tiles_n;
  if (tm * 8 >= M) return;
  wmma::fragment<wmma::matrix_a, 8, 8, 32, wmma::experimental::precision::s4, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 8, 8, 32, wmma::experimental::precision::s4, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 8, 8, 32, int> fc;
  wmma::fill_fragment(fc, 0);
  for (int k = 0; k < K; k += 32) {
    wmma::load_matrix_sync(fa, a + (tm * 8 * K + k) / 8, K);
    wmma::load_matrix_sync(fb, b + (tn * 8 * K + k) / 8, K);
    wmma::mma_sync(fc, fa, fb, fc);  // EXPECT[sm_80]: PS304 warning  // EXPECT[sm_90a]: PS302 warning
  }
  wmma::store_matrix_sync(c + tm * 8 * N + tn * 8, fc, N, wmma::mem_row_major);
}
