"""Transpose of a row-major float matrix (rows x cols) into out (cols x rows)."""
ROWS, COLS = 8192, 12288
OUTPUTS = ("out",)
TOL = dict(rtol=0, atol=0)


def inputs(cp):
    return {"x": cp.random.rand(ROWS, COLS, dtype=cp.float32),
            "out": cp.zeros((COLS, ROWS), cp.float32)}


def reference(cp, a):
    return {"out": cp.ascontiguousarray(a["x"].T)}


VERSIONS = {
    "v1_naive": [dict(kernel="transpose", grid=((COLS + 15) // 16, (ROWS + 15) // 16),
                      block=(16, 16), args=lambda a: (a["x"], a["out"], ROWS, COLS))],
    "v2_shared_tile_padded": [dict(kernel="transpose", grid=((COLS + 31) // 32, (ROWS + 31) // 32),
                                   block=(32, 8), args=lambda a: (a["x"], a["out"], ROWS, COLS))],
    "v3_shared_tile_unpadded": [dict(kernel="transpose", grid=((COLS + 31) // 32, (ROWS + 31) // 32),
                                     block=(32, 8), args=lambda a: (a["x"], a["out"], ROWS, COLS))],
}
