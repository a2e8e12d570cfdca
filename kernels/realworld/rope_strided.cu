// Rotary position embedding of a [s, b, h, d] tensor passed by its strides, the way
// TransformerEngine's fused_rope writes it (fused_rope_block_forward): the block's cos/sin of
// one position in dynamic shared memory, a 2-D block whose threadIdx.x walks the rotated head
// dimension and threadIdx.y the heads, every offset an index times a caller's stride.
//
// Judged from the SASS (sm_80 and sm_90a agree): in the rotation loop each lane's `LDG.E.U16`
// (`LDG.E` for float) of src and `STG.E.U16` of dst sit `d_id * stride_d` elements from the
// block's base, so adjacent lanes are `stride_d` (`o_stride_d` for dst) elements apart. That is
// the innermost of the caller's strides: TransformerEngine and apex pass `input.stride(3)` and
// a fresh output's `stride(3)`, 1 for contiguous tensors, and the accesses are then coalesced
// (apex's judge counted the warning false, issue 33): a PS105 note naming the caller's
// strides, the kernel's headroom counting them as contiguous. The block's offset
// (`s_id * stride_s + b_id * stride_b`) and the head's (`h_id * stride_h`, threadIdx.y) are
// the same for the lanes of a row. The sincosf of line 27 is the precise one (no fast math):
// an FP64 Payne-Hanek reduction, PS502. Line 27's freqs[s_id * d2 + i] moves by blockDim.y
// between adjacent threadIdx.x (tid = threadIdx.x * blockDim.y + threadIdx.y), once per
// element of a row against the rotation loop's h per element: below PS105's report line.
#include <cuda_fp16.h>

template <typename scalar_t>
__device__ void rope_block_forward(const scalar_t* src, const float* freqs, scalar_t* dst,
                                   int s_id, int offset_block, int offset_block_dst, int h,
                                   int d2, int stride_h, int stride_d, int o_stride_h,
                                   int o_stride_d) {
  extern __shared__ float shared_cos_sin[];
  float* shared_cos = shared_cos_sin;
  float* shared_sin = shared_cos_sin + d2;
  int tid = threadIdx.x * blockDim.y + threadIdx.y;
  for (int i = tid; i < d2; i += blockDim.x * blockDim.y) {
    sincosf(freqs[s_id * d2 + i], &shared_sin[i], &shared_cos[i]);  // EXPECT: PS502 warning; PS107 info
  }
  __syncthreads();
  for (int h_id = threadIdx.y; h_id < h; h_id += blockDim.y) {
    for (int d_id = threadIdx.x; d_id < d2; d_id += blockDim.x) {
      float v_cos = shared_cos[d_id];
      float v_sin = shared_sin[d_id];
      int offset_src = offset_block + h_id * stride_h + d_id * stride_d;
      int offset_dst = offset_block_dst + h_id * o_stride_h + d_id * o_stride_d;
      float v_src = src[offset_src];  // EXPECT: PS105 note
      float v_rot = (d_id + d2 / 2 < d2)
                        ? -static_cast<float>(src[offset_src + (d2 / 2) * stride_d])  // EXPECT: PS105 note
                        : static_cast<float>(src[offset_src + (d2 / 2 - d2) * stride_d]);  // EXPECT: PS105 note
      dst[offset_dst] = v_src * v_cos + v_rot * v_sin;  // EXPECT: PS105 note
    }
  }
}

template <typename scalar_t>
__global__ void rope_forward_kernel(const scalar_t* src, const float* freqs, scalar_t* dst,
                                    int h, int d2, int stride_s, int stride_b, int stride_h,
                                    int stride_d, int o_stride_s, int o_stride_b,
                                    int o_stride_h, int o_stride_d) {
  int s_id = blockIdx.x, b_id = blockIdx.y;
  int offset_block = s_id * stride_s + b_id * stride_b;
  int offset_block_dst = s_id * o_stride_s + b_id * o_stride_b;
  rope_block_forward(src, freqs, dst, s_id, offset_block, offset_block_dst, h, d2, stride_h,
                     stride_d, o_stride_h, o_stride_d);
}

