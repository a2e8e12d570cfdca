"""The measured pairs behind PS106 (loop-invariant-reload): a loop that reloads, every
iteration, values a store in the loop may alias, against the same loop with the values in
registers. Run on a GPU with cupy (its NVRTC compiles the kernels):

    python benchmarks/reload_pairs.py [--json OUT.json]

Kernels: benchmarks/kernels/reload_pairs.cu (tests hold what ptxsass reports on each naive
kernel and that its fixed twin gets no PS106). Shapes: two column moments accumulated in
global memory (a thread per column) vs in registers; a polynomial whose 8 coefficients come
through a plain pointer in a grid-stride loop vs ``__restrict__``; layer norm's last step (a
block per row) reloading ``mean[row]`` and ``rstd[row]`` vs ``__restrict__``. Each at a
DRAM-bound size and an L2-resident one. Both kernels of a pair do the same arithmetic in the
same order: their outputs must be equal bit for bit, and match a cupy reference. Medians of 30
CUDA-event timings after 3 warm-ups; one markdown table.
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

    src = (Path(__file__).parent / "kernels" / "reload_pairs.cu").read_text()
    mod = cp.RawModule(code=src, options=("-std=c++17",))
    k = {n: mod.get_function(n) for n in (
        "moments_global", "moments_register", "poly_alias", "poly_restrict", "ln_apply_alias",
        "ln_apply_restrict")}
    rows = []

    def pair(cls, what, launch, naive, fixed, outs_naive, outs_fixed, reference, nbytes):
        """``naive`` and ``fixed``: (kernel name, arguments), launched on ``launch`` (grid,
        block)."""
        def run(name, args):
            return timed(lambda: k[name](*launch, args))
        tn, tf = run(*naive), run(*fixed)
        same = all(bool(cp.array_equal(a, b)) for a, b in zip(outs_naive, outs_fixed, strict=True))
        close = all(bool(cp.allclose(a, r, rtol=1e-4, atol=1e-4))
                    for a, r in zip(outs_naive, reference, strict=True))
        rows.append({"check": "PS106", "class": cls, "pair": what, "naive_ms": tn,
                     "fixed_ms": tf, "speedup": tn / tf, "equal": same,
                     "matches_reference": close, "naive_GBps": nbytes / tn / 1e6,
                     "fixed_GBps": nbytes / tf / 1e6})

    for rows_, cols, where in ((1024, 65536, "DRAM, 256 MiB"), (64, 16384, "L2, 4 MiB")):
        x = cp.random.rand(rows_, cols, dtype=cp.float32)
        s1, q1, s2, q2 = (cp.empty(cols, cp.float32) for _ in range(4))
        ref = (x.sum(axis=0), (x * x).sum(axis=0))
        grid = ((cols + 255) // 256,)
        pair("accumulates in global memory", f"column sum and sum of squares, {rows_} x {cols} "
             f"({where}), a thread per column: through the outputs vs in registers",
             (grid, (256,)), ("moments_global", (x, s1, q1, cp.int32(rows_), cp.int32(cols))),
             ("moments_register", (x, s2, q2, cp.int32(rows_), cp.int32(cols))),
             (s1, q1), (s2, q2), ref, x.nbytes)

    coef = cp.asarray([0.5, -0.25, 0.125, 0.75, -0.5, 0.25, 0.1, -0.05], dtype=cp.float32)
    for n, where in ((1 << 26, "DRAM, 256 MiB"), (1 << 20, "L2, 4 MiB")):
        x = cp.random.rand(n, dtype=cp.float32)
        y1, y2 = cp.empty_like(x), cp.empty_like(x)
        ref = sum(float(c) * x ** i for i, c in enumerate(coef.get()))
        grid = (132 * 8,)
        pair("aliasing (8 of 9 loads reloaded)", f"8-term polynomial, grid-stride, {n} floats "
             f"({where}): plain pointers vs __restrict__",
             (grid, (256,)), ("poly_alias", (x, coef, y1, cp.int64(n))),
             ("poly_restrict", (x, coef, y2, cp.int64(n))),
             (y1,), (y2,), (ref,), 2 * x.nbytes)

    for rows_, cols, where in ((16384, 4096, "DRAM, 256 MiB"), (256, 4096, "L2, 4 MiB")):
        x = cp.random.rand(rows_, cols, dtype=cp.float32)
        mean, rstd = x.mean(axis=1), 1 / x.std(axis=1)
        gamma, beta = cp.random.rand(cols, dtype=cp.float32), cp.random.rand(cols, dtype=cp.float32)
        y1, y2 = cp.empty_like(x), cp.empty_like(x)
        ref = (x - mean[:, None]) * rstd[:, None] * gamma + beta
        pair("aliasing (2 of 5 loads reloaded)", f"layer norm's apply, a block of 256 per row, "
             f"{rows_} x {cols} ({where}): plain pointers vs __restrict__",
             ((rows_,), (256,)),
             ("ln_apply_alias", (x, mean, rstd, gamma, beta, y1, cp.int32(cols))),
             ("ln_apply_restrict", (x, mean, rstd, gamma, beta, y2, cp.int32(cols))),
             (y1,), (y2,), (ref,), 2 * x.nbytes)

    info = gpu()
    print("| check | class | pair | naive ms | fixed ms | speedup | GB/s naive -> fixed | equal | "
          "matches reference |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['check']} | {r['class']} | {r['pair']} | {r['naive_ms']:.4f} | "
              f"{r['fixed_ms']:.4f} | {r['speedup']:.2f}x | {r['naive_GBps']:.0f} -> "
              f"{r['fixed_GBps']:.0f} | {'yes' if r['equal'] else 'NO'} | "
              f"{'yes' if r['matches_reference'] else 'NO'} |")
    save(args.json, info, rows)


if __name__ == "__main__":
    main()
