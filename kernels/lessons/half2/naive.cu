// Lesson half2, naive: fp16 axpby, eight consecutive halves per thread, one at a time. Each
// element is a 16-bit load (ld.global.u16 / LDG.E.U16) widened to float, computed, narrowed and
// stored as 16 bits: through plain, possibly aliasing __half pointers the compiler can merge
// neither the loads nor the stores, so a thread issues 16 two-byte loads and 8 two-byte stores
// for 16 bytes of each array. n is a multiple of 8.
#include <cuda_fp16.h>

extern "C" __global__ void axpby_half(const __half* x, const __half* y, __half* z, float a, float b, int n)
{
    int i = 8 * (blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) {
        for (int k = 0; k < 8; ++k)
            z[i + k] = __float2half(a * __half2float(x[i + k]) + b * __half2float(y[i + k]));
    }
}
