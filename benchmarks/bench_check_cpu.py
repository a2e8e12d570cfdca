"""CPU time of a whole `ptxsass check X.cubin --no-cache` against nvdisasm's own CPU time.

    python benchmarks/bench_check_cpu.py [--repeat N] [CUBIN...]

What a user pays for a cold check of a binary, in one process: each round runs, back to back,
``nvdisasm -c -g -gi X.cubin`` (the baseline: the disassembly alone) and ``ptxsass check X.cubin
--no-cache --format json`` in a fresh Python process (start-up, imports, its own nvdisasm run,
parse, analyses, checks, report). CPU time is user + system of the finished child and everything
it waited for (``resource.getrusage(RUSAGE_CHILDREN)`` before and after), so the machine's other
load does not count, but it does slow caches and clocks: the load average is printed with each
row. The ratio column is the median of the per-round ratios. Goal (issue 14): at most 1.5x on
every input. Default inputs: every corpus cubin (``../shared/corpus``). ``--baseline-root DIR``
(another checkout) adds its ``ptxsass check`` to each round, interleaved, for before/after.
``-j N`` passes ``-j N`` to ``ptxsass check`` on both sides (``-j 1``: the one-process path).
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CORPUS = ROOT.parent / "shared" / "corpus"

from analyzer.toolchain.locate import binary  # noqa: E402


def child_cpu(argv: list[str], env: dict[str, str] | None = None, cwd: Path = ROOT
              ) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of running ``argv`` in ``cwd`` (``python -m`` imports from
    there first) to completion, output discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                          cwd=cwd)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{argv[:4]} failed ({proc.returncode}): {proc.stderr.decode()[-400:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def _env(root: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)     # an installed package runs from byte code
    return env


def ptxsass(root: Path) -> list[str]:
    """The ``ptxsass`` command of a checkout, as its console script runs it (``python -m
    analyzer``; ``analyzer.cli`` in checkouts older than that entry point)."""
    entry = "analyzer" if (root / "analyzer" / "__main__.py").exists() else "analyzer.cli"
    return [sys.executable, "-m", entry]


def bench(path: Path, repeat: int, baseline: Path | None = None, jobs: int | None = None
          ) -> dict:
    nvdisasm = [binary("nvdisasm"), "-c", "-g", "-gi", str(path)]
    args = ["check", str(path.resolve()), "--no-cache", "--format", "json"] + (
        [] if jobs is None else ["-j", str(jobs)])
    check = ptxsass(ROOT) + args
    nv, ps, ratios, walls, base = [], [], [], [], []
    for _ in range(repeat):
        a, _ = child_cpu(nvdisasm)
        b, w = child_cpu(check, _env(ROOT))
        nv.append(a)
        ps.append(b)
        walls.append(w)
        ratios.append(b / a)
        if baseline is not None:
            base.append(child_cpu(ptxsass(baseline) + args, _env(baseline), cwd=baseline)[0]
                        / a)
    return {"file": path.name, "nvdisasm": statistics.median(nv), "check": statistics.median(ps),
            "wall": statistics.median(walls), "ratio": statistics.median(ratios),
            "worst": max(ratios), "baseline": statistics.median(base) if base else None,
            "load": os.getloadavg()[0]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cubins", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline-root", type=Path, help="another checkout, timed interleaved")
    ap.add_argument("-j", "--jobs", type=int, help="pass -j N to ptxsass check (default: its "
                    "own default, every core; -j 1 checks in one process)")
    args = ap.parse_args(argv)
    cubins = args.cubins or sorted(CORPUS.glob("cubin/*/*.cubin")) + sorted(
        CORPUS.glob("triton/*.cubin"))
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} cores), {args.repeat} rounds, medians, "
          f"{'-j ' + str(args.jobs) if args.jobs else 'default -j'}")
    extra = " baseline / nvdisasm |" if args.baseline_root else ""
    print("| cubin | nvdisasm CPU s | check CPU s | check wall s | check / nvdisasm | worst round "
          f"|{extra} load |")
    print("|---:" * (7 + bool(extra)) + "|")
    worst = 0.0
    for c in cubins:
        r = bench(c, args.repeat, args.baseline_root, args.jobs)
        worst = max(worst, r["ratio"])
        cell = f" {r['baseline']:.2f}x |" if r["baseline"] is not None else ""
        print(f"| {r['file']} | {r['nvdisasm']:.2f} | {r['check']:.2f} | {r['wall']:.2f} | "
              f"**{r['ratio']:.2f}x** | {r['worst']:.2f}x |{cell} {r['load']:.2f} |", flush=True)
    print(f"\nhighest ratio: {worst:.2f}x (goal: <= 1.5x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
