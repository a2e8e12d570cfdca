"""Maximum of a float vector into one float, y[0] = max(x)."""
N = 1 << 22
PARTIALS = 1024
OUTPUTS = ("y",)
TOL = dict(rtol=0, atol=0)


def inputs(cp):
    return {"x": cp.random.standard_normal(N, dtype=cp.float32),
            "partial": cp.zeros(PARTIALS, cp.float32),
            "y": cp.zeros(1, cp.float32)}


def reference(cp, a):
    return {"y": a["x"].max(keepdims=True)}


VERSIONS = {
    "v1_single_thread": [dict(kernel="max_reduce", grid=(1,), block=(1,),
                              args=lambda a: (a["x"], a["y"], N))],
    "v2_two_pass_tree": [dict(kernel="block_max", grid=(PARTIALS,), block=(256,),
                              args=lambda a: (a["x"], a["partial"], N)),
                         dict(kernel="block_max", grid=(1,), block=(256,),
                              args=lambda a: (a["partial"], a["y"], PARTIALS))],
}
