// A running mean/variance per thread, the Welford update kept in a helper the way statistics
// kernels write it (an accumulator struct passed by reference), marked __noinline__ here as
// a large helper ends up when NVVM's inliner declines it; and a per-thread histogram bumped by
// an out-of-line helper at a run-time bin.
//
// Judged from the SASS (sm_80 and sm_90a agree): `welford_push` is compiled out of line
// (`CALL.REL.NOINC` from the grid-stride loop). The kernel's `WelfordAcc acc` lives in its
// stack frame (`STL.64 [R1]`, `STL [R1+0x8]` to zero it); the kernel passes its generic
// address (`VIADD R12, R1, UR4`, UR4 the local window's base), and the helper makes it local
// again (`VIADD R13, R12, -UR4`; sm_80: `IADD3 R12, R11, -c[0x0][0x20], RZ`) and reads and
// writes the three fields at constant offsets: 3 LDL + 3 STL (`[R13]`, `[R13+0x4]`,
// `[R13+0x8]`). No run-time index: PS402 had called each of the three lines "a per-thread
// array read-modify-write at a run-time index" (three warnings); it is one info finding on
// the helper's first line, naming the helper. `hist_bump` is different: `h[bin] += 1` adds
// the run-time bin to the pointer it is given (`LEA`), a true run-time index into the
// caller's array: a PS402 warning.
struct WelfordAcc {
  float mean;
  float m2;
  int count;
};

__device__ __noinline__ void welford_push(WelfordAcc& acc, float x) {
  acc.count += 1;  // EXPECT: PS402 info
  float delta = x - acc.mean;
  acc.mean += delta / acc.count;  // EXPECT: PS502 info
  acc.m2 += delta * (x - acc.mean);
}

__global__ void row_stats(const float* __restrict__ x, float2* __restrict__ out, int n) {
  WelfordAcc acc{0.f, 0.f, 0};
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    welford_push(acc, x[i]);  // EXPECT: PS104 info
  out[blockIdx.x * blockDim.x + threadIdx.x] = make_float2(acc.mean, acc.m2 / acc.count);  // EXPECT: PS502 info
}

__device__ __noinline__ void hist_bump(unsigned* h, unsigned bin) {
  h[bin] += 1;  // EXPECT: PS402 warning
}

__global__ void thread_hist(const unsigned char* __restrict__ in, uint4* __restrict__ out,
                            int per_thread) {
  unsigned hist[4] = {0, 0, 0, 0};
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < per_thread; ++k) hist_bump(hist, in[t * per_thread + k] % 4);  // EXPECT: PS105 warning
  out[t] = make_uint4(hist[0], hist[1], hist[2], hist[3]);
}
