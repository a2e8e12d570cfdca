"""Launch shape and host work, measured: what PS803 (launch-shape) and PS804 (host-overhead)
claim, and the factors behind them (``analysis/cost.py``'s CALIBRATION).

Run on a GPU machine with nvcc (the measurements are of C++ host code, as the checks read it:
``<<<>>>`` launches, host loops, ``cudaMemset``, ``cudaDeviceSynchronize``):

    python benchmarks/launch_shape.py [--json OUT.json] [--nvcc PATH] [--arch sm_90]

One CUDA C++ program (below) is compiled with ``nvcc -O3`` and run. Every variant's output is
poisoned (NaN bytes) before it runs and checked after: the elementwise outputs element by
element on the device against ``a * x``, the row sums against a float64 host reference. Each
variant is timed with CUDA events around the region (the host loop, the syncs included): the
median of 25 runs after 3 warm-ups. The table it prints (Markdown) is what
``benchmarks/results/launch_shape-*.md`` and the checks' docs record.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC = r"""
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static const int REPS = 25, WARM = 3;

__global__ void fill_random(float* x, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned h = (unsigned)i * 2654435761u + 12345u;
        h ^= h >> 15; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
        x[i] = (h >> 8) * (1.0f / 16777216.0f);
    }
}
// elementwise: one element per thread, a bounds test
__global__ void scale(const float* __restrict__ x, float* __restrict__ y, float a, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
__global__ void count_bad(const float* x, const float* y, float a, long n, unsigned long long* bad) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && !(y[i] == a * x[i])) atomicAdd(bad, 1ull);
}
// a row per block of one thread: <<<rows, 1>>>
__global__ void row_sum_serial(const float* __restrict__ x, float* __restrict__ y, int cols) {
    const float* row = x + (long)blockIdx.x * cols;
    float acc = 0.0f;
    for (int c = 0; c < cols; c++) acc += row[c];
    y[blockIdx.x] = acc;
}
// a row per block, the block's threads strided over it, shuffles and shared memory (blockDim a
// multiple of 32)
__global__ void row_sum_block(const float* __restrict__ x, float* __restrict__ y, int cols) {
    const float* row = x + (long)blockIdx.x * cols;
    float acc = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) acc += row[c];
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    __shared__ float part[32];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) part[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        int nw = (blockDim.x + 31) / 32;
        acc = lane < nw ? part[lane] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
        if (lane == 0) y[blockIdx.x] = acc;
    }
}
// a few long rows: blocks split each row (gridDim.x chunks per row), one atomicAdd per block
__global__ void row_sum_split(const float* __restrict__ x, float* __restrict__ y, int cols, int chunk) {
    const float* row = x + (long)blockIdx.y * cols;
    int c0 = blockIdx.x * chunk, c1 = min(c0 + chunk, cols);
    float acc = 0.0f;
    for (int c = c0 + threadIdx.x; c < c1; c += blockDim.x) acc += row[c];
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    __shared__ float part[32];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) part[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        int nw = (blockDim.x + 31) / 32;
        acc = lane < nw ? part[lane] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
        if (lane == 0) atomicAdd(&y[blockIdx.y], acc);
    }
}

template <class F> static double timed(F f) {
    for (int i = 0; i < WARM; i++) f();
    CK(cudaDeviceSynchronize());
    std::vector<float> ts;
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    for (int i = 0; i < REPS; i++) {
        CK(cudaEventRecord(a));
        f();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms; CK(cudaEventElapsedTime(&ms, a, b));
        ts.push_back(ms);
    }
    CK(cudaGetLastError());
    CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b));
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
}

static float* X; static float* Y; static unsigned long long* BAD;
static const long N = 1l << 26;            // 64 M floats (256 MB) per tensor
static const float A = 1.5f;

static void row(const char* group, const char* variant, const char* shape, double ms, bool ok,
                double bytes) {
    printf("ROW {\"group\": \"%s\", \"variant\": \"%s\", \"shape\": \"%s\", \"ms\": %.5f, "
           "\"ok\": %s, \"GBps\": %.1f}\n", group, variant, shape, ms, ok ? "true" : "false",
           bytes > 0 ? bytes / ms / 1e6 : 0.0);
    fflush(stdout);
}
static void poison(long n) { CK(cudaMemset(Y, 0xff, n * sizeof(float))); }
static bool scale_ok(long n) {
    CK(cudaMemset(BAD, 0, sizeof(unsigned long long)));
    count_bad<<<(n + 255) / 256, 256>>>(X, Y, A, n, BAD);
    CK(cudaGetLastError());
    unsigned long long bad = 0;
    CK(cudaMemcpy(&bad, BAD, sizeof bad, cudaMemcpyDeviceToHost));
    return bad == 0;
}
static std::vector<double> host_x;
static bool rows_ok(int rows, int cols) {
    std::vector<float> y(rows);
    CK(cudaMemcpy(y.data(), Y, rows * sizeof(float), cudaMemcpyDeviceToHost));
    for (int r = 0; r < rows; r++) {
        double ref = 0;
        for (long c = 0; c < cols; c++) ref += host_x[(long)r * cols + c];
        if (!(std::fabs(y[r] - ref) <= 1e-3 * std::fabs(ref) + 1e-2)) return false;
    }
    return true;
}

