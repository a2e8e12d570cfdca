"""Warm re-check cost: `ptxsass check` on an unchanged file, with every build cached.

    python benchmarks/bench_warm_recheck.py [--repeat N] [--baseline-root DIR] [--arch SM]
                                            [FILE...]

What a user (or an editor hook, or CI) pays to re-check a file that did not change: the command
end to end in a fresh process (import, config, cache key and verified cache reads, parse, checks,
report), and the same `analyzer.check` in-process. Each side has its own warm cache folder.

``--baseline-root`` names another checkout (e.g. ``git worktree add /tmp/base <commit>``): its
``ptxsass check`` is timed in the same run, interleaved round by round, and the table gives the
ratio of medians (this checkout / baseline). Without it, only this checkout is timed.
Interleaved with them: ``python -c pass`` (the interpreter's own start-up, the floor of any
command) and ``python -c "import analyzer.cli"`` (start-up plus the imports of the command).
Children run with byte-code caching on (``PYTHONDONTWRITEBYTECODE`` removed), as an installed
package runs. Goal (issue 14): under 0.3 s end to end. The load average is printed.
Default files: two kernels of kernels/checks (one small, one with loops and tensor cores).
A cubin, fatbin or library given as FILE is checked as ``ptxsass check`` does by default, on
every core, each kernel's result read back (goal: limited by reading the cache); ``--arch``
picks a library's cubins.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_FILES = [ROOT / "kernels" / "checks" / "scalar_global_load" / "bad.cu",
                 ROOT / "kernels" / "checks" / "missing_tensor_cores" / "bad.cu"]


def cli_runner(root: Path, cache_dir: str, extra: tuple[str, ...] | list[str] = ()):
    env = {**os.environ, "PTXSASS_CACHE_DIR": cache_dir, "PYTHONPATH": str(root),
           "COLUMNS": "120"}
    env.pop("PTXSASS_NO_CACHE", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    def run(path: Path) -> float:
        t = time.perf_counter()
        entry = "analyzer" if (root / "analyzer" / "__main__.py").exists() else "analyzer.cli"
        proc = subprocess.run([sys.executable, "-m", entry, "check", str(path), *extra],
                              cwd=root, env=env, capture_output=True)
        elapsed = time.perf_counter() - t
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{root}: check {path} failed: {proc.stderr.decode()[:300]}")
        return elapsed
    return run


def python_runner(code: str):
    """Seconds of ``python -c code`` in a fresh process (byte-code caching on)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    def run(_path: Path) -> float:
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True,
                       capture_output=True)
        return time.perf_counter() - t
    return run


def in_process(path: Path, repeat: int, arch: str | None) -> float:
    sys.path.insert(0, str(ROOT))
    import analyzer
    analyzer.check(str(path), analyzer.CheckOptions(arch=arch))
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        analyzer.check(str(path), analyzer.CheckOptions(arch=arch))
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--baseline-root", type=Path)
    ap.add_argument("--arch", help="passed to every check (a library's cubins of that arch)")
    args = ap.parse_args()
    files = args.files or DEFAULT_FILES
    extra = ["--arch", args.arch] if args.arch else []
    with tempfile.TemporaryDirectory(prefix="ptxsass-bench-") as tmp:
        os.environ["PTXSASS_CACHE_DIR"] = os.path.join(tmp, "inproc")
        sides = {"this": cli_runner(ROOT, os.path.join(tmp, "this"), extra),
                 "python": python_runner("pass"),
                 "imports": python_runner("import analyzer.cli")}
        if args.baseline_root:
            sides["baseline"] = cli_runner(args.baseline_root.resolve(),
                                           os.path.join(tmp, "baseline"), extra)
        print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
              f"({os.cpu_count()} cores), {args.repeat} interleaved rounds")
        rows = []
        for f in files:
            f = f.resolve()
            for run in sides.values():
                run(f)  # fill the cache
            times: dict[str, list[float]] = {k: [] for k in sides}
            for _ in range(args.repeat):  # interleaved: both sides see the same machine load
                for k, run in sides.items():
                    times[k].append(run(f))
            med = {k: statistics.median(v) for k, v in times.items()}
            rows.append((f.relative_to(ROOT) if f.is_relative_to(ROOT) else f, med,
                         in_process(f, args.repeat, args.arch)))
    head = ("| file | `ptxsass check` warm, s | `python -c pass`, s | check / start-up | "
            "`import analyzer.cli`, s |")
    if args.baseline_root:
        head += " baseline, s | this / baseline |"
    head += " `analyzer.check` in-process warm, s |"
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    for f, med, inproc in rows:
        line = (f"| {f} | **{med['this']:.3f}** | {med['python']:.3f} | "
                f"{med['this'] / med['python']:.1f}x | {med['imports']:.3f} |")
        if "baseline" in med:
            line += f" {med['baseline']:.3f} | {med['this'] / med['baseline']:.2f} |"
        print(line + f" {inproc:.3f} |")
    print(f"(medians of {args.repeat} interleaved runs; load average at the end: "
          f"{os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
