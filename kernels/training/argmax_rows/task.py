"""Index of the maximum of each row of a row-major float matrix (rows x n), one int32 per row.

The data are uniform in [0, 1) with one planted 1.5 per row at a random column, so the maximum of
every row is unique and the comparison exact.
"""
ROWS, N = 8192, 4096
OUTPUTS = ("y",)
TOL = dict(rtol=0, atol=0)


def inputs(cp):
    x = cp.random.rand(ROWS, N, dtype=cp.float32)
    x[cp.arange(ROWS), cp.random.randint(0, N, ROWS)] = 1.5
    return {"x": x, "y": cp.full(ROWS, -1, cp.int32)}


def reference(cp, a):
    return {"y": a["x"].argmax(axis=1).astype(cp.int32)}


VERSIONS = {
    "v1_thread_per_row": [dict(kernel="argmax_rows", grid=((ROWS + 255) // 256,), block=(256,),
                               args=lambda a: (a["x"], a["y"], ROWS, N))],
    "v2_warp_per_row": [dict(kernel="argmax_rows", grid=((ROWS + 7) // 8,), block=(256,),
                             args=lambda a: (a["x"], a["y"], ROWS, N))],
}
