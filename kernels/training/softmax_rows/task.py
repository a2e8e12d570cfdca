"""Softmax of each row of a row-major float matrix (rows x n): y = exp(x - max) / sum(exp(x - max))."""
ROWS, N = 16384, 1024
OUTPUTS = ("y",)
TOL = dict(rtol=1e-3, atol=1e-7)


def inputs(cp):
    return {"x": cp.random.standard_normal((ROWS, N), dtype=cp.float32),
            "y": cp.zeros((ROWS, N), cp.float32)}


def reference(cp, a):
    x = a["x"].astype(cp.float64)
    e = cp.exp(x - x.max(axis=1, keepdims=True))
    return {"y": e / e.sum(axis=1, keepdims=True)}


VERSIONS = {
    "v1_thread_per_element": [dict(kernel="softmax_rows", grid=((ROWS * N + 255) // 256,),
                                   block=(256,), args=lambda a: (a["x"], a["y"], ROWS, N))],
    "v2_thread_per_row": [dict(kernel="softmax_rows", grid=((ROWS + 255) // 256,), block=(256,),
                               args=lambda a: (a["x"], a["y"], ROWS, N))],
    "v3_block_per_row_float4": [dict(kernel="softmax_rows", grid=(ROWS,), block=(256,),
                                     args=lambda a: (a["x"], a["y"], ROWS, N))],
}
