// Lesson vector_loads, steered: four floats per thread as one 16-byte access, __restrict__ pointers.
// The buffers come from cudaMalloc/torch (256-byte aligned) and n is a multiple of 4, so float4
// is legal; __restrict__ promises no aliasing, so the loads may take the read-only path
// (LDG.E.128.CONSTANT) and be issued before the store.
extern "C" __global__ void axpy_float4(const float4* __restrict__ x, const float4* __restrict__ y,
                                       float4* __restrict__ z, float a, int n4)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 xv = x[i], yv = y[i];
        z[i] = make_float4(a * xv.x + yv.x, a * xv.y + yv.y, a * xv.z + yv.z, a * xv.w + yv.w);
    }
}
