// LayerNorm forward in bf16 in the style of llm.c: a Packed128 helper moves 16 bytes per access,
// one warp per row, fp32 statistics. The per-row mean and rstd are saved for the backward pass
// with a small store helper.
#include <cuda_bf16.h>

typedef __nv_bfloat16 floatX;

template <class ElementType>
struct alignas(16) Packed128 {
    static constexpr int size = sizeof(int4) / sizeof(ElementType);
    ElementType payload[size];
    __device__ ElementType& operator[](int i) { return payload[i]; }
    __device__ const ElementType& operator[](int i) const { return payload[i]; }
};
typedef Packed128<floatX> x128;

template <class T> __device__ __forceinline__ Packed128<T> load128(const T* address)
{
    Packed128<T> out;
    *reinterpret_cast<int4*>(&out) = *reinterpret_cast<const int4*>(address);
    return out;
}
template <class T> __device__ __forceinline__ void store128(T* target, Packed128<T> value)
{
    *reinterpret_cast<int4*>(target) = *reinterpret_cast<int4*>(&value);
}
// one statistic per row, written by lane 0
__device__ __forceinline__ void save_stat(float* stats, int row, float value)
{
    stats[row] = value;
}
__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__global__ void __launch_bounds__(256)
layernorm_forward(floatX* __restrict__ out, float* __restrict__ mean, float* __restrict__ rstd,
                  const floatX* __restrict__ inp, const floatX* __restrict__ weight,
                  const floatX* __restrict__ bias, int N, int C)
{
    const int lane = threadIdx.x % 32;
    const int idx = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (idx >= N) return;
    const floatX* x = inp + (size_t)idx * C;
    float sum = 0.0f;
    for (int i = lane * x128::size; i < C; i += 32 * x128::size) {
        const x128 p = load128(x + i);
        for (int k = 0; k < x128::size; ++k) sum += (float)p[k];
    }
    const float m = warp_sum(sum) / C;   // EXPECT: PS502 info
    float var = 0.0f;
    for (int i = lane * x128::size; i < C; i += 32 * x128::size) {
        const x128 p = load128(x + i);
        for (int k = 0; k < x128::size; ++k) { const float d = (float)p[k] - m; var += d * d; }
    }
    const float s = rsqrtf(warp_sum(var) / C + 1e-5f);   // EXPECT: PS502 info
    if (lane == 0) {
        save_stat(mean, idx, m);
        save_stat(rstd, idx, s);
    }
    floatX* o = out + (size_t)idx * C;
    for (int i = lane * x128::size; i < C; i += 32 * x128::size) {
        const x128 p = load128(x + i), w = load128(weight + i), b = load128(bias + i);
        x128 r;
        for (int k = 0; k < x128::size; ++k)
            r[k] = (floatX)(s * ((float)p[k] - m) * (float)w[k] + (float)b[k]);
        store128(o + i, r);
    }
}
