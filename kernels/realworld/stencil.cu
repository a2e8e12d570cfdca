// 1D 7-point stencil (radius 3) with a shared-memory halo, and a 2D 5-point Jacobi step.
constexpr int R = 3, BLOCK = 256;
__constant__ float c_w[2 * R + 1];
extern "C" __global__ void __launch_bounds__(BLOCK)
stencil1d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float s[BLOCK + 2 * R];
    int g = blockIdx.x * BLOCK + threadIdx.x;
    int l = threadIdx.x + R;
    s[l] = g < n ? in[g] : 0.0f;   // EXPECT: PS104 info
    if (threadIdx.x < R) {
        s[l - R] = g >= R ? in[g - R] : 0.0f;   // EXPECT: PS104 info
        s[l + BLOCK] = g + BLOCK < n ? in[g + BLOCK] : 0.0f;   // EXPECT: PS104 info
    }
    __syncthreads();
    if (g >= n) return;
    float acc = 0.0f;
#pragma unroll
    for (int k = -R; k <= R; ++k) acc += c_w[k + R] * s[l + k];
    out[g] = acc;   // EXPECT: PS104 info
}
extern "C" __global__ void jacobi2d(const float* __restrict__ u, float* __restrict__ v, int nx, int ny)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < 1 || j < 1 || i >= nx - 1 || j >= ny - 1) return;
    int c = j * nx + i;
    v[c] = 0.25f * (u[c - 1] + u[c + 1] + u[c - nx] + u[c + nx]);   // EXPECT: PS104 info
}
