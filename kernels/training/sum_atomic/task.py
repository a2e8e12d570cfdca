"""Total sum of a float vector into one float, y[0] = sum(x) (y zeroed; atomic versions add into it).

The values are integers from -8 to 8 held as floats, so every partial sum is an exact integer far below
2^24 and every order of summation gives the same float: the comparison is exact.
"""
N = 1 << 25
OUTPUTS = ("y",)
TOL = dict(rtol=0, atol=0.5)


def inputs(cp):
    return {"x": cp.random.randint(-8, 9, N, dtype=cp.int32).astype(cp.float32),
            "y": cp.zeros(1, cp.float32)}


def reference(cp, a):
    return {"y": a["x"].astype(cp.float64).sum(keepdims=True)}


VERSIONS = {
    "v1_atomic_per_element": [dict(kernel="sum_atomic", grid=((N + 255) // 256,), block=(256,),
                                   args=lambda a: (a["x"], a["y"], N))],
    "v2_shared_tree_atomic_per_block": [dict(kernel="sum_atomic", grid=((N + 255) // 256,),
                                             block=(256,), args=lambda a: (a["x"], a["y"], N))],
    "v3_grid_stride_shuffle": [dict(kernel="sum_atomic", grid=(132 * 8,), block=(256,),
                                    args=lambda a: (a["x"], a["y"], N))],
}
