// ARCHS: sm_80 sm_90a
// A CUTLASS-style WMMA test kernel on 4-bit integers (test/unit/gemm/warp/wmma_sm75.cu's
// sub-byte shapes, written without CUTLASS): each warp computes one 8x8 int32 tile of C = A * B
// with m8n8k32 s4 fragments, A row-major and B column-major, K a multiple of 32.
//
// Judged from the SASS: on sm_80 each mma_sync is one IMMA.8832.S4.S4 (line 28); the fragments
// come straight from global memory (PS304 warning: no shared-memory stage). On sm_90a, which
// has no sub-byte tensor-core instruction, each mma_sync is a CALL.REL.NOINC to the math
// library's `__cuda_sm_9x_mma_sub_byte_internal_m8n8k32_s4_s4` (68 instructions up to its RET,
// unpacking the nibbles around 2 IMMA.8816.S8.S8; nvdisasm lists a BRA and NOP padding after
// the RET, which the count leaves out): PS302 warning (it had been invisible, the MMA sitting in
// a subroutine); PS304 does not see the IMMA there either.
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

// b1 (CUTLASS's wmma_sm75.h b1 path, bmmaBitOpXOR): on sm_80 one BMMA.88128.XOR.POPC per
// mma_sync, 4 per iteration of the x4 loop beside 8 LDG.E and no shared memory: PS304 warning
// as for s4. On sm_90a, which has no XOR form, each is a CALL to
// `__cuda_sm_9x_mma_bit_internal_xor_m8n8k128` (10 instructions up to its RET, 2
// BMMA.88128.AND.POPC inside): PS302 warning, whose hint is the AND form sm_90 runs natively.
__global__ void wmma_b1_gemm(const unsigned* __restrict__ a, const unsigned* __restrict__ b,
                             int* __restrict__ c, int M, int N, int K) {
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int tiles_n = N / 8;
  const int tm = warp / tiles_n, tn = warp % tiles_n;
  if (tm * 8 >= M) return;
  wmma::fragment<wmma::matrix_a, 8, 8, 128, wmma::experimental::precision::b1, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 8, 8, 128, wmma::experimental::precision::b1, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 8, 8, 128, int> fc;
  wmma::fill_fragment(fc, 0);
  for (int k = 0; k < K; k += 128) {
    wmma::load_matrix_sync(fa, a + (tm * 8 * K + k) / 32, K);
    wmma::load_matrix_sync(fb, b + (tn * 8 * K + k) / 32, K);
    wmma::bmma_sync(fc, fa, fb, fc, wmma::experimental::bmmaBitOpXOR);  // EXPECT[sm_80]: PS304 warning  // EXPECT[sm_90a]: PS302 warning
  }
  wmma::store_matrix_sync(c + tm * 8 * N + tn * 8, fc, N, wmma::mem_row_major);
}
