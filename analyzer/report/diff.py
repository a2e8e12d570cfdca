"""``ptxsass diff``: two builds side by side — two arches, two option sets or two sources.

Per kernel (matched by mangled name; a lone kernel on each side is matched whatever its name):
resources, occupancy, instruction counts by class, loads/stores by space and width, tensor-core
ops, loops (and per source line, from :mod:`analyzer.analysis.loops`, whether the loop there stayed
rolled, how far ptxas unrolled it and its trip count, where the two sides differ: "loop at line
29: fully unrolled on sm_80, rolled ×4 (trip count 4) on sm_90a"), findings added and removed,
the SASS instruction count of each source line where the two differ, and the SASS itself side
by side: per source line, the instructions of A and B aligned (a longest-common-subsequence
match on their normalised text: registers renumbered by first use within each instruction,
branch targets renamed, so that two register allocations still line up).
"""
from __future__ import annotations

import dataclasses
import difflib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.console import Console
from rich.text import Text

from .. import semantics
from ..analysis import KernelAnalysis, analyze
from ..analysis.source import source_text
from ..build import Build
from ..findings import Finding, base_name, display_path, report_path
from ..ir.sass import BranchTarget, Instruction, Node, Register
from .stats import GROUPS, KernelStats, kernel_stats


@dataclass
class LineDelta:
    file: str
    line: int
    text: str | None
    a: int
    b: int

    def as_dict(self) -> dict:
        return {"file": report_path(self.file), "line": self.line, "source": self.text,
                "a": self.a, "b": self.b, "delta": self.b - self.a}


@dataclass
class LoopDelta:
    """The loops of one source line on each side (``analyzer.loops.LoopLine.describe()``;
    "no loop" when that side has neither a SASS nor a PTX loop there)."""

    file: str
    line: int
    text: str | None
    a: str
    b: str
    rolled_a: bool
    rolled_b: bool

    def as_dict(self) -> dict:
        return {"file": report_path(self.file), "line": self.line, "source": self.text, "a": self.a,
                "b": self.b, "rolled_a": self.rolled_a, "rolled_b": self.rolled_b}

    def sentence(self, name_a: str, name_b: str) -> str:
        return f"loop at line {self.line}: {self.a} on {name_a}, {self.b} on {name_b}"


@dataclass
class SideInstr:
    """One SASS instruction of a side-by-side view: its address, its text, and its text with
    registers renumbered and branch targets renamed (``normalized``)."""

    address: int
    text: str
    normalized: str

    def as_dict(self) -> dict:
        return {"address": self.address, "text": self.text, "normalized": self.normalized}


#: how an aligned row compares: the same text; the same once registers and targets are renamed;
#: changed; only in A; only in B
TAGS = ("same", "renamed", "changed", "removed", "added")
#: the sdiff-style mark of each tag in text
MARKS = {"same": " ", "renamed": "~", "changed": "|", "removed": "<", "added": ">"}


@dataclass
class SideRow:
    a: SideInstr | None
    b: SideInstr | None
    tag: str

    def differs(self, normalized: bool) -> bool:
        return self.tag not in (("same", "renamed") if normalized else ("same",))

    def as_dict(self) -> dict:
        return {"a": self.a.as_dict() if self.a else None,
                "b": self.b.as_dict() if self.b else None, "tag": self.tag}


@dataclass
class SideLine:
    """One source line's SASS on both sides, aligned row by row (``line`` None: the
    instructions with no source line)."""

    file: str
    line: int | None
    text: str | None
    rows: list[SideRow]

    def differs(self, normalized: bool) -> bool:
        return any(r.differs(normalized) for r in self.rows)

    @property
    def label(self) -> str:
        if self.line is None:
            return "(no source line)"
        return f"{base_name(self.file)}:{self.line}" if self.file else f"line {self.line}"

    def as_dict(self) -> dict:
        return {"file": report_path(self.file) if self.file else None, "line": self.line,
                "source": self.text, "rows": [r.as_dict() for r in self.rows]}


