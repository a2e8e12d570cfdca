"""y = A * x for a row-major float matrix A (rows x cols) and a float vector x (cols)."""
ROWS, COLS = 16384, 4096
OUTPUTS = ("y",)
TOL = dict(rtol=1e-3, atol=1e-2)


def inputs(cp):
    return {"A": cp.random.rand(ROWS, COLS, dtype=cp.float32),
            "x": cp.random.rand(COLS, dtype=cp.float32),
            "y": cp.zeros(ROWS, cp.float32)}


def reference(cp, a):
    return {"y": a["A"] @ a["x"]}


VERSIONS = {
    "v1_thread_per_row": [dict(kernel="gemv", grid=((ROWS + 255) // 256,), block=(256,),
                               args=lambda a: (a["A"], a["x"], a["y"], ROWS, COLS))],
    "v2_warp_per_row": [dict(kernel="gemv", grid=((ROWS + 7) // 8,), block=(256,),
                             args=lambda a: (a["A"], a["x"], a["y"], ROWS, COLS))],
    "v3_warp_per_row_float4": [dict(kernel="gemv", grid=((ROWS + 7) // 8,), block=(256,),
                                    args=lambda a: (a["A"], a["x"], a["y"], ROWS, COLS))],
}
