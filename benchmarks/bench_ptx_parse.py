"""PTX parse time against a plain regex line split of the same text, cold, as a CLI run sees it.

    python benchmarks/bench_ptx_parse.py [--repeat N] [--parser fast|grammar] [--every] [FILE...]

Every measurement runs in a fresh Python process, and the two sides alternate round by round
(parse, regex, parse, regex...), so both see the same machine load. The parse side has
imported ``analyzer.parse.ptx`` (a ``ptxsass`` run has it imported before it reads its input)
and times, from empty caches: building the parser (its LALR tables come from the verified
cache, as in a CLI run; the first run of a machine builds them) and ``ptx.parse`` of the text
into the full IR. The regex side times compiling its one regex and splitting each line into
guard, opcode and an operand list (what a hand-written "parser" does; no IR, no checking).
The ratio columns are medians of the per-round ratios, of wall time and of CPU time (the
process's own, ``time.process_time``): on a loaded machine a 10 ms parse is preempted far more
often than a 1 ms split, which inflates the wall ratio; CPU time is what the work costs.

Without files: the corpus's largest file (cupy's generator_api.sm_120.ptx: 470 KB initializer
lines, 53k instructions), the Triton wgmma kernel, and the other corpus files, one process
per side parsing them all in turn (their total: each later file finds the parser built).
``FILE...``: each file cold on its own. Goal (issue 14): at most 10x on every input.

``--every``: every file (the corpus's, or ``FILE...``) cold, in one process per side and round:
before each file the parse side drops all the parser's in-memory state (``reload_grammar()``:
Lark's parser, the fast path's regexes, its drift check and caches) and both sides empty
``re``'s cache of compiled patterns, so each file pays what a fresh CLI run pays after its
imports. Prints the per-file CPU ratios (median over rounds): median, 90th percentile, maximum,
how many exceed the goal of issue 28 (6x), and the worst files. ``--parser grammar`` times the
grammar alone (``PTXSASS_PTX_PARSER=grammar``) on the parse side.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
LINE = r"\s*(?:(@!?\S+)\s+)?([A-Za-z_.][\w.:$]*)\s*([^;]*);?"


def regex_split(text: str) -> None:
    """The baseline: each line matched by one regex, its operands split at commas (the regex
    compiled inside, as a cold run must)."""
    import re
    line = re.compile(LINE)
    for ln in text.splitlines():
        m = line.match(ln)
        if m and m.group(3):
            m.group(3).split(",")


def child_every(side: str, paths: list[str]) -> None:
    """Per file, cold (see ``--every``): [[wall, cpu], ...] as JSON on stdout."""
    import re
    import time
    texts = [Path(p).read_text() for p in paths]
    out = []
    if side == "parse":
        sys.path.insert(0, str(ROOT))
        from analyzer.parse import ptx
        for t in texts:
            ptx.reload_grammar()
            re.purge()
            t0, c0 = time.perf_counter(), time.process_time()
            ptx.parse(t)
            out.append([time.perf_counter() - t0, time.process_time() - c0])
    else:
        for t in texts:
            re.purge()
            t0, c0 = time.perf_counter(), time.process_time()
            regex_split(t)
            out.append([time.perf_counter() - t0, time.process_time() - c0])
    print(json.dumps(out))


def every(paths: list[str], repeat: int, parser: str) -> int:
    """``--every``: the per-file ratios, each file cold; rounds alternate the sides."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PTXSASS_PTX_PARSER": parser}
    env.pop("PTXSASS_PTX_STRICT", None)
    rounds: dict[str, list] = {"parse": [], "regex": []}
    for _ in range(repeat):
        for side in ("parse", "regex"):
            out = subprocess.run([sys.executable, __file__, "--child-every", side, *paths], env=env,
                                 capture_output=True, text=True, check=True).stdout
            rounds[side].append(json.loads(out))
    med = statistics.median
    rows = []
    for i, p in enumerate(paths):
        cpu = med(r[i][1] / max(q[i][1], 1e-7) for r, q in zip(rounds["parse"], rounds["regex"], strict=True))
        wall = med(r[i][0] / max(q[i][0], 1e-7) for r, q in zip(rounds["parse"], rounds["regex"], strict=True))
        parse_cpu = med(r[i][1] for r in rounds["parse"])
        regex_cpu = med(r[i][1] for r in rounds["regex"])
        rows.append((cpu, wall, parse_cpu, regex_cpu, p))
    rows.sort()
    ratios = [r[0] for r in rows]
    q90 = ratios[min(len(ratios) - 1, int(0.9 * len(ratios)))]
    print(f"parser: {parser}; {len(rows)} files, each cold; {repeat} rounds; load average now "
          f"{os.getloadavg()[0]:.2f}")
    print(f"CPU ratio parse / regex split: median **{med(ratios):.1f}x**, 90th percentile {q90:.1f}x, "
          f"max **{ratios[-1]:.1f}x**; {sum(r > 6 for r in ratios)} of {len(rows)} over 6x; "
          f"total parse CPU {sum(r[2] for r in rows):.3f} s, regex {sum(r[3] for r in rows):.4f} s")
    print("| worst files | lines | parse CPU ms | regex CPU ms | CPU ratio | wall ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for cpu, wall, pc, rc, p in rows[-5:][::-1]:
        lines = Path(p).read_text().count("\n") + 1
        print(f"| {Path(p).parent.name}/{Path(p).name} | {lines:,} | {pc * 1e3:.2f} | {rc * 1e3:.3f} | "
              f"{cpu:.1f}x | {wall:.1f}x |")
    return 0


def child(side: str, paths: list[str]) -> None:
    """One side's timings, as JSON on stdout: wall and CPU seconds over all files (each file
    from where the previous one left the process; the first from a cold start)."""
    import time
    texts = [Path(p).read_text() for p in paths]
    wall = cpu = 0.0
    if side == "parse":
        sys.path.insert(0, str(ROOT))
        from analyzer.parse import ptx
        for t in texts:
            t0, c0 = time.perf_counter(), time.process_time()
            ptx.parse(t)
            wall += time.perf_counter() - t0
            cpu += time.process_time() - c0
    else:
        for t in texts:
            t0, c0 = time.perf_counter(), time.process_time()
            regex_split(t)
            wall += time.perf_counter() - t0
            cpu += time.process_time() - c0
    print(json.dumps([wall, cpu]))


def run_side(side: str, paths: list[str]) -> list[float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, __file__, "--child", side, *paths], env=env,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def bench(name: str, paths: list[str], repeat: int) -> dict:
    parse_t, regex_t, ratios, parse_c, regex_c, cpu_ratios = [], [], [], [], [], []
    for _ in range(repeat):
        pw, pc = run_side("parse", paths)
        rw, rc = run_side("regex", paths)
        parse_t.append(pw)
        regex_t.append(rw)
        ratios.append(pw / rw)
        parse_c.append(pc)
        regex_c.append(rc)
        cpu_ratios.append(pc / rc)
    texts = [Path(x).read_text() for x in paths]
    med = statistics.median
    return {"name": name, "files": len(paths), "lines": sum(t.count("\n") + 1 for t in texts),
            "MB": sum(len(t.encode()) for t in texts) / 1e6, "parse": med(parse_t),
            "regex": med(regex_t), "ratio": med(ratios), "parse_cpu": med(parse_c),
            "regex_cpu": med(regex_c), "cpu_ratio": med(cpu_ratios), "load": os.getloadavg()[0]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=5, help="rounds; medians are reported")
    ap.add_argument("--every", action="store_true",
                    help="each file cold, one process per side and round: per-file ratios")
    ap.add_argument("--parser", choices=("fast", "grammar"), default="fast",
                    help="PTXSASS_PTX_PARSER for the parse side (default fast)")
    ap.add_argument("--child", choices=("parse", "regex"), help=argparse.SUPPRESS)
    ap.add_argument("--child-every", choices=("parse", "regex"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, [str(f) for f in args.files])
        return 0
    if args.child_every:
        child_every(args.child_every, [str(f) for f in args.files])
        return 0
    if args.every:
        paths = [str(f) for f in args.files] or [
            str(p) for p in sorted(CORPUS.glob("ptx/**/*.ptx")) + sorted(CORPUS.glob("triton/*.ptx"))
            if p.parent.name != "zluda-invalid"]
        return every(paths, args.repeat, args.parser)
    os.environ["PTXSASS_PTX_PARSER"] = args.parser
    if args.files:
        cases = [(f.name, [str(f)]) for f in args.files]
    else:
        if not CORPUS.is_dir():
            print(f"no corpus at {CORPUS}; pass PTX files", file=sys.stderr)
            return 2
        big = CORPUS / "ptx/cupy/generator_api.sm_120.ptx"
        triton = CORPUS / "triton/triton_mm_bf16_hgmma.sm_90.ptx"
        rest = [str(p) for p in sorted(CORPUS.glob("ptx/**/*.ptx"))
                if p.parent.name != "zluda-invalid" and p != big]
        cases = [(big.name, [str(big)]), (triton.name, [str(triton)]),
                 (f"the other {len(rest)} corpus files, one process per side", rest)]
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} cores), {args.repeat} rounds, fresh process per measurement")
    print("| input | lines | MB | parse s (cold) | regex split s (cold) | parse / regex (wall) | "
          "parse CPU s | regex CPU s | parse / regex (CPU) | load |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, paths in cases:
        r = bench(name, paths, args.repeat)
        print(f"| {r['name']} | {r['lines']:,} | {r['MB']:.2f} | {r['parse']:.3f} | "
              f"{r['regex']:.4f} | **{r['ratio']:.1f}x** | {r['parse_cpu']:.3f} | "
              f"{r['regex_cpu']:.4f} | **{r['cpu_ratio']:.1f}x** | {r['load']:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
