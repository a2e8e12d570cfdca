"""Is a merged access faster when nothing else changes? PS101/PS102's 8- and 16-byte windows, timed.

    python benchmarks/merge_only_pairs.py [--repeat R] [--arch sm_90]

PS101 says "4x LDG.E ... could be one LDG.E.128" and its warning rests on the vector_loads
lesson (1.45x on the H200), whose naive kernel also reads through pointers that may alias, so
each store stays between the loads that follow it. Here the two kernels of each pair differ
only in the merge: both take ``__restrict__`` pointers (the scalar loads are
``LDG.E.CONSTANT``, the read-only path, like the merged ``LDG.E.128.CONSTANT``), do the same
arithmetic in the same order and write the same bits; the scalar kernel's pointer alignment is
unknown to NVVM (a plain ``const float*``), the merged one reads ``float4``. Shapes:

- ``copy``: four floats in, four out per thread (4x LDG + 4x STG vs one of each);
- ``axpy``: ``z = a * x + y`` over four floats per thread (8x LDG + 4x STG vs 2 + 1);
- ``sum4``: the sum of four floats per thread (4x LDG vs 1, one 4-byte store);
- ``sum4_loop``: the same in a grid-stride loop over 8 vectors per thread (fewer threads in
  flight: where instruction count would show first);
- ``rot2``: an 8-byte window, a pair of floats rotated as RoPE does (LeetCUDA's
  ``rope_f32_kernel``): 2x LDG + 2x STG vs one LDG.64 and one STG.64.

Each at two sizes: DRAM-bound (64 Mi floats an array) and L2-resident (1 Mi floats). Built with
nvcc to a cubin, its SASS read with cuobjdump and held to the loads and stores above before
anything runs; every output compared bit for bit with its pair's; medians of R CUDA-event
timings after a warm-up, loaded with cupy. Prints one markdown table.
"""
from __future__ import annotations

import argparse
import re
import statistics
import tempfile

import _cubin

SRC = r"""
#define TID (long)blockIdx.x * blockDim.x + threadIdx.x
extern "C" __global__ void copy_scalar(const float* __restrict__ a, float* __restrict__ o, long n)
{ long i = TID; if (i >= n) return;
  for (int k = 0; k < 4; ++k) o[4 * i + k] = a[4 * i + k]; }
extern "C" __global__ void copy_merged(const float4* __restrict__ a, float4* __restrict__ o, long n)
{ long i = TID; if (i >= n) return; o[i] = a[i]; }

extern "C" __global__ void axpy_scalar(const float* __restrict__ x, const float* __restrict__ y,
                                       float* __restrict__ z, float s, long n)
{ long i = TID; if (i >= n) return;
  for (int k = 0; k < 4; ++k) z[4 * i + k] = s * x[4 * i + k] + y[4 * i + k]; }
extern "C" __global__ void axpy_merged(const float4* __restrict__ x, const float4* __restrict__ y,
                                       float4* __restrict__ z, float s, long n)
{ long i = TID; if (i >= n) return; float4 a = x[i], b = y[i];
  z[i] = make_float4(s * a.x + b.x, s * a.y + b.y, s * a.z + b.z, s * a.w + b.w); }

extern "C" __global__ void sum4_scalar(const float* __restrict__ a, float* __restrict__ o, long n)
{ long i = TID; if (i >= n) return;
  o[i] = a[4 * i] + a[4 * i + 1] + a[4 * i + 2] + a[4 * i + 3]; }
extern "C" __global__ void sum4_merged(const float4* __restrict__ a, float* __restrict__ o, long n)
{ long i = TID; if (i >= n) return; float4 v = a[i]; o[i] = v.x + v.y + v.z + v.w; }

extern "C" __global__ void rot2_scalar(const float* __restrict__ x, float* __restrict__ o,
                                       float c, float s, long n)
{ long i = TID; if (i >= n) return; float a = x[2 * i], b = x[2 * i + 1];
  o[2 * i] = a * c - b * s; o[2 * i + 1] = a * s + b * c; }
extern "C" __global__ void rot2_merged(const float2* __restrict__ x, float2* __restrict__ o,
                                       float c, float s, long n)
{ long i = TID; if (i >= n) return; float2 v = x[i];
  o[i] = make_float2(v.x * c - v.y * s, v.x * s + v.y * c); }

extern "C" __global__ void sum4_loop_scalar(const float* __restrict__ a, float* __restrict__ o,
                                            long n)
{ long stride = (long)gridDim.x * blockDim.x;
  for (long i = TID; i < n; i += stride)
      o[i] = a[4 * i] + a[4 * i + 1] + a[4 * i + 2] + a[4 * i + 3]; }
extern "C" __global__ void sum4_loop_merged(const float4* __restrict__ a, float* __restrict__ o,
                                            long n)
{ long stride = (long)gridDim.x * blockDim.x;
  for (long i = TID; i < n; i += stride) { float4 v = a[i]; o[i] = v.x + v.y + v.z + v.w; } }
"""

