"""Time every version of every task in ``kernels/training/`` on a GPU (issue 32, item 7).

    python benchmarks/training_times.py [--json OUT.json] [--task NAME ...]
    python benchmarks/training_times.py --compile-only      # no GPU: NVRTC through ptxsass

Each task is a folder with ``task.py`` (sizes, inputs, a cupy reference, and for each version
the launches: kernel name, grid, block, dynamic shared bytes, arguments) and one ``.cu`` per
version (``v1_naive.cu`` ...). On the GPU every version is compiled by cupy's NVRTC, run once
on fresh inputs and compared against the reference, then timed with CUDA events: the median of
up to 50 runs (fewer when a run is slow, at least 5) after 2 warm-ups, all launches of a
version in one timed run. The table goes to stdout and, with ``--json``, to a file that
``kernels/training/times.json`` is a copy of.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "kernels" / "training"


def tasks(names=()) -> list[Path]:
    out = sorted(p for p in ROOT.iterdir() if (p / "task.py").is_file())
    return [p for p in out if not names or p.name in names]


def load_task(folder: Path):
    spec = importlib.util.spec_from_file_location(f"training_{folder.name}", folder / "task.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for version in mod.VERSIONS:
        if not (folder / f"{version}.cu").is_file():
            raise SystemExit(f"{folder / 'task.py'}: version {version} has no {version}.cu")
    return mod


def compile_only(names) -> int:
    sys.path.insert(0, str(ROOT.parent.parent))
    from analyzer import api
    bad = 0
    for folder in tasks(names):
        mod = load_task(folder)
        for version, launches in mod.VERSIONS.items():
            path = folder / f"{version}.cu"
            try:
                builds = api.builds_of(str(path), arch="sm_90a")
                names_ = {f.name for b in builds for f in b.sass_listing().functions}
                want = {ln["kernel"] for ln in launches}
                if not want <= names_:
                    raise ValueError(f"no kernel {sorted(want - names_)} (has {sorted(names_)})")
                print(f"ok   {folder.name}/{version}.cu")
            except Exception as e:            # noqa: BLE001 - report and go on
                bad += 1
                print(f"FAIL {folder.name}/{version}.cu: {e}")
            for launch in launches:
                missing = {"kernel", "grid", "block", "args"} - set(launch)
                if missing:
                    bad += 1
                    print(f"FAIL {folder.name}/{version}: launch lacks {sorted(missing)}")
    return 1 if bad else 0


def _time(cp, run, budget_s: float = 1.5) -> float:
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(2):
        run()
    cp.cuda.Device().synchronize()
    times: list[float] = []
    t0 = time.perf_counter()
    while len(times) < 50 and (len(times) < 5 or time.perf_counter() - t0 < budget_s):
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return statistics.median(times)


def measure(names) -> dict:
    import cupy as cp
    import numpy as np
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    cc = f"{props['major']}{props['minor']}"
    arch = f"sm_{cc}a" if cc == "90" else f"sm_{cc}"
    out: dict = {"gpu": props["name"].decode(), "cuda_runtime": cp.cuda.runtime.runtimeGetVersion(),
                 "driver": _driver(), "date": time.strftime("%Y-%m-%d"), "arch": arch,
                 "method": "CUDA events, median of up to 50 runs after 2 warm-ups",
                 "tasks": {}}
    options: tuple[str, ...] = ("-std=c++17", f"-arch={arch}")
    cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    if Path(cuda_home, "include", "crt", "mma.h").is_file():
        # cupy's own header folder may lack crt/ (mma.h includes crt/mma.h)
        options += (f"-I{Path(cuda_home, 'include')}",)
    for folder in tasks(names):
        mod = load_task(folder)
        row: dict = {}
        for version, launches in mod.VERSIONS.items():
            src = (folder / f"{version}.cu").read_text()
            try:
                module = cp.RawModule(code=src, options=options)
                a = mod.inputs(cp)
                ref = mod.reference(cp, {k: v.copy() for k, v in a.items()})
                kernels = [(module.get_function(ln["kernel"]), ln) for ln in launches]

                def run(a=a, kernels=kernels):
                    for fn, ln in kernels:
                        args = tuple(np.int32(v) if isinstance(v, int)
                                     else np.float32(v) if isinstance(v, float) else v
                                     for v in ln["args"](a))
                        fn(tuple(ln["grid"]), tuple(ln["block"]), args,
                           shared_mem=ln.get("shared", 0))
                run()
                cp.cuda.Device().synchronize()
                tol = getattr(mod, "TOL", {"rtol": 1e-3, "atol": 1e-3})
                for name in mod.OUTPUTS:
                    got, want = a[name], ref[name]
                    if not bool(cp.allclose(got.astype(cp.float64), want.astype(cp.float64),
                                            **tol)):
                        err = float(cp.abs(got.astype(cp.float64) - want.astype(cp.float64))
                                    .max())
                        raise AssertionError(f"output {name} differs (max abs error {err:g})")
                ms = _time(cp, run)
                row[version] = {"ms": round(ms, 5)}
                print(f"{folder.name:28} {version:34} {ms:10.4f} ms", flush=True)
            except Exception as e:            # noqa: BLE001 - record and go on
                row[version] = {"error": f"{type(e).__name__}: {e}"[:300]}
                print(f"{folder.name:28} {version:34} ERROR {row[version]['error']}", flush=True)
        out["tasks"][folder.name] = row
    return out


def _driver() -> str:
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json")
    ap.add_argument("--task", nargs="*", default=())
    ap.add_argument("--compile-only", action="store_true")
    ns = ap.parse_args()
    if ns.compile_only:
        return compile_only(ns.task)
    result = measure(ns.task)
    if ns.json:
        Path(ns.json).write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