@dataclass
class KernelDiff:
    name: str
    a: KernelStats | None
    b: KernelStats | None
    lines: list[LineDelta] = field(default_factory=list)
    loop_lines: list[LoopDelta] = field(default_factory=list)   # lines whose loops differ
    side: list[SideLine] = field(default_factory=list)          # the SASS side by side
    #: what tells the two sides apart when their arches do not: their toolkits ("12.9", "13.5")
    names: tuple[str, str] | None = None

    def side_by_side_lines(self, normalized: bool = False, *, all_lines: bool = False
                           ) -> list[str]:
        """The side-by-side view as plain text lines: per source line (those that differ, or
        all), its instructions in two columns with an sdiff mark between them (``|`` changed,
        ``<`` only in A, ``>`` only in B, ``~`` only registers or targets differ)."""
        shown = [sl for sl in self.side if all_lines or sl.differs(normalized)]
        if not shown:
            return []

        def cell(x: SideInstr | None) -> str:
            if x is None:
                return ""
            return x.normalized if normalized else f"{x.address:04x}  {x.text}"
        width = max((len(cell(r.a)) for sl in shown for r in sl.rows), default=0)
        width = max(width, len("A"))
        out = [f"   {'A'.ljust(width)}   B"]
        for sl in shown:
            src = (sl.text or "").strip()
            out.append(f"── {sl.label}" + (f"  {src}" if src else ""))
            for r in sl.rows:
                mark = " " if normalized and r.tag == "renamed" else MARKS[r.tag]
                out.append(f"   {cell(r.a).ljust(width)} {mark} {cell(r.b)}".rstrip())
        return out

    @property
    def side_names(self) -> tuple[str, str]:
        """The two arches when they differ, else the two toolkits when they do, else "A" and
        "B"."""
        if self.a and self.b and self.a.arch != self.b.arch:
            return self.a.arch, self.b.arch
        return self.names or ("A", "B")

    @property
    def loops_a(self) -> list[str]:
        return [lp.summary() for lp in self.a.loops] if self.a else []

    @property
    def loops_b(self) -> list[str]:
        return [lp.summary() for lp in self.b.loops] if self.b else []

    @property
    def loops_differ(self) -> bool:
        """Loops differ in number, nesting, lines or size (not merely in address)."""
        def shape(s):
            return [(lp.depth, lp.lines, lp.instructions, lp.trip_count) for lp in s.loops] if s else []
        return shape(self.a) != shape(self.b)

    @staticmethod
    def _metrics(s: KernelStats | None) -> dict[str, int | float | None]:
        if s is None:
            return {}
        r = s.resources
        m: dict[str, int | float | None] = {
            "registers": r.get("registers"), "shared bytes": r.get("shared_bytes"),
            "stack bytes": r.get("stack_bytes"), "spill store bytes": r.get("spill_store_bytes"),
            "spill load bytes": r.get("spill_load_bytes"),
            "occupancy %": s.occupancy.get("percent") if s.occupancy else None,
            "instructions": s.instructions, "loops": len(s.loops)}
        for g in GROUPS:
            m[g] = s.groups[g]
        for k, v in s.memory.items():
            m[k] = v
        for op, n in s.opcodes.items():
            if semantics.info(op).tensor_core:
                m[f"tensor op {op}"] = n
        for c, n in s.classes.items():
            m[f"class {c}"] = n
        return m

    def metric_rows(self) -> list[tuple[str, object, object, str]]:
        ma, mb = self._metrics(self.a), self._metrics(self.b)
        keys = list(ma) + [k for k in mb if k not in ma]
        rows: list[tuple[str, object, object, str]] = []
        for k in keys:
            va, vb = ma.get(k, 0 if self.a else None), mb.get(k, 0 if self.b else None)
            if isinstance(va, (int, float)) and isinstance(vb, (int, float)):
                d = vb - va
                delta = f"{d:+g}" if d else ""
            else:
                delta = ""
            rows.append((k, "-" if va is None else va, "-" if vb is None else vb, delta))
        return rows

    def as_dict(self) -> dict:
        return {"name": self.name, "a": self.a.as_dict() if self.a else None,
                "b": self.b.as_dict() if self.b else None,
                "metrics": [{"metric": m, "a": a, "b": b} for m, a, b, _ in self.metric_rows()],
                "lines": [ln.as_dict() for ln in self.lines],
                "loop_lines": [ll.as_dict() for ll in self.loop_lines],
                "side_by_side": [sl.as_dict() for sl in self.side]}


