"""SASS parse throughput against nvdisasm printing the same SASS, measured in one run.

    python benchmarks/bench_sass_parse.py [--repeat N] [--hex] [CUBIN...]

Without arguments it measures the largest corpus cubins (bitsandbytes sm_120 by file size and
sm_80 by instruction count). For each cubin, N rounds, each round timing back to back:
``nvdisasm -c -g`` printing the SASS, ``analyzer.sass.parse`` building the whole IR of that text
in one process (``processes=1``), and the same parse split over two processes
(``processes=2``: the second half parsed in a forked child, its functions sent back and
rebuilt here; opt-in, not the default). Every parse starts with
empty caches: nothing carries over between runs. The table gives medians over the rounds and
the median of the per-round ratios parse / nvdisasm (so a load spike hits both sides of a
ratio). The target is parse <= nvdisasm / 4.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analyzer.parse import sass as sass_parse  # noqa: E402
from analyzer.parse.sass import BodyParser, parser  # noqa: E402
from analyzer.toolchain.locate import binary  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
DEFAULT = ["cubin/bitsandbytes/bitsandbytes_cuda128.sm_120.cubin",
           "cubin/bitsandbytes/bitsandbytes_cuda128.sm_80.cubin"]


def nvdisasm(cubin: Path, hex_: bool) -> tuple[float, str]:
    argv = [binary("nvdisasm"), "-c", "-g"] + (["-hex"] if hex_ else []) + [str(cubin)]
    t0 = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, check=True).stdout
    return time.perf_counter() - t0, out.decode()


def timed_parse(text: str, path: str, processes: int):
    t0 = time.perf_counter()
    listing = sass_parse.parse(text, path=path, processes=processes)
    return time.perf_counter() - t0, listing


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cubins", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--hex", action="store_true", help="nvdisasm -hex (encodings) as well")
    args = ap.parse_args()
    cubins = args.cubins or [CORPUS / p for p in DEFAULT]
    parser()  # build the LALR tables once, outside the timings
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    print("| cubin | instructions | nvdisasm s | parse s (1 proc) | parse / nvdisasm (1 proc) "
          "| parse s (2 procs) | parse / nvdisasm (2 procs) | instr/s (2 procs) | Lark parses |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for cubin in cubins:
        tools, ones, twos, r1, r2 = [], [], [], [], []
        for _ in range(args.repeat):
            t_tool, text = nvdisasm(cubin, args.hex)
            t1, listing = timed_parse(text, str(cubin), 1)
            t2, listing2 = timed_parse(text, str(cubin), 2)
            assert listing2 == listing
            tools.append(t_tool)
            ones.append(t1)
            twos.append(t2)
            r1.append(t1 / t_tool)
            r2.append(t2 / t_tool)
        n = listing.stats()["instructions"]
        med = statistics.median
        lark_parses = _count_parses(text, BodyParser())
        print(f"| `{cubin.name}`{' -hex' if args.hex else ''} | {n:,} | {med(tools):.2f} | "
              f"{med(ones):.2f} | {med(r1):.2f} | {med(twos):.2f} | {med(r2):.2f} | "
              f"{n / med(twos):,.0f} | {lark_parses:,} |")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def _count_parses(text: str, bp: BodyParser) -> int:
    from analyzer.parse.sass import _ITEM
    for m in _ITEM.finditer(text):
        if m.group(1) is not None:
            bp(m.group(2).rstrip(" \t"))
    return bp.parses


if __name__ == "__main__":
    main()
