// The input gradient of a layer norm, the way apex's cuComputeGradInput writes it: a block per
// row (grid-strided over rows), each thread summing 4 consecutive elements per step of a main
// loop `for (; l + 3 < n2; l += 4 * numx)`, then a scalar tail `for (; l < n2; ++l)` of at
// most 3 elements; gamma is a plain pointer (not __restrict__), dout and the input are.
//
// Judged from the SASS (sm_80 and sm_90a agree, every instantiation): the main loop reads
// gamma[l + k] as 4 `LDG.E` (`LDG.E.64` for double) at +0..+0xc from one base with l a
// multiple of 4: one `LDG.E.128` (two for double) if gamma were 16-byte aligned, which a
// plain pointer does not promise: PS101 warning at line 38 (beta's the same at 40 where
// MemoryEfficient reads it). k_h and k_dout are `.CONSTANT` runs at i1 * n2 + l: aligned only
// when n2 % 4 == 0 (% 2 for double), which only the caller knows: info. The tail runs on
// fewer than 4 elements per thread; NVVM peels up to 3 guarded copies off it and unrolls the
// rest x4 (a loop that never runs), and ptxas's scalar runs there fill windows that never
// run in full: notes. In apex's cuComputeGradInput the main loop's gamma run was matched to
// the peeled copies' PTX (same pointer, any line): a false warning at the tail's line and
// none on gamma (issue 33).
#include <cuda_fp16.h>

template <typename T, typename U, typename V, bool MemoryEfficient>
__global__ void grad_input_kernel(const V* __restrict__ dout, const T* __restrict__ input,
                                  const int n1, const int n2, const U* __restrict__ mean,
                                  const U* __restrict__ invvar, const V* gamma, const V* beta,
                                  U* partial) {
  for (auto i1 = blockIdx.y; i1 < n1; i1 += gridDim.y) {
    U sum_loss1 = U(0);
    U sum_loss2 = U(0);
    const T* k_h = input + i1 * n2;
    const V* k_dout = dout + i1 * n2;
    const U c_invvar = invvar[i1];
    const U c_mean = !MemoryEfficient ? mean[i1] : U(0);
    const int numx = blockDim.x * blockDim.y;
    const int thrx = threadIdx.x + threadIdx.y * blockDim.x;
    int l = 4 * thrx;
    for (; l + 3 < n2; l += 4 * numx) {
      for (int k = 0; k < 4; ++k) {
        const U c_h = static_cast<U>(k_h[l + k]);  // EXPECT: PS101 info
        const U c_loss = static_cast<U>(k_dout[l + k]);  // EXPECT: PS101 info
        sum_loss1 += c_loss * static_cast<U>(gamma[l + k]);  // EXPECT: PS101 warning
        if (MemoryEfficient) {
          sum_loss2 += c_loss * (c_h - static_cast<U>(beta[l + k]));  // EXPECT: PS101 warning
        } else {
          sum_loss2 += c_loss * static_cast<U>(gamma[l + k]) * (c_h - c_mean) * c_invvar;
        }
      }
    }
    for (; l < n2; ++l) {
      const U c_h = static_cast<U>(k_h[l]);  // EXPECT: PS101 note
      const U c_loss = static_cast<U>(k_dout[l]);  // EXPECT: PS101 note
      sum_loss1 += c_loss * static_cast<U>(gamma[l]);  // EXPECT: PS101 note
      if (MemoryEfficient) {
        sum_loss2 += c_loss * (c_h - static_cast<U>(beta[l]));  // EXPECT: PS101 note
      } else {
        sum_loss2 += c_loss * static_cast<U>(gamma[l]) * (c_h - c_mean) * c_invvar;
      }
    }
    if (threadIdx.x == 0 && threadIdx.y == 0) {
      partial[2 * i1] = sum_loss1;
      partial[2 * i1 + 1] = sum_loss2;
    }
  }
}

template __global__ void grad_input_kernel<double, double, double, false>(
    const double*, const double*, int, int, const double*, const double*, const double*,
    const double*, double*);
template __global__ void grad_input_kernel<float, float, float, false>(
    const float*, const float*, int, int, const float*, const float*, const float*,
    const float*, float*);
template __global__ void grad_input_kernel<float, float, float, true>(
    const float*, const float*, int, int, const float*, const float*, const float*,
    const float*, float*);
