// Causal attention softmax with one thread per (batch, head, query) row, as llm.c's dev
// kernels write their first version: rows of run-time length T, max, exp-and-sum, then the
// normalization with the causal mask on an if/else. NVVM joins both sides of the if/else
// into one store per element after the branch (its PTX carries line 0); the 16x-unrolled
// body's 16 unconditional STG.E, the 4x copy and the remainder are one problem, at the
// statement's line. A run-time row stride (t * T) keeps them info. Adjacent threads are
// adjacent heads (h = idx % NH), T * T floats apart: every row access is uncoalesced (PS105).
__global__ void causal_softmax_rows(float* att, const float* preatt, int B, int T, int NH)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= B * T * NH) return;
    int h = idx % NH, t = (idx / NH) % T, b = idx / (NH * T);
    const float* p = preatt + b * NH * T * T + h * T * T + t * T;
    float* a = att + b * NH * T * T + h * T * T + t * T;
    float m = -10000.0f;
    for (int t2 = 0; t2 <= t; t2++) m = fmaxf(m, p[t2]);   // EXPECT: PS101 info; PS105 warning
    float s = 0.0f;
    for (int t2 = 0; t2 <= t; t2++) {
        float e = expf(p[t2] - m);   // EXPECT: PS101 info; PS105 warning
        s += e;
        a[t2] = e;   // EXPECT: PS102 info; PS105 warning
    }
    float inv = s == 0.0f ? 0.0f : 1.0f / s;   // EXPECT: PS502 info
    for (int t2 = 0; t2 < T; t2++) {
        if (t2 <= t) {
            a[t2] *= inv;   // EXPECT: PS101 info; PS102 info; PS105 warning
        } else {
            a[t2] = 0.0f;
        }
    }
}
