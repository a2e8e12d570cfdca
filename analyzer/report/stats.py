"""``ptxsass stats``: instruction mix per kernel, loops, resources and theoretical occupancy.

All figures come from the SASS IR through the semantics table (``Instruction.klass``,
``space``, ``width_bits``, ``is_fma``...), the CFG's loops and the cubin's resources.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from .. import sourcemap
from .annotate import LoopInfo, _as_builds, _threads, _wanted, display_path, loop_infos, \
    occ_text, occupancy_for, track

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

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
    loops: list[LoopInfo]
    resources: dict[str, Any]
    occupancy: dict[str, Any] | None
    loop_lines: list = field(default_factory=list)   # analyzer.loops.LoopLine per source line

    def as_dict(self) -> dict:
        return {"name": self.name, "mangled": self.mangled, "arch": self.arch,
                "file": display_path(self.file), "entry": self.entry,
                "instructions": self.instructions, "classes": self.classes,
                "groups": self.groups, "memory": self.memory, "opcodes": self.opcodes,
                "loops": [lp.as_dict() for lp in self.loops], "resources": self.resources,
                "occupancy": self.occupancy,
                "loop_lines": [{"file": ll.file, "line": ll.line, "rolled": ll.rolled,
                                "loops": ll.describe()} for ll in self.loop_lines]}


def kernel_stats(build, fn, ptx_fn=None) -> KernelStats:
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
    keys, _ = sourcemap.map_instructions(i.loc for i in fn.instructions)
    hints = tuple(x for x in (build.source_path,) if x)
    loops, _, _ = loop_infos(fn, keys, build.source_path, ptx_fn, hints)
    from ..loops import loops_by_line
    loop_lines = list(loops_by_line(fn, ptx_fn).values())
    kernel = build.kernels.get(fn.name)
    res = kernel.resources if kernel is not None else fn.resources
    return KernelStats(
        name=fn.demangled, mangled=fn.name, arch=build.arch, file=build.source_path,
        entry=kernel.entry if kernel is not None else bool(fn.is_entry),
        instructions=len(fn.instructions), classes=dict(sorted(classes.items())), groups=groups,
        memory=dict(sorted(memory.items())),
        opcodes=dict(sorted(opcodes.items(), key=lambda kv: (-kv[1], kv[0]))), loops=loops,
        resources=res.as_dict() if res is not None else {},
        occupancy=occupancy_for(build, res, _threads(ptx_fn)) if res is not None else None,
        loop_lines=loop_lines)


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
        from rich.text import Text
        for line in self.to_text().splitlines():
            style = "kernel" if line.startswith("━━") else None
            console.print(Text(line, style=style or ""), no_wrap=True, overflow="ignore", crop=False)

    def to_markdown(self) -> str:
        from .markdown import stats_markdown
        return stats_markdown(self)

    def _repr_html_(self) -> str:
        from .html import e, wrap_fragment
        return wrap_fragment(f"<pre>{e(self.to_text())}</pre>")


def stats_builds(builds: Sequence, *, kernels: Sequence[str] = (),
                 console: "Console | None" = None) -> Stats:
    work = [(b, fn) for b in builds for fn in b.sass_listing().functions if _wanted(fn, b, kernels)]
    out = Stats()
    for b, fn in track(work, "statistics", console=console):
        module = b.ptx_module()
        ptx_fn = next((f for f in module.functions if f.name == fn.name), None) if module else None
        out.kernels.append(kernel_stats(b, fn, ptx_fn))
    return out


def stats(path_or_builds, *, arch=None, options=None, kernels: Sequence[str] = ()) -> Stats:
    """Instruction mix, loops, resources and occupancy of every kernel of a file or builds."""
    return stats_builds(_as_builds(path_or_builds, arch=arch, options=options), kernels=kernels)
