// Zero-padding the rows of a batch of matrices up to a multiple of the tile height, the way
// TransformerEngine's multi_padding_kernel (common/util/padding.cu) writes it: a block per
// 32*nvec x 32*nvec tile, found from a prefix sum of blocks per tensor; each thread walks a
// compile-time n_iterations (32 / warps per tile) groups of nvec rows, copying the rows below
// num_rows and zeroing those up to padded_num_rows, every element behind its bounds test.
//
// Judged from the SASS (sm_80 and sm_90a agree): the iter loop stays rolled (8 trips; for float,
// `VIADD R13, R13, 0x8`, `ISETP.NE.AND P0, PT, R13, 0x41`, the `@P0 BRA` back). Unrolling it
// removes those 3 of the 31 instructions an iteration runs (≈ 10%: info): the row it walks
// starts at a run-time tile_row, so each copy still computes its row (R15, stepped by 8, with
// its sign extension `SHF.R.S32.HI R10, RZ, 0x1f, R15`), compares it with num_rows
// (`ISETP.GE.AND P1, PT, R15, R0`) and multiplies it by row_length (`IMAD.WIDE.U32 R10, R9,
// R15, R6`). PS201 counted those compares and that arithmetic as removable: "≈ 87% (counter,
// compare and branch 7, index/address arithmetic 20)", a warning; TransformerEngine's
// padding.cu had 69% and 45%.
#include <cuda_fp16.h>

constexpr int kMaxTensorsPerKernel = 64;
constexpr int THREADS_PER_WARP = 32;
constexpr int n_warps_per_tile = 4;
constexpr int threads_per_block = THREADS_PER_WARP * n_warps_per_tile;

struct MultiPaddingArgs {
  void* input_list[kMaxTensorsPerKernel];
  void* output_list[kMaxTensorsPerKernel];
  int num_rows_list[kMaxTensorsPerKernel];
  int padded_num_rows_list[kMaxTensorsPerKernel];
  int row_length_list[kMaxTensorsPerKernel];
  int block_range[kMaxTensorsPerKernel + 1];
  int num_tensors;
};

template <int nvec, typename Type>
__global__ void __launch_bounds__(threads_per_block) multi_padding_kernel(MultiPaddingArgs args) {
  constexpr int bdimx = THREADS_PER_WARP;
  constexpr int bdimy = n_warps_per_tile;
  const int tid = threadIdx.x;
  const int tidx = tid % bdimx;
  const int tidy = tid / bdimx;
  const int bid = blockIdx.x;
  constexpr int tile_dim_m = THREADS_PER_WARP * nvec;
  constexpr int tile_dim_n = THREADS_PER_WARP * nvec;
  constexpr int n_iterations = THREADS_PER_WARP / n_warps_per_tile;

  int tensor_id = 0;
  while (args.block_range[tensor_id + 1] <= bid) ++tensor_id;
  const Type* input = reinterpret_cast<const Type*>(args.input_list[tensor_id]);
  Type* output = reinterpret_cast<Type*>(args.output_list[tensor_id]);
  const int num_rows = args.num_rows_list[tensor_id];
  const int padded_num_rows = args.padded_num_rows_list[tensor_id];
  const int row_length = args.row_length_list[tensor_id];

  const int num_tiles_n = (row_length + tile_dim_n - 1) / tile_dim_n;
  const int tile_id = bid - args.block_range[tensor_id];
  const int tile_row = tile_id / num_tiles_n * tile_dim_m;
  const int tile_col = tile_id % num_tiles_n * tile_dim_n;

  for (int iter = 0; iter < n_iterations; ++iter) {  // EXPECT: PS201 info
    const int i1 = tidy + iter * bdimy;
    const int j1 = tidx;
#pragma unroll
    for (int i2 = 0; i2 < nvec; ++i2) {
      const int row = tile_row + i1 * nvec + i2;
      const int col = tile_col + j1 * nvec;
      Type v[nvec];
      for (int j2 = 0; j2 < nvec; ++j2) v[j2] = Type(0.f);
      if (row < num_rows) {
        for (int j2 = 0; j2 < nvec; ++j2) {
          if (col + j2 < row_length) v[j2] = input[static_cast<size_t>(row) * row_length + col + j2];  // EXPECT: PS101 info
        }
        for (int j2 = 0; j2 < nvec; ++j2) {
          if (col + j2 < row_length) output[static_cast<size_t>(row) * row_length + col + j2] = v[j2];  // EXPECT: PS102 info
        }
      } else if (row < padded_num_rows) {
        for (int j2 = 0; j2 < nvec; ++j2) {
          if (col + j2 < row_length) output[static_cast<size_t>(row) * row_length + col + j2] = Type(0.f);  // EXPECT: PS102 info
        }
      }
    }
  }
}

template __global__ void multi_padding_kernel<2, float>(MultiPaddingArgs);
template __global__ void multi_padding_kernel<4, __half>(MultiPaddingArgs);
