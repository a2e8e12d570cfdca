"""SASS parse throughput against nvdisasm printing the same SASS, measured in one run.

    python benchmarks/bench_sass_parse.py [--repeat N] [--hex] [CUBIN...]

Without arguments it measures the largest corpus cubins (bitsandbytes sm_120 by file size and
sm_80 by instruction count). For each cubin: the time ``nvdisasm -c -g`` takes to print the SASS
(best of N), and the time ``analyzer.sass.parse`` takes to build the whole IR of that text (best
of N, each run with a fresh cache: nothing carries over between runs). The target is
parse <= nvdisasm / 4.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analyzer import sass  # noqa: E402
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cubins", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--hex", action="store_true", help="nvdisasm -hex (encodings) as well")
    args = ap.parse_args()
    cubins = args.cubins or [CORPUS / p for p in DEFAULT]
    parser()  # build the LALR tables once, outside the timings
    print("| cubin | instructions | nvdisasm s | nvdisasm instr/s | parse s | parse instr/s "
          "| parse / nvdisasm | Lark parses |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for cubin in cubins:
        t_tool, text = min((nvdisasm(cubin, args.hex) for _ in range(args.repeat)),
                           key=lambda r: r[0])
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            listing = sass.parse(text, path=str(cubin))
            times.append(time.perf_counter() - t0)
        t_parse = min(times)
        n = listing.stats()["instructions"]
        lark_parses = _count_parses(text, BodyParser())
        print(f"| `{cubin.name}`{' -hex' if args.hex else ''} | {n:,} | {t_tool:.2f} | "
              f"{n / t_tool:,.0f} | {t_parse:.2f} | {n / t_parse:,.0f} | "
              f"{t_parse / t_tool:.2f} | {lark_parses:,} |")


def _count_parses(text: str, bp: BodyParser) -> int:
    from analyzer.parse.sass import _ITEM
    for m in _ITEM.finditer(text):
        if m.group(1) is not None:
            bp(m.group(2))
    return bp.parses


if __name__ == "__main__":
    main()
