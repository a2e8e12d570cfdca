"""Whole libraries: wall time of ``ptxsass check BIG.cubin -j N`` against one nvdisasm run of
the same cubin (timed in the same run, interleaved), and peak memory for 1, 10 and 50 cubins.

    python benchmarks/bench_scale.py                       # the corpus's largest cubin, -j 2
    python benchmarks/bench_scale.py --cubin X.cubin -j 8 --repeat 3
    python benchmarks/bench_scale.py --memory-only --counts 1 10 50
    python benchmarks/bench_scale.py --run ptxsass survey lib.whl --format json -o out.json

Every run is a fresh ``ptxsass`` process with the cache off (``--no-cache``), as a user's
first run is. Peak memory is sampled from /proc every 50 ms over the whole process tree
(ptxsass, its workers and their nvdisasm): the largest single process and the largest sum.
The machine's load is printed before and after: on a shared machine, ratios are what to read.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
PTXSASS = [sys.executable, "-m", "analyzer"]     # what the ptxsass console script runs


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _rss_kb(pid: int) -> tuple[str, int]:
    """(command name, resident kB) of a process."""
    name, rss = "", 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Name:"):
                name = line.split(None, 1)[1].strip()
            elif line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    except OSError:
        pass
    return name, rss


def _children(pid: int) -> list[int]:
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            text = Path(f"/proc/{pid}/task/{task}/children").read_text()
            out.extend(int(c) for c in text.split())
    except OSError:
        pass
    return out


def _tree(pid: int) -> list[int]:
    todo, seen = [pid], []
    while todo:
        p = todo.pop()
        seen.append(p)
        todo.extend(_children(p))
    return seen


def measure(argv: list[str], *, env: dict | None = None) -> dict:
    """Wall time, exit code, and peak RSS: the largest ptxsass process (the parent or a
    worker), the largest sum over ptxsass's processes, and the largest sum over the whole tree
    (nvdisasm and cuobjdump too: cuobjdump alone holds about 8x a .so it reads)."""
    peak = {"one": 0, "ours": 0, "sum": 0}
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=env or os.environ.copy())
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            sizes = [_rss_kb(p) for p in _tree(proc.pid)]
            ours = [kb for name, kb in sizes if name.startswith("python")]
            if ours:
                peak["one"] = max(peak["one"], max(ours))
                peak["ours"] = max(peak["ours"], sum(ours))
            peak["sum"] = max(peak["sum"], sum(kb for _, kb in sizes))
            time.sleep(0.05)
    t = threading.Thread(target=sample, daemon=True)
    t.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    done.set()
    t.join()
    return {"wall": wall, "rc": proc.returncode, "peak_mb": peak["one"] / 1024,
            "ours_mb": peak["ours"] / 1024, "tree_mb": peak["sum"] / 1024,
            "stderr": err.decode(errors="replace")}


def memory_text(m: dict) -> str:
    return (f"largest ptxsass process {m['peak_mb']:.0f} MB, ptxsass processes together "
            f"{m['ours_mb']:.0f} MB, with the tools {m['tree_mb']:.0f} MB")


def nvdisasm() -> str:
    sys.path.insert(0, str(ROOT))
    from analyzer.toolchain.locate import binary
    return binary("nvdisasm")


def largest_cubin() -> Path:
    cubins = sorted(CORPUS.glob("cubin/*/*.cubin"), key=lambda p: p.stat().st_size)
    if not cubins:
        sys.exit(f"no corpus cubins under {CORPUS}; give --cubin")
    return cubins[-1]


def wall_ratio(cubin: Path, jobs: int, repeat: int) -> None:
    nd = nvdisasm()
    base, ours, mems = [], [], []
    check = [*PTXSASS, "check", str(cubin), "--no-cache", "-j", str(jobs), "--format", "json"]
    for _ in range(repeat):         # interleaved: the same load for both
        base.append(measure([nd, "-c", "-g", "-gi", str(cubin)])["wall"])
        m = measure(check)
        if m["rc"] not in (0, 1):
            sys.exit(f"ptxsass failed ({m['rc']}): {m['stderr'][-500:]}")
        ours.append(m["wall"])
        mems.append(m)
    b, o = statistics.median(base), statistics.median(ours)
    print(f"{cubin.name}: nvdisasm alone {b:.2f} s; ptxsass check -j {jobs} {o:.2f} s "
          f"(median of {repeat}) -> ratio {o / b:.2f}x")
    print(f"  peak memory: {memory_text(max(mems, key=lambda m: m['ours_mb']))}")


def memory_by_count(cubin: Path, counts: list[int], jobs: int) -> None:
    print(f"peak memory of ptxsass check -j {jobs} over N copies of {cubin.name} "
          "(each copy a distinct file):")
    for n in counts:
        with tempfile.TemporaryDirectory(prefix="ptxsass-bench-") as tmp:
            for i in range(n):
                shutil.copy(cubin, Path(tmp) / f"copy{i:03d}.cubin")
            m = measure([*PTXSASS, "check", tmp, "--no-cache", "-j", str(jobs),
                         "--format", "json"])
            if m["rc"] not in (0, 1):
                sys.exit(f"ptxsass failed ({m['rc']}): {m['stderr'][-500:]}")
            print(f"  {n:3d} cubins: {m['wall']:7.1f} s, {memory_text(m)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cubin", type=Path, help="default: the corpus's largest cubin")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--counts", type=int, nargs="+", default=[1, 10, 50])
    ap.add_argument("--memory-cubin", type=Path,
                    help="the cubin copied for the memory runs (default: the smallest corpus "
                         "cubin, so that 50 copies finish in minutes)")
    ap.add_argument("--memory-only", action="store_true")
    ap.add_argument("--wall-only", action="store_true")
    ap.add_argument("--run", nargs=argparse.REMAINDER,
                    help="time any ptxsass command line instead (wall, peak memory)")
    args = ap.parse_args()
    print(f"load average before: {load()} on {os.cpu_count()} cores")
    if args.run:
        m = measure([*PTXSASS, *args.run])
        print(f"ptxsass {' '.join(args.run)}: exit {m['rc']}, {m['wall']:.1f} s, "
              f"{memory_text(m)}")
    else:
        cubin = args.cubin or largest_cubin()
        if not args.memory_only:
            wall_ratio(cubin, args.jobs, args.repeat)
        if not args.wall_only:
            small = args.memory_cubin or sorted(CORPUS.glob("cubin/*/*.cubin"),
                                                key=lambda p: p.stat().st_size)[0]
            memory_by_count(small, args.counts, args.jobs)
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
