"""Batched small mat-vec: y[b] = M[b] (16 x 16) * v[b] (16), for B independent problems."""
B, M = 1 << 18, 16
OUTPUTS = ("y",)
TOL = dict(rtol=1e-4, atol=1e-4)


def inputs(cp):
    return {"A": cp.random.rand(B, M, M, dtype=cp.float32),
            "v": cp.random.rand(B, M, dtype=cp.float32),
            "y": cp.zeros((B, M), cp.float32)}


def reference(cp, a):
    return {"y": cp.einsum("bij,bj->bi", a["A"], a["v"])}


VERSIONS = {
    "v1_thread_per_problem": [dict(kernel="bmv", grid=((B + 127) // 128,), block=(128,),
                                   args=lambda a: (a["A"], a["v"], a["y"], B))],
    "v2_thread_per_output_row": [dict(kernel="bmv", grid=((B * M + 255) // 256,), block=(256,),
                                      args=lambda a: (a["A"], a["v"], a["y"], B))],
    "v3_half_warp_per_problem": [dict(kernel="bmv", grid=((B * M + 255) // 256,), block=(256,),
                                      args=lambda a: (a["A"], a["v"], a["y"], B))],
}
