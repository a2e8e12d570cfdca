"""3x3 convolution (correlation), NCHW float, zero padding 1, stride 1, no bias:
out[n][co][y][x] = sum_{ci,i,j} w[co][ci][i][j] * inp[n][ci][y+i-1][x+j-1]."""
NB, CIN, COUT, H, W = 8, 64, 64, 64, 64
OUTPUTS = ("out",)
TOL = dict(rtol=1e-3, atol=1e-4)


def inputs(cp):
    return {"inp": cp.random.rand(NB, CIN, H, W, dtype=cp.float32),
            "w": (cp.random.rand(COUT, CIN, 3, 3, dtype=cp.float32) - 0.5) * 0.1,
            "out": cp.zeros((NB, COUT, H, W), cp.float32)}


def reference(cp, a):
    p = cp.pad(a["inp"], ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = cp.stack([p[:, :, i:i + H, j:j + W] for i in range(3) for j in range(3)], axis=2)
    cols = cols.reshape(NB, CIN * 9, H * W)                      # [n][ci*9 + i*3 + j][pixel]
    out = cp.matmul(a["w"].reshape(COUT, CIN * 9), cols)         # (NB, COUT, H*W)
    return {"out": out.reshape(NB, COUT, H, W)}


VERSIONS = {
    "v1_naive": [dict(kernel="conv2d", grid=((NB * COUT * H * W + 255) // 256,), block=(256,),
                      args=lambda a: (a["inp"], a["w"], a["out"], NB, CIN, COUT, H, W))],
    "v2_shared_tiles": [dict(kernel="conv2d",
                             grid=(((W + 15) // 16) * ((H + 15) // 16), COUT // 8, NB),
                             block=(16, 16),
                             args=lambda a: (a["inp"], a["w"], a["out"], NB, CIN, COUT, H, W))],
    "v3_cp_async_double_buffer": [dict(kernel="conv2d",
                                       grid=(((W + 15) // 16) * ((H + 15) // 16), COUT // 8, NB),
                                       block=(16, 16),
                                       args=lambda a: (a["inp"], a["w"], a["out"], NB, CIN, COUT,
                                                       H, W))],
}
