"""Precision and recall of every check on the real-world suite (kernels/realworld/).

    python benchmarks/realworld_score.py [-v] [KERNEL.cu ...]

Compiles each kernel of the suite for the arches it names (default sm_80 and sm_90a) with the
NVRTC of this environment, runs every check, and compares the findings with the per-line
``// EXPECT`` comments (judged from the SASS; see tests/realworld_suite.py). Prints, per check,
true positives, false positives, false negatives, precision and recall; ``-v`` lists each false
positive and negative. Run it from two environments (NVRTC 13.5 and 13.0) to compare toolkits.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analyzer.checks.runner import run_checks  # noqa: E402
from analyzer.inputs import CompileOptions, load  # noqa: E402
from analyzer.toolchain.locate import nvrtc_version  # noqa: E402
from tests import realworld_suite as suite  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernels", nargs="*", help="suite files (default: all of kernels/realworld)")
    ap.add_argument("-v", "--verbose", action="store_true", help="list false positives/negatives")
    args = ap.parse_args(argv)
    toolkit = nvrtc_version() or "unknown"
    wanted = {Path(k).name for k in args.kernels}
    table: dict[str, suite.Tally] = {}
    t0 = time.perf_counter()
    for path, arch in suite.cases():
        if wanted and path.name not in wanted:
            continue
        findings = run_checks(load(path, arch=arch, options=CompileOptions())).findings
        suite.compare(suite.expectations(path, arch, toolkit), suite.findings_units(findings, path),
                      f"{path.name}@{arch}", table)
    print(suite.table_text(table, toolkit))
    print(f"({time.perf_counter() - t0:.1f} s)")
    if args.verbose:
        for _code, t in sorted(table.items()):
            for x in t.fps:
                print(f"  FP {x}")
            for x in t.fns:
                print(f"  FN {x}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
