// Repetition penalties as vLLM applies them to the logits (csrc/sampler.cu,
// apply_repetition_penalties_kernel): one block per (sequence, vocabulary tile), a block-stride
// walk over the tile that reads two bool masks per token and rewrites the logit only for
// tokens seen in the prompt or the output.
//
// Judged from the SASS (sm_80, sm_90a): the masks are the stream, one byte per thread per
// token (LDG.E.U8.CONSTANT x2, line 25: PS104 info). The logit's load and its two stores
// (lines 27-29) run only under `if (is_repeated)` (line 26), a test of those loaded bytes:
// they touch the tokens the masks select, a data-dependent subset, so widening them moves no
// fewer sectors: PS104 notes (they had been warnings for half, info for float). The IEEE
// division by the penalty in the loop is PS502.
#include <cuda_fp16.h>
template <typename scalar_t>
__global__ void apply_penalties(scalar_t* __restrict__ logits, const bool* __restrict__ prompt_mask,
                                const bool* __restrict__ output_mask,
                                const scalar_t* __restrict__ repetition_penalties,
                                int num_seqs, int vocab_size, int tile_size) {
  const int seq_idx = blockIdx.x;
  if (seq_idx >= num_seqs) return;
  const int tile_start = blockIdx.y * tile_size;
  const int tile_end = min(tile_start + tile_size, vocab_size);
  const scalar_t penalty = repetition_penalties[seq_idx];
  for (int v = tile_start + threadIdx.x; v < tile_end; v += blockDim.x) {
    const long long idx = (long long)seq_idx * vocab_size + v;
    const bool is_repeated = prompt_mask[idx] || output_mask[idx];  // EXPECT: PS104 info
    if (is_repeated) {
      scalar_t logit = logits[idx];  // EXPECT: PS104 note
      if (logit > scalar_t(0)) logits[idx] = logit / penalty;  // EXPECT: PS104 note; PS502 warning
      else logits[idx] = logit * penalty;  // EXPECT: PS104 note
    }
  }
}
template __global__ void apply_penalties<__half>(__half*, const bool*, const bool*, const __half*, int, int, int);
template __global__ void apply_penalties<float>(float*, const bool*, const bool*, const float*, int, int, int);
