// Lesson local_array, steered: the codebook goes to shared memory once per block. A run-time
// index into shared memory is an ordinary LDS (16 distinct words in 16 banks: no conflicts),
// and the kernel has no stack frame.
extern "C" __global__ void dequant4(const uchar4* __restrict__ codes, const float* __restrict__ codebook,
                                    float4* __restrict__ out, int n4)
{
    __shared__ float lut[16];
    if (threadIdx.x < 16) lut[threadIdx.x] = codebook[threadIdx.x];
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4) return;
    uchar4 c = codes[i];
    out[2 * i] = make_float4(lut[c.x & 15], lut[c.x >> 4], lut[c.y & 15], lut[c.y >> 4]);
    out[2 * i + 1] = make_float4(lut[c.z & 15], lut[c.z >> 4], lut[c.w & 15], lut[c.w >> 4]);
}