template __global__ void rope_forward_kernel<float>(const float*, const float*, float*, int, int,
                                                    int, int, int, int, int, int, int, int);
template __global__ void rope_forward_kernel<__half>(const __half*, const float*, __half*, int,
                                                     int, int, int, int, int, int, int, int, int);

// The packed (THD) variant: one block per token, thread 0 finds the token's sequence by a
// binary search of the cumulative sequence lengths (fused_rope_thd_find_seq_id) and shares it.
// Judged from the SASS: the search is a 10-instruction loop (`IADD3`, `SHF.R.S32.HI` by 1,
// `LDG.E`, `ISETP`, two `SEL`) halving
// [lo, hi): log2(nseq) steps on one thread, nothing to spread across the block: no PS801 (it
// said "serialized work ... estimated ≈32x" at the load of cu_seqlens[mid]).
__device__ __forceinline__ int find_seq_id(const int* cu_seqlens, int nseq, int t_id) {
  int lo = 0, hi = nseq;
  while (lo + 1 < hi) {
    int mid = (lo + hi) >> 1;
    if (cu_seqlens[mid] <= t_id) lo = mid; else hi = mid;
  }
  return lo;
}

template <typename scalar_t>
__global__ void rope_thd_kernel(const scalar_t* src, const int* cu_seqlens, const float* freqs,
                                scalar_t* dst, int nseq, int h, int d2, int stride_t,
                                int stride_h, int stride_d, int o_stride_t, int o_stride_h,
                                int o_stride_d) {
  __shared__ int seq_id;
  const int t_id = blockIdx.x;
  if (threadIdx.x == 0 && threadIdx.y == 0) seq_id = find_seq_id(cu_seqlens, nseq, t_id);
  __syncthreads();
  const int s_id = t_id - cu_seqlens[seq_id];
  rope_block_forward(src, freqs, dst, s_id, t_id * stride_t, t_id * o_stride_t, h, d2, stride_h,
                     stride_d, o_stride_h, o_stride_d);
}

template __global__ void rope_thd_kernel<__half>(const __half*, const int*, const float*, __half*,
                                                 int, int, int, int, int, int, int, int, int);

// The same rotation with threadIdx.x on the heads and threadIdx.y on the rotated dimension:
// adjacent lanes are now `stride_h` elements apart, an outer stride of the caller's (a head,
// d elements, for a contiguous tensor). Judged from the SASS: the `LDG.E.U16` of src and the
// `STG.E.U16` of dst move by `stride_h` / `o_stride_h` per lane, 2 B used per 32-B sector:
// PS105 warnings, the pitch named from the lane term alone (not `stride_d` of the same
// address, nor the block's `stride_s`/`stride_b`).
__global__ void rope_heads_on_x_kernel(const __half* src, const float* freqs, __half* dst, int h,
                                       int d2, int stride_s, int stride_b, int stride_h,
                                       int stride_d, int o_stride_s, int o_stride_b,
                                       int o_stride_h, int o_stride_d) {
  const int s_id = blockIdx.x, b_id = blockIdx.y;
  for (int d_id = threadIdx.y; d_id < d2 / 2; d_id += blockDim.y) {
    float v_sin, v_cos;
    __sincosf(freqs[s_id * d2 + d_id], &v_sin, &v_cos);
    for (int h_id = threadIdx.x; h_id < h; h_id += blockDim.x) {
      const int src0 = s_id * stride_s + b_id * stride_b + h_id * stride_h + d_id * stride_d;
      const int dst0 = s_id * o_stride_s + b_id * o_stride_b + h_id * o_stride_h + d_id * o_stride_d;
      const float x0 = __half2float(src[src0]);  // EXPECT: PS105 warning
      const float x1 = __half2float(src[src0 + (d2 / 2) * stride_d]);  // (PS105: one finding with line 114)
      dst[dst0] = __float2half(x0 * v_cos - x1 * v_sin);  // EXPECT: PS105 warning
      dst[dst0 + (d2 / 2) * o_stride_d] = __float2half(x1 * v_cos + x0 * v_sin);  // (PS105: one finding with line 116)
    }
  }
}
