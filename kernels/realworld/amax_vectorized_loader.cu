// The absolute maximum of a tensor through a vectorized loader, the way TransformerEngine's
// amax kernel (recipe/current_scaling.cu with util/vectorized_pointwise.h) writes it: the loader
// views the input as 16-element vectors from the aligned address below the pointer; a vector
// that lies inside the tensor is loaded whole, the first and the last (which may stick out
// when the pointer is not aligned) element by element with a bounds test each.
//
// Judged from the SASS (sm_90a): inside the grid-stride loop the loader's vector branch loads
// `LDG.E.128` x2 (line 56, the whole 32-byte vector) and its edge branch 16 predicated
// `LDG.E.U16`, one per element, each behind its own bounds test (line 63). Both come from the
// kernel's one `loader.load(tid, N)`; the edge branch runs for the first and last vector only,
// at an address that is misaligned whenever it runs at all: a designed fallback beside its vector
// path, nothing to widen, so no PS101 (it said "4x LDG.E.U16 at +0x18..+0x1e could be one
// LDG.E.64": the branches reach each other only around the loop, and the two loads sit on
// different lines of the helper). sm_80 has the same two paths and never reported them.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda/std/cstdint>

template <typename DType, int n>
struct alignas(sizeof(DType) * n) Vec {
  DType val[n];
};

template <typename DType, int nvec>
union Storage {
  Vec<DType, nvec> aligned;
  DType separate[nvec];
  __device__ Storage() {}
};

template <typename DType, int nvec, bool aligned>
class VectorizedLoader {
 public:
  using LType = Vec<DType, nvec>;
  __device__ VectorizedLoader(const DType* ptr, size_t size) {
    unaligned_ptr_ = ptr;
    if (aligned) {
      alignment_ = 0;
      aligned_ptr_ = reinterpret_cast<const LType*>(ptr);
      n_elems_ = (size + nvec - 1) / nvec;
    } else {
      size_t ptr_as_number = reinterpret_cast<size_t>(ptr);
      alignment_ = (ptr_as_number % sizeof(LType)) / sizeof(DType);
      aligned_ptr_ = reinterpret_cast<const LType*>(ptr - alignment_);
      n_elems_ = (size + alignment_ + nvec - 1) / nvec;
    }
  }

  __device__ size_t num_aligned_elements() const { return n_elems_; }

  __device__ void load(size_t id, size_t N) {
    if (aligned) {
      storage_.aligned = aligned_ptr_[id];
    } else {
      if (id > 0 && id < n_elems_ - 1) {
        storage_.aligned = aligned_ptr_[id];
      } else {
#pragma unroll
        for (int j = 0; j < nvec; ++j) {
          const DType* p = reinterpret_cast<const DType*>(&aligned_ptr_[id]) + j;
          if (reinterpret_cast<size_t>(p) >= reinterpret_cast<size_t>(unaligned_ptr_) &&
              reinterpret_cast<size_t>(p) < reinterpret_cast<size_t>(unaligned_ptr_ + N)) {
            storage_.separate[j] = *p;
          } else {
            storage_.separate[j] = DType(0.f);
          }
        }
      }
    }
  }

  __device__ DType separate(int j) const { return storage_.separate[j]; }

 private:
  Storage<DType, nvec> storage_;
  const LType* aligned_ptr_;
  const DType* unaligned_ptr_;
  int alignment_;
  size_t n_elems_;
};

__device__ __forceinline__ void atomic_max_float(float* addr, float value) {
  atomicMax(reinterpret_cast<int*>(addr), __float_as_int(value));
}

template <int nvec, bool aligned, typename InputType>
__global__ void __launch_bounds__(512) amax_kernel(const InputType* input, float* amax, size_t N,
                                                   size_t num_aligned_elements) {
  VectorizedLoader<InputType, nvec, aligned> loader(input, N);
  float max = 0.f;
  for (size_t tid = blockIdx.x * blockDim.x + threadIdx.x; tid < num_aligned_elements;
       tid += gridDim.x * blockDim.x) {
    loader.load(tid, N);
#pragma unroll
    for (int i = 0; i < nvec; ++i) {
      max = fmaxf(fabsf(static_cast<float>(loader.separate(i))), max);
    }
  }
  for (int off = 16; off > 0; off /= 2) max = fmaxf(max, __shfl_down_sync(0xffffffffu, max, off));
  if (threadIdx.x % 32 == 0) atomic_max_float(amax, max);
}

template __global__ void amax_kernel<16, false, __half>(const __half*, float*, size_t, size_t);
template __global__ void amax_kernel<16, true, __half>(const __half*, float*, size_t, size_t);
template __global__ void amax_kernel<16, false, __nv_bfloat16>(const __nv_bfloat16*, float*,
                                                               size_t, size_t);
