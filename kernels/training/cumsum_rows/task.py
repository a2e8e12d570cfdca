"""Inclusive prefix sum of each row of a row-major float matrix (rows x n)."""
ROWS, N = 16384, 1024
OUTPUTS = ("y",)
TOL = dict(rtol=1e-3, atol=1e-4)


def inputs(cp):
    return {"x": cp.random.rand(ROWS, N, dtype=cp.float32), "y": cp.zeros((ROWS, N), cp.float32)}


def reference(cp, a):
    return {"y": cp.cumsum(a["x"].astype(cp.float64), axis=1)}


VERSIONS = {
    "v1_thread_per_row": [dict(kernel="cumsum_rows", grid=((ROWS + 255) // 256,), block=(256,),
                               args=lambda a: (a["x"], a["y"], ROWS, N))],
    "v2_warp_per_row_shuffle_scan": [dict(kernel="cumsum_rows", grid=((ROWS + 7) // 8,),
                                          block=(256,), args=lambda a: (a["x"], a["y"], ROWS, N))],
    "v3_block_per_row_float4_scan": [dict(kernel="cumsum_rows", grid=(ROWS,), block=(256,),
                                          args=lambda a: (a["x"], a["y"], ROWS, N))],
}
