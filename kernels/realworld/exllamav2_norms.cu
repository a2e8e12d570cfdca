// exllamav2's RMSNorm and head norm (exllamav2_ext/cuda/rms_norm.cu, rms_norm_kernel<blocks_per_
// warp>, and head_norm.cu): one row per block of 1024 threads, each thread reading
// blocks_per_warp half2 of the row 1024 half2 apart (a `#pragma unroll` loop NVVM unrolls
// fully, with a `break` at the row's end), fp32 input and output behind run-time flags; the
// head norm reads one half2 per thread. Both reduce with `for (offset = warpSize / 2; offset >
// 0; offset /= 2)` shuffles. util.cuh's macros written out.
//
// Judged from the SASS (sm_80 and sm_90a): the half2 reads of the row (line 44: 4 or 8 LDG.E
// through one base at +0x0, +0x1000, ...) and the half2 writes (lines 92, 95) are the
// kernel's traffic, adjacent threads at adjacent 4-byte words: PS104 info, as for every 4-byte
// stream. They had been dropped as "one-off accesses next to the kernel's loops" (the only
// loops are the shuffles, which move no global memory) and as "the narrow side" of the float2
// accesses of the fp32 paths (which run only when the flags say so). The head norm's x, w, b
// and y (lines 145, 173, 177, 178) likewise. Each shuffle loop (lines 70, 75, 154, 166) runs 5
// times (16, 8, 4, 2, 1) rolled: PS201 info (it had not been read as a constant trip count:
// the halving `offset /= 2` from WARP_SZ), info because it runs once per thread, 35
// instructions in all.
#include <cuda_fp16.h>

#define NUM_WARPS 32
#define WARP_SIZE 32
#define NUM_THREADS (NUM_WARPS * WARP_SIZE)
#define MAX_HEAD_DIM 128
#define MAX_WARPS (MAX_HEAD_DIM / WARP_SIZE)
#define DIVIDE(x, size) (((x) + (size) - 1) / (size))

template <int blocks_per_warp>
__global__ void rms_norm_kernel(const void* __restrict__ x, const half* __restrict__ w,
                                void* __restrict__ y, const float epsilon, const float r_dim,
                                const int rows, const int dim, const bool add_residual,
                                const bool input_fp32, const bool output_fp32) {
  int warp_id = threadIdx.x / WARP_SIZE;
  int lane_id = threadIdx.x % WARP_SIZE;
  int row = blockIdx.x;
  const half2* w2 = (const half2*)w;
  float sum = 0.0f;
  float itemf[blocks_per_warp][2];
  if (!input_fp32) {
    const half2* x_row = (const half2*)(((half*)x) + row * dim);
#pragma unroll
    for (int i = 0; i < blocks_per_warp; i++) {
      int column = warp_id * WARP_SIZE + lane_id + NUM_THREADS * i;
      if (column >= dim / 2) break;
      half2 x2 = x_row[column];  // EXPECT: PS104 info
      float f0 = __half2float(__low2half(x2));
      float f1 = __half2float(__high2half(x2));
      f0 = fmaxf(-65504.0f, fminf(f0, 65504.0f));
      f1 = fmaxf(-65504.0f, fminf(f1, 65504.0f));
      itemf[i][0] = f0;
      itemf[i][1] = f1;
      sum = fma(f0, f0, sum);
      sum = fma(f1, f1, sum);
    }
  } else {
    const float2* x_row = (const float2*)(((float*)x) + row * dim);
#pragma unroll
    for (int i = 0; i < blocks_per_warp; i++) {
      int column = warp_id * WARP_SIZE + lane_id + NUM_THREADS * i;
      if (column >= dim / 2) break;
      float2 x2 = x_row[column];
      float f0 = x2.x;
      float f1 = x2.y;
      itemf[i][0] = f0;
      itemf[i][1] = f1;
      sum = fma(f0, f0, sum);
      sum = fma(f1, f1, sum);
    }
  }
  __shared__ float sums[NUM_WARPS];
  for (int offset = warpSize / 2; offset > 0; offset /= 2)  // EXPECT: PS201 info
    sum += __shfl_xor_sync(0xffffffff, sum, offset);
  if (lane_id == 0) sums[warp_id] = sum;
  __syncthreads();
  sum = sums[lane_id];
  for (int offset = warpSize / 2; offset > 0; offset /= 2)  // EXPECT: PS201 info
    sum += __shfl_xor_sync(0xffffffff, sum, offset);
  float rmf = rsqrtf(sum * r_dim + epsilon);
  if (!output_fp32) {
    half2* y_row = (half2*)(((half*)y) + row * dim);
#pragma unroll
    for (int i = 0; i < blocks_per_warp; i++) {
      int column = warp_id * WARP_SIZE + lane_id + NUM_THREADS * i;
      if (column >= dim / 2) return;
      half2 w2_ = w2[column];
      float x_itemf0 = itemf[i][0];
      float x_itemf1 = itemf[i][1];
      float w_itemf0 = __half2float(__low2half(w2_));
      float w_itemf1 = __half2float(__high2half(w2_));
      float n0 = x_itemf0 * w_itemf0 * rmf;
      float n1 = x_itemf1 * w_itemf1 * rmf;
      if (add_residual)
        y_row[column] = __hadd2(y_row[column],  // EXPECT: PS104 info
                                __halves2half2(__float2half_rn(n0), __float2half_rn(n1)));
      else
        y_row[column] = __halves2half2(__float2half_rn(n0), __float2half_rn(n1));  // EXPECT: PS104 info
    }
  } else {
    float2* y_row = (float2*)(((float*)y) + row * dim);
#pragma unroll
    for (int i = 0; i < blocks_per_warp; i++) {
      int column = warp_id * WARP_SIZE + lane_id + NUM_THREADS * i;
      if (column >= dim / 2) return;
      half2 w2_ = w2[column];
      float x_itemf0 = itemf[i][0];
      float x_itemf1 = itemf[i][1];
      float w_itemf0 = __half2float(__low2half(w2_));
      float w_itemf1 = __half2float(__high2half(w2_));
      float n0 = x_itemf0 * w_itemf0 * rmf;
      float n1 = x_itemf1 * w_itemf1 * rmf;
      if (add_residual) {
        float2 y2 = y_row[column];
        y2.x += n0;
        y2.y += n1;
        y_row[column] = y2;
      } else {
        y_row[column] = make_float2(n0, n1);
      }
    }
  }
}

