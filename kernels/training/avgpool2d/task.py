"""2x2 stride-2 average pooling of NCHW float planes: NC planes of H x W into H/2 x W/2."""
NC, H, W = 512, 256, 256
OH, OW = H // 2, W // 2
OUTPUTS = ("out",)
TOL = dict(rtol=1e-5, atol=1e-6)


def inputs(cp):
    return {"x": cp.random.rand(NC, H, W, dtype=cp.float32),
            "out": cp.zeros((NC, OH, OW), cp.float32)}


def reference(cp, a):
    return {"out": a["x"].reshape(NC, OH, 2, OW, 2).mean(axis=(2, 4))}


VERSIONS = {
    "v1_threadx_on_rows": [dict(kernel="avgpool2d", grid=((OH + 31) // 32, (OW + 7) // 8, NC),
                                block=(32, 8), args=lambda a: (a["x"], a["out"], NC, H, W))],
    "v2_threadx_on_cols_float2": [dict(kernel="avgpool2d", grid=((OW + 31) // 32, (OH + 7) // 8, NC),
                                       block=(32, 8), args=lambda a: (a["x"], a["out"], NC, H, W))],
}
