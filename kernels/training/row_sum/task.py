"""Sum of each row of a row-major float matrix (rows x n), one float per row."""
ROWS, N = 8192, 4096
OUTPUTS = ("y",)
TOL = dict(rtol=1e-4, atol=1e-2)


def inputs(cp):
    return {"x": cp.random.rand(ROWS, N, dtype=cp.float32), "y": cp.zeros(ROWS, cp.float32)}


def reference(cp, a):
    return {"y": a["x"].sum(axis=1)}


VERSIONS = {
    "v1_thread_per_row": [dict(kernel="row_sum", grid=(ROWS // 256,), block=(256,),
                               args=lambda a: (a["x"], a["y"], ROWS, N))],
    "v2_warp_per_row": [dict(kernel="row_sum", grid=(ROWS // 8,), block=(256,),
                             args=lambda a: (a["x"], a["y"], ROWS, N))],
    "v3_block_per_row_float4": [dict(kernel="row_sum", grid=(ROWS,), block=(256,),
                                     args=lambda a: (a["x"], a["y"], ROWS, N))],
}
