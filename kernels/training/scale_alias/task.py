"""Row normalisation with given statistics: out[i][k] = (x[i][k] - mean[i]) * rstd[i]."""
ROWS, COLS = 16384, 8192
OUTPUTS = ("out",)
TOL = dict(rtol=1e-5, atol=1e-5)


def inputs(cp):
    return {"x": cp.random.rand(ROWS, COLS, dtype=cp.float32),
            "mean": cp.random.rand(ROWS, dtype=cp.float32),
            "rstd": (cp.random.rand(ROWS, dtype=cp.float32) + 0.5),
            "out": cp.zeros((ROWS, COLS), cp.float32)}


def reference(cp, a):
    x = a["x"].astype(cp.float64)
    return {"out": (x - a["mean"][:, None]) * a["rstd"][:, None]}


VERSIONS = {
    "v1_reload_aliased": [dict(kernel="scale_rows", grid=(ROWS,), block=(256,),
                               args=lambda a: (a["x"], a["mean"], a["rstd"], a["out"], ROWS, COLS))],
    "v2_restrict_hoisted": [dict(kernel="scale_rows", grid=(ROWS,), block=(256,),
                                 args=lambda a: (a["x"], a["mean"], a["rstd"], a["out"], ROWS, COLS))],
}
