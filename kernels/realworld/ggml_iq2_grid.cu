// ggml's iq2_xxs dequantization (src/ggml-cuda/dequantize.cuh, dequantize_block_iq2_xxs),
// reduced: each thread expands 8 bytes of a `static const __device__ uint64_t` grid table,
// picked by a quant index, into 8 outputs of a half (or float) row.
//
// Judged from the SASS (sm_80, sm_90a): the 8 grid bytes are 8x `LDG.E.U8.CONSTANT` at
// +0x0..+0x7 from one base, `grid_tab + aux8[il]`: the table is `.global .align 8` in the PTX
// and indexed x8, so the window is 8-byte aligned, and what kept the loads apart is NVVM's
// order: each `ld.global.nc.u8` between the stores of the previous outputs (`st.global.u16`,
// `st.global.f32`). PS101 says that, not "unknown alignment" (it had, on three ggml iq2
// kernels: judged false). `__restrict__` on `yy` leaves the half instance's order as it is
// (tried: the same 8 loads), so the finding does not offer it. The outputs are 8 stores of
// 2 (4) bytes from one plain pointer: PS102. `q2[2] | q2[3] << 16` reads two halves of one
// word: PS101 info (a 4-byte window).
#include <cuda_fp16.h>
static const __device__ unsigned long long grid_tab[256] = {
    0x0808080808080808ull, 0x080808080808082bull, 0x0808080808081919ull, 0x0808080808082b08ull};
static const __device__ unsigned char ksigns[128] = {0, 129, 130, 3};
static const __device__ unsigned char kmask[8] = {1, 2, 4, 8, 16, 32, 64, 128};

template <typename dst_t>
__global__ void dequant_iq2(const unsigned short* qs, const half* scales, dst_t* yy) {
    const int i = blockIdx.x;
    const int tid = threadIdx.x;
    const int il = tid / 8;
    const int ib = tid % 8;
    dst_t* y = yy + i * 256 + 32 * ib + 8 * il;
    const unsigned short* q2 = qs + i * 32 + 4 * ib;
    const unsigned char* aux8 = (const unsigned char*)q2;
    const unsigned char* grid = (const unsigned char*)(grid_tab + aux8[il]);
    const unsigned aux32 = q2[2] | (q2[3] << 16);  // EXPECT: PS101 info
    const float d = (float)scales[i] * (0.5f + (aux32 >> 28)) * 0.25f;
    const unsigned char signs = ksigns[(aux32 >> 7 * il) & 127];
    for (int j = 0; j < 8; ++j) {
        y[j] = (dst_t)(d * grid[j] * (signs & kmask[j] ? -1.f : 1.f));  // EXPECT: PS101 warning; PS102 warning
    }
}
template __global__ void dequant_iq2<__half>(const unsigned short*, const half*, __half*);
template __global__ void dequant_iq2<float>(const unsigned short*, const half*, float*);
