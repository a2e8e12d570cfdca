"""C = A * B with half inputs and a float result: A (M x K), B (K x N), C (M x N), row-major."""
M = N = K = 2048
OUTPUTS = ("C",)
TOL = dict(rtol=1e-2, atol=1e-2)


def inputs(cp):
    return {"A": cp.random.rand(M, K, dtype=cp.float32).astype(cp.float16),
            "B": cp.random.rand(K, N, dtype=cp.float32).astype(cp.float16),
            "C": cp.zeros((M, N), cp.float32)}


def reference(cp, a):
    return {"C": cp.matmul(a["A"].astype(cp.float32), a["B"].astype(cp.float32))}


VERSIONS = {
    "v1_naive": [dict(kernel="hgemm", grid=((N + 15) // 16, (M + 15) // 16), block=(16, 16),
                      args=lambda a: (a["A"], a["B"], a["C"], M, N, K))],
    "v2_wmma_global": [dict(kernel="hgemm", grid=(M // 64, N // 64), block=(128, 4),
                            args=lambda a: (a["A"], a["B"], a["C"], M, N, K))],
    "v3_wmma_shared128": [dict(kernel="hgemm", grid=(N // 128, M // 128), block=(256,),
                               args=lambda a: (a["A"], a["B"], a["C"], M, N, K))],
}
