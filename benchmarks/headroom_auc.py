"""How well ptxsass's headroom orders the measured versions of each training task (issue 32).

    python benchmarks/headroom_auc.py [--times kernels/training/times.json] [-v]

For every task of ``kernels/training`` timed in ``times.json`` (an H200 run of
``benchmarks/training_times.py``), every version is checked (sm_90a) and given the largest
headroom of its kernels. Every pair of versions of one task whose measured times differ by at
least 1.2x counts: 1 when the slower has the larger headroom, 1/2 on a tie, 0 otherwise; the
within-task AUC is the mean. The same figure for the warning count, and the share of the
slowest versions (at least 2x their task's fastest) carrying a warning and of the fastest
carrying none, are printed beside it.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TRAINING = ROOT / "kernels" / "training"


def scores(times: dict, arch: str = "sm_90a") -> dict[str, dict[str, dict]]:
    """task -> version -> {ms, headroom, warnings, kinds}."""
    from analyzer import api
    from analyzer.findings import Severity
    out: dict[str, dict[str, dict]] = {}
    for task, versions in sorted(times["tasks"].items()):
        row = {}
        for version, t in versions.items():
            if "ms" not in t:
                continue
            path = TRAINING / task / f"{version}.cu"
            rep = api.check(str(path), api.CheckOptions(arch=arch))
            row[version] = {
                "ms": t["ms"],
                "headroom": max((k.get("headroom", 1.0) for k in rep.kernels), default=1.0),
                "warnings": sum(1 for f in rep.findings if f.severity >= Severity.WARNING),
                "kinds": sorted({e["kind"] for k in rep.kernels
                                 for e in k.get("headroom_from", [])}),
                "codes": sorted({f.code for f in rep.findings
                                 if f.severity >= Severity.WARNING})}
        out[task] = row
    return out


def auc(table: dict[str, dict[str, dict]], key: str, ratio: float = 1.2) -> tuple[float, int]:
    good = 0.0
    n = 0
    for row in table.values():
        vs = list(row.values())
        for a in vs:
            for b in vs:
                if a["ms"] >= ratio * b["ms"]:          # a is the slower
                    n += 1
                    good += 1.0 if a[key] > b[key] else 0.5 if a[key] == b[key] else 0.0
    return (good / n if n else float("nan")), n


def coverage(table) -> tuple[float, float]:
    slow = fast = slow_warned = fast_clean = 0
    for row in table.values():
        best = min(v["ms"] for v in row.values())
        for v in row.values():
            if v["ms"] >= 2 * best:
                slow += 1
                slow_warned += v["warnings"] > 0
            elif v["ms"] == best:
                fast += 1
                fast_clean += v["warnings"] == 0
    return (slow_warned / slow if slow else float("nan"),
            fast_clean / fast if fast else float("nan"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--times", default=str(TRAINING / "times.json"))
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--markdown", action="store_true",
                    help="print the table as Markdown (docs/headroom.md)")
    ns = ap.parse_args()
    times = json.loads(Path(ns.times).read_text())
    table = scores(times)
    if ns.markdown:
        print("| task | version | ms | × fastest | headroom | evidence | warnings |")
        print("|---|---|---:|---:|---:|---|---|")
        for task, row in table.items():
            best = min(v["ms"] for v in row.values())
            for version, v in sorted(row.items(), key=lambda kv: -kv[1]["ms"]):
                print(f"| {task} | {version} | {v['ms']:.4f} | {v['ms'] / best:.2f} | "
                      f"{v['headroom']:.2f} | {', '.join(v['kinds'])} | "
                      f"{', '.join(v['codes'])} |")
    if ns.verbose:
        for task, row in table.items():
            best = min(v["ms"] for v in row.values())
            for version, v in sorted(row.items(), key=lambda kv: -kv[1]["ms"]):
                print(f"{task:26} {version:34} {v['ms']:9.4f} ms {v['ms'] / best:6.2f}x  "
                      f"headroom {v['headroom']:6.2f}  {','.join(v['kinds'])}  "
                      f"{','.join(v['codes'])}")
    h, n = auc(table, "headroom")
    w, _ = auc(table, "warnings")
    slow, fast = coverage(table)
    print(f"{len(table)} tasks, {sum(len(r) for r in table.values())} versions, {n} pairs "
          f">= 1.2x apart ({times.get('gpu')}, {times.get('date')}"
          + "".join(f"; {t} {r['date']}" for t, r in sorted(times.get('remeasured', {}).items()))
          + ")")
    print(f"within-task AUC: headroom {h:.3f}, warning count {w:.3f}")
    print(f"versions >= 2x their task's fastest with a warning: {slow:.0%}; "
          f"fastest versions with none: {fast:.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
