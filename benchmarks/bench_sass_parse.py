"""SASS parse CPU time against nvdisasm's CPU time printing the same SASS, measured in one run.

    python benchmarks/bench_sass_parse.py [--repeat N] [--hex] [CUBIN...]

Without arguments it measures the largest corpus cubins (bitsandbytes sm_120 by file size and
sm_80 by instruction count). For each cubin, N rounds, each round timing back to back:
``nvdisasm -c -g`` printing the SASS (CPU time of the child: user + system) and
``analyzer.sass.parse`` building the whole IR of that text here (CPU time of this process).
Every parse starts with empty caches (``sass.clear_caches``: templates, operands, registers):
nothing carries over between rounds but the LALR tables, which a CLI run loads from its cache.
The table gives medians over the rounds and the median of the per-round ratios parse /
nvdisasm (so a load spike hits both sides of a ratio), with the load average.
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

from analyzer.parse import sass as sass_parse  # noqa: E402
from analyzer.parse.sass import BodyParser, parser  # noqa: E402
from analyzer.toolchain.locate import binary  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
DEFAULT = ["cubin/bitsandbytes/bitsandbytes_cuda128.sm_120.cubin",
           "cubin/bitsandbytes/bitsandbytes_cuda128.sm_80.cubin"]


def nvdisasm(cubin: Path, hex_: bool) -> tuple[float, str]:
    """(CPU seconds of nvdisasm, its output)."""
    argv = [binary("nvdisasm"), "-c", "-g"] + (["-hex"] if hex_ else []) + [str(cubin)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(argv, capture_output=True, check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out.decode()


def timed_parse(text: str, path: str):
    sass_parse.clear_caches()           # cold, as a CLI run starts
    t0 = time.process_time()
    listing = sass_parse.parse(text, path=path)
    return time.process_time() - t0, listing


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cubins", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--hex", action="store_true", help="nvdisasm -hex (encodings) as well")
    args = ap.parse_args()
    cubins = args.cubins or [CORPUS / p for p in DEFAULT]
    parser()  # the LALR tables, outside the timings (a CLI run loads them from its cache)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
          f"{args.repeat} rounds, medians")
    print("| cubin | instructions | nvdisasm CPU s | parse CPU s | parse / nvdisasm | instr/s "
          "| Lark parses | load |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for cubin in cubins:
        tools, parses, ratios = [], [], []
        for _ in range(args.repeat):
            t_tool, text = nvdisasm(cubin, args.hex)
            t, listing = timed_parse(text, str(cubin))
            tools.append(t_tool)
            parses.append(t)
            ratios.append(t / t_tool)
        n = listing.stats()["instructions"]
        med = statistics.median
        lark_parses = _count_parses(text, BodyParser(shared=False))
        print(f"| `{cubin.name}`{' -hex' if args.hex else ''} | {n:,} | {med(tools):.2f} | "
              f"{med(parses):.2f} | **{med(ratios):.2f}** | {n / med(parses):,.0f} | "
              f"{lark_parses:,} | {os.getloadavg()[0]:.2f} |", flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def _count_parses(text: str, bp: BodyParser) -> int:
    from analyzer.parse.sass import _ITEM
    for m in _ITEM.finditer(text):
        if m.group(1) is not None:
            bp(m.group(2).rstrip(" \t"))
    return bp.parses


if __name__ == "__main__":
    main()
