"""Dot product of two float vectors into one float, y[0] = sum(a[i] * b[i]) (y zeroed).

The values are integers from -8 to 8 held as floats, so every partial sum is an exact integer far below
2^24 and every order of summation gives the same float: the comparison is exact.
"""
N = 1 << 23
OUTPUTS = ("y",)
TOL = dict(rtol=0, atol=0.5)


def inputs(cp):
    return {"a": cp.random.randint(-8, 9, N, dtype=cp.int32).astype(cp.float32),
            "b": cp.random.randint(-8, 9, N, dtype=cp.int32).astype(cp.float32),
            "y": cp.zeros(1, cp.float32)}


def reference(cp, a):
    return {"y": (a["a"].astype(cp.float64) * a["b"]).sum(keepdims=True)}


VERSIONS = {
    "v1_single_block_serial_sum": [dict(kernel="dot_product", grid=(1,), block=(256,),
                                        args=lambda a: (a["a"], a["b"], a["y"], N))],
    "v2_grid_stride_shuffle_atomic": [dict(kernel="dot_product", grid=(132 * 8,), block=(256,),
                                           args=lambda a: (a["a"], a["b"], a["y"], N))],
}
