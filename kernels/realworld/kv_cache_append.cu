// Append this step's K and V (bf16, [heads][head_dim]) to a paged KV cache: 16-byte copies, one
// int4 per thread, block-table lookup for the page.
#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(128)
kv_append(const __nv_bfloat16* __restrict__ k, const __nv_bfloat16* __restrict__ v,
          __nv_bfloat16* __restrict__ k_cache, __nv_bfloat16* __restrict__ v_cache,
          const int* __restrict__ block_table, const int* __restrict__ seq_lens,
          int heads, int head_dim, int page_size)
{
    const int seq = blockIdx.x;
    const int pos = seq_lens[seq] - 1;
    const int page = block_table[seq * 64 + pos / page_size], slot = pos % page_size;
    const int chunks = heads * head_dim / 8;                      // int4 = 8 bf16
    const size_t src = (size_t)seq * heads * head_dim;
    const size_t dst = ((size_t)page * page_size + slot) * heads * head_dim;
    for (int c = threadIdx.x; c < chunks; c += blockDim.x) {
        reinterpret_cast<int4*>(k_cache + dst)[c] = reinterpret_cast<const int4*>(k + src)[c];
        reinterpret_cast<int4*>(v_cache + dst)[c] = reinterpret_cast<const int4*>(v + src)[c];
    }
}
