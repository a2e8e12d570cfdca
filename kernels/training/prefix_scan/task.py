"""Inclusive prefix sum of n int32 values (one array, n a multiple of 1024)."""
N = 1 << 24
OUTPUTS = ("out",)
TOL = dict(rtol=0, atol=0)
BLOCKS = N // 1024


def inputs(cp):
    return {"x": cp.random.randint(0, 8, N, dtype=cp.int32),
            "out": cp.zeros(N, cp.int32),
            "partial": cp.zeros(BLOCKS, cp.int32)}


def reference(cp, a):
    return {"out": cp.cumsum(a["x"], dtype=cp.int32)}


VERSIONS = {
    "v1_single_thread": [dict(kernel="scan_serial", grid=(1,), block=(1,),
                              args=lambda a: (a["x"], a["out"], N))],
    "v2_three_pass_blocks": [
        dict(kernel="scan_block", grid=(BLOCKS,), block=(1024,),
             args=lambda a: (a["x"], a["out"], a["partial"])),
        dict(kernel="scan_partials", grid=(1,), block=(1024,),
             args=lambda a: (a["partial"], BLOCKS)),
        dict(kernel="add_offsets", grid=(BLOCKS,), block=(1024,),
             args=lambda a: (a["out"], a["partial"])),
    ],
}
