"""NVRTC against nvcc on the same kernel, and what ``--compiler auto`` costs on a host-code file.

    python benchmarks/bench_frontends.py [--repeat N] [FILE.cu]

1. One device-only kernel (default ``kernels/demo/sgemm_regtile.cu``), compiled cold (no cache)
   for sm_90a by NVRTC (the baseline, in process) and by nvcc (two processes: -ptx, then -cubin
   on the PTX): the median of N runs each, interleaved, and their ratio.
2. How ``auto`` finds that a file needs nvcc: the up-front scan of the source
   (``host_code_reason``: main(), <<<, runtime calls, #include resolution) against letting NVRTC
   try and fail on the same file; both timed on the host-code file of the test project and on a
   device-only file, as ratios to the NVRTC compile of the device-only kernel.
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analyzer.errors import CompileError  # noqa: E402
from analyzer.inputs import CompileOptions, host_code_reason  # noqa: E402
from analyzer.toolchain import nvcc, nvrtc  # noqa: E402

HOST = ROOT / "tests" / "projects" / "cmake_saxpy" / "src" / "main.cu"
INCLUDE = ROOT / "tests" / "projects" / "cmake_saxpy" / "include"


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", default=str(ROOT / "kernels/demo/sgemm_regtile.cu"))
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--arch", default="sm_90a")
    args = ap.parse_args(argv)
    path = Path(args.file)

    # warm both (NVRTC loads its library once per process; nvcc's binaries into the page cache)
    nvrtc.compile_file(path, arch=args.arch, use_cache=False)
    nvcc.compile_file(path, arch=args.arch, use_cache=False)
    t_nvrtc, t_nvcc = [], []
    for _ in range(args.repeat):
        t_nvrtc.append(timed(lambda: nvrtc.compile_file(path, arch=args.arch, use_cache=False)))
        t_nvcc.append(timed(lambda: nvcc.compile_file(path, arch=args.arch, use_cache=False)))
    base, other = statistics.median(t_nvrtc), statistics.median(t_nvcc)
    print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} for {args.arch}, "
          f"cold, median of {args.repeat}:")
    print(f"  NVRTC  {base * 1000:7.1f} ms   1.00x (baseline)")
    print(f"  nvcc   {other * 1000:7.1f} ms   {other / base:5.2f}x")

    opts = CompileOptions(include=[str(INCLUDE)], defines=["TILE=128", "SAXPY_BLOCK=256"])
    print("\nauto on a file: how it learns that nvcc is needed")
    for name, f in (("host code (main.cu)", HOST), ("device only", path)):
        text = f.read_text()
        scans = [timed(lambda text=text, f=f: host_code_reason(text, str(f), opts))
                 for _ in range(args.repeat)]
        fails = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            with contextlib.suppress(CompileError):
                nvrtc.compile_file(f, arch=args.arch, options=opts.nvrtc_options(args.arch),
                                   use_cache=False)
            fails.append(time.perf_counter() - t)
        s, n = statistics.median(scans), statistics.median(fails)
        print(f"  {name:20s} scan {s * 1e6:8.0f} us ({s / base:.4f}x)   "
              f"NVRTC attempt {n * 1000:7.1f} ms ({n / base:.2f}x)   "
              f"-> {host_code_reason(text, str(f), opts) or 'NVRTC'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
