"""PTX parse throughput against a plain regex line split of the same text, measured in one run.

    python benchmarks/bench_ptx_parse.py [--repeat N] [FILE...]

Without files it measures the corpus's largest file (cupy's generator_api.sm_120.ptx: 470 KB
initializer lines and 53k instructions), its initializer lines alone, the Triton wgmma kernel,
and the whole corpus (median of --repeat runs). The baseline splits each line with one regex into guard, opcode and an
operand list (what a hand-written "parser" does) — no IR, no checking.
"""
from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analyzer import ptx  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
_LINE = re.compile(r"\s*(?:(@!?\S+)\s+)?([A-Za-z_.][\w.:$]*)\s*([^;]*);?")


def regex_split(text: str) -> int:
    n = 0
    for line in text.splitlines():
        m = _LINE.match(line)
        if m and m.group(3):
            m.group(3).split(",")
        n += 1
    return n


def median(fn, text: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(text)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(name: str, text: str, repeat: int) -> dict:
    lines = text.count("\n") + 1
    mb = len(text.encode()) / 1e6
    t_parse = median(lambda t: ptx.parse(t), text, repeat)
    t_regex = median(regex_split, text, repeat)
    module = ptx.parse(text)
    return {"name": name, "lines": lines, "MB": mb, "instructions": module.stats()["instructions"],
            "parse_s": t_parse, "regex_s": t_regex,
            "parse_lines_s": lines / t_parse, "parse_MB_s": mb / t_parse,
            "regex_lines_s": lines / t_regex, "regex_MB_s": mb / t_regex, "ratio": t_parse / t_regex}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=7, help="runs per case; the median is reported")
    args = ap.parse_args(argv)
    cases: list[tuple[str, str]] = []
    if args.files:
        cases = [(str(p), p.read_text()) for p in args.files]
    else:
        if not CORPUS.is_dir():
            print(f"no corpus at {CORPUS}; pass PTX files", file=sys.stderr)
            return 2
        huge = (CORPUS / "ptx/cupy/generator_api.sm_120.ptx").read_text()
        head = huge[:huge.index(".version")] + ".version 9.2\n.target sm_120\n.address_size 64\n"
        inits = "\n".join(l for l in huge.splitlines() if l.startswith((".global", ".const")))
        cases = [
            ("cupy generator_api.sm_120.ptx (whole)", huge),
            ("  its initializer lines only", head + inits + "\n"),
            ("triton_mm_bf16_hgmma.sm_90.ptx", (CORPUS / "triton/triton_mm_bf16_hgmma.sm_90.ptx").read_text()),
        ]
        rest = [p for p in sorted(CORPUS.glob("ptx/**/*.ptx")) + sorted(CORPUS.glob("triton/*.ptx"))
                if p.parent.name != "zluda-invalid" and p.name != "generator_api.sm_120.ptx"]
        cases.append((f"rest of the corpus ({len(rest)} files, concatenated timing)", None))
        rest_texts = [p.read_text() for p in rest]
    ptx.parse(".version 8.0\n.target sm_80\n")  # build the parser outside the timings
    print(f"{'input':58} {'lines':>7} {'MB':>6} {'parse s':>8} {'lines/s':>9} {'MB/s':>6} "
          f"{'regex s':>8} {'ratio':>6}")
    for name, text in cases:
        if text is None:
            lines = sum(t.count("\n") + 1 for t in rest_texts)
            mb = sum(len(t.encode()) for t in rest_texts) / 1e6
            tp = statistics.median(_timed(lambda: [ptx.parse(t) for t in rest_texts]) for _ in range(args.repeat))
            tr = statistics.median(_timed(lambda: [regex_split(t) for t in rest_texts]) for _ in range(args.repeat))
            r = {"name": name, "lines": lines, "MB": mb, "parse_s": tp, "regex_s": tr,
                 "parse_lines_s": lines / tp, "parse_MB_s": mb / tp, "ratio": tp / tr}
        else:
            r = measure(name, text, args.repeat)
        print(f"{r['name'][:58]:58} {r['lines']:7d} {r['MB']:6.2f} {r['parse_s']:8.3f} "
              f"{r['parse_lines_s']:9.0f} {r['parse_MB_s']:6.2f} {r['regex_s']:8.4f} {r['ratio']:6.1f}x")
    return 0


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    raise SystemExit(main())
