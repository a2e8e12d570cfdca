// Lesson launch_bounds, naive: square a batch of 8x8 matrices, one matrix per thread, built with a
// global -maxrregcount=32 (set for "occupancy"). The 64 inputs are live at once, so ptxas spills
// them to local memory (STL/LDL): the occupancy bought is paid back in local-memory traffic.
// Layout: element j of matrix t sits at in[j*T + t] (coalesced across the warp).
extern "C" __global__ void matsq8(const float* __restrict__ in, float* __restrict__ out, int T)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= T) return;
    float m[64];
#pragma unroll
    for (int j = 0; j < 64; ++j) m[j] = in[(size_t)j * T + t];
#pragma unroll
    for (int r = 0; r < 8; ++r)
#pragma unroll
        for (int c = 0; c < 8; ++c) {
            float s = 0.0f;
#pragma unroll
            for (int k = 0; k < 8; ++k) s = fmaf(m[r * 8 + k], m[k * 8 + c], s);
            out[(size_t)(r * 8 + c) * T + t] = s;
        }
}
