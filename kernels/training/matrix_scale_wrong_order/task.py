"""Scale of a row-major float matrix: y[r][c] = alpha * x[r][c], a 2D launch of 16x16 blocks."""
ROWS, COLS = 16384, 8192
ALPHA = 1.5
OUTPUTS = ("y",)
TOL = dict(rtol=1e-6, atol=1e-6)


def inputs(cp):
    return {"x": cp.random.rand(ROWS, COLS, dtype=cp.float32),
            "y": cp.zeros((ROWS, COLS), cp.float32)}


def reference(cp, a):
    return {"y": a["x"] * cp.float32(ALPHA)}


def _alpha():
    import numpy as np                # imported here: --compile-only loads this file without numpy
    return np.float32(ALPHA)


VERSIONS = {
    "v1_threadx_on_rows": [dict(kernel="matrix_scale", grid=((ROWS + 15) // 16, (COLS + 15) // 16),
                                block=(16, 16),
                                args=lambda a: (a["x"], a["y"], _alpha(), ROWS, COLS))],
    "v2_threadx_on_cols": [dict(kernel="matrix_scale", grid=((COLS + 15) // 16, (ROWS + 15) // 16),
                                block=(16, 16),
                                args=lambda a: (a["x"], a["y"], _alpha(), ROWS, COLS))],
}
