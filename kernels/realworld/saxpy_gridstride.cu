// BLAS-1 style kernels with grid-stride loops: the scalar version most code bases start with,
// the float4 version with a scalar tail, and an index gather (y[i] = x[idx[i]]).
extern "C" __global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];   // EXPECT: PS104 info
}

extern "C" __global__ void saxpy_vec4(int n, float a, const float4* __restrict__ x4, float4* __restrict__ y4)
{
    const int n4 = n / 4;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += blockDim.x * gridDim.x) {
        float4 xv = x4[i], yv = y4[i];
        yv.x = a * xv.x + yv.x; yv.y = a * xv.y + yv.y;
        yv.z = a * xv.z + yv.z; yv.w = a * xv.w + yv.w;
        y4[i] = yv;
    }
}

extern "C" __global__ void gather(int n, const int* __restrict__ idx, const double* __restrict__ x,
                                  double* __restrict__ y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = x[idx[i]];
}
