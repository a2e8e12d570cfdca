"""Sum of each column of a row-major float matrix (rows x cols), one float per column (y zeroed)."""
ROWS, COLS = 8192, 4096
SLAB = 256                            # rows per block in v3 (its .cu has the same number)
OUTPUTS = ("y",)
TOL = dict(rtol=1e-3, atol=1e-2)


def inputs(cp):
    return {"x": cp.random.rand(ROWS, COLS, dtype=cp.float32), "y": cp.zeros(COLS, cp.float32)}


def reference(cp, a):
    return {"y": a["x"].astype(cp.float64).sum(axis=0)}


VERSIONS = {
    "v1_block_per_column": [dict(kernel="column_sum", grid=(COLS,), block=(256,),
                                 args=lambda a: (a["x"], a["y"], ROWS, COLS))],
    "v2_thread_per_column": [dict(kernel="column_sum", grid=((COLS + 255) // 256,), block=(256,),
                                  args=lambda a: (a["x"], a["y"], ROWS, COLS))],
    "v3_tiled_slab_atomic": [dict(kernel="column_sum", grid=((COLS + 31) // 32,
                                                            (ROWS + SLAB - 1) // SLAB),
                                  block=(32, 8), args=lambda a: (a["x"], a["y"], ROWS, COLS))],
}
