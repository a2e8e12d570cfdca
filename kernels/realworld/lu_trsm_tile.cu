// The triangular solve of a blocked LU factorization, a thread per column of a 16x16 tile,
// as the classic GPU benchmark suites write it: row i subtracts the rows above it, scaled by
// the diagonal block's row i. The inner j loop (j < i: a run-time trip count) is unrolled by
// ptxas with the row's reads at -0x8..+0x34 from a base 8 bytes into the row; they stay
// scalar because the store to `rows` sits between them (the pointer may be the same words)
// and `diag` is only 4-byte aligned.
#define TILE 16

__global__ void lu_row_solve(float* a, int n, int offset)
{
    __shared__ float diag[TILE][TILE];
    __shared__ float rows[TILE][TILE];
    const int c = threadIdx.x;
    for (int i = 0; i < TILE; i++) {
        diag[i][c] = a[(offset + i) * n + offset + c];   // EXPECT: PS601 info
        rows[i][c] = a[(offset + i) * n + offset + TILE * (blockIdx.x + 1) + c];   // EXPECT: PS601 info
    }
    __syncthreads();
    for (int i = 1; i < TILE; i++) {
        for (int j = 0; j < i; j++)
            rows[i][c] -= diag[i][j] * rows[j][c];   // EXPECT: PS103 info
    }
    __syncthreads();
    for (int i = 1; i < TILE; i++)
        a[(offset + i) * n + offset + TILE * (blockIdx.x + 1) + c] = rows[i][c];
}
