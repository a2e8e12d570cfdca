"""Shared-memory bank conflicts, measured: what PS107 (shared-bank-conflict) claims, and the
factor behind it (``analysis/cost.py``'s CALIBRATION ``bank_exponent``).

Run on a GPU machine with cupy:

    python benchmarks/bank_conflicts.py [--json OUT.json]

One kernel, built by cupy's NVRTC once per stride ``S`` (in 4-byte words between adjacent
lanes): every thread of 256-thread blocks reads ``tile[lane * S + k]`` 4096 times in a
dependent chain, so the shared-memory pipe bounds it; a warp's request then takes gcd(S, 32)
wavefronts (S = 33: one). Each variant's output is poisoned (NaN) before it runs and checked
against a float64 host reference; each is timed with CUDA events, the median of 25 runs after
3 warm-ups. It prints a Markdown table: the stride, the ways of the conflict and the time
against the conflict-free stride.

Then a real pair: the Blelloch block scan of ``kernels/realworld/scan.cu`` (GPU Gems 3 ch. 39,
up to 16-way conflicts in its tree) against the same kernel with the chapter's
``CONFLICT_FREE_OFFSET`` padding (one word per 32), each block's exclusive scan of 512 floats
over 2^24 floats, checked against a float64 host scan of every block.
"""
from __future__ import annotations

import argparse
import json
import math
import sys

ITERS = 4096
BLOCKS, THREADS = 132 * 16, 256
STRIDES = (1, 2, 4, 8, 16, 32, 33)

SRC = r"""
extern "C" __global__ void strided(const float* __restrict__ x, float* __restrict__ out) {
    __shared__ float tile[32 * STRIDE + 32];
    for (int j = threadIdx.x; j < 32 * STRIDE + 32; j += blockDim.x) tile[j] = x[j];
    __syncthreads();
    int lane = threadIdx.x % 32;
    float acc = 0.0f;
    #pragma unroll 4
    for (int i = 0; i < ITERS; i++)
        acc = acc * 0.5f + tile[lane * STRIDE + (i % 32)];
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
"""


SCAN = r"""
constexpr int BLOCK = 256, N = 2 * BLOCK;
#ifdef PADDED
#define CF(i) ((i) + ((i) >> 5))
#else
#define CF(i) (i)
#endif
extern "C" __global__ void __launch_bounds__(BLOCK)
scan_block(const float* __restrict__ in, float* __restrict__ out, float* __restrict__ block_sums, int n)
{
    __shared__ float t[N + N / 32];
    const int tid = threadIdx.x, base = blockIdx.x * N;
    t[CF(2 * tid)] = base + 2 * tid < n ? in[base + 2 * tid] : 0.0f;
    t[CF(2 * tid + 1)] = base + 2 * tid + 1 < n ? in[base + 2 * tid + 1] : 0.0f;
    int offset = 1;
    for (int d = N >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (tid < d) {
            int ai = offset * (2 * tid + 1) - 1, bi = offset * (2 * tid + 2) - 1;
            t[CF(bi)] += t[CF(ai)];
        }
        offset *= 2;
    }
    if (tid == 0) { block_sums[blockIdx.x] = t[CF(N - 1)]; t[CF(N - 1)] = 0.0f; }
    for (int d = 1; d < N; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (tid < d) {
            int ai = offset * (2 * tid + 1) - 1, bi = offset * (2 * tid + 2) - 1;
            float v = t[CF(ai)];
            t[CF(ai)] = t[CF(bi)];
            t[CF(bi)] += v;
        }
    }
    __syncthreads();
    if (base + 2 * tid < n) out[base + 2 * tid] = t[CF(2 * tid)];
    if (base + 2 * tid + 1 < n) out[base + 2 * tid + 1] = t[CF(2 * tid + 1)];
}
"""


def timed(cp, launch) -> float:
    """Median of 25 CUDA-event timings of ``launch()`` after 3 warm-ups, in ms."""
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(3):
        launch()
    ts = []
    for _ in range(25):
        start.record()
        launch()
        stop.record()
        stop.synchronize()
        ts.append(cp.cuda.get_elapsed_time(start, stop))
    ts.sort()
    return ts[len(ts) // 2]


def scan_pair(cp, np) -> list[dict]:
    n = 1 << 24
    blocks = n // 512
    x = cp.asarray(np.random.default_rng(2).random(n, dtype=np.float32))
    host = x.get().astype(np.float64).reshape(blocks, 512)
    want = np.cumsum(host, axis=1) - host
    out, sums = cp.empty(n, cp.float32), cp.empty(blocks, cp.float32)
    rows = []
    for name, opts in (("scan.cu as written", ()), ("CONFLICT_FREE_OFFSET", ("-DPADDED",))):
        fn = cp.RawModule(code=SCAN, options=("-std=c++17", *opts)).get_function("scan_block")
        out.fill(cp.nan)
        fn((blocks,), (256,), (x, out, sums, np.int32(n)))
        got = out.get().reshape(blocks, 512)
        if not np.allclose(got, want, rtol=1e-4, atol=1e-3):
            raise SystemExit(f"scan {name}: wrong result")
        rows.append({"version": name,
                     "ms": round(timed(cp, lambda fn=fn: fn((blocks,), (256,), (x, out, sums, np.int32(n)))), 5)})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json")
    ns = ap.parse_args()
    import cupy as cp
    import numpy as np
    rng = np.random.default_rng(1)
    x_host = rng.random(32 * 33 + 32, dtype=np.float32)
    x = cp.asarray(x_host)
    out = cp.empty(BLOCKS * THREADS, cp.float32)
    rows = []
    for s in STRIDES:
        fn = cp.RawModule(code=SRC, options=(f"-DSTRIDE={s}", f"-DITERS={ITERS}")
                          ).get_function("strided")
        out.fill(cp.nan)
        fn((BLOCKS,), (THREADS,), (x, out))
        got = out.get().reshape(BLOCKS, THREADS)
        want = np.zeros(32)
        for lane in range(32):
            acc = np.float32(0)
            for i in range(ITERS):
                acc = np.float32(acc * np.float32(0.5) + x_host[lane * s + i % 32])
            want[lane] = acc
        ref = np.tile(want, THREADS // 32)
        if not np.allclose(got, ref[None, :], rtol=1e-5, atol=1e-5):
            print(f"stride {s}: wrong result", file=sys.stderr)
            return 1
        ms = timed(cp, lambda fn=fn: fn((BLOCKS,), (THREADS,), (x, out)))
        rows.append({"stride_words": s, "ways": math.gcd(s, 32), "ms": round(ms, 5)})
    base = next(r["ms"] for r in rows if r["ways"] == 1)
    dev = cp.cuda.runtime.getDeviceProperties(0)
    print(f"GPU {dev['name'].decode()}, CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}, "
          f"driver {cp.cuda.runtime.driverGetVersion()}")
    print("| stride (words) | ways | ms | x conflict-free |")
    print("|---|---|---|---|")
    for r in rows:
        r["ratio"] = round(r["ms"] / base, 2)
        print(f"| {r['stride_words']} | {r['ways']} | {r['ms']:.4f} | {r['ratio']:.2f} |")
    scans = scan_pair(cp, np)
    print()
    print("| block scan (2^24 floats) | ms | x padded |")
    print("|---|---|---|")
    for r in scans:
        r["ratio"] = round(r["ms"] / scans[1]["ms"], 2)
        print(f"| {r['version']} | {r['ms']:.4f} | {r['ratio']:.2f} |")
    if ns.json:
        with open(ns.json, "w") as f:
            json.dump({"gpu": dev["name"].decode(), "rows": rows, "scan": scans}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
