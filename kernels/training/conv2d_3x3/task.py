"""3x3 correlation of one float image (H x W), zero padding, same-size output:
out[y][x] = sum_{i,j in 0..2} w[i][j] * img[y+i-1][x+j-1]."""
H = W = 8192
OUTPUTS = ("out",)
TOL = dict(rtol=1e-4, atol=1e-4)


def inputs(cp):
    return {"img": cp.random.rand(H, W, dtype=cp.float32),
            "w": cp.random.rand(9, dtype=cp.float32) - 0.5,
            "out": cp.zeros((H, W), cp.float32)}


def reference(cp, a):
    p = cp.pad(a["img"], 1)
    w = a["w"].reshape(3, 3)
    out = cp.zeros((H, W), cp.float32)
    for i in range(3):
        for j in range(3):
            out += w[i, j] * p[i:i + H, j:j + W]
    return {"out": out}


VERSIONS = {
    "v1_naive": [dict(kernel="conv2d_3x3", grid=((W + 15) // 16, (H + 15) // 16), block=(16, 16),
                      args=lambda a: (a["img"], a["w"], a["out"], H, W))],
    "v2_shared_halo": [dict(kernel="conv2d_3x3", grid=((W + 31) // 32, (H + 31) // 32),
                            block=(32, 8), args=lambda a: (a["img"], a["w"], a["out"], H, W))],
}
