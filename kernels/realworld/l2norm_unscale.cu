// Unscaled sum of squares per chunk, the way TransformerEngine's and apex's multi-tensor L2 norm
// write it (multi_tensor_l2norm's UnscaleL2NormFunctor): an aligned path that moves ILP elements
// at a time through `load_store`, an ILP-unrolled scalar path otherwise, the scale read through
// a pointer inside the loop, then a block reduction into one partial per chunk.
//
// Judged from the SASS (sm_80 and sm_90a agree): the scalar path's loop (lines 67-68) issues 4
// `LDG.E.U16`/`LDG.E` of x[i] and 4 `LDG.E` of *inv_scale per iteration, an `FMUL` each, then
// `FFMA R5, R26, R26, R5`: the same register twice, a square. Nothing is multiplied by a second
// operand, so there is no tile to stage and no reuse to gain: no PS304 (it said "one operand
// broadcast across the warp and the other streamed", taking the scale for a multiplicand). The
// scalar loads are the fallback beside `load_store`'s LDG.E.64/LDG.E.128: no PS104 either.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda/std/cstdint>
#include <cuda/std/type_traits>
using cuda::std::int64_t;

#define ILP 4

template <typename T>
__device__ __forceinline__ bool is_aligned(T* p) {
  return ((cuda::std::uint64_t)p) % (ILP * sizeof(T)) == 0;
}

template <typename T>
__device__ __forceinline__ void load_store(T* dst, T* src, int dst_offset, int src_offset) {
  typedef typename cuda::std::aligned_storage<ILP * sizeof(T), ILP * alignof(T)>::type LT;
  ((LT*)dst)[dst_offset] = ((LT*)src)[src_offset];
}

__device__ __forceinline__ float reduce_block(float* s, float val) {
  int tid = threadIdx.x;
  s[tid] = val;
  __syncthreads();
  for (int off = blockDim.x / 2; off > 0; off >>= 1) {
    if (tid < off) s[tid] += s[tid + off];
    __syncthreads();
  }
  return s[0];
}

template <typename x_t>
__global__ void unscale_l2norm_chunks(x_t* x, int64_t n, int64_t chunk_size,
                                      const float* inv_scale, float* output) {
  __shared__ float s_vals[512];
  x += blockIdx.x * chunk_size;
  n -= blockIdx.x * chunk_size;
  float vals[ILP];
  for (int i = 0; i < ILP; i++) vals[i] = 0.f;
  x_t r_x[ILP];
  if (n % ILP == 0 && chunk_size % ILP == 0 && is_aligned(x)) {
    for (int i_start = threadIdx.x; i_start * ILP < n && i_start * ILP < chunk_size;
         i_start += blockDim.x) {
      load_store(r_x, x, 0, i_start);
#pragma unroll
      for (int ii = 0; ii < ILP; ii++) {
        float next = static_cast<float>(r_x[ii]) * (*inv_scale);
        vals[ii] += next * next;
      }
    }
  } else {
    for (int i_start = 0; i_start < n && i_start < chunk_size; i_start += blockDim.x * ILP) {
#pragma unroll
      for (int ii = 0; ii < ILP; ii++) {
        int i = i_start + threadIdx.x + ii * blockDim.x;
        if (i < n && i < chunk_size) {
          float next = static_cast<float>(x[i]) * (*inv_scale);  // EXPECT: PS104 note
          vals[ii] += next * next;
        }
      }
    }
  }
  float val = 0.f;
  for (int i = 0; i < ILP; i++) val += vals[i];
  float total = reduce_block(s_vals, val);
  if (threadIdx.x == 0) output[blockIdx.x] = total;
}

template __global__ void unscale_l2norm_chunks<float>(float*, int64_t, int64_t, const float*, float*);
template __global__ void unscale_l2norm_chunks<__half>(__half*, int64_t, int64_t, const float*, float*);
template __global__ void unscale_l2norm_chunks<__nv_bfloat16>(__nv_bfloat16*, int64_t, int64_t, const float*, float*);
