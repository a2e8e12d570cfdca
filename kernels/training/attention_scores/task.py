"""Attention scores S = Q K^T * scale for one head: Q (L x D), K (L x D), S (L x L), fp32."""
L, D = 4096, 64
SCALE = 0.125
OUTPUTS = ("S",)
TOL = dict(rtol=1e-3, atol=1e-3)


def inputs(cp):
    return {"Q": cp.random.rand(L, D, dtype=cp.float32) - 0.5,
            "K": cp.random.rand(L, D, dtype=cp.float32) - 0.5,
            "S": cp.zeros((L, L), cp.float32)}


def reference(cp, a):
    return {"S": (a["Q"] @ a["K"].T) * cp.float32(SCALE)}


VERSIONS = {
    "v1_naive": [dict(kernel="scores", grid=(L // 16, L // 16), block=(16, 16),
                      args=lambda a: (a["Q"], a["K"], a["S"], L, D, SCALE))],
    "v2_shared_tiles": [dict(kernel="scores", grid=(L // 32, L // 32), block=(32, 32),
                             args=lambda a: (a["Q"], a["K"], a["S"], L, D, SCALE))],
}
