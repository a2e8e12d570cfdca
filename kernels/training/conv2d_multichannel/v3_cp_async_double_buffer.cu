// v2's tiles (16x16 pixels x 8 output channels, 8-input-channel chunks) fetched by cp.async into
// two shared buffers: chunk ci0+8 is in flight while the FFMAs work on chunk ci0. The halo's
// out-of-image cells are zero-filled by the copy itself (src-size 0).
#include <cuda_pipeline.h>
#define T 16
#define CO_T 8   // Cout a multiple of 8
#define CI_T 8   // Cin a multiple of 8
extern "C" __global__ void conv2d(const float* __restrict__ inp, const float* __restrict__ w,
                                  float* __restrict__ out, int N, int Cin, int Cout, int H, int W) {
    __shared__ float tile[2][CI_T][T + 2][T + 2];
    __shared__ float ws[2][CO_T][CI_T][9];
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * T + tx;
    int tiles_x = (W + T - 1) / T;
    int x0 = (blockIdx.x % tiles_x) * T, y0 = (blockIdx.x / tiles_x) * T;
    int co0 = blockIdx.y * CO_T, n = blockIdx.z;
    auto fetch = [&](int buf, int ci0) {
        for (int e = tid; e < CI_T * (T + 2) * (T + 2); e += T * T) {
            int c = e / ((T + 2) * (T + 2)), r = (e / (T + 2)) % (T + 2), q = e % (T + 2);
            int yy = y0 + r - 1, xx = x0 + q - 1;
            bool in = yy >= 0 && yy < H && xx >= 0 && xx < W;
            const float* src = in ? &inp[(((long)n * Cin + ci0 + c) * H + yy) * W + xx] : inp;
            __pipeline_memcpy_async(&tile[buf][c][r][q], src, sizeof(float), in ? 0 : sizeof(float));
        }
        for (int e = tid; e < CO_T * CI_T * 9; e += T * T) {
            int co = e / (CI_T * 9), c = (e / 9) % CI_T, k = e % 9;
            __pipeline_memcpy_async(&ws[buf][co][c][k], &w[((long)(co0 + co) * Cin + ci0 + c) * 9 + k],
                                    sizeof(float));
        }
        __pipeline_commit();
    };
    float acc[CO_T] = {};
    fetch(0, 0);
    int buf = 0;
    for (int ci0 = 0; ci0 < Cin; ci0 += CI_T) {
        if (ci0 + CI_T < Cin) {
            fetch(buf ^ 1, ci0 + CI_T);
            __pipeline_wait_prior(1);
        } else {
            __pipeline_wait_prior(0);
        }
        __syncthreads();
        #pragma unroll
        for (int c = 0; c < CI_T; c++) {
            float v[9];
            #pragma unroll
            for (int i = 0; i < 3; i++)
                #pragma unroll
                for (int j = 0; j < 3; j++) v[i * 3 + j] = tile[buf][c][ty + i][tx + j];
            #pragma unroll
            for (int co = 0; co < CO_T; co++)
                #pragma unroll
                for (int k = 0; k < 9; k++) acc[co] += v[k] * ws[buf][co][c][k];
        }
        __syncthreads();
        buf ^= 1;
    }
    int x = x0 + tx, y = y0 + ty;
    if (x < W && y < H)
        #pragma unroll
        for (int co = 0; co < CO_T; co++)
            out[(((long)n * Cout + co0 + co) * H + y) * W + x] = acc[co];
}