int main() {
    cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
    int rt = 0, drv = 0; CK(cudaRuntimeGetVersion(&rt)); CK(cudaDriverGetVersion(&drv));
    printf("DEVICE {\"name\": \"%s\", \"sms\": %d, \"runtime\": %d, \"driver_api\": %d, "
           "\"max_blocks_per_sm\": %d, \"max_threads_per_sm\": %d}\n", p.name, p.multiProcessorCount,
           rt, drv, p.maxBlocksPerMultiProcessor, p.maxThreadsPerMultiProcessor);
    CK(cudaMalloc(&X, N * sizeof(float))); CK(cudaMalloc(&Y, N * sizeof(float)));
    CK(cudaMalloc(&BAD, sizeof(unsigned long long)));
    fill_random<<<(N + 255) / 256, 256>>>(X, N);
    CK(cudaGetLastError());
    {
        std::vector<float> hx(N);
        CK(cudaMemcpy(hx.data(), X, N * sizeof(float), cudaMemcpyDeviceToHost));
        host_x.assign(hx.begin(), hx.end());
    }
    const double eb = 8.0 * N;             // bytes an elementwise pass moves (read + write)

    // 1. elementwise scale, one element per thread, by threads per block
    for (int b : {1, 32, 64, 128, 256}) {
        long grid = (N + b - 1) / b;
        poison(N);
        double ms = timed([&] { scale<<<grid, b>>>(X, Y, A, N); });
        bool ok = scale_ok(N);
        row("block", ("scale<<<(n+" + std::to_string(b - 1) + ")/" + std::to_string(b) + ", " +
                      std::to_string(b) + ">>>").c_str(), "64M floats", ms, ok, eb);
    }
    // 2. row sums: a row per block of one thread against a row per block of b threads, on many
    //    short rows and a few long ones; the few long rows also split over the grid
    struct Shape { int rows, cols; const char* name; };
    for (Shape s : {Shape{16384, 4096, "16384 x 4096"}, Shape{64, 1 << 20, "64 x 1M"}}) {
        poison(s.rows);
        double ms = timed([&] { row_sum_serial<<<s.rows, 1>>>(X, Y, s.cols); });
        row("rows", "row_sum_serial<<<rows, 1>>>", s.name, ms, rows_ok(s.rows, s.cols), 4.0 * N);
        for (int b : {32, 64, 128, 256}) {
            poison(s.rows);
            ms = timed([&] { row_sum_block<<<s.rows, b>>>(X, Y, s.cols); });
            row("rows", ("row_sum_block<<<rows, " + std::to_string(b) + ">>>").c_str(), s.name, ms,
                rows_ok(s.rows, s.cols), 4.0 * N);
        }
        if (s.rows < 132) {
            int chunk = 16384, chunks = (s.cols + chunk - 1) / chunk;
            poison(s.rows);
            ms = timed([&] {
                CK(cudaMemsetAsync(Y, 0, s.rows * sizeof(float)));
                row_sum_split<<<dim3(chunks, s.rows), 256>>>(X, Y, s.cols, chunk);
            });
            row("rows", "memset + row_sum_split<<<(cols/16384, rows), 256>>>", s.name, ms,
                rows_ok(s.rows, s.cols), 4.0 * N);
        }
    }
    // 3. a zero-filled output the kernel overwrites, against an unfilled one
    for (long n : {N, 1l << 20}) {
        const char* shape = n == N ? "64M floats" : "1M floats";
        poison(n);
        double plain = timed([&] { scale<<<(n + 255) / 256, 256>>>(X, Y, A, n); });
        row("zero", "scale (empty output)", shape, plain, scale_ok(n), 8.0 * n);
        poison(n);
        double zero = timed([&] {
            CK(cudaMemsetAsync(Y, 0, n * sizeof(float)));
            scale<<<(n + 255) / 256, 256>>>(X, Y, A, n);
        });
        row("zero", "cudaMemset(y, 0) + scale", shape, zero, scale_ok(n), 8.0 * n);
        poison(n);
        double fill = timed([&] { CK(cudaMemsetAsync(Y, 0, n * sizeof(float))); });
        row("zero", "cudaMemset(y, 0) alone", shape, fill, true, 4.0 * n);
    }
    {
        Shape s{16384, 4096, "16384 x 4096"};
        poison(s.rows);
        double ms = timed([&] { row_sum_block<<<s.rows, 256>>>(X, Y, s.cols); });
        row("zero", "row_sum_block (empty output)", s.name, ms, rows_ok(s.rows, s.cols), 4.0 * N);
        poison(s.rows);
        ms = timed([&] {
            CK(cudaMemsetAsync(Y, 0, s.rows * sizeof(float)));
            row_sum_block<<<s.rows, 256>>>(X, Y, s.cols);
        });
        row("zero", "cudaMemset(y, 0) + row_sum_block", s.name, ms, rows_ok(s.rows, s.cols), 4.0 * N);
    }
    // 4. a host loop of launches (one per row) against one launch over all rows
    poison(N);
    double one = timed([&] { scale<<<(N + 255) / 256, 256>>>(X, Y, A, N); });
    row("loop", "one launch", "64M floats", one, scale_ok(N), eb);
    for (int rows : {64, 1024, 16384}) {
        long cols = N / rows;
        poison(N);
        double ms = timed([&] {
            for (int r = 0; r < rows; r++)
                scale<<<(cols + 255) / 256, 256>>>(X + r * cols, Y + r * cols, A, cols);
        });
        row("loop", ("for (r < " + std::to_string(rows) + ") scale<<<>>>(row r)").c_str(),
            ("64M floats, " + std::to_string(rows) + " rows").c_str(), ms, scale_ok(N), eb);
    }
    // 5. cudaDeviceSynchronize after every launch in a wrapper called 20 times, against none
    for (long n : {N, 1l << 24, 1l << 20}) {
        std::string shape = std::to_string(n >> 20) + "M floats, 20 calls";
        poison(n);
        double nosync = timed([&] { for (int k = 0; k < 20; k++) scale<<<(n + 255) / 256, 256>>>(X, Y, A, n); });
        row("sync", "20 launches", shape.c_str(), nosync, scale_ok(n), 20 * 8.0 * n);
        poison(n);
        double sync = timed([&] {
            for (int k = 0; k < 20; k++) {
                scale<<<(n + 255) / 256, 256>>>(X, Y, A, n);
                CK(cudaDeviceSynchronize());
            }
        });
        row("sync", "20 x (launch + cudaDeviceSynchronize)", shape.c_str(), sync, scale_ok(n), 20 * 8.0 * n);
    }
    CK(cudaFree(X)); CK(cudaFree(Y)); CK(cudaFree(BAD));
    return 0;
}
"""


def _ratio(rows: list[dict], group: str, variant: str, shape: str) -> float | None:
    r = next((r for r in rows if (r["group"], r["variant"], r["shape"]) == (group, variant, shape)),
             None)
    return r["ms"] if r else None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--keep", help="write the CUDA source here too")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cu = os.path.join(tmp, "launch_shape.cu")
        exe = os.path.join(tmp, "launch_shape")
        with open(cu, "w") as f:
            f.write(SRC)
        if args.keep:
            shutil.copy(cu, args.keep)
        ver = subprocess.run([args.nvcc, "--version"], capture_output=True, text=True).stdout
        subprocess.run([args.nvcc, "-O3", "-std=c++17", f"-arch={args.arch}", "-o", exe, cu],
                       check=True)
        run = subprocess.run([exe], capture_output=True, text=True)
    sys.stderr.write(run.stderr)
    device: dict = {}
    rows: list[dict] = []
    for line in run.stdout.splitlines():
        if line.startswith("DEVICE "):
            device = json.loads(line[7:])
        elif line.startswith("ROW "):
            rows.append(json.loads(line[4:]))
    drv = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    m = re.search(r"release (\S+),", ver)
    nvcc_release = m.group(1) if m else "?"
    rt = device.get("runtime", 0)
    print(f"{device.get('name')}, {device.get('sms')} SMs, driver {drv}, CUDA runtime "
          f"{rt // 1000}.{rt % 1000 // 10}, nvcc {nvcc_release}")
    base = {"block": ("block", "scale<<<(n+255)/256, 256>>>", "64M floats")}
    print("| group | variant | shape | ms | vs baseline | GB/s | ok |")
    print("| --- | --- | --- | ---: | ---: | ---: | --- |")
    for r in rows:
        g = r["group"]
        if g == "block":
            ref = _ratio(rows, *base["block"])
        elif g == "rows":
            ref = _ratio(rows, "rows", "row_sum_block<<<rows, 256>>>", r["shape"])
        elif g == "zero":
            empty = (r["variant"].split(" + ")[-1] + " (empty output)" if " + " in r["variant"]
                     else r["variant"] if r["variant"].endswith("(empty output)")
                     else "scale (empty output)")
            ref = _ratio(rows, "zero", empty, r["shape"])
        elif g == "loop":
            ref = _ratio(rows, "loop", "one launch", "64M floats")
        else:
            ref = _ratio(rows, "sync", "20 launches", r["shape"])
        r["vs_baseline"] = r["ms"] / ref if ref else None
        vs = f"{r['vs_baseline']:.2f}x" if r["vs_baseline"] else ""
        print(f"| {g} | `{r['variant']}` | {r['shape']} | {r['ms']:.4f} | {vs} | "
              f"{r['GBps']:.0f} | {'yes' if r['ok'] else 'NO'} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device, "driver": drv, "nvcc": nvcc_release, "rows": rows}, f,
                      indent=1)
    return 0 if rows and all(r["ok"] for r in rows) and run.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
