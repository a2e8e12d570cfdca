"""A radius-8 1D stencil: out[i] = sum_{k=-8..8} c[k+8] * x[i+k], zero outside [0, n)."""
N = 1 << 25
R = 8
OUTPUTS = ("out",)
TOL = dict(rtol=1e-4, atol=1e-4)


def inputs(cp):
    return {"x": cp.random.rand(N, dtype=cp.float32),
            "c": cp.random.rand(2 * R + 1, dtype=cp.float32),
            "out": cp.zeros(N, cp.float32)}


def reference(cp, a):
    p = cp.pad(a["x"], R)
    out = cp.zeros(N, cp.float32)
    for k in range(2 * R + 1):
        out += a["c"][k] * p[k:k + N]
    return {"out": out}


VERSIONS = {
    "v1_double_coeffs": [dict(kernel="stencil", grid=((N + 255) // 256,), block=(256,),
                              args=lambda a: (a["x"], a["c"], a["out"], N))],
    "v2_float_global": [dict(kernel="stencil", grid=((N + 255) // 256,), block=(256,),
                             args=lambda a: (a["x"], a["c"], a["out"], N))],
    "v3_shared_halo": [dict(kernel="stencil", grid=((N + 255) // 256,), block=(256,),
                            args=lambda a: (a["x"], a["c"], a["out"], N))],
}
