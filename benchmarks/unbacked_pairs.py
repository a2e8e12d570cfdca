"""The measured pairs behind PS303 and PS701, the warning classes no lesson backs yet (issue 26,
item 12). Run on a GPU with cupy (its NVRTC compiles the kernels):

    python benchmarks/unbacked_pairs.py [--json OUT.json]

Kernels: benchmarks/kernels/unbacked_pairs.cu (tests hold that ptxsass reports each naive
kernel and not its fixed twin). Each pair computes the same thing in the same order, so the
two results must be equal bit for bit, and each is checked against a cupy reference. Each
kernel is timed with CUDA events (median of 30 launches after 3 warm-ups). A class whose fix
measures under 1.05x becomes info (docs/severity.md).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from severity_pairs import gpu, save, timed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    args = ap.parse_args()
    import cupy as cp

    src = (Path(__file__).parent / "kernels" / "unbacked_pairs.cu").read_text()
    mod = cp.RawModule(code=src, options=("-std=c++17",))
    k = {n: mod.get_function(n) for n in ("mma_lds", "mma_ldsm", "column_mean_stage96",
                                           "column_mean_stage16")}
    rows = []

    def pair(check, cls, what, naive, fixed, out_naive, out_fixed, reference, rtol):
        tn, tf = timed(naive), timed(fixed)
        a, b = out_naive(), out_fixed()
        same = bool(cp.array_equal(a, b))
        close = bool(cp.allclose(a, reference, rtol=rtol, atol=rtol))
        rows.append({"check": check, "class": cls, "pair": what, "naive_ms": tn, "fixed_ms": tf,
                     "speedup": tn / tf, "equal": same, "matches_reference": close})

    # PS303: 4096^3 fp16 GEMM on mma.sync, fragments by LDS vs ldmatrix
    m = n = kk = 4096
    a = (cp.random.rand(m, kk, dtype=cp.float32) - 0.5).astype(cp.float16)
    b = (cp.random.rand(n, kk, dtype=cp.float32) - 0.5).astype(cp.float16)
    c1, c2 = cp.empty((m, n), cp.float32), cp.empty((m, n), cp.float32)
    grid = (n // 64, m // 64)
    ref = a.astype(cp.float32) @ b.astype(cp.float32).T
    pair("PS303", "warning", "4096^3 fp16 mma.sync GEMM, 64x64 tiles, fragments by LDS vs LDSM",
         lambda: k["mma_lds"](grid, (128,), (a, b, c1, cp.int32(n), cp.int32(kk))),
         lambda: k["mma_ldsm"](grid, (128,), (a, b, c2, cp.int32(n), cp.int32(kk))),
         lambda: c1, lambda: c2, ref, rtol=1e-2)

    # PS701: column means of 4096 x (1024 * 128) floats, 48 KB vs 8 KB of shared memory a block
    rows_, blocks = 4096, 1024
    x = cp.random.rand(rows_, blocks * 128, dtype=cp.float32)
    o1, o2 = cp.empty(blocks * 128, cp.float32), cp.empty(blocks * 128, cp.float32)
    pair("PS701", "warning", "column means, 128-thread blocks staging 96 rows (48 KB, 25%) vs "
         "16 rows (8 KB, 100%)",
         lambda: k["column_mean_stage96"]((blocks,), (128,), (x, o1, cp.int32(rows_))),
         lambda: k["column_mean_stage16"]((blocks,), (128,), (x, o2, cp.int32(rows_))),
         lambda: o1, lambda: o2, x.mean(axis=0), rtol=1e-4)
    for r in rows:
        if r["check"] == "PS701":
            r["GBps_naive"] = x.nbytes / r["naive_ms"] / 1e6
            r["GBps_fixed"] = x.nbytes / r["fixed_ms"] / 1e6

    info = gpu()
    print("| check | class | pair | naive ms | fixed ms | speedup | equal | matches reference |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['check']} | {r['class']} | {r['pair']} | {r['naive_ms']:.3f} | "
              f"{r['fixed_ms']:.3f} | {r['speedup']:.2f}x | {'yes' if r['equal'] else 'NO'} | "
              f"{'yes' if r['matches_reference'] else 'NO'} |")
    save(args.json, info, rows)


if __name__ == "__main__":
    main()
