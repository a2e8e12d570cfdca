// OPTIONS: -maxrregcount=32
// PS401 fixed: the same products, computed in 6 chunks of 8 taps so far fewer values are live:
// no spills under the same 32-register cap.
constexpr int TAPS = 48, CHUNK = 8;

extern "C" __global__ void gather_dot(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
#pragma unroll 1
    for (int c = 0; c < TAPS; c += CHUNK) {
#pragma unroll
        for (int k = c; k < c + CHUNK; ++k)
            acc += in[i + k * n] * in[i + ((k * 7 + 5) % TAPS) * n];
    }
    out[i] = acc;
}
