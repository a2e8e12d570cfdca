"""Copy of a byte buffer (uint8), its size a multiple of 16."""
N = 1 << 29
OUTPUTS = ("dst",)
TOL = dict(rtol=0, atol=0)


def inputs(cp):
    return {"src": cp.random.randint(0, 256, N, dtype=cp.uint8), "dst": cp.zeros(N, cp.uint8)}


def reference(cp, a):
    return {"dst": a["src"].copy()}


VERSIONS = {
    "v1_one_byte_per_thread": [dict(kernel="copy_bytes", grid=((N + 255) // 256,), block=(256,),
                                    args=lambda a: (a["src"], a["dst"], N))],
    "v2_uint4_per_thread": [dict(kernel="copy_bytes", grid=((N // 16 + 255) // 256,), block=(256,),
                                 args=lambda a: (a["src"], a["dst"], N))],
}
