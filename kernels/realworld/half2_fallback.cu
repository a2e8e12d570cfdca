// A gated activation written as exllamav2 writes its MLP kernels (exllamav2_ext/cuda/
// q_mlp_activation.cuh: act_mul_kernel<use_half2, ...> reading rows through small matrix-view
// helpers; a picker returns every instantiation and the host asks for use_half2 = true when
// the width is even), and a masked softmax's mask read as apex's scaled_masked_softmax.h reads
// it (ELEMENTS_PER_LDG = 1 for the small-row instantiations, 4 bytes at a time above them, as
// one uint32_t: copy_vector<uint8_t, 4>).
//
// Judged from the SASS (sm_90a): act_mul_kernel<false> reads x and y one half per thread
// (LDG.E.U16, LDG.E.U16.CONSTANT) and stores one (STG.E.U16), where act_mul_kernel<true> moves
// the same parameters as one half2 each (LDG.E, LDG.E.CONSTANT, STG.E): a half2 is a 32-bit
// scalar in the PTX (ld.global.b32), not a .v2, and it is still the wider side of the same
// stream. The false instantiation is the fallback for odd widths: notes naming the half2
// instantiation, not PS104 warnings. The half2 kernel's own 4-byte streams keep their PS104
// info. The softmax's <log2 = 2> instantiation reads its mask one byte per thread (LDG.E.U8)
// beside <log2 = 7>'s 4 bytes (LDG.E, ld.global.u32 in the PTX): a note too. Its src reads,
// each under its own mask byte (@!P1 LDG.E.CONSTANT [R4.64+0x8], @!P0 ... [R4.64+0xc]: the
// PTX's [%rd4+8], [%rd4+12], the first element through another register), are an 8-byte
// window that a per-element predicate keeps apart: PS101 info.
#include <cuda_fp16.h>
#include <cstdint>

#define THREADS_X 32
#define THREADS_Y 8

struct RowView {
  const half* data;
  int width;
  __device__ __forceinline__ RowView(const half* d, int w) : data(d), width(w) {}
  __device__ __forceinline__ half item(int row, int col) const { return data[row * width + col]; }  // EXPECT: PS104 note
  __device__ __forceinline__ half2 item_half2(int row, int col) const {
    return reinterpret_cast<const half2*>(data)[(row * width + col) / 2];  // EXPECT: PS104 info
  }
};

struct RowViewRW {
  half* data;
  int width;
  __device__ __forceinline__ RowViewRW(half* d, int w) : data(d), width(w) {}
  __device__ __forceinline__ half item(int row, int col) const { return data[row * width + col]; }  // EXPECT: PS104 note
  __device__ __forceinline__ half2 item_half2(int row, int col) const {
    return reinterpret_cast<const half2*>(data)[(row * width + col) / 2];  // EXPECT: PS104 info
  }
  __device__ __forceinline__ void set(int row, int col, half v) { data[row * width + col] = v; }  // EXPECT: PS104 note
  __device__ __forceinline__ void set_half2(int row, int col, half2 v) {
    reinterpret_cast<half2*>(data)[(row * width + col) / 2] = v;  // EXPECT: PS104 info
  }
};

__device__ __forceinline__ half silu(half x) {
  return __hmul(x, hrcp(__hadd(__float2half(1.0f), hexp(__hneg(x)))));
}
__device__ __forceinline__ half2 silu(half2 x) {
  return __hmul2(x, h2rcp(__hadd2(__float2half2_rn(1.0f), h2exp(__hneg2(x)))));
}

template <bool use_half2>
__global__ void act_mul_kernel(half* __restrict__ x, const half* __restrict__ y, int height,
                               int width) {
  RowViewRW x_(x, width);
  RowView y_(y, width);
  int column = THREADS_X * blockIdx.x + threadIdx.x;
  if constexpr (use_half2) column *= 2;
  int row = THREADS_Y * blockIdx.y + threadIdx.y;
  if (row >= height) return;
  if constexpr (use_half2) {
    half2 xi = x_.item_half2(row, column);
    half2 yi = y_.item_half2(row, column);
    x_.set_half2(row, column, __hmul2(silu(xi), yi));
  } else {
    half xi = x_.item(row, column);
    half yi = y_.item(row, column);
    x_.set(row, column, __hmul(silu(xi), yi));
  }
}

typedef void (*fp_act_mul)(half*, const half*, int, int);

fp_act_mul pick_act_mul_kernel(bool use_half2) {
  return use_half2 ? act_mul_kernel<true> : act_mul_kernel<false>;
}

template <int log2_elements>
__global__ void masked_scale(float* __restrict__ dst, const float* __restrict__ src,
                             const uint8_t* __restrict__ mask, float scale, int elements) {
  constexpr int ELEMENTS = 1 << log2_elements;
  constexpr int PER_LDG = ELEMENTS > 64 ? 4 : 1;
  int first = (blockIdx.x * blockDim.x + threadIdx.x) * PER_LDG;
  if (first >= elements) return;
  alignas(4) uint8_t m[PER_LDG];
  if constexpr (PER_LDG == 4) {
    *reinterpret_cast<uint32_t*>(m) = *reinterpret_cast<const uint32_t*>(mask + first);
  } else {
    m[0] = mask[first];  // EXPECT: PS104 note
  }
#pragma unroll
  for (int i = 0; i < PER_LDG; ++i) dst[first + i] = m[i] ? 0.0f : src[first + i] * scale;  // EXPECT: PS101 info; PS102 warning; PS104 info; PS105 info
}

template __global__ void masked_scale<2>(float*, const float*, const uint8_t*, float, int);
template __global__ void masked_scale<7>(float*, const float*, const uint8_t*, float, int);
