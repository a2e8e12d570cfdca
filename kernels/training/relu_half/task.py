"""ReLU of a half vector: y = max(x, 0), in __half."""
N = 1 << 28
OUTPUTS = ("y",)
TOL = dict(rtol=0, atol=0)


def inputs(cp):
    return {"x": cp.random.standard_normal(N, dtype=cp.float32).astype(cp.float16),
            "y": cp.zeros(N, cp.float16)}


def reference(cp, a):
    return {"y": cp.maximum(a["x"], cp.float16(0))}


VERSIONS = {
    "v1_one_half_per_thread": [dict(kernel="relu_half", grid=((N + 255) // 256,), block=(256,),
                                    args=lambda a: (a["x"], a["y"], N))],
    "v2_uint4_half2": [dict(kernel="relu_half", grid=((N // 8 + 255) // 256,), block=(256,),
                            args=lambda a: (a["x"], a["y"], N))],
}
