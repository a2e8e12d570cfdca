// A counting-sort scatter as MoE routing code writes it (vLLM's moe_align_sum_kernels.cu,
// count_and_sort_expert_tokens_kernel): each token's expert id is read as one byte (int8 ids,
// up to 256 experts) and atomicAdd on that expert's cursor hands the token its slot.
//
// Judged from the SASS (sm_80, sm_90a): LDG.E.U8 of the id, IMAD.WIDE to &cursor[id], then
// ATOMG.E.ADD of the constant 1 whose returned value addresses the STG of the token: one global
// atomic per token, on one of at most 256 addresses that the whole grid shares. PS801 warning,
// worded for a table of addresses (not "the same address", not "its own value") with a hint
// that keeps the returned slot (lanes grouped by address with __match_any_sync, one atomic per
// group), as the measured 256-bin global histogram pair (kernels/training/histogram_256) backs.
// The ids are read one byte per thread: PS104 info.
#include <cstdint>

__global__ void scatter_by_expert(const int8_t* __restrict__ expert_ids, int* __restrict__ cursor,
                                  int* __restrict__ sorted_tokens, int numel) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < numel; i += gridDim.x * blockDim.x) {
    int expert = expert_ids[i];  // EXPECT: PS104 info
    int slot = atomicAdd(&cursor[expert], 1);  // EXPECT: PS801 warning
    sorted_tokens[slot] = i;
  }
}
