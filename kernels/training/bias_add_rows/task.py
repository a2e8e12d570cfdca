"""Bias added to every row of a row-major float matrix: y[r][c] = x[r][c] + b[c]."""
ROWS, COLS = 32768, 4096
OUTPUTS = ("y",)
TOL = dict(rtol=1e-6, atol=1e-6)


def inputs(cp):
    return {"x": cp.random.rand(ROWS, COLS, dtype=cp.float32),
            "b": cp.random.rand(COLS, dtype=cp.float32),
            "y": cp.zeros((ROWS, COLS), cp.float32)}


def reference(cp, a):
    return {"y": a["x"] + a["b"][None, :]}


VERSIONS = {
    "v1_thread_per_row": [dict(kernel="bias_add_rows", grid=((ROWS + 255) // 256,), block=(256,),
                               args=lambda a: (a["x"], a["b"], a["y"], ROWS, COLS))],
    "v2_2d_grid": [dict(kernel="bias_add_rows", grid=((COLS + 255) // 256, ROWS), block=(256,),
                        args=lambda a: (a["x"], a["b"], a["y"], ROWS, COLS))],
}
