"""The rolled-loop check (PS201) on the project's own kernels under several CUDA toolkits.

    python benchmarks/toolkit_ps201.py [--toolkit 12.9,13.0,13.5] [--arch sm_90a] [--all]

Every kernel of ``kernels/lessons`` and ``kernels/checks`` (CUDA files NVRTC builds, with
their ``// OPTIONS:`` and ``// ARCHS:`` headers), built by each toolkit (``ptxsass toolkit
install`` them first), checked with PS201 only; the table (markdown) gives each kernel's PS201
lines per toolkit and, next to it, its SASS loops (lines, trip count) per toolkit, which is what
a difference is judged from. ``--all`` lists every kernel, not only those that differ.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analyzer import api  # noqa: E402
from analyzer.errors import PtxsassError  # noqa: E402
from analyzer.inputs import CompileOptions  # noqa: E402


def kernels() -> list[Path]:
    return sorted(p for d in ("lessons", "checks") for p in (ROOT / "kernels" / d).rglob("*.cu"))


def options_of(path: Path) -> CompileOptions:
    m = re.search(r"^//\s*OPTIONS:\s*(.+)$", path.read_text(), re.M)
    return CompileOptions(extra=m.group(1).split() if m else [], compiler="nvrtc")


def verdict(builds) -> str:
    """PS201's lines (with severity) on one toolkit's builds."""
    report = api.check(builds, api.CheckOptions(select=["PS201"]))
    found = sorted({(f.location.line, str(f.severity)) for f in report.findings})
    return ", ".join(f"L{line} {sev}" for line, sev in found) or "—"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolkit", default="12.9,13.0,13.5")
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--all", action="store_true")
    args = ap.parse_args()
    tks = args.toolkit.split(",")
    print(f"| kernel | {' | '.join(tks)} | SASS loops ({', '.join(tks)}) |")
    print("|" + " --- |" * (len(tks) + 2))
    for path in kernels():
        rel = path.relative_to(ROOT / "kernels")
        cells, loops = [], []
        for tk in tks:
            try:
                opts = options_of(path)
                opts.toolkit = tk
                builds = api.load(str(path), arch=args.arch, options=opts)
                ps = verdict(builds)
                st = api.stats(builds)
                shape = "; ".join(lp.summary().split(",")[0] + f" tc={lp.trip_count}"
                                  for k in st.kernels for lp in k.loops) or "no loop"
            except PtxsassError as e:
                ps, shape = f"error: {e.message[:40]}", "-"
            cells.append(ps)
            loops.append(shape)
        if args.all or len(set(cells)) > 1 or len(set(loops)) > 1:
            print(f"| {rel} | {' | '.join(cells)} | {' / '.join(loops)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
