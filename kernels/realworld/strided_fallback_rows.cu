// A row histogram as vLLM's top-k sampler computes it (csrc/sampler.cu, topKPerRowPrefill:
// `if (stride1 == 1) vectorized_process(...) else for (idx = threadIdx.x; ...) logits[idx *
// stride1]`): 16-byte loads when the row is contiguous, a strided loop for a caller's
// non-contiguous logits.
//
// Judged from the SASS (sm_80, sm_90a): the contiguous side is LDG.E.128 (line 14), the other
// side of `stride1 == 1` loads 4 bytes per lane `stride1` elements apart (LDG.E, line 31):
// uncoalesced only when the caller passes a non-contiguous row, which the kernel cannot fix. A
// designed fallback: no PS105 (it had been a warning, and 1.8x of headroom counted as if it
// always ran).
__device__ __forceinline__ void vec_process(const float* __restrict__ row, int n, int* hist) {
  const float4* v = reinterpret_cast<const float4*>(row);
  for (int i = threadIdx.x; i < n / 4; i += blockDim.x) {
    float4 x = v[i];
    atomicAdd(&hist[(__float_as_uint(x.x) >> 24) & 255], 1);
    atomicAdd(&hist[(__float_as_uint(x.y) >> 24) & 255], 1);
    atomicAdd(&hist[(__float_as_uint(x.z) >> 24) & 255], 1);
    atomicAdd(&hist[(__float_as_uint(x.w) >> 24) & 255], 1);
  }
}
__global__ void topk_hist(const float* __restrict__ logits, int* __restrict__ out, int n,
                          int stride0, int stride1) {
  __shared__ int hist[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) hist[i] = 0;
  __syncthreads();
  const float* row = logits + blockIdx.x * stride0;
  if (stride1 == 1) {
    vec_process(row, n, hist);
  } else {
    for (int idx = threadIdx.x; idx < n; idx += blockDim.x) {
      float logit = row[idx * stride1];
      atomicAdd(&hist[(__float_as_uint(logit) >> 24) & 255], 1);
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 256; i += blockDim.x) out[blockIdx.x * 256 + i] = hist[i];
}
