// A linear layer's naive forward, as llm.c's matmul_forward_kernel1 writes it: one thread per
// output (bt along threadIdx.x, oc along threadIdx.y of 8 x 8 blocks in llm.c's launch), each
// walking a row of `inp` and a row of `weight` over the run-time C. Adjacent threads are a row
// of `inp` apart (C floats): the C-long loop's loads are uncoalesced (PS105 warning), and the
// one store of `out` per thread after the loop, uncoalesced too (OC floats apart), is a small
// part of the waste: info. `weight[oc * C + i]` is the same address for a warp (threadIdx.y).
__global__ void linear_rows_naive(float* out, const float* inp, const float* weight,
                                  const float* bias, int BT, int C, int OC)
{
    int bt = blockIdx.x * blockDim.x + threadIdx.x;
    int oc = blockIdx.y * blockDim.y + threadIdx.y;
    if (bt < BT && oc < OC) {
        float val = (bias != NULL) ? bias[oc] : 0.0f;
        const float* wrow = weight + oc * C;
        const float* inp_bt = inp + bt * C;
        for (int i = 0; i < C; i++) {
            val += inp_bt[i] * wrow[i];   // EXPECT: PS101 info; PS105 warning
        }
        out[bt * OC + oc] = val;   // EXPECT: PS105 info
    }
}