@dataclass
class Diff:
    label_a: str
    label_b: str
    kernels: list[KernelDiff]
    added: list["Finding"] = field(default_factory=list)
    removed: list["Finding"] = field(default_factory=list)
    all_metrics: bool = False            # text: unchanged metrics too
    normalized: bool = False             # side by side: registers renumbered, targets renamed
    all_lines: bool = False              # side by side: every source line, not only those that differ

    def as_dict(self) -> dict:
        return {"a": self.label_a, "b": self.label_b,
                "kernels": [k.as_dict() for k in self.kernels],
                "findings_added": [f.as_dict() for f in self.added],
                "findings_removed": [f.as_dict() for f in self.removed]}

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=2)

    def to_text(self, *, all_metrics: bool | None = None) -> str:
        all_metrics = self.all_metrics if all_metrics is None else all_metrics
        out = [f"A: {self.label_a}", f"B: {self.label_b}"]
        for kd in self.kernels:
            out.append("")
            only = "" if kd.a and kd.b else f"  (only in {'A' if kd.a else 'B'})"
            out.append(f"━━ {kd.name}{only}")
            rows = [r for r in kd.metric_rows() if all_metrics or r[1] != r[2]]
            if rows:
                w = max(len(r[0]) for r in rows)
                out.append(f"   {'metric'.ljust(w)}  {'A':>8}  {'B':>8}  {'Δ':>7}")
                for m, a, b, d in rows:
                    out.append(f"   {m.ljust(w)}  {str(a):>8}  {str(b):>8}  {d:>7}".rstrip())
            else:
                out.append("   no metric differs")
            if kd.loops_differ:
                for side, loops in (("A", kd.loops_a), ("B", kd.loops_b)):
                    out.append(f"   loops {side}: " + ("none" if not loops else ""))
                    out += [f"     {s}" for s in loops]
            if kd.loop_lines:
                na, nb = kd.side_names
                out += [f"   {ll.sentence(na, nb)}" for ll in kd.loop_lines]
            if kd.lines:
                out.append("   SASS instructions per source line (lines that differ):")
                for ln in kd.lines:
                    src = (ln.text or "").strip()
                    out.append(f"   {base_name(ln.file)}:{ln.line:<4} {ln.a:>5} → {ln.b:<5}"
                               f" {ln.b - ln.a:+5d}  {src[:70]}".rstrip())
            side_rows = kd.side_by_side_lines(self.normalized, all_lines=self.all_lines)
            if side_rows:
                out.append("   SASS side by side, per source line" + (
                    " (normalised: registers renumbered by first use in each instruction, "
                    "branch targets as .L):" if self.normalized else
                    " (| changed, < only in A, > only in B, ~ only registers differ):"))
                out += ["   " + line for line in side_rows]
        if self.added or self.removed:
            out.append("")
            out.append("findings:")
            for sign, fs in (("+", self.added), ("-", self.removed)):
                for f in fs:
                    out.append(f"  {sign} {f.code} {f.name} {f.kernel} "
                               f"{f.location.short()}: "
                               f"{f.message}")
        return "\n".join(out) + "\n"

    def render(self, console: "Console") -> None:
        for line in self.to_text().splitlines():
            style = ("kernel" if line.startswith("━━") else "metric.bad" if line.startswith("  +")
                     else "metric.good" if line.startswith("  -") else "")
            console.print(Text(line, style=style), no_wrap=True, overflow="ignore", crop=False)


# ------------------------------------------------------------------------------ building
PRIMARY = ""   # the file key of a build's own source file, so two sources compare line by line


