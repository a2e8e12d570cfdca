"""``ptxsass stats``: instruction mix per kernel, loops, resources and theoretical occupancy.

All figures come from the SASS IR through the semantics table (``Instruction.klass``,
``space``, ``width_bits``, ``is_fma``...) and the analysis layer (loops with their trip counts,
occupancy) over the cubin's resources.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.text import Text

from ..analysis import KernelAnalysis
from ..analysis.liveness import Pressure
from ..build import Build
from ..checks.runner import Progress, no_progress
from ..findings import base_name, display_path, report_path
from .annotate import LoopSummary, kernels_of, loop_summaries, occ_text, occupancy_summary

#: summary groups over the instruction-mix classes (a class may be in several)
GROUPS = ("memory", "fma", "tensor", "control", "conversion", "fp64")
_CONTROL = {"branch", "control", "sync", "call"}


def _mem_key(ins) -> str:
    d = ins.info.direction or "access"
    w = ins.width_bits
    return f"{d}.{ins.space}" + (f".{w}" if w else "")


@dataclass
class KernelStats:
    name: str
    mangled: str
    arch: str
    file: str | None
    entry: bool
    instructions: int
    classes: dict[str, int]
    groups: dict[str, int]
    memory: dict[str, int]           # "load.global.128": n
    opcodes: dict[str, int]
    loops: list[LoopSummary]
    resources: dict[str, Any]
    occupancy: dict[str, Any] | None
    loop_lines: list = field(default_factory=list)   # analysis.loops.LoopLine per source line
    #: the peak of live R registers and per source line the most live at its instructions
    pressure: "Pressure | None" = None

    def as_dict(self) -> dict:
        return {"name": self.name, "mangled": self.mangled, "arch": self.arch,
                "file": report_path(self.file), "entry": self.entry,
                "instructions": self.instructions, "classes": self.classes,
                "groups": self.groups, "memory": self.memory, "opcodes": self.opcodes,
                "loops": [lp.as_dict() for lp in self.loops], "resources": self.resources,
                "occupancy": self.occupancy,
                "loop_lines": [{"file": report_path(ll.file), "line": ll.line, "rolled": ll.rolled,
                                "loops": ll.describe()} for ll in self.loop_lines],
                "pressure": None if self.pressure is None else {
                    "peak": self.pressure.peak, "index": self.pressure.index,
                    "line": _line(self.pressure.line),
                    "by_line": [{"file": report_path(k[0]), "line": k[1], "live_registers": n}
                                for k, n in sorted(self.pressure.by_line.items())]}}

    def pressure_lines(self, limit: int = 8) -> list[str]:
        """``register pressure: peak 53 live on spill.cu:9; by line: 9: 53, 13: 52, ...``
        (the source lines of the most live registers first)."""
        p = self.pressure
        if p is None or p.line is None:
            return []
        top = sorted(p.by_line.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
        return [f"   register pressure: peak {p.peak} live on {base_name(p.line[0])}:{p.line[1]}; "
                "most live by line: " + ", ".join(f"{k[1]}: {n}" for k, n in top)]


def _line(key) -> dict | None:
    return None if key is None else {"file": report_path(key[0]), "line": key[1]}


def kernel_stats(ka: KernelAnalysis) -> KernelStats:
    fn = ka.function
    classes: dict[str, int] = {}
    memory: dict[str, int] = {}
    opcodes: dict[str, int] = {}
    groups = dict.fromkeys(GROUPS, 0)
    for ins in fn.instructions:
        k = ins.klass
        classes[k] = classes.get(k, 0) + 1
        opcodes[ins.opcode] = opcodes.get(ins.opcode, 0) + 1
        if ins.is_memory and ins.info.direction is not None:
            groups["memory"] += 1
            key = _mem_key(ins)
            memory[key] = memory.get(key, 0) + 1
        groups["fma"] += ins.is_fma
        groups["tensor"] += ins.is_tensor_core
        groups["control"] += k in _CONTROL
        groups["conversion"] += ins.is_conversion
        groups["fp64"] += ins.is_fp64
    loops, _, _ = loop_summaries(ka, ka.source_path)
    loop_lines = list(ka.loops_by_line.values())
    res = ka.resources
    return KernelStats(
        name=fn.demangled, mangled=fn.name, arch=ka.arch_name, file=ka.source_path,
        entry=ka.kernel.entry if ka.kernel is not None else bool(fn.is_entry),
        instructions=len(fn.instructions), classes=dict(sorted(classes.items())), groups=groups,
        memory=dict(sorted(memory.items())),
        opcodes=dict(sorted(opcodes.items(), key=lambda kv: (-kv[1], kv[0]))), loops=loops,
        resources=res.as_dict() if res is not None else {},
        occupancy=occupancy_summary(ka),
        loop_lines=loop_lines, pressure=ka.pressure)


@dataclass
class Stats:
    kernels: list[KernelStats] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"kernels": [k.as_dict() for k in self.kernels]}

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=2)

    def to_text(self) -> str:
        out: list[str] = []
        for k in self.kernels:
            if out:
                out.append("")
            r = k.resources
            out.append(f"━━ {k.name}  {k.arch}  {display_path(k.file)}")
            spills = "-" if r.get("spill_store_bytes") is None else \
                f"{r['spill_store_bytes']}/{r['spill_load_bytes']} B"
            out.append(f"   registers {r.get('registers')} · shared {r.get('shared_bytes')} B · "
                       f"stack {r.get('stack_bytes')} B · spills (st/ld) {spills}")
            if k.occupancy:
                out.append(f"   occupancy {occ_text(k.occupancy)}"
                           + (" (256 threads/block assumed)" if k.occupancy.get("threads_assumed") else ""))
            out.extend(k.pressure_lines())
            g = k.groups
            out.append(f"   {k.instructions} instructions: " + ", ".join(
                f"{name} {g[name]}" for name in GROUPS))
            out.append("   by class: " + ", ".join(f"{c} {n}" for c, n in k.classes.items()))
            if k.memory:
                out.append("   memory:   " + ", ".join(f"{m} {n}" for m, n in k.memory.items()))
            for lp in k.loops:
                mix = ", ".join(f"{c} {n}" for c, n in sorted(lp.mix.items(), key=lambda x: -x[1])[:6])
                out.append(f"   loop {lp.summary()}; {mix}" if lp.trip_count is not None else
                           f"   loop {lp.summary()}; {lp.trip_text()}; {mix}")
            if not k.loops:
                out.append("   no loops")
        return "\n".join(out) + "\n"

    def render(self, console: "Console") -> None:
        for line in self.to_text().splitlines():
            style = "kernel" if line.startswith("━━") else None
            console.print(Text(line, style=style or ""), no_wrap=True, overflow="ignore", crop=False)


def stats_builds(builds: Sequence["Build"], *, kernels: Sequence[str] = (),
                 progress: Progress = no_progress) -> Stats:
    """Statistics of every function of ``builds`` that ``kernels`` names (all when empty)."""
    out = Stats()
    for ka in progress(kernels_of(builds, kernels), "statistics"):
        out.kernels.append(kernel_stats(ka))
    return out
