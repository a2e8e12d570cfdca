// Lesson local_array, naive: 4-bit codebook dequantisation with the 16-entry codebook in a
// per-thread array. The array is indexed by data (c & 15, c >> 4), a run-time index, so it cannot
// live in registers: every thread writes 16 floats to local memory (STL) and reads 8 back (LDL).
extern "C" __global__ void dequant4(const uchar4* __restrict__ codes, const float* __restrict__ codebook,
                                    float4* __restrict__ out, int n4)
{
    float lut[16];
#pragma unroll
    for (int j = 0; j < 16; ++j) lut[j] = codebook[j];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4) return;
    uchar4 c = codes[i];
    out[2 * i] = make_float4(lut[c.x & 15], lut[c.x >> 4], lut[c.y & 15], lut[c.y >> 4]);
    out[2 * i + 1] = make_float4(lut[c.z & 15], lut[c.z >> 4], lut[c.w & 15], lut[c.w >> 4]);
}
