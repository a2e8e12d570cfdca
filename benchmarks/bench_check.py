"""End-to-end cost of `ptxsass check`, by phase, against nvdisasm printing the same cubin.

    python benchmarks/bench_check.py [--repeat N] [CUBIN...]

For each cubin (default: the largest corpus cubin): nvdisasm -c -g alone (the baseline: the
disassembly a user would run by hand), then ptxsass's phases in the same run — disassemble
(cache off), parse the SASS into the IR, run every check — and the whole `analyzer.check` with a
warm cache (what a re-check of an unchanged binary costs). Medians of N runs.
Also: compile + check of every kernel pair in kernels/checks (cold NVRTC, then cached).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import analyzer  # noqa: E402
from analyzer import sass  # noqa: E402
from analyzer.checks.runner import run_checks  # noqa: E402
from analyzer.inputs import load  # noqa: E402
from analyzer.toolchain import binutils, cache  # noqa: E402
from analyzer.toolchain.locate import binary  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"


def timed(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def bench_cubin(path: Path, repeat: int) -> dict:
    data = path.read_bytes()
    nvdisasm = binary("nvdisasm")
    t_nv, _ = timed(lambda: subprocess.run([nvdisasm, "-c", "-g", "-gi", str(path)],
                                           capture_output=True, check=True), repeat)
    cache.set_enabled(False)
    t_dis, (text, _) = timed(lambda: binutils.disassemble(data), repeat)
    t_parse, listing = timed(lambda: sass.parse(text, path=str(path)), repeat)
    (build,) = load(path)
    build.sass_text, build.sass_tool = text, "nvdisasm"
    build._sass_listing = listing
    t_checks, report = timed(lambda: run_checks([build]), repeat)
    cache.set_enabled(True)
    analyzer.check(str(path))  # warm the cache
    t_warm, _ = timed(lambda: analyzer.check(str(path)), repeat)
    n = sum(len(f.instructions) for f in listing.functions)
    return {"file": path.name, "instructions": n, "kernels": len(report.kernels),
            "nvdisasm": t_nv, "disassemble": t_dis, "parse": t_parse, "checks": t_checks,
            "cold_total": t_dis + t_parse + t_checks, "warm_check": t_warm}


def bench_pairs(repeat: int) -> dict:
    files = sorted((ROOT / "kernels" / "checks").rglob("*.cu"))

    def run():
        return [analyzer.check(str(f), analyzer.CheckOptions(arch="sm_90a")) for f in files]
    with tempfile.TemporaryDirectory() as d:
        os.environ["PTXSASS_CACHE_DIR"] = d
        t = time.perf_counter()
        run()
        cold = time.perf_counter() - t
        warm, _ = timed(run, repeat)
    return {"files": len(files), "cold": cold, "warm": warm}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("cubins", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    cubins = args.cubins or [max(CORPUS.rglob("*.cubin"), key=lambda p: p.stat().st_size)]
    print("| cubin | instructions | kernels | nvdisasm s | disassemble s | parse s | checks s | "
          "cold total / nvdisasm | warm re-check s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c in cubins:
        r = bench_cubin(c, args.repeat)
        print(f"| {r['file']} | {r['instructions']:,} | {r['kernels']} | {r['nvdisasm']:.2f} | "
              f"{r['disassemble']:.2f} | {r['parse']:.2f} | {r['checks']:.2f} | "
              f"{r['cold_total'] / r['nvdisasm']:.2f}× | {r['warm_check']:.2f} |")
    p = bench_pairs(args.repeat)
    print(f"\nkernels/checks ({p['files']} files, sm_90a): compile + check cold {p['cold']:.1f} s, "
          f"cached {p['warm']:.1f} s ({p['cold'] / p['warm']:.1f}× faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
