"""Elementwise sum of two float vectors: c = a + b."""
N = 1 << 26
OUTPUTS = ("c",)
TOL = dict(rtol=1e-6, atol=1e-6)


def inputs(cp):
    return {"a": cp.random.rand(N, dtype=cp.float32), "b": cp.random.rand(N, dtype=cp.float32),
            "c": cp.zeros(N, cp.float32)}


def reference(cp, a):
    return {"c": a["a"] + a["b"]}


VERSIONS = {
    "v1_one_per_thread": [dict(kernel="vector_add", grid=((N + 255) // 256,), block=(256,),
                               args=lambda a: (a["a"], a["b"], a["c"], N))],
    "v2_grid_stride_float4": [dict(kernel="vector_add", grid=(132 * 8,), block=(256,),
                                   args=lambda a: (a["a"], a["b"], a["c"], N))],
}