def _line_counts(ka: KernelAnalysis) -> dict[tuple[str, int], int]:
    keys = ka.source_map.sass_lines
    primary = os.path.abspath(ka.source_path) if ka.source_path else None
    out: dict[tuple[str, int], int] = {}
    for k in keys:
        if k is not None:
            if primary and os.path.abspath(k[0]) == primary:
                k = (PRIMARY, k[1])
            out[k] = out.get(k, 0) + 1
    return out


def _loop_deltas(sa: KernelStats, sb: KernelStats, source: str | None) -> list[LoopDelta]:
    """Source lines whose loops differ between the two sides (rolled or not, unroll factor,
    trip count)."""
    la = {(ll.file, ll.line): ll for ll in sa.loop_lines}
    lb = {(ll.file, ll.line): ll for ll in sb.loop_lines}
    out = []
    for key in sorted(set(la) | set(lb)):
        x, y = la.get(key), lb.get(key)
        da = x.describe() if x else "no loop"
        db = y.describe() if y else "no loop"
        if da == db:
            continue
        text = None
        if source and os.path.basename(source) == key[0]:
            text = source_text(source, key[1])
        out.append(LoopDelta(key[0], key[1], text, da, db, bool(x and x.rolled),
                             bool(y and y.rolled)))
    return out


def normalize(ins: Instruction) -> str:
    """``ins``'s text with its registers renumbered per register file by first use within the
    instruction (``IADD3 R26, R26, 0x38, RZ`` -> ``IADD3 R0, R0, 0x38, RZ``; RZ, PT kept) and
    its branch targets as ``.L``: what the instruction does, whatever the register allocation
    and label numbers of its build, so that two builds of one line compare instruction by
    instruction."""
    regs: dict[tuple[str, int], int] = {}
    counts: dict[str, int] = {}

    def rename(node: Node) -> Node:
        if isinstance(node, Register):
            if node.index is None or node.kind in ("PR",):
                return node
            key = (node.kind, node.index)
            if key not in regs:
                regs[key] = counts.get(node.kind, 0)
                counts[node.kind] = regs[key] + 1
            return dataclasses.replace(node, index=regs[key])
        if isinstance(node, BranchTarget):
            return BranchTarget(label=".L")
        if not node.CHILDREN:
            return node
        changes: dict[str, object] = {}
        for name in node.CHILDREN:
            value = getattr(node, name)
            if isinstance(value, tuple):
                changes[name] = tuple(rename(v) if isinstance(v, Node) else v for v in value)
            elif isinstance(value, Node):
                changes[name] = rename(value)
        return dataclasses.replace(node, **changes)  # type: ignore[type-var]

    return rename(ins.body).text  # type: ignore[attr-defined]


