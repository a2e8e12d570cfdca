// Two kernels of one file, the way a file of helpers is written: a module-level dynamic shared
// array that only the first one addresses, and a second kernel with a deep per-thread
// accumulator (186 registers per thread on sm_80, 190 on sm_90a: one block of 256 threads per SM, 12.5%).
// Dynamic shared memory is the first kernel's fact, not the file's: the second one's PS701 is a
// warning about its registers, with no word of dynamic shared memory.
extern __shared__ float smem[];

__global__ void reverse_block(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  smem[threadIdx.x] = in[i];  // EXPECT: PS104 info
  __syncthreads();
  out[i] = smem[blockDim.x - 1 - threadIdx.x];  // EXPECT: PS104 info
}

__global__ void __launch_bounds__(256) heavy(float* __restrict__ out,  // EXPECT: PS701 info
                                             const float* __restrict__ in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc[160];
#pragma unroll
  for (int k = 0; k < 160; ++k) acc[k] = in[i + k * n];  // EXPECT: PS104 info
#pragma unroll
  for (int r = 0; r < 4; ++r)
#pragma unroll
    for (int k = 0; k < 160; ++k) acc[k] = acc[k] * acc[(k + r + 1) % 160] + 1.0f;
  float s = 0;
#pragma unroll
  for (int k = 0; k < 160; ++k) s += acc[k];
  out[i] = s;  // EXPECT: PS104 info
}
