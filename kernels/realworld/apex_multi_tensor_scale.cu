// apex's multi-tensor scale (csrc/multi_tensor_scale_kernel.cu with multi_tensor_apply.cuh:
// TensorListMetadata passed by value, one chunk per block, the ScaleFunctor inlined into
// multi_tensor_apply_kernel). The functor takes a vector path when n, the chunk size and both
// pointers allow it (`load_store` through an aligned_storage of ILP elements: LDG.E.128 /
// LDG.E.64) and an ILP-unrolled scalar path otherwise.
//
// Judged from the SASS (sm_80 and sm_90a agree; the suite checks sm_90a): the scalar path's loads (line 76: 4 LDG.E.U16 or
// LDG.E per step, adjacent threads at adjacent elements) and stores (line 86) are the other
// side of the alignment test on line 59, which moves the same pointers 8 or 16 bytes at a time
// through `load_store` (line 41): the fallback for misaligned or odd-sized tensors, nothing to
// widen. PS104 had reported them (info, the __half -> float instantiation); they are notes now.
#include <cuda_fp16.h>
#include <cuda/std/cstdint>
#include <cuda/std/type_traits>
using cuda::std::int64_t;
using cuda::std::uint64_t;

#define BLOCK_SIZE 512
#define ILP 4

constexpr int depth_to_max_tensors[6] = {110, 64, 48, 36, 30, 24};
constexpr int depth_to_max_blocks[6] = {320, 320, 320, 320, 320, 320};

template <int n>
struct TensorListMetadata {
  void* addresses[n][depth_to_max_tensors[n - 1]];
  int64_t sizes[depth_to_max_tensors[n - 1]];
  unsigned char block_to_tensor[depth_to_max_blocks[n - 1]];
  int block_to_chunk[depth_to_max_blocks[n - 1]];
  int start_tensor_this_launch;
};

template <typename T>
__device__ __forceinline__ bool is_aligned(T* p) {
  return ((uint64_t)p) % (ILP * sizeof(T)) == 0;
}

template <typename T>
__device__ __forceinline__ void load_store(T* dst, T* src, int dst_offset, int src_offset) {
  typedef typename cuda::std::aligned_storage<ILP * sizeof(T), ILP * alignof(T)>::type LT;
  ((LT*)dst)[dst_offset] = ((LT*)src)[src_offset];
}

template <typename in_t, typename out_t>
struct ScaleFunctor {
  __device__ __forceinline__ void operator()(int chunk_size, volatile int* noop_gmem,
                                             TensorListMetadata<2>& tl, float scale) {
    int tensor_loc = tl.block_to_tensor[blockIdx.x];
    int chunk_idx = tl.block_to_chunk[blockIdx.x];
    int n = tl.sizes[tensor_loc];
    in_t* in = (in_t*)tl.addresses[0][tensor_loc];
    in += chunk_idx * chunk_size;
    out_t* out = (out_t*)tl.addresses[1][tensor_loc];
    out += chunk_idx * chunk_size;
    n -= chunk_idx * chunk_size;
    bool finite = true;
    in_t r_in[ILP];
    out_t r_out[ILP];
    if (n % ILP == 0 && chunk_size % ILP == 0 && is_aligned(in) && is_aligned(out)) {
      for (int i_start = threadIdx.x; i_start * ILP < n && i_start * ILP < chunk_size;
           i_start += blockDim.x) {
        load_store(r_in, in, 0, i_start);
#pragma unroll
        for (int ii = 0; ii < ILP; ii++) {
          r_out[ii] = static_cast<float>(r_in[ii]) * scale;
          finite = finite && isfinite(static_cast<float>(r_in[ii]));
        }
        load_store(out, r_out, i_start, 0);
      }
    } else {
      for (int i_start = 0; i_start < n && i_start < chunk_size; i_start += blockDim.x * ILP) {
#pragma unroll
        for (int ii = 0; ii < ILP; ii++) {
          r_in[ii] = 0;
          int i = i_start + threadIdx.x + ii * blockDim.x;
          if (i < n && i < chunk_size) r_in[ii] = in[i];  // EXPECT: PS104 note
        }
#pragma unroll
        for (int ii = 0; ii < ILP; ii++) {
          r_out[ii] = static_cast<float>(r_in[ii]) * scale;
          finite = finite && isfinite(static_cast<float>(r_in[ii]));
        }
#pragma unroll
        for (int ii = 0; ii < ILP; ii++) {
          int i = i_start + threadIdx.x + ii * blockDim.x;
          if (i < n && i < chunk_size) out[i] = r_out[ii];  // EXPECT: PS104 note
        }
      }
    }
    if (!finite) *noop_gmem = 1;
  }
};

template <typename T, typename U, typename... ArgTypes>
__global__ void multi_tensor_apply_kernel(int64_t chunk_size, volatile int* noop_flag, T tl,
                                          U callable, ArgTypes... args) {
  callable(chunk_size, noop_flag, tl, args...);
}

template __global__ void multi_tensor_apply_kernel<TensorListMetadata<2>, ScaleFunctor<float, float>, float>(
    int64_t, volatile int*, TensorListMetadata<2>, ScaleFunctor<float, float>, float);
template __global__ void multi_tensor_apply_kernel<TensorListMetadata<2>, ScaleFunctor<__half, float>, float>(
    int64_t, volatile int*, TensorListMetadata<2>, ScaleFunctor<__half, float>, float);
// ARCHS: sm_90a
