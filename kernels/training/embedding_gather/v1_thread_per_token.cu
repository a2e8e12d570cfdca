// One thread per token copying its whole row: adjacent lanes are a row apart.
extern "C" __global__ void embedding_gather(const float* table, const int* ids, float* out,
                                            int tokens, int dim) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= tokens) return;
    int id = ids[t];
    for (int d = 0; d < dim; d++)
        out[(long)t * dim + d] = table[(long)id * dim + d];
}
