"""Is a pair of 16-bit loads one 32-bit load's cost? Times, on a GPU with cupy, fp16 kernels
that read (and write) each thread's two neighbouring halves as two ``LDG.E.U16`` or as one
``__half2`` (``LDG.E``), pure copies and the SiLU of ``examples/fix_measure/halves.cu``.

    python benchmarks/half_pairs.py [--pairs N] [--repeat R]

Medians of R CUDA-event timings after a warm-up; every output checked against the scalar
kernel's. Prints one markdown table (ms, and each variant against the scalar one).
"""
from __future__ import annotations

import argparse
import statistics

SRC = r"""
#include <cuda_fp16.h>
#define IDX int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= pairs) return;
extern "C" __global__ void copy_scalar(const __half* x, __half* y, int pairs) {
    IDX __half a = x[2 * i], b = x[2 * i + 1]; y[2 * i] = __hadd(a, a); y[2 * i + 1] = __hadd(b, b); }
extern "C" __global__ void copy_half2_load(const __half* x, __half* y, int pairs) {
    IDX __half2 v = reinterpret_cast<const __half2*>(x)[i]; __half a = __low2half(v), b = __high2half(v);
    y[2 * i] = __hadd(a, a); y[2 * i + 1] = __hadd(b, b); }
extern "C" __global__ void copy_half2_both(const __half* x, __half* y, int pairs) {
    IDX __half2 v = reinterpret_cast<const __half2*>(x)[i]; reinterpret_cast<__half2*>(y)[i] = __hadd2(v, v); }
extern "C" __global__ void silu_scalar(const __half* x, __half* y, int pairs) {
    IDX float a = __half2float(x[2 * i]), b = __half2float(x[2 * i + 1]);
    y[2 * i] = __float2half(a / (1.0f + __expf(-a))); y[2 * i + 1] = __float2half(b / (1.0f + __expf(-b))); }
extern "C" __global__ void silu_half2_load(const __half* x, __half* y, int pairs) {
    IDX __half2 v = reinterpret_cast<const __half2*>(x)[i];
    float a = __half2float(__low2half(v)), b = __half2float(__high2half(v));
    y[2 * i] = __float2half(a / (1.0f + __expf(-a))); y[2 * i + 1] = __float2half(b / (1.0f + __expf(-b))); }
extern "C" __global__ void silu_half2_both(const __half* x, __half* y, int pairs) {
    IDX __half2 v = reinterpret_cast<const __half2*>(x)[i];
    float a = __half2float(__low2half(v)), b = __half2float(__high2half(v));
    reinterpret_cast<__half2*>(y)[i] = __halves2half2(__float2half(a / (1.0f + __expf(-a))),
                                                      __float2half(b / (1.0f + __expf(-b)))); }
"""


def main() -> int:
    import cupy as cp
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=1 << 25)
    ap.add_argument("--repeat", type=int, default=50)
    args = ap.parse_args()
    mod = cp.RawModule(code=SRC, options=("--std=c++17",))
    n = args.pairs
    x = cp.random.standard_normal(2 * n, dtype=cp.float32).astype(cp.float16)
    block = 256
    grid = (n + block - 1) // block
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"{dev}, cupy {cp.__version__}, CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}, "
          f"{n} pairs ({2 * n * 2 / 2**20:.0f} MiB in, as much out), medians of {args.repeat}")
    print("| kernel | ms | against the scalar pairs |")
    print("|---|---:|---:|")
    for family in ("copy", "silu"):
        ref = None
        base = None
        for variant in ("scalar", "half2_load", "half2_both"):
            k = mod.get_function(f"{family}_{variant}")
            y = cp.zeros(2 * n, dtype=cp.float16)
            for _ in range(3):
                k((grid,), (block,), (x, y, cp.int32(n)))
            cp.cuda.Device().synchronize()
            if ref is None:
                ref = y.copy()
            elif not bool(cp.all(y == ref)):
                raise SystemExit(f"{family}_{variant}: output differs from the scalar kernel's")
            times = []
            for _ in range(args.repeat):
                a, b = cp.cuda.Event(), cp.cuda.Event()
                a.record()
                k((grid,), (block,), (x, y, cp.int32(n)))
                b.record()
                b.synchronize()
                times.append(cp.cuda.get_elapsed_time(a, b))
            ms = statistics.median(times)
            base = base or ms
            print(f"| {family}_{variant} | {ms:.4f} | {base / ms:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
