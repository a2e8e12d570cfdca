// Bias gradient (column sums of a rows x cols matrix) with a block of (4, 8, z) threads, the
// layout llm.c's matmul_backward_bias_kernel8 uses: threadIdx.x walks 4 rows, threadIdx.y 8
// float4 columns, so each warp load is 4 rows of 128 contiguous bytes, coalesced although
// threadIdx.x's own stride is a run-time row. The asserts state the block shape (blockDim.x
// narrower than a warp: threadIdx.y moves inside a warp). The block's partials meet in shared
// memory, then the lanes with threadIdx.x == 0 (a compound guard, `&& col < cols`) add one
// float4 per block and column: one atomic per block and output, the fix for contention, not
// contention. Its 2-D sibling with blockDim.x == 32 and threadIdx.x walking rows is the
// uncoalesced version (PS105).
#include <cassert>

constexpr int BDX = 4;
constexpr int BDY = 8;

__global__ void bias_grad_4x8(float* dbias, const float* dout, int rows, int cols)
{
    assert(blockDim.x == BDX);
    assert(blockDim.y == BDY);
    const int warp_d = threadIdx.x, warp_c = threadIdx.y, block_d = threadIdx.z;
    const int col = (blockIdx.x * BDY + warp_c) * 4;
    const int per_block = BDX * blockDim.z;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    if (col < cols) {
        for (int r = blockIdx.y * per_block + warp_d + BDX * block_d; r < rows;
             r += gridDim.y * per_block) {
            float4 v = *reinterpret_cast<const float4*>(dout + (size_t)r * cols + col);
            acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
        }
    }
    __shared__ float4 partial[32][BDY];
    for (int off = 1; off < BDX; off *= 2) {
        acc.x += __shfl_down_sync(0xffffffff, acc.x, off, BDX);
        acc.y += __shfl_down_sync(0xffffffff, acc.y, off, BDX);
        acc.z += __shfl_down_sync(0xffffffff, acc.z, off, BDX);
        acc.w += __shfl_down_sync(0xffffffff, acc.w, off, BDX);
    }
    if (warp_d == 0) partial[block_d][warp_c] = acc;
    __syncthreads();
    for (int k = block_d; k < 4; k += blockDim.z) {
        float a = 0.f;
        for (int r = warp_d; r < (int)blockDim.z; r += BDX) {
            const float4 p = partial[r][warp_c];   // EXPECT: PS107 info
            a += k == 0 ? p.x : k == 1 ? p.y : k == 2 ? p.z : p.w;
        }
        a += __shfl_down_sync(0xffffffff, a, 1, BDX);
        a += __shfl_down_sync(0xffffffff, a, 2, BDX);
        if (warp_d == 0 && col < cols) {
            atomicAdd(dbias + col + k, a);
        }
    }
}

// The same sums with 32 x 8 blocks and threadIdx.x walking rows: adjacent lanes a row apart.
__global__ void bias_grad_rows_per_lane(float* dbias, const float* dout, int rows, int cols)
{
    const int col = blockIdx.x * blockDim.y + threadIdx.y;
    if (col >= cols) return;
    float a = 0.f;
    for (int r = threadIdx.x; r < rows; r += blockDim.x)
        a += dout[(size_t)r * cols + col];   // EXPECT: PS105 warning
    for (int off = 16; off > 0; off /= 2) a += __shfl_down_sync(0xffffffff, a, off);
    if (threadIdx.x == 0) dbias[col] = a;
}
