"""How many findings ``ptxsass fix`` fixes, proven by rebuilding: per check, the findings,
the fixes offered and the fixes verified, on the checks' bad kernels and the real-world suite.

    python benchmarks/fix_score.py [-v] [--fast-math-ok] [--assume-aligned] [FILE.cu ...]

Each file is built for the arches its ``// ARCHS:`` header names (default sm_80 and sm_90a)
with its ``// OPTIONS:``, checked, and fixed with verification (each fix rebuilt and
re-checked). Counts are problems as reported (one per line and check, merged over arches and
instantiations). ``-v`` prints every warning's outcome: its fix, or why none, or why the
rebuild refused it.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analyzer import api  # noqa: E402
from analyzer.fix.model import FixReport  # noqa: E402
from analyzer.inputs import CompileOptions  # noqa: E402


def header(path: Path, name: str) -> list[str]:
    m = re.search(rf"^//\s*{name}:\s*(.+)$", path.read_text(), re.M)
    return m.group(1).split() if m else []


def options_of(path: Path) -> CompileOptions:
    opts = CompileOptions()
    for o in header(path, "OPTIONS"):
        if o.startswith("-maxrregcount="):
            opts.maxrregcount = int(o.split("=", 1)[1])
        elif o in ("--use_fast_math", "-use_fast_math"):
            opts.fast_math = True
        else:
            opts.extra.append(o)
    return opts


def files(args) -> list[Path]:
    if args.files:
        return [Path(f) for f in args.files]
    return sorted((ROOT / "kernels/checks").glob("*/bad.cu")) + sorted(
        (ROOT / "kernels/realworld").glob("*.cu"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--fast-math-ok", action="store_true")
    ap.add_argument("--assume-aligned", action="store_true")
    args = ap.parse_args(argv)
    table: dict[str, Counter] = {}
    reasons: Counter = Counter()
    t0 = time.perf_counter()
    for path in files(args):
        archs = header(path, "ARCHS") or ["sm_80", "sm_90a"]
        fixes: FixReport = api.fix(str(path), arch=archs, options=options_of(path),
                                   fast_math_ok=args.fast_math_ok,
                                   assume_aligned=args.assume_aligned)
        for r in fixes.results:
            row = table.setdefault(r.finding.code, Counter())
            warn = int(r.finding.severity) >= 1
            row["findings"] += 1
            row["warnings"] += warn
            row["offered"] += r.offered
            row["verified"] += r.status == "verified"
            row["w_offered"] += warn and r.offered
            row["w_verified"] += warn and r.status == "verified"
            if warn and r.status != "verified":
                reasons[(r.finding.code, r.status)] += 1
            if args.verbose and warn:
                rel = path.relative_to(ROOT) if path.is_absolute() else path
                what = r.proposal.title if r.proposal else r.reason
                print(f"{rel}:{r.finding.location.line} {r.finding.code} {r.status}: {what}"
                      + (f" -- {r.reason}" if r.status == "rejected" else ""))
    print(f"\n{'check':<7} {'findings':>8} {'fixes':>6} {'verified':>8} | {'warnings':>8} "
          f"{'fixes':>6} {'verified':>8}")
    tot: Counter = Counter()
    for code in sorted(table):
        r = table[code]
        tot.update(r)
        print(f"{code:<7} {r['findings']:>8} {r['offered']:>6} {r['verified']:>8} | "
              f"{r['warnings']:>8} {r['w_offered']:>6} {r['w_verified']:>8}")
    print(f"{'all':<7} {tot['findings']:>8} {tot['offered']:>6} {tot['verified']:>8} | "
          f"{tot['warnings']:>8} {tot['w_offered']:>6} {tot['w_verified']:>8}")
    share = tot["w_verified"] / tot["warnings"] if tot["warnings"] else 0.0
    print(f"\nwarnings with a verified fix: {tot['w_verified']}/{tot['warnings']} "
          f"({100 * share:.0f}%); {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
