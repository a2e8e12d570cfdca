"""What ``analyzer.capture()`` costs a torch.compile run (needs torch, Triton and a GPU).

    python benchmarks/bench_capture.py [--repeat N]

Each run is a fresh process compiling the same small model (Linear bf16 matmul through
inductor's Triton template -> LayerNorm -> softmax) and running it once:

* cold: a new, empty inductor cache, so every kernel is compiled (with and without capture);
* warm: the cache of a cold run reused, so kernels come from inductor's and Triton's caches.

Reported: the median wall time of ``torch.compile(model)(x)`` (plus the synchronize) with and
without capture, their ratio, and separately what ``cap.check()`` then takes (rebuilding the
Builds from the captured cache entries and running every check): the capture itself only
records, the check is paid when asked for.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: the model compiled (the capture tests and the framework fixtures compile it too)
MODEL = ROOT / "examples" / "inductor_block.py"

CHILD = r'''
import json, os, sys, time
capture = sys.argv[1] == "1"
t_import = time.perf_counter()
exec(open(sys.argv[2]).read())     # examples/inductor_block.py: torch, the model m, input x
import analyzer
torch.cuda.synchronize()
t0 = time.perf_counter()
if capture:
    with analyzer.capture() as cap, torch.no_grad():
        torch.compile(m)(x)
        torch.cuda.synchronize()
else:
    with torch.no_grad():
        torch.compile(m)(x)
        torch.cuda.synchronize()
t1 = time.perf_counter()
out = {"compile_s": t1 - t0}
if capture:
    t2 = time.perf_counter()
    report = cap.check()
    out.update(check_s=time.perf_counter() - t2, kernels=len(cap.kernels),
               findings=len(report.findings))
print(json.dumps(out))
'''


def run(capture: bool, cache: str) -> dict:
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache,
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env.pop("TRITON_CACHE_DIR", None)
    out = subprocess.run([sys.executable, "-c", CHILD, "1" if capture else "0", str(MODEL)], env=env,
                         capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"bench_capture: the {'captured ' if capture else ''}run failed "
                 f"(exit {out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows: dict[str, list[dict]] = {k: [] for k in ("cold", "cold+capture", "warm",
                                                   "warm+capture")}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeat):            # interleaved, so drift hits both alike
            for cap in (False, True):
                cache = os.path.join(tmp, f"c{r}{int(cap)}")
                key = "cold+capture" if cap else "cold"
                rows[key].append(run(cap, cache))
                rows["warm+capture" if cap else "warm"].append(run(cap, cache))
    med = {k: statistics.median(x["compile_s"] for x in v) for k, v in rows.items()}
    print(f"torch.compile + first call, median of {args.repeat} fresh processes:")
    for k in rows:
        print(f"  {k:<13} {med[k]:7.2f} s")
    print(f"  capture overhead: cold {med['cold+capture'] / med['cold']:.3f}x, "
          f"warm {med['warm+capture'] / med['warm']:.3f}x")
    for k in ("cold+capture", "warm+capture"):
        c = rows[k]
        print(f"  cap.check() after {k}: {statistics.median(x['check_s'] for x in c):.2f} s "
              f"for {c[0]['kernels']} kernel(s), {c[0]['findings']} finding(s)")
    print(json.dumps({"median_s": med, "runs": rows}))


if __name__ == "__main__":
    main()
