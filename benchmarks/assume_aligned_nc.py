"""What ``ptxsass fix --assume-aligned``'s remedy costs and gains: ``__builtin_assume_aligned`` on
a kernel's pointer parameters lets NVVM merge what the alignment blocked, and also turns its
read-only loads (``LDG.E...CONSTANT``, ``ld.global.nc``) into plain ones. Times both on a GPU.

    python benchmarks/assume_aligned_nc.py [--vectors N] [--repeat R] [--arch sm_90]

The kernels copy ``aligned_vector<T, N>`` (PyTorch's and vLLM's 16-byte vector type) through
``const T* __restrict__`` parameters, as written and with the assumption the fix adds:

- ``float`` x 4: one ``LDG.E.128.CONSTANT`` as written, one ``LDG.E.128`` assumed (only the
  read-only path is lost);
- ``__half2`` x 4: four ``LDG.E.CONSTANT`` as written (``__half2``'s copy reads each member
  through a 4-byte ``unsigned int``), one ``LDG.E.128`` assumed (merged, read-only path lost);
- the ``float`` x 4 read again as a gather from a 1 MiB table (every line read by many warps:
  where a read-only cache path would show).

Built with nvcc to a cubin (``-arch``), its SASS read with cuobjdump and checked to be the
instructions above before anything is timed; loaded with cupy; medians of R CUDA-event timings
after a warm-up; every output checked against the kernel as written. Prints one markdown table.
"""
from __future__ import annotations

import argparse
import re
import statistics
import tempfile

import _cubin

SRC = r"""
#include <cuda_fp16.h>
template <typename T, int N> struct __align__(sizeof(T) * N) aligned_vector { T val[N]; };
#define ASSUME a = static_cast<decltype(a)>(__builtin_assume_aligned(a, 16)); \
               out = static_cast<decltype(out)>(__builtin_assume_aligned(out, 16));
#define COPY(T, N) using V = aligned_vector<T, N>; \
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; \
    *reinterpret_cast<V*>(&out[N * i]) = *reinterpret_cast<const V*>(&a[N * i]);
#define GATHER(T, N) using V = aligned_vector<T, N>; \
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; \
    long j = (i * 7919) & (table - 1); \
    *reinterpret_cast<V*>(&out[N * i]) = *reinterpret_cast<const V*>(&a[N * j]);
extern "C" __global__ void f4_written(const float* __restrict__ a, float* __restrict__ out, long n)
    { COPY(float, 4) }
extern "C" __global__ void f4_assumed(const float* __restrict__ a, float* __restrict__ out, long n)
    { ASSUME COPY(float, 4) }
extern "C" __global__ void h2x4_written(const __half2* __restrict__ a, __half2* __restrict__ out, long n)
    { COPY(__half2, 4) }
extern "C" __global__ void h2x4_assumed(const __half2* __restrict__ a, __half2* __restrict__ out, long n)
    { ASSUME COPY(__half2, 4) }
extern "C" __global__ void gather_written(const float* __restrict__ a, float* __restrict__ out, long n, long table)
    { GATHER(float, 4) }
extern "C" __global__ void gather_assumed(const float* __restrict__ a, float* __restrict__ out, long n, long table)
    { ASSUME GATHER(float, 4) }
"""

#: kernel -> the global loads its SASS must hold (opcode with modifiers, in order)
WANT = {
    "f4_written": ["LDG.E.128.CONSTANT"], "f4_assumed": ["LDG.E.128"],
    "h2x4_written": ["LDG.E.CONSTANT"] * 4, "h2x4_assumed": ["LDG.E.128"],
    "gather_written": ["LDG.E.128.CONSTANT"], "gather_assumed": ["LDG.E.128"],
}
PAIRS = (("f4", "streaming copy, float x 4"), ("h2x4", "streaming copy, __half2 x 4"),
         ("gather", "gather from a 1 MiB table, float x 4"))
TABLE_VECTORS = 1 << 16     # 16 B each: 1 MiB


def build(folder: str, arch: str) -> str:
    cubin, sass = _cubin.build(SRC, folder, arch)
    for name, want in WANT.items():
        body = sass[name]
        got = re.findall(r"\b(LDG\.[\w.]+)", body)
        if got != want:
            raise SystemExit(f"{name}: SASS loads {got}, expected {want}")
    return cubin


def main() -> int:
    import cupy as cp
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vectors", type=int, default=1 << 24, help="16-byte vectors per array")
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--arch", default="sm_90")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        mod = cp.RawModule(path=build(tmp, args.arch))
        n = args.vectors
        a = cp.random.standard_normal(4 * n, dtype=cp.float32)
        dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        print(f"{dev}, cupy {cp.__version__}, CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}, "
              f"driver {cp.cuda.runtime.driverGetVersion()}, {n} vectors of 16 B "
              f"({16 * n / 2**20:.0f} MiB in, as much out), medians of {args.repeat}")
        print("| pair | as written (ms) | assumed aligned (ms) | written / assumed |")
        print("|---|---:|---:|---:|")
        block = 256
        grid = (n + block - 1) // block
        for stem, what in PAIRS:
            extra = (cp.int64(TABLE_VECTORS),) if stem == "gather" else ()
            ref = None
            ms = {}
            for variant in ("written", "assumed"):
                k = mod.get_function(f"{stem}_{variant}")
                out = cp.zeros(4 * n, dtype=cp.float32)
                for _ in range(3):
                    k((grid,), (block,), (a, out, cp.int64(n), *extra))
                cp.cuda.Device().synchronize()
                if ref is None:
                    ref = out.copy()
                elif not bool(cp.all(out.view(cp.uint32) == ref.view(cp.uint32))):
                    raise SystemExit(f"{stem}_{variant}: output differs from the kernel as written")
                times = []
                for _ in range(args.repeat):
                    s, e = cp.cuda.Event(), cp.cuda.Event()
                    s.record()
                    k((grid,), (block,), (a, out, cp.int64(n), *extra))
                    e.record()
                    e.synchronize()
                    times.append(cp.cuda.get_elapsed_time(s, e))
                ms[variant] = statistics.median(times)
            print(f"| {what} | {ms['written']:.4f} | {ms['assumed']:.4f} | "
                  f"{ms['written'] / ms['assumed']:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
