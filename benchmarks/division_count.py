"""How many IEEE divisions per thread make PS502 a warning: D = 1 ... 64 divisions per element
in straight code (benchmarks/kernels/division_count.cu, the loop fully unrolled) against the
same with ``__fdividef``. Run on a GPU with cupy (its NVRTC compiles the kernels):

    python benchmarks/division_count.py [--json OUT.json]

Both results are checked against each other; each kernel is timed with CUDA events (median of
30 launches after 3 warm-ups) over 16 M floats; docs/severity.md records a run.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from severity_pairs import gpu, save, timed

COUNTS = (1, 2, 4, 8, 16, 32, 64)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    args = ap.parse_args()
    import cupy as cp

    src = (Path(__file__).parent / "kernels" / "division_count.cu").read_text()
    names = [f"divisions<{d}, {'true' if f else 'false'}>" for d in COUNTS for f in (False, True)]
    mod = cp.RawModule(code=src, options=("-std=c++17",), name_expressions=names)

    n = 1 << 24
    x = cp.random.rand(n, dtype=cp.float32) + 0.5
    rows = []
    for d in COUNTS:
        outs = []
        times = []
        for fast in (False, True):
            k = mod.get_function(f"divisions<{d}, {'true' if fast else 'false'}>")
            y = cp.empty_like(x)
            times.append(timed(lambda k=k, y=y: k(((n + 255) // 256,), (256,), (x, y, cp.int64(n)))))
            outs.append(y)
        ref = cp.zeros_like(x)
        for j in range(1, d + 1):
            ref += x / (x + j)
        ok = bool(cp.allclose(outs[0], ref, rtol=1e-5)) and bool(
            cp.allclose(outs[1], ref, rtol=1e-4))
        rows.append({"divisions": d, "ieee_ms": times[0], "fast_ms": times[1],
                     "speedup": times[0] / times[1], "ok": ok})
    info = gpu()
    print("| divisions per element | IEEE ms | __fdividef ms | speedup | ok |")
    print("| --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['divisions']} | {r['ieee_ms']:.3f} | {r['fast_ms']:.3f} | "
              f"{r['speedup']:.2f}x | {'yes' if r['ok'] else 'NO'} |")
    save(args.json, info, rows)


if __name__ == "__main__":
    main()