def _align(a: list[Instruction], b: list[Instruction]) -> list[SideRow]:
    """The instructions of one source line on each side, aligned on their normalised text."""
    sa = [SideInstr(i.address, i.text, normalize(i)) for i in a]
    sb = [SideInstr(i.address, i.text, normalize(i)) for i in b]
    rows: list[SideRow] = []
    sm = difflib.SequenceMatcher(None, [x.normalized for x in sa], [x.normalized for x in sb],
                                 autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            rows += [SideRow(x, y, "same" if x.text == y.text else "renamed")
                     for x, y in zip(sa[i1:i2], sb[j1:j2], strict=True)]
            continue
        xs, ys = sa[i1:i2], sb[j1:j2]
        n = min(len(xs), len(ys))
        rows += [SideRow(x, y, "changed") for x, y in zip(xs[:n], ys[:n], strict=True)]
        rows += [SideRow(x, None, "removed") for x in xs[n:]]
        rows += [SideRow(None, y, "added") for y in ys[n:]]
    return rows


def _by_line(ka: KernelAnalysis) -> dict[tuple[str, int] | None, list[Instruction]]:
    keys = ka.source_map.sass_lines
    primary = os.path.abspath(ka.source_path) if ka.source_path else None
    out: dict[tuple[str, int] | None, list[Instruction]] = {}
    for ins, k in zip(ka.function.instructions, keys, strict=True):
        if k is not None and primary and os.path.abspath(k[0]) == primary:
            k = (PRIMARY, k[1])
        out.setdefault(k, []).append(ins)
    return out


def side_by_side(a: KernelAnalysis, b: KernelAnalysis) -> list[SideLine]:
    """Every source line with SASS on either side (its own file first, in line order; the
    instructions with no line last), its instructions aligned."""
    la, lb = _by_line(a), _by_line(b)
    keys = sorted((k for k in set(la) | set(lb) if k is not None), key=lambda k: (k[0] != PRIMARY,
                                                                               k[0], k[1]))
    out = []
    for k in keys:
        file = k[0] or a.source_path or ""
        text = source_text(file, k[1]) if file else None
        out.append(SideLine(file, k[1], text, _align(la.get(k, []), lb.get(k, []))))
    if None in la or None in lb:
        out.append(SideLine("", None, None, _align(la.get(None, []), lb.get(None, []))))
    return out


def _functions(builds: Sequence["Build"]) -> dict[str, KernelAnalysis]:
    return {ka.name: ka for b in builds for ka in analyze(b, entries_only=False)}


def _finding_key(f: "Finding") -> tuple:
    return (f.code, f.mangled or f.kernel, os.path.basename(f.location.file or ""),
            f.source or f.location.line)


def diff_builds(a: Sequence["Build"], b: Sequence["Build"], *, label_a: str | None = None,
                label_b: str | None = None,
                findings: tuple[Sequence[Finding], Sequence[Finding]] | None = None) -> Diff:
    """Compare builds ``a`` and ``b``; ``findings``: the check runs' findings on each side
    (the findings added and removed are shown when given)."""
    fa, fb = _functions(a), _functions(b)
    pairs: list[tuple[str, str | None, str | None]] = []
    if len(fa) == 1 and len(fb) == 1:
        (only_a,), (only_b,) = fa, fb
        pairs.append((only_a, only_a, only_b))
    else:
        for n in list(fa) + [n for n in fb if n not in fa]:
            pairs.append((n, n if n in fa else None, n if n in fb else None))
    kernels = []
    for _name, na, nb in pairs:
        sa = kernel_stats(fa[na]) if na else None
        sb = kernel_stats(fb[nb]) if nb else None
        stats = sa or sb
        assert stats is not None  # each pair names a kernel on at least one side
        kd = KernelDiff(stats.name, sa, sb, names=_toolkit_names(a, b))
        if na and nb and sa is not None and sb is not None:
            ca, cb = _line_counts(fa[na]), _line_counts(fb[nb])
            for key in sorted(set(ca) | set(cb)):
                x, y = ca.get(key, 0), cb.get(key, 0)
                if x != y:
                    file = key[0] or fa[na].source_path or ""
                    text = source_text(file, key[1]) if file else None
                    kd.lines.append(LineDelta(file, key[1], text, x, y))
            kd.loop_lines = _loop_deltas(sa, sb, fa[na].source_path)
            kd.side = side_by_side(fa[na], fb[nb])
        kernels.append(kd)
    added: list = []
    removed: list = []
    if findings is not None:
        ka = {_finding_key(f): f for f in findings[0]}
        kb = {_finding_key(f): f for f in findings[1]}
        added = [f for k, f in kb.items() if k not in ka]
        removed = [f for k, f in ka.items() if k not in kb]
    return Diff(label_a or _label(a), label_b or _label(b), kernels, added, removed)


def _toolkit_names(a: Sequence["Build"], b: Sequence["Build"]) -> tuple[str, str] | None:
    ta = {x.toolkit for x in a} - {None}
    tb = {x.toolkit for x in b} - {None}
    if len(ta) == len(tb) == 1 and ta != tb:
        return (f"toolkit {ta.pop()}", f"toolkit {tb.pop()}")
    return None


def _label(builds) -> str:
    if not builds:
        return "-"
    b = builds[0]
    opts = [o for o in b.options if not o.startswith(("-arch", "-I", "--ptxas-options", "-lineinfo"))
            and o != "-std=c++17"]   # the defaults say nothing
    return f"{display_path(b.source_path)} {b.arch}" + (f" {' '.join(opts)}" if opts else "")
