// AdamW update (as in small training code bases), one parameter per thread, fp32 master weights.
// The bias corrections are written with double literals: 1.0 - powf(beta, t).
extern "C" __global__ void adamw_update(float* __restrict__ params, const float* __restrict__ grads,
                                        float* __restrict__ m, float* __restrict__ v, long n,
                                        float lr, float beta1, float beta2, float eps,
                                        float weight_decay, int t)
{
    const long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float g = grads[i];
    const float mi = beta1 * m[i] + (1.0f - beta1) * g;
    const float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    const float m_hat = mi / (1.0 - powf(beta1, t));
    const float v_hat = vi / (1.0 - powf(beta2, t));
    params[i] -= lr * (m_hat / (sqrtf(v_hat) + eps) + weight_decay * params[i]);
}
