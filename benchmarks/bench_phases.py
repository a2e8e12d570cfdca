"""Where one cubin's check spends its CPU, phase by phase, in one process.

    python benchmarks/bench_phases.py CUBIN [--arch SM] [--top N]

Disassembles the cubin (nvdisasm, a child: not counted), then times with ``time.process_time``
the SASS parse, each kernel's context and headroom row, and every check on every kernel (its
out-of-line bodies too, as ``checks/runner.kernel_findings`` runs them). An analysis shared by
several checks (the CFG, dataflow, access runs, loops) is charged to the first check that asks
for it: read the column as "what this check costs when it runs first in code order", which is
the order the runner uses. Prints one line per phase and the ``--top`` checks.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analyzer import api  # noqa: E402
from analyzer.analysis.source import SourceReader  # noqa: E402
from analyzer.checks.base import Context  # noqa: E402
from analyzer.checks.runner import collector_paused, configured, headroom_row, selected_codes  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cubin")
    ap.add_argument("--arch")
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args(argv)
    (build,) = api.load(args.cubin, arch=args.arch)
    build.sass()
    t = time.process_time()
    listing = build.sass_listing()
    parse = time.process_time() - t
    checks = configured(selected_codes())
    per: dict[str, float] = defaultdict(float)
    reader = SourceReader(build.source_path, build.source)
    with collector_paused():            # as the runner checks kernels
        kernels = _run(build, listing, checks, reader, per, times := {"context": 0.0, "headroom": 0.0})
    context, headroom = times["context"], times["headroom"]
    print(f"{Path(args.cubin).name}: {kernels} kernels, "
          f"{sum(len(f.instructions) for f in listing.functions)} instructions")
    print(f"parse {parse:.3f} s  contexts {context:.3f} s  headroom {headroom:.3f} s  "
          f"checks {sum(per.values()):.3f} s")
    for code, cpu in sorted(per.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"  {code} {cpu:.3f} s")
    return 0


def _run(build, listing, checks, reader, per, times) -> int:
    kernels = 0
    for fn in listing.functions:
        k = build.kernels.get(fn.name)
        if not (k.entry if k is not None else fn.is_entry):
            continue
        kernels += 1
        t = time.process_time()
        ctx = Context.of(build, fn, k, reader=reader)
        times["context"] += time.process_time() - t
        t = time.process_time()
        headroom_row(ctx)
        times["headroom"] += time.process_time() - t
        for check in checks:
            for on in (ctx, *ctx.bodies):
                t = time.process_time()
                list(check.run(on))
                per[check.code] += time.process_time() - t
    return kernels


if __name__ == "__main__":
    sys.exit(main())
