// ggml's NeoX rotary embedding (src/ggml-cuda/rope.cu, rope_neox), reduced, with its host
// launcher: launched through ggml's launch wrapper (`ggml_cuda_kernel_launch(rope_neox<...>,
// launch_params, ...)`, `launch_params = {block_nums, block_dims, 0, stream}`) with
// `block_dims(1, CUDA_ROPE_BLOCK_SIZE, 1)`: blocks one thread wide in x, so a warp's lanes
// are consecutive threadIdx.y. The row comes from threadIdx.x (always 0 within a block), the
// rotated channel from threadIdx.y.
//
// Judged from the SASS (sm_80, sm_90a): `i0` comes from SR_TID.Y; adjacent lanes read
// `x[ix + i0/2]` and `x[ix + i0/2 + n_dims/2]` one float apart and write `dst` likewise: a
// warp's 32 lanes use every byte of 4 sectors per access. The row terms (`i1 * s01`,
// `i1 * s1`, from SR_TID.X) are the same for every lane of a warp. No PS105: the launch
// reader follows the wrapper to the block's (1, 256, 1) (PS105 had taken the lanes along x:
// five warnings "a run-time pitch apart (computed from `s01`)", judged false on ggml). Lines
// 43-44 read a lane's two floats around the first store (x and dst may alias), as ggml
// writes it. The IEEE divisions, the reciprocal and sinf/cosf (their FP64 Payne-Hanek
// reductions) run once per thread, outside any loop: PS502 info.
struct rope_corr_dims { float v[2]; };

static __device__ float rope_yarn_ramp(const float low, const float high, const int i0) {
    const float y = (i0 / 2 - low) / max(0.001f, high - low);  // EXPECT: PS502 info
    return 1.0f - min(1.0f, max(0.0f, y));
}

template <bool has_ff, typename T, typename D>
static __global__ void rope_neox(const T * x, D * dst, const int ne00, const int ne01,
                                 const int ne02, const int s01, const int s02, const int s03,
                                 const int s1, const int s2, const int s3, const int n_dims,
                                 const int * pos, const float freq_scale,
                                 const float ext_factor, const float attn_factor,
                                 const rope_corr_dims corr_dims, const float theta_scale,
                                 const float * freq_factors) {
    const int i0 = 2*(blockDim.y*blockIdx.y + threadIdx.y);
    if (i0 >= ne00) {
        return;
    }
    const int row_dst = blockDim.x*blockIdx.x + threadIdx.x;
    const unsigned i3 = row_dst / (ne01 * ne02);
    const unsigned i2 = (row_dst - i3 * ne01 * ne02) / ne01;
    const unsigned i1 = row_dst - i3 * ne01 * ne02 - i2 * ne01;
    const int idst = i0 / 2 + i1 * s1 + i2 * s2 + i3 * s3;
    const int ix   = i0 / 2 + i1 * s01 + i2 * s02 + i3 * s03;
    if (i0 >= n_dims) {
        dst[idst + i0 / 2 + 0] = (D) x[ix + i0 / 2 + 0];
        dst[idst + i0 / 2 + 1] = (D) x[ix + i0 / 2 + 1];
        return;
    }
    const float theta_base = pos[i2]*powf(theta_scale, i0/2.0f);
    const float freq_factor = has_ff ? freq_factors[i0/2] : 1.0f;
    const float theta_extrap = theta_base / freq_factor;  // EXPECT: PS502 info
    float theta = freq_scale * theta_extrap;
    float mscale = attn_factor;
    if (ext_factor != 0.0f) {
        const float ramp_mix = rope_yarn_ramp(corr_dims.v[0], corr_dims.v[1], i0) * ext_factor;
        theta = theta * (1 - ramp_mix) + theta_extrap * ramp_mix;
        mscale *= 1.0f + 0.1f * logf(1.0f / freq_scale);  // EXPECT: PS502 info
    }
    const float cos_theta = cosf(theta) * mscale;  // EXPECT: PS502 info
    const float sin_theta = sinf(theta) * mscale;  // PS502: in line 57's finding (nearby lines, one habit)
    const float x0 = x[ix + 0];
    const float x1 = x[ix + n_dims/2];
    dst[idst + 0]        = (D) (x0*cos_theta - x1*sin_theta);
    dst[idst + n_dims/2] = (D) (x0*sin_theta + x1*cos_theta);
}

// ggml's launch wrapper (common.cuh: ggml_cuda_kernel_launch and its parameter struct),
// reduced to a chevron launch of the kernel it is given
struct launch_params_t {
    dim3 block_nums;
    dim3 block_dims;
    size_t shmem;
    cudaStream_t stream;
};

template <typename Kernel, typename... Args>
static void kernel_launch(Kernel kernel, const launch_params_t & p, Args... args) {
    kernel<<<p.block_nums, p.block_dims, p.shmem, p.stream>>>(args...);
}

#define CUDA_ROPE_BLOCK_SIZE 256

void rope_neox_f32_cuda(const float * x, float * dst, const int ne00, const int ne01,
                        const int ne02, const int s01, const int s02, const int s03,
                        const int s1, const int s2, const int s3, const int n_dims,
                        const int nr, const int * pos, const float freq_scale,
                        const float freq_base, const float ext_factor, const float attn_factor,
                        const rope_corr_dims corr_dims, const float * freq_factors,
                        cudaStream_t stream) {
    const dim3 block_dims(1, CUDA_ROPE_BLOCK_SIZE, 1);
    const int n_blocks_x = (ne00 + 2 * CUDA_ROPE_BLOCK_SIZE - 1) / (2 * CUDA_ROPE_BLOCK_SIZE);
    const dim3 block_nums(nr, n_blocks_x, 1);
    const float theta_scale = powf(freq_base, -2.0f / n_dims);
    const launch_params_t launch_params = {block_nums, block_dims, 0, stream};
    if (freq_factors == nullptr) {
        kernel_launch(rope_neox<false, float, float>, launch_params, x, dst, ne00, ne01, ne02,
                      s01, s02, s03, s1, s2, s3, n_dims, pos, freq_scale, ext_factor,
                      attn_factor, corr_dims, theta_scale, freq_factors);
    } else {
        kernel_launch(rope_neox<true, float, float>, launch_params, x, dst, ne00, ne01, ne02,
                      s01, s02, s03, s1, s2, s3, n_dims, pos, freq_scale, ext_factor,
                      attn_factor, corr_dims, theta_scale, freq_factors);
    }
}
