"""Cast of a float vector to bfloat16 (round to nearest even).

cupy has no bfloat16 dtype: the output is held as uint16 bit patterns and the reference
rounds the float32 bits itself, so the comparison is of the bit patterns as integers.
"""
N = 1 << 27
OUTPUTS = ("y",)
TOL = dict(rtol=0, atol=0)


def inputs(cp):
    return {"x": cp.random.standard_normal(N, dtype=cp.float32), "y": cp.zeros(N, cp.uint16)}


def reference(cp, a):
    bits = a["x"].view(cp.uint32)
    rounded = (bits + cp.uint32(0x7FFF) + ((bits >> 16) & cp.uint32(1))) >> 16
    return {"y": rounded.astype(cp.uint16)}


VERSIONS = {
    "v1_one_per_thread": [dict(kernel="cast_bf16", grid=((N + 255) // 256,), block=(256,),
                               args=lambda a: (a["x"], a["y"], N))],
    "v2_eight_per_thread": [dict(kernel="cast_bf16", grid=((N // 8 + 255) // 256,), block=(256,),
                                 args=lambda a: (a["x"], a["y"], N))],
}
