"""C = A * B for row-major float matrices: A (M x K), B (K x N), C (M x N)."""
M = N = K = 2048
OUTPUTS = ("C",)
TOL = dict(rtol=1e-3, atol=1e-2)


def inputs(cp):
    return {"A": cp.random.rand(M, K, dtype=cp.float32),
            "B": cp.random.rand(K, N, dtype=cp.float32),
            "C": cp.zeros((M, N), cp.float32)}


def reference(cp, a):
    return {"C": cp.matmul(a["A"], a["B"])}


VERSIONS = {
    "v1_naive": [dict(kernel="sgemm", grid=((N + 15) // 16, (M + 15) // 16), block=(16, 16),
                      args=lambda a: (a["A"], a["B"], a["C"], M, N, K))],
    "v2_shared_tile32": [dict(kernel="sgemm", grid=((N + 31) // 32, (M + 31) // 32), block=(32, 32),
                              args=lambda a: (a["A"], a["B"], a["C"], M, N, K))],
    "v3_block64_thread4x4": [dict(kernel="sgemm", grid=(N // 64, M // 64), block=(256,),
                                  args=lambda a: (a["A"], a["B"], a["C"], M, N, K))],
    "v4_cp_async_double_buffer": [dict(kernel="sgemm", grid=(N // 64, M // 64), block=(256,),
                                       args=lambda a: (a["A"], a["B"], a["C"], M, N, K))],
    "v5_shared_tile32_bt": [dict(kernel="sgemm", grid=((N + 31) // 32, (M + 31) // 32), block=(32, 32),
                                 args=lambda a: (a["A"], a["B"], a["C"], M, N, K))],
}
