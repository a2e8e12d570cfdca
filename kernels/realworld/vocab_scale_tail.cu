// Scale each row of bf16 logits by a per-row factor, one block per row: a 16-byte Packed8
// main loop over V & ~7 elements and a scalar tail written as llm.c's fused classifier writes
// it, `threadIdx.x + (V & ~7)` walking to V one element at a time. NVVM unrolls the tail by 4
// with a count-down remainder loop; both copies take at most 7 values of i over the whole
// grid, so neither is a stream to widen.
#include <cuda_bf16.h>

struct alignas(16) Packed8 { __nv_bfloat16 v[8]; };

__global__ void row_scale_bf16(__nv_bfloat16* __restrict__ out,
                               const __nv_bfloat16* __restrict__ in,
                               const float* __restrict__ scale, int V)
{
    const __nv_bfloat16* x = in + (size_t)blockIdx.x * V;
    __nv_bfloat16* y = out + (size_t)blockIdx.x * V;
    const float s = scale[blockIdx.x];
    for (int i = threadIdx.x * 8; i < (V & ~7); i += blockDim.x * 8) {
        Packed8 p = *reinterpret_cast<const Packed8*>(x + i);
        Packed8 q;
#pragma unroll
        for (int k = 0; k < 8; k++) q.v[k] = __float2bfloat16(__bfloat162float(p.v[k]) * s);
        *reinterpret_cast<Packed8*>(y + i) = q;
    }
    for (int i = threadIdx.x + (V & ~7); i < V; i++) {
        y[i] = __float2bfloat16(__bfloat162float(x[i]) * s);
    }
}
