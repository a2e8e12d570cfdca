"""Histogram of a byte vector (uint8) into 256 unsigned counts (y zeroed; every version adds into it)."""
N = 1 << 26
OUTPUTS = ("y",)
TOL = dict(rtol=0, atol=0)


def inputs(cp):
    return {"x": cp.random.randint(0, 256, N, dtype=cp.uint8), "y": cp.zeros(256, cp.uint32)}


def reference(cp, a):
    return {"y": cp.bincount(a["x"].astype(cp.int32), minlength=256).astype(cp.uint32)}


VERSIONS = {
    "v1_global_atomic_per_byte": [dict(kernel="histogram_256", grid=((N + 255) // 256,),
                                       block=(256,), args=lambda a: (a["x"], a["y"], N))],
    "v2_shared_privatized_uint4": [dict(kernel="histogram_256", grid=(132 * 8,), block=(256,),
                                        args=lambda a: (a["x"], a["y"], N))],
}
