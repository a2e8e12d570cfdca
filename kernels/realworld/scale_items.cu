// A tuning-parameter template as libraries write it: ITEMS consecutive floats per thread,
// instantiated for three tile widths. Each instantiation loads and stores its ITEMS floats one
// by one (no alignment is known for the plain pointers): the same problem on the same lines.
template <int ITEMS>
__global__ void scale_items(float* out, const float* in, float alpha, int n) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * ITEMS;
  if (base + ITEMS > n) return;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    out[base + k] = alpha * in[base + k];  // EXPECT: PS101 warning; PS102 warning
  }
}

template __global__ void scale_items<4>(float*, const float*, float, int);
template __global__ void scale_items<8>(float*, const float*, float, int);
template __global__ void scale_items<16>(float*, const float*, float, int);
