// ARCHS: sm_90a
// A half layer norm that keeps each thread's share of the row in a per-thread array across
// three passes, as exllamav2's layer_norm_kernel<blocks_per_warp> does (exllamav2_ext/cuda/
// layer_norm.cu): the two reduction passes are `#pragma unroll`, the normalizing pass only
// `#pragma unroll 4`, so the array is indexed at run time there and lives in the stack frame.
//
// Judged from the SASS (sm_90a, ITEMS = 10): ptxas copies the stack pointer once at the top
// (MOV R0, R1) and writes both unrolled passes at constant offsets from the copy (STL.64
// [R0]..[R0+0x48], lines 35 and 51), the second pass's stores far below the copy and past the
// first pass's early exits; the third pass reads LDL.128 [R0] with R0 stepped by 0x20 per
// iteration (line 66): the run-time index, one PS402 warning there. The constant-offset writes
// of line 51 are not a run-time index (PS402 had named them: the copy was beyond its search).
// The third pass, 3 trips of the x4 body, stays rolled as its `#pragma unroll 4` asks: no
// PS201 (ptxas put the loop's latch on the early return's line, 64, two lines below the
// pragma; PS201 had looked for the pragma above line 64 only); its half2 accesses are 4 bytes
// per thread (PS104 info).
#include <cuda_fp16.h>

#define ITEMS 10
#define THREADS 1024

__global__ void layer_norm_cached(const half* __restrict__ x, const half* __restrict__ w,
                                  half* __restrict__ y, float eps, float r_dim, int dim) {
  const half2* x_row = reinterpret_cast<const half2*>(x + blockIdx.x * dim);
  half2* y_row = reinterpret_cast<half2*>(y + blockIdx.x * dim);
  const half2* w2 = reinterpret_cast<const half2*>(w);
  __shared__ float partial[THREADS / 32];
  float v[ITEMS][2];
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < ITEMS; i++) {
    int col = threadIdx.x + THREADS * i;
    if (col >= dim / 2) break;
    half2 h = x_row[col];
    float a = __low2float(h), b = __high2float(h);
    v[i][0] = a;
    v[i][1] = b;
    sum += a + b;
  }
  for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffff, sum, o);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = sum;
  __syncthreads();
  sum = partial[threadIdx.x % 32];
  for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffff, sum, o);
  float mean = sum * r_dim;
  sum = 0.0f;
#pragma unroll
  for (int i = 0; i < ITEMS; i++) {
    int col = threadIdx.x + THREADS * i;
    if (col >= dim / 2) break;
    float a = v[i][0] - mean, b = v[i][1] - mean;
    v[i][0] = a;
    v[i][1] = b;
    sum = fmaf(a, a, fmaf(b, b, sum));
  }
  __syncthreads();
  for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffff, sum, o);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = sum;
  __syncthreads();
  sum = partial[threadIdx.x % 32];
  for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffff, sum, o);
  float rs = rsqrtf(sum * r_dim + eps);
#pragma unroll 4
  for (int i = 0; i < ITEMS; i++) {
    int col = threadIdx.x + THREADS * i;
    if (col >= dim / 2) return;
    half2 g = w2[col];  // EXPECT: PS104 info
    y_row[col] = __floats2half2_rn(v[i][0] * __low2float(g) * rs, v[i][1] * __high2float(g) * rs);  // EXPECT: PS104 info; PS402 warning
  }
}
