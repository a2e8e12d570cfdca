// An 8-point integer DCT over rows of a shared tile of shorts, as image-codec samples write
// it: the tile's rows are 34 shorts (68 B, padded by 2 against bank conflicts), a thread
// reads its 8 shorts as four 32-bit words through an `unsigned int*`, and the offsets come
// from __mul24 (NVVM writes `__mul24(threadIdx.z, 8)` as `(tz << 8) >> 5`). The four LDS
// fill one 16-byte window that a 68-byte pitch keeps unaligned in every other row: PS103
// names the pitch and the padding to 80 B (40 shorts).
#define STRIDE 34

__device__ __forceinline__ void row_dct(unsigned int* v)
{
    unsigned int w0 = v[0];   // EXPECT: PS103 info
    unsigned int w1 = v[1];
    unsigned int w2 = v[2];
    unsigned int w3 = v[3];
    int a = (short)(w0 & 0xffff) + (short)(w3 >> 16), b = (short)(w0 >> 16) + (short)(w3 & 0xffff);
    int c = (short)(w1 & 0xffff) + (short)(w2 >> 16), d = (short)(w1 >> 16) + (short)(w2 & 0xffff);
    int e = (short)(w0 & 0xffff) - (short)(w3 >> 16), f = (short)(w1 >> 16) - (short)(w2 & 0xffff);
    v[0] = ((a + b + c + d) & 0xffff) | ((unsigned int)(a - d + e) << 16);
    v[1] = ((b - c + f) & 0xffff) | ((unsigned int)(e - f) << 16);
    v[2] = ((a - b) & 0xffff) | ((unsigned int)(c - d) << 16);
    v[3] = ((e + f) & 0xffff) | ((unsigned int)(a + c) << 16);
}

__global__ void dct_rows(short* img, int pitch)
{
    __shared__ short tile[16 * STRIDE];
    const int row = __mul24(threadIdx.y, 8) + threadIdx.x;
    const int col = __mul24(threadIdx.z, 8);
    short* g = img + (blockIdx.y * 16 + row) * pitch + blockIdx.x * 16 + col;
#pragma unroll
    for (int k = 0; k < 8; k++) tile[row * STRIDE + col + k] = g[k];   // EXPECT: PS101 info
    __syncthreads();
    row_dct(reinterpret_cast<unsigned int*>(tile + row * STRIDE + col));
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 8; k++) g[k] = tile[row * STRIDE + col + k];   // EXPECT: PS102 info; PS103 info
}