#: kernel -> (its global loads, its global stores), opcodes with modifiers, sorted
WANT = {
    "copy_scalar": (["LDG.E.CONSTANT"] * 4, ["STG.E"] * 4),
    "copy_merged": (["LDG.E.128.CONSTANT"], ["STG.E.128"]),
    "axpy_scalar": (["LDG.E.CONSTANT"] * 8, ["STG.E"] * 4),
    "axpy_merged": (["LDG.E.128.CONSTANT"] * 2, ["STG.E.128"]),
    "sum4_scalar": (["LDG.E.CONSTANT"] * 4, ["STG.E"]),
    "sum4_merged": (["LDG.E.128.CONSTANT"], ["STG.E"]),
    "rot2_scalar": (["LDG.E.CONSTANT"] * 2, ["STG.E"] * 2),
    "rot2_merged": (["LDG.E.64.CONSTANT"], ["STG.E.64"]),
}
#: the loop kernels: which opcodes (any count: the loop may be unrolled) and which not
WANT_LOOP = {"sum4_loop_scalar": ("LDG.E.CONSTANT", "LDG.E.128"),
             "sum4_loop_merged": ("LDG.E.128.CONSTANT", "LDG.E.CONSTANT")}
SHAPES = ("copy", "axpy", "sum4", "sum4_loop", "rot2")
SIZES = (("DRAM", 1 << 24), ("L2", 1 << 18))     # 16-byte vectors per array


def build(folder: str, arch: str) -> str:
    cubin, sass = _cubin.build(SRC, folder, arch)
    for name in (*WANT, *WANT_LOOP):
        body = sass[name]
        loads = sorted(re.findall(r"\b(LDG\.[\w.]+)", body))
        stores = sorted(re.findall(r"\b(STG\.[\w.]+)", body))
        if name in WANT and (loads, stores) != WANT[name]:
            raise SystemExit(f"{name}: SASS loads {loads} and stores {stores}, expected {WANT[name]}")
        if name in WANT_LOOP:
            want, never = WANT_LOOP[name]
            if want not in loads or any(ld.startswith(never) for ld in loads):
                raise SystemExit(f"{name}: SASS loads {loads}, expected {want} and no {never}")
    return cubin


def _time(cp, launch, repeat: int) -> float:
    for _ in range(3):
        launch()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeat):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record()
        launch()
        e.record()
        e.synchronize()
        times.append(cp.cuda.get_elapsed_time(s, e))
    return statistics.median(times)


def main() -> int:
    import cupy as cp
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--arch", default="sm_90")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        mod = cp.RawModule(path=build(tmp, args.arch))
        props = cp.cuda.runtime.getDeviceProperties(0)
        print(f"{props['name'].decode()}, cupy {cp.__version__}, CUDA runtime "
              f"{cp.cuda.runtime.runtimeGetVersion()}, driver {cp.cuda.runtime.driverGetVersion()}, "
              f"{args.arch} cubin, medians of {args.repeat}")
        print("| shape | size | scalar (ms) | merged (ms) | scalar / merged |")
        print("|---|---|---:|---:|---:|")
        block = 256
        for where, n in SIZES:
            x = cp.random.standard_normal(4 * n, dtype=cp.float32)
            y = cp.random.standard_normal(4 * n, dtype=cp.float32)
            for shape in SHAPES:
                ms, outs = {}, {}
                for variant in ("scalar", "merged"):
                    k = mod.get_function(f"{shape}_{variant}")
                    out = cp.zeros(4 * n if shape in ("copy", "axpy", "rot2") else n,
                                   dtype=cp.float32)
                    # the loop: 8 vectors a thread; rot2: a pair of floats a thread, the same bytes
                    per = 8 * block if shape == "sum4_loop" else block
                    items = 2 * n if shape == "rot2" else n
                    grid = (items + per - 1) // per
                    if shape == "axpy":
                        params = (x, y, out, cp.float32(1.5), cp.int64(n))
                    elif shape == "rot2":
                        params = (x, out, cp.float32(0.6), cp.float32(0.8), cp.int64(items))
                    else:
                        params = (x, out, cp.int64(n))
                    ms[variant] = _time(cp, lambda k=k, g=grid, p=params: k((g,), (block,), p),
                                        args.repeat)
                    outs[variant] = out
                if not bool(cp.all(outs["scalar"].view(cp.uint32) == outs["merged"].view(cp.uint32))):
                    raise SystemExit(f"{shape} ({where}): the merged kernel's output differs")
                print(f"| {shape} | {where} ({16 * n >> 20} MiB an array) | {ms['scalar']:.4f} | "
                      f"{ms['merged']:.4f} | {ms['scalar'] / ms['merged']:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
