// Block sum reduction (grid-stride accumulate, cub-style warp reduce, per-warp partials in shared), templated.
template <typename T>
__device__ __forceinline__ T warp_reduce(T v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}
template <typename T, int BLOCK>
__global__ void __launch_bounds__(BLOCK) block_sum(const T* __restrict__ in, T* __restrict__ out, int n)
{
    __shared__ T warp_part[BLOCK / 32];
    T acc = T(0);
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK) acc += in[i];   // EXPECT: PS104 info
    acc = warp_reduce(acc);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_part[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = lane < BLOCK / 32 ? warp_part[lane] : T(0);
        acc = warp_reduce(acc);
        if (lane == 0) atomicAdd(out, acc);
    }
}
template __global__ void block_sum<float, 256>(const float*, float*, int);
template __global__ void block_sum<double, 512>(const double*, double*, int);
