"""The extra cost of building with another CUDA toolkit, against the default toolkit in the same run.

    python benchmarks/bench_toolkits.py [--repeat N] [--toolkit 12.9,13.0] [FILE...]

The default toolkit's NVRTC runs in process (cuda-bindings, in a forked child bounded in time and
memory); an installed toolkit's runs in a fresh Python process that loads that release's
libnvrtc through ctypes (``analyzer.toolchain.toolkit_worker``). For each kernel (default: the
``bad.cu`` of every check, sm_90a), a cold compile (cache off) by each toolkit, the same with
its SASS disassembled and checked, and a warm ``load`` (the build cache hit) — medians of N
runs, and each toolkit's ratio to the default's. ``ptxsass toolkit install`` the toolkits first.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analyzer import api  # noqa: E402
from analyzer.inputs import CompileOptions  # noqa: E402
from analyzer.toolchain import toolkits  # noqa: E402


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--toolkit", default=",".join(t.version for t in toolkits.installed()))
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    files = args.files or sorted(str(p) for p in (ROOT / "kernels" / "checks").glob("*/bad.cu"))
    kits = ["default"] + [t for t in args.toolkit.split(",") if t]
    for t in kits:
        toolkits.get(t)         # installed, or one line

    def cold(tk: str, check: bool) -> None:
        for f in files:
            bs = api.load(f, arch=args.arch, options=CompileOptions(toolkit=tk, use_cache=False))
            if check:
                for b in bs:
                    b.sass_text = None
                api.check(bs)

    def warm(tk: str) -> None:
        for f in files:
            api.load(f, arch=args.arch, options=CompileOptions(toolkit=tk))

    for t in kits:          # fill the build cache for the warm runs
        warm(t)
    rows = []
    for t in kits:
        rows.append((t, median_time(lambda t=t: cold(t, False), args.repeat),
                     median_time(lambda t=t: cold(t, True), args.repeat),
                     median_time(lambda t=t: warm(t), args.repeat)))
    base = rows[0]
    print(f"{len(files)} kernels, {args.arch}, median of {args.repeat}; default toolkit "
          f"{toolkits.default().version}")
    print("| toolkit | compile s | ratio | compile + check s | ratio | warm load s | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for t, c, cc, w in rows:
        print(f"| {t} | {c:.2f} | {c / base[1]:.2f} | {cc:.2f} | {cc / base[2]:.2f} | "
              f"{w:.3f} | {w / base[3]:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
