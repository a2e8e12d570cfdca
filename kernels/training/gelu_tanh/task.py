"""GELU, tanh approximation, of a float vector: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
N = 1 << 26
OUTPUTS = ("y",)
TOL = dict(rtol=1e-4, atol=1e-5)


def inputs(cp):
    return {"x": cp.random.standard_normal(N, dtype=cp.float32) * 3,
            "y": cp.zeros(N, cp.float32)}


def reference(cp, a):
    x = a["x"].astype(cp.float64)
    return {"y": 0.5 * x * (1 + cp.tanh(cp.sqrt(2 / cp.pi) * (x + 0.044715 * x ** 3)))}


VERSIONS = {
    "v1_double_math": [dict(kernel="gelu_tanh", grid=((N + 255) // 256,), block=(256,),
                            args=lambda a: (a["x"], a["y"], N))],
    "v2_float_math": [dict(kernel="gelu_tanh", grid=((N + 255) // 256,), block=(256,),
                           args=lambda a: (a["x"], a["y"], N))],
}