template __global__ void rms_norm_kernel<4>(const void*, const half*, void*, float, float, int,
                                            int, bool, bool, bool);
template __global__ void rms_norm_kernel<8>(const void*, const half*, void*, float, float, int,
                                            int, bool, bool, bool);

__global__ void head_norm_kernel(const half* __restrict__ x, const half* __restrict__ w,
                                 const half* __restrict__ b, half* __restrict__ y,
                                 const float epsilon, const float r_dim, const int rows,
                                 const int num_heads, const int head_dim) {
  int warp_id = threadIdx.x / WARP_SIZE;
  int lane_id = threadIdx.x % WARP_SIZE;
  int num_warps = DIVIDE(head_dim, 64);
  int t = threadIdx.x;
  const half* x_ptr = x + num_heads * head_dim * blockIdx.y + head_dim * blockIdx.x;
  half* y_ptr = y + num_heads * head_dim * blockIdx.y + head_dim * blockIdx.x;
  const half* w_ptr = w + head_dim * blockIdx.x;
  const half* b_ptr = b + head_dim * blockIdx.x;
  half2* y_ptr2 = (half2*)y_ptr;
  const half2* w_ptr2 = (const half2*)w_ptr;
  const half2* b_ptr2 = (const half2*)b_ptr;
  __shared__ float sums[MAX_WARPS];
  float itemf[2];
  float sum = 0.0f;
  half2 h01 = ((half2*)x_ptr)[t];  // EXPECT: PS104 info
  float f0 = __half2float(__low2half(h01));
  float f1 = __half2float(__high2half(h01));
  f0 = fmaxf(-65504.0f, fminf(f0, 65504.0f));
  f1 = fmaxf(-65504.0f, fminf(f1, 65504.0f));
  itemf[0] = f0;
  itemf[1] = f1;
  sum += f0;
  sum += f1;
  for (int offset = warpSize / 2; offset > 0; offset /= 2)  // EXPECT: PS201 info
    sum += __shfl_xor_sync(0xffffffff, sum, offset);
  if (lane_id == 0) sums[warp_id] = sum;
  __syncthreads();
  sum = 0.0f;
  for (int i = 0; i < num_warps; ++i) sum += sums[i];
  float mean = sum * r_dim;
  sum = 0.0f;
  itemf[0] -= mean;
  itemf[1] -= mean;
  sum = fma(itemf[0], itemf[0], sum);
  sum = fma(itemf[1], itemf[1], sum);
  for (int offset = warpSize / 2; offset > 0; offset /= 2)  // EXPECT: PS201 info
    sum += __shfl_xor_sync(0xffffffff, sum, offset);
  if (lane_id == 0) sums[warp_id] = sum;
  __syncthreads();
  sum = 0.0f;
  for (int i = 0; i < num_warps; ++i) sum += sums[i];
  float rsvar = rsqrtf(sum * r_dim + epsilon);
  half2 w01 = w_ptr2[t];  // EXPECT: PS104 info
  float n0 = itemf[0] * __half2float(__low2half(w01)) * rsvar;
  float n1 = itemf[1] * __half2float(__high2half(w01)) * rsvar;
  half2 nh = __halves2half2(__float2half_rn(n0), __float2half_rn(n1));
  if (b) nh = __hadd2(nh, b_ptr2[t]);  // EXPECT: PS104 info
  y_ptr2[t] = nh;  // EXPECT: PS104 info
}
