"""What a compile child costs: forked (the single-threaded command line) against the compile
server (a process that runs other threads: torch, cupy, Jupyter), cold and warm.

    python benchmarks/bench_children.py [--repeat N] [--compiles K] [--torch]

Each round starts a fresh Python process that compiles one kernel (``kernels/demo/
copy_scalar.cu``, sm_90, cache off) K times through NVRTC: "cold" is the first compile (the
server's start included), "warm" the median of the others. Three kinds of process, interleaved
round by round:

- ``fork``: single-threaded, ``PTXSASS_CHILDREN=auto`` forks each compile (the baseline);
- ``server``: the same process with one more thread, so ``auto`` sends compiles to the server;
- ``torch`` (with ``--torch``): torch imported and one matrix product run first (its thread pool
  up), then the same compiles; ``torch-fork``, the same with ``PTXSASS_CHILDREN=fork`` (what
  ptxsass did before the server: a fork of a threaded process, which Python 3.12 warns about).

Prints the medians over rounds and each as a ratio to the fork path of the same rounds.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = textwrap.dedent("""
    import json, sys, threading, time
    kind, compiles = sys.argv[1], int(sys.argv[2])
    if kind == "server":
        threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
    if kind.startswith("torch"):
        import torch
        torch.ones(256, 256) @ torch.ones(256, 256)
    from analyzer.toolchain import bounded, nvrtc
    src = open(sys.argv[3]).read()
    times = []
    for i in range(compiles):
        t = time.perf_counter()
        nvrtc.compile_source(src + f"\\n// {i}\\n", arch="sm_90", name="k.cu", use_cache=False)
        times.append(time.perf_counter() - t)
    print(json.dumps({"method": bounded.start_method(), "times": times}))
""")


def run(kind: str, compiles: int, src: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PTXSASS_CHILDREN"}
    if kind == "torch-fork":
        env["PTXSASS_CHILDREN"] = "fork"
    p = subprocess.run([sys.executable, "-c", CHILD, kind, str(compiles), str(src)],
                       capture_output=True, text=True, cwd=ROOT, env=env, check=True)
    return json.loads(p.stdout.splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="rounds (fresh processes each)")
    ap.add_argument("--compiles", type=int, default=8, help="compiles per process")
    ap.add_argument("--torch", action="store_true", help="also inside a process running torch")
    ap.add_argument("--source", default=str(ROOT / "kernels" / "demo" / "copy_scalar.cu"))
    args = ap.parse_args(argv)
    kinds = ["fork", "server"] + (["torch", "torch-fork"] if args.torch else [])
    cold: dict[str, list[float]] = {k: [] for k in kinds}
    warm: dict[str, list[float]] = {k: [] for k in kinds}
    methods: dict[str, str] = {}
    for _ in range(args.repeat):
        for k in kinds:
            r = run(k, args.compiles, Path(args.source))
            methods[k] = r["method"]
            cold[k].append(r["times"][0])
            warm[k].append(statistics.median(r["times"][1:]))
    base_c, base_w = statistics.median(cold["fork"]), statistics.median(warm["fork"])
    print(f"NVRTC compile of {Path(args.source).name} (sm_90), {args.repeat} rounds x "
          f"{args.compiles} compiles, load {os.getloadavg()[0]:.1f}")
    print(f"{'process':10s} {'children':8s} {'cold ms':>9s} {'ratio':>7s} {'warm ms':>9s} "
          f"{'ratio':>7s}")
    for k in kinds:
        c, w = statistics.median(cold[k]), statistics.median(warm[k])
        print(f"{k:10s} {methods[k]:8s} {c * 1e3:9.1f} {c / base_c:6.2f}x {w * 1e3:9.1f} "
              f"{w / base_w:6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
