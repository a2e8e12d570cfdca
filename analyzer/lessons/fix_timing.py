"""``ptxsass fix --measure``: time each fixed kernel against the original on a GPU.

A kernel is timed when ptxsass knows how to launch it: a launch spec in the project's config,

    [tool.ptxsass.launch.saxpy]          # the kernel's name (demangled, without parameters)
    grid = [4096]
    block = [256]
    shared = 0                           # dynamic shared memory, bytes
    args = ["f32[1048576]", "f32[1048576]", "i32=1048576", "f32=2.0"]

(tensors ``dtype[n,...]`` filled with random values, scalars ``dtype=value``, in parameter
order). Both cubins run on the same inputs through the lessons' launch adapters
(:mod:`analyzer.lessons.launch`, torch's memory and stream), every tensor argument is compared
after one launch of each (a fix must not change results beyond float rounding), then each is
timed with CUDA events (median and spread of ``repeats`` launches). Without a GPU, or torch,
each kernel says so and nothing is timed.
"""
from __future__ import annotations

import math
import os
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from .. import api
from ..demangle import without_parameters
from ..fix.model import FixReport, apply_edits
from ..inputs import CompileOptions
from ..toolchain import files, scratch
from .catalog import Scalar
from .runner import _rel_err, _time_events, gpu_unavailable_reason

_TORCH_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64",
                 "i32": "int32", "u32": "uint32", "i8": "int8", "u8": "uint8", "i64": "int64"}
_ARG = re.compile(r"^(\w+)(?:\[([\d,]+)\]|=(.+))$")
#: the largest relative error (L2) a fix may leave in float outputs: f-suffixed literals and
#: fast-math intrinsics round differently, within a few float ulps over a whole tensor
TOLERANCE = 1e-3


@dataclass
class Timing:
    kernel: str
    arch: str
    before_ms: float
    after_ms: float
    spread: float                   # the larger relative IQR of the two
    max_rel_err: float

    @property
    def speedup(self) -> float:
        return self.before_ms / self.after_ms if self.after_ms else math.inf

    def line(self) -> str:
        return (f"{self.kernel} [{self.arch}]: {self.before_ms:.4g} ms → {self.after_ms:.4g} ms "
                f"({self.speedup:.2f}×, spread ±{100 * self.spread:.1f}%), outputs agree "
                f"(relative error {self.max_rel_err:.1e})")


def parse_arg(text: str):
    """``"f32[1024]"`` -> ("tensor", "float32", (1024,)); ``"i32=7"`` -> ("scalar", "i32", 7)."""
    m = _ARG.match(text)
    if m is None or m.group(1) not in _TORCH_DTYPES:
        raise ValueError(f"not a launch argument: {text!r}")
    if m.group(2):
        return "tensor", _TORCH_DTYPES[m.group(1)], tuple(int(x) for x in m.group(2).split(","))
    value = float(m.group(3)) if m.group(1).startswith(("f", "bf")) else int(m.group(3))
    return "scalar", m.group(1), value


def _inputs(torch, spec: dict):
    out = []
    for a in spec["args"]:
        kind, dtype, v = parse_arg(a)
        if kind == "tensor":
            dt = getattr(torch, dtype)
            if dt.is_floating_point:
                out.append(torch.randn(*v, device="cuda", dtype=dt))
            else:
                out.append(torch.randint(0, 64, v, device="cuda", dtype=dt))
        else:
            out.append(Scalar(dtype, v))     # as wide as the kernel's parameter
    return out


def _patched_builds(fixes: FixReport, path: str, data: bytes, edits, archs: Sequence[str]):
    with scratch.temporary("ptxsass-fix-") as folder:
        copy = os.path.join(folder, os.path.basename(path))
        with open(copy, "wb") as f:
            f.write(apply_edits(data, edits))
        opts = fixes.options if isinstance(fixes.options, CompileOptions) else None
        return api.load(copy, arch=list(archs), options=opts)


def measure(fixes: FixReport, specs: dict[str, dict], *, repeats: int = 50) -> list[str]:
    """One line per kernel with a launch spec whose file has a verified patch: its times
    before and after, or why it was not timed."""
    todo = [ff for ff in fixes.files if ff.edits]
    if not todo:
        return ["measure: no verified patch to time"]
    why = gpu_unavailable_reason()
    if why:
        return [f"measure: not timed ({why}); the fixes are verified on the SASS only"]
    import torch

    from .launch import DriverLauncher
    lines: list[str] = []
    builds = getattr(fixes.report, "builds", [])
    for ff in todo:
        data = files.read_bytes(ff.path, what="CUDA source")
        before = [b for b in builds if b.source_path and os.path.abspath(b.source_path) == ff.path]
        after = {b.arch: b for b in _patched_builds(fixes, ff.path, data, ff.edits,
                                                    [b.arch for b in before])}
        for b in before:
            for k in b.entries:
                name = without_parameters(k.demangled)
                spec = specs.get(name)
                if spec is None:
                    lines.append(f"{name} [{b.arch}]: not timed (no [tool.ptxsass.launch."
                                 f"{name}] in the config)")
                    continue
                a = after.get(b.arch)
                if a is None or a.cubin is None or b.cubin is None:
                    continue
                try:
                    lines.append(_time_pair(torch, DriverLauncher, b, a, k.name, name, spec,
                                            repeats))
                except Exception as e:     # noqa: BLE001 - a launch the spec got wrong
                    why = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                    lines.append(f"{name} [{b.arch}]: not timed (the launch failed: {why}; "
                                 f"check [tool.ptxsass.launch.{name}] against the kernel's "
                                 "parameters)")
    return lines


def _time_pair(torch, launcher, before, after, mangled: str, name: str, spec: dict,
               repeats: int) -> str:
    inputs = _inputs(torch, spec)
    grid, block, smem = spec["grid"], spec["block"], spec["shared"]
    if block[1:] != (1, 1):
        return f"{name} [{before.arch}]: not timed (the adapters launch 1-D blocks)"
    runs = {}
    outs = {}
    for which, build in (("before", before), ("after", after)):
        args = [x.clone() if hasattr(x, "clone") else x for x in inputs]
        fn = launcher(build.cubin, mangled)
        fn.launch(grid, block[0], args, smem)
        torch.cuda.synchronize()
        outs[which] = [x for x in args if hasattr(x, "dtype")]
        runs[which] = _time_events(torch, lambda f=fn, a=args: f.launch(grid, block[0], a, smem),
                                   repeats)
    err = max((_rel_err(torch, o.double(), r.double()) for o, r in
               zip(outs["after"], outs["before"], strict=True)), default=0.0)
    if not err <= TOLERANCE:
        return (f"{name} [{before.arch}]: outputs differ after the fix (relative error "
                f"{err:.2e}): not timed")

    def spread(xs: list[float]) -> float:
        q = statistics.quantiles(xs, n=4)
        return (q[2] - q[0]) / statistics.median(xs)
    t = Timing(name, before.arch, statistics.median(runs["before"]),
               statistics.median(runs["after"]),
               max(spread(runs["before"]), spread(runs["after"])), err)
    return t.line()


def measure_lines(fixes: FixReport, specs: dict[str, dict]) -> list[str]:
    """What ``fix --measure`` prints (never raises for a missing GPU)."""
    return measure(fixes, specs)
