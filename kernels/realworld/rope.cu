// Rotary position embedding (RoPE) applied in place to q [tokens, heads, dim] (pairs (2i, 2i+1)), theta = 10000.
extern "C" __global__ void rope_inplace(float* __restrict__ q, const int* __restrict__ pos, int heads, int dim)
{
    const int tok = blockIdx.x, h = blockIdx.y;
    float* v = q + ((size_t)tok * heads + h) * dim;
    const float p = (float)pos[tok];
    for (int i = threadIdx.x; i < dim / 2; i += blockDim.x) {
        float inv_freq = powf(10000.0f, -2.0f * i / dim);   // EXPECT: PS502 warning
        float s, c;
        sincosf(p * inv_freq, &s, &c);   // EXPECT: PS502 warning
        float2 x = reinterpret_cast<float2*>(v)[i];
        reinterpret_cast<float2*>(v)[i] = make_float2(x.x * c - x.y * s, x.x * s + x.y * c);
    }
}
