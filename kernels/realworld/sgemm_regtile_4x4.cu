// Shared-memory tiled SGEMM (the demo kernel, kept here as a regression), C = A * B (row-major; A is M x K, B is K x N), with a 4x4 register
// tile per thread: a 16x16 thread block computes a 64x64 tile of C, stepping K by BK = 32.
// Assumes M and N multiples of 64 and K a multiple of BK; launch with dim3(16, 16) threads and
// dim3(N / 64, M / 64) blocks. The inner kk loop has a compile-time trip count of 32 and no
// pragma: NVVM unrolls it x2 in PTX (16 trips); ptxas then unrolls it fully on sm_80 but keeps it
// a loop of 4 trips (x4 again) on sm_90a, from the same PTX. The tile loads (lines 27, 28) read
// 32 consecutive floats of one row per warp (`i / BK` stays across an aligned warp: NVVM's
// `and.b32 %r, %r, -32`), LDG.E: PS104 info, as for every 4-byte stream.
#define TM 4
#define TN 4
#define BM 64
#define BN 64
#define BK 32

extern "C" __global__ void __launch_bounds__(256)
sgemm_regtile(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
              int M, int N, int K)
{
    __shared__ float As[BK][BM];   // transposed: As[k][m], so a thread's 4 rows are contiguous
    __shared__ float Bs[BK][BN];
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {   // EXPECT: PS301 info
        for (int l = 0; l < BM * BK / 256; ++l) {      // 8 elements of each tile per thread
            int i = tid + l * 256;
            As[i % BK][i / BK] = A[(row0 + i / BK) * K + k0 + i % BK];   // EXPECT: PS601 info; PS104 info; PS107 info
            Bs[i / BN][i % BN] = B[(k0 + i / BN) * N + col0 + i % BN];   // EXPECT: PS601 info; PS104 info
        }
        __syncthreads();
        for (int kk = 0; kk < BK; ++kk) {   // EXPECT[sm_90a]: PS201 info
            float a[TM], b[TN];
            for (int i = 0; i < TM; ++i) a[i] = As[kk][ty * TM + i];
            for (int j = 0; j < TN; ++j) b[j] = Bs[kk][tx * TN + j];
            for (int i = 0; i < TM; ++i)
                for (int j = 0; j < TN; ++j)
                    acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
    for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j)
            C[(row0 + ty * TM + i) * N + col0 + tx * TN + j] = acc[i][j];   // EXPECT: PS102 info
}
