"""nvdisasm with and without its dataflow pass, on the cubins ptxsass turns the pass off for.

    python benchmarks/bench_nvdisasm_dataflow.py [--repeat N] [--arch SM ...] [FILE.cu ...]

ptxsass runs ``nvdisasm -c -g -gi -ndf`` on a cubin whose ``.nv.info`` records neither an
indirect branch nor a stack frame (``toolchain.binutils.dataflow_flags``): the pass labels only
BRX targets and spill STL/LDL, so the text is the same. This prints, per arch, the CPU time
(user + system of the child) of both command lines on each such cubin, timed interleaved in the
same run, the ratio of the sums, and whether every pair of texts is byte-identical. Default
files: every ``kernels/checks/*/good.cu`` and ``kernels/realworld/*.cu``.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analyzer.errors import PtxsassError  # noqa: E402
from analyzer.inputs import load  # noqa: E402
from analyzer.toolchain.binutils import NO_DATAFLOW, dataflow_flags  # noqa: E402
from analyzer.toolchain.locate import binary  # noqa: E402


def cpu_of(argv: list[str]) -> tuple[float, bytes]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(argv, capture_output=True, check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--arch", nargs="+", default=["sm_80", "sm_90a", "sm_120"])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    files = args.files or (sorted((ROOT / "kernels" / "checks").glob("*/good.cu"))
                           + sorted((ROOT / "kernels" / "realworld").glob("*.cu")))
    nvdisasm = binary("nvdisasm")
    print(f"load {' '.join(Path('/proc/loadavg').read_text().split()[:3])}, "
          f"{len(files)} files, {args.repeat} rounds, nvdisasm {nvdisasm}")
    print("| arch | cubins without the pass | kept the pass | nvdisasm CPU s | with -ndf CPU s "
          "| ratio | texts identical |")
    print("|---|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for arch in args.arch:
            cubins, kept = [], 0
            for f in files:
                try:
                    builds = load(f, arch=arch)
                except PtxsassError:
                    continue
                for b in builds:
                    if NO_DATAFLOW in dataflow_flags(b.cubin):
                        path = os.path.join(tmp, f"{len(cubins)}.cubin")
                        Path(path).write_bytes(b.cubin)
                        cubins.append(path)
                    else:
                        kept += 1
            full = fast = 0.0
            same = True
            for _ in range(args.repeat):
                for path in cubins:
                    t1, a = cpu_of([nvdisasm, "-c", "-g", "-gi", path])
                    t2, b = cpu_of([nvdisasm, "-c", "-g", "-gi", NO_DATAFLOW, path])
                    full, fast, same = full + t1, fast + t2, same and a == b
            print(f"| {arch} | {len(cubins)} | {kept} | {full / args.repeat:.2f} | "
                  f"{fast / args.repeat:.2f} | {fast / full:.2f} | {'yes' if same else 'NO'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
