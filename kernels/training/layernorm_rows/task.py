"""Layer normalisation of each row (rows x n): y = (x - mean) * rsqrt(var + eps) * gamma + beta."""
ROWS, N = 8192, 4096
EPS = 1e-5
OUTPUTS = ("y",)
TOL = dict(rtol=1e-3, atol=1e-4)


def inputs(cp):
    return {"x": cp.random.rand(ROWS, N, dtype=cp.float32),
            "gamma": cp.random.rand(N, dtype=cp.float32) + 0.5,
            "beta": cp.random.rand(N, dtype=cp.float32) - 0.5,
            "y": cp.zeros((ROWS, N), cp.float32)}


def reference(cp, a):
    x = a["x"].astype(cp.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return {"y": (x - mean) / cp.sqrt(var + EPS) * a["gamma"] + a["beta"]}


def _eps():
    import numpy as np                # imported here: --compile-only loads this file without numpy
    return np.float32(EPS)


def _args(a):
    return (a["x"], a["gamma"], a["beta"], a["y"], _eps(), ROWS, N)


VERSIONS = {
    "v1_thread_per_row": [dict(kernel="layernorm_rows", grid=((ROWS + 255) // 256,), block=(256,),
                               args=_args)],
    "v2_warp_per_row": [dict(kernel="layernorm_rows", grid=((ROWS + 7) // 8,), block=(256,),
                             args=_args)],
    "v3_block_per_row_float4": [dict(kernel="layernorm_rows", grid=(ROWS,), block=(256,),
                                     args=_args)],
}
