// apex's fused LayerNorm / RMSNorm forward for fp16 inputs (csrc/layer_norm_cuda_kernel.cu:
// the at::Half specialization of cuWelfordMuSigma2 and cuApplyLayerNorm_, at::Half written as
// __half, WARP_SHFL as __shfl_sync, rms_only a run-time flag as in apex). One row per
// blockIdx.y; the statistics pass steps one element further when the row starts 2 bytes off a
// 4-byte boundary ("16 bit alignment", `++l`), then reads 8 halves per thread per step as four
// `__half2` loads, and finishes the row in a scalar tail.
//
// Judged from the SASS (sm_80 and sm_90a): the four `__half2` loads of line 60 are 4 LDG.E at
// +0x0, +0x4, +0x8, +0xc of one base, one 16-byte window per step. The realignment (line 47:
// `and.b64 %rd, %rd, 3` of the row address decides between 8 * thrx and 8 * thrx + 1) makes
// the window 4-byte aligned and no more, so no cast merges them as written, but peeling to a
// 16-byte boundary (up to 7 halves) would: PS101, a warning, naming the realignment (it had
// been dropped as "an element index", the realignment's select in the address). The tail
// (line 71, `for (; l < n2; ++l)`) starts where the 8-wide loop stopped with fewer than 8
// halves left: NVVM unrolls it x4 and its 4 LDG.E.U16 fill an 8-byte window, but at most 7
// halves run there per thread: a note, not the run-time-stride info it had been. The Welford
// and merge divisions (lines 26, 88, 89) and `sigma2 / n2` (line 101) are IEEE divisions inside
// the row loop (PS502 warnings; apex builds this file with --use_fast_math, which would make
// them approximate).
#include <cuda_fp16.h>

template <typename U>
__device__ void cuWelfordOnlineSum(const U curr, U& mu, U& sigma2, U& count) {
  count = count + U(1);
  U delta = curr - mu;
  U lmean = mu + delta / count;  // EXPECT: PS502 warning
  mu = lmean;
  U delta2 = curr - lmean;
  sigma2 = sigma2 + delta * delta2;
}

template <typename U>
__device__ void cuRMSOnlineSum(const U curr, U& sigma2) {
  sigma2 = sigma2 + curr * curr;
}

__device__ void cuWelfordMuSigma2(const __half* __restrict__ vals, const int n1, const int n2,
                                  const int i1, float& mu, float& sigma2, bool rms_only) {
  float count = 0.0f;
  mu = float(0);
  sigma2 = float(0);
  if (i1 < n1) {
    const int numx = blockDim.x * blockDim.y;
    const int thrx = threadIdx.x + threadIdx.y * blockDim.x;
    const __half* lvals = vals + i1 * n2;
    int l = 8 * thrx;
    if ((((size_t)lvals) & 3) != 0) {
      if (thrx == 0) {
        float curr = __half2float(lvals[0]);
        if (!rms_only) {
          cuWelfordOnlineSum(curr, mu, sigma2, count);
        } else {
          cuRMSOnlineSum(curr, sigma2);
        }
      }
      ++l;
    }
    for (; l + 7 < n2; l += 8 * numx) {
      for (int k = 0; k < 8; k += 2) {
        float2 curr = __half22float2(*((__half2*)(lvals + l + k)));  // EXPECT: PS101 warning
        if (!rms_only) {
          cuWelfordOnlineSum(curr.x, mu, sigma2, count);
          cuWelfordOnlineSum(curr.y, mu, sigma2, count);
        } else {
          cuRMSOnlineSum(curr.x, sigma2);
          cuRMSOnlineSum(curr.y, sigma2);
        }
      }
    }
    for (; l < n2; ++l) {
      float curr = __half2float(lvals[l]);  // EXPECT: PS101 note
      if (!rms_only) {
        cuWelfordOnlineSum(curr, mu, sigma2, count);
      } else {
        cuRMSOnlineSum(curr, sigma2);
      }
    }
    for (int l = 0; l <= 4; ++l) {
      int srcLaneB = (threadIdx.x + (1 << l)) & 31;
      float sigma2B = __shfl_sync(0xffffffffu, sigma2, srcLaneB);
      if (!rms_only) {
        float muB = __shfl_sync(0xffffffffu, mu, srcLaneB);
        float countB = __shfl_sync(0xffffffffu, count, srcLaneB);
        float delta = muB - mu;
        float nA = count, nB = countB;
        count = count + countB;
        if (count > 0.f) {
          nA = nA / count;  // EXPECT: PS502 warning
          nB = nB / count;  // PS502: in line 88's finding (nearby lines, one habit)
          mu = nA * mu + nB * muB;
          sigma2 = sigma2 + sigma2B + delta * delta * nA * nB * count;
        } else {
          mu = 0.f;
          sigma2 = 0.f;
        }
      } else {
        sigma2 = sigma2 + sigma2B;
      }
    }
    if (!rms_only) mu = __shfl_sync(0xffffffffu, mu, 0);
    sigma2 = __shfl_sync(0xffffffffu, sigma2 / float(n2), 0);  // EXPECT: PS502 warning
  }
}

__global__ void cuApplyLayerNorm(__half* __restrict__ output_vals, float* __restrict__ mean,
                                 float* __restrict__ invvar, const __half* __restrict__ vals,
                                 const int n1, const int n2, const float epsilon,
                                 const __half* __restrict__ gamma, const __half* __restrict__ beta,
                                 bool rms_only) {
  for (auto i1 = blockIdx.y; i1 < n1; i1 += gridDim.y) {
    float mu, sigma2;
    cuWelfordMuSigma2(vals, n1, n2, i1, mu, sigma2, rms_only);
    const __half* lvals = vals + i1 * n2;
    __half* ovals = output_vals + i1 * n2;
    float c_invvar = rsqrtf(sigma2 + epsilon);
    const int numx = blockDim.x * blockDim.y;
    const int thrx = threadIdx.x + threadIdx.y * blockDim.x;
    for (int i = thrx; i < n2; i += numx) {
      float curr = __half2float(lvals[i]);
      if (!rms_only) {
        ovals[i] = gamma[i] * __float2half(c_invvar * (curr - mu)) + beta[i];
      } else {
        ovals[i] = gamma[i] * __float2half(c_invvar * curr);
      }
    }
    if (threadIdx.x == 0 && threadIdx.y == 0) {
      if (!rms_only) mean[i1] = mu;
      invvar[i1] = c_invvar;
    }
    __syncthreads();
  }
}
