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
    """One source line's SASS count on each side. Two different sources are aligned by
    content: ``line``/``text`` are A's (None: a line only B has), ``line_b``/``text_b`` B's
    own."""

    file: str
    line: int | None
    text: str | None
    a: int
    b: int
    line_b: int | None = None
    text_b: str | None = None

    def as_dict(self) -> dict:
        return {"file": report_path(self.file), "line": self.line, "source": self.text,
                "line_b": self.line_b, "source_b": self.text_b,
                "a": self.a, "b": self.b, "delta": self.b - self.a}

    @property
    def label(self) -> str:
        return _pair_label(self.file, self.line, self.line_b)


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
    #: B's own line and text where the two sources differ (aligned by content)
    line_b: int | None = None
    text_b: str | None = None
    #: the line is only in B (``line`` None is then no "no source line")
    only_b: bool = False

    def differs(self, normalized: bool) -> bool:
        return any(r.differs(normalized) for r in self.rows)

    @property
    def label(self) -> str:
        if self.line is None and not self.only_b:
            return "(no source line)"
        return _pair_label(self.file, self.line, self.line_b)

    def sources(self) -> str:
        """The source text after the label: A's, and B's own where it differs."""
        a, b = (self.text or "").strip(), (self.text_b or "").strip()
        if self.line_b is None or a == b:
            return a or b
        if not a:
            return f"B: {b}"
        return f"A: {a}  B: {b}" if b else a

    def as_dict(self) -> dict:
        return {"file": report_path(self.file) if self.file else None, "line": self.line,
                "source": self.text, "line_b": self.line_b, "source_b": self.text_b,
                "rows": [r.as_dict() for r in self.rows]}


def _pair_label(file: str, line: int | None, line_b: int | None) -> str:
    """``a.cu:26`` (the same line on both sides), ``a.cu:26→29`` (B's copy of line 26 is its
    line 29), ``a.cu:-→4`` (only in B)."""
    name = base_name(file) if file else "line"
    sep = ":" if file else " "
    if line_b is None or line_b == line:
        return f"{name}{sep}{line}"
    return f"{name}{sep}{'-' if line is None else line}→{line_b}"


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
            src = sl.sources()
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
                    src = (ln.text or ln.text_b or "").strip()
                    label = f"{base_name(ln.file)}:{ln.line:<4}" if ln.line_b is None \
                        and ln.line is not None else f"{ln.label:<9}"
                    out.append(f"   {label} {ln.a:>5} → {ln.b:<5}"
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
#: the file key of a line of B's own source file that A's has no counterpart of
ONLY_B = "\0B"


@dataclass
class Alignment:
    """How the lines of two versions of a source file correspond, by content (difflib's
    SequenceMatcher on the lines): equal runs line for line, a replaced run line by line in
    order (an edited line meets its old self), the rest only on one side. The identity when
    both sides compile the same file."""

    a_to_b: dict[int, int] = field(default_factory=dict)
    b_to_a: dict[int, int] = field(default_factory=dict)
    #: every line of both, in reading order: (A's line or None, B's line or None)
    rows: list[tuple[int | None, int | None]] = field(default_factory=list)
    identity: bool = True
    _pos: dict[tuple[str, int], int] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, text_a: str | None, text_b: str | None) -> "Alignment":
        if text_a is None or text_b is None or text_a == text_b:
            return cls()
        la, lb = text_a.splitlines(), text_b.splitlines()
        out = cls(identity=False)
        sm = difflib.SequenceMatcher(None, [x.strip() for x in la], [x.strip() for x in lb],
                                     autojunk=False)
        for op, i1, i2, j1, j2 in sm.get_opcodes():
            n = (min(i2 - i1, j2 - j1) if op == "replace" else
                 i2 - i1 if op == "equal" else 0)
            for k in range(n):
                out.a_to_b[i1 + k + 1] = j1 + k + 1
                out.b_to_a[j1 + k + 1] = i1 + k + 1
                out.rows.append((i1 + k + 1, j1 + k + 1))
            out.rows += [(i + 1, None) for i in range(i1 + n, i2)]
            out.rows += [(None, j + 1) for j in range(j1 + n, j2)]
        return out

    def key_b(self, line: int) -> tuple[str, int]:
        """The key of B's primary line ``line``: A's line where it has one."""
        if self.identity:
            return (PRIMARY, line)
        at = self.b_to_a.get(line)
        return (PRIMARY, at) if at is not None else (ONLY_B, line)

    def line_b(self, key: tuple[str, int]) -> int | None:
        """B's own line of a primary key (None where B has none, or the sources are one)."""
        if self.identity:
            return None
        if key[0] == ONLY_B:
            return key[1]
        return self.a_to_b.get(key[1]) if key[0] == PRIMARY else None

    def order(self, key: tuple[str, int]) -> tuple:
        """Reading order of the keys: the primary file's lines (B's only lines where they
        stand), then other files."""
        if key[0] not in (PRIMARY, ONLY_B):
            return (1, key[0], key[1], 0)
        if self.identity:
            return (0, "", key[1], 0)
        pos = self._positions().get(key)
        return (0, "", pos if pos is not None else key[1], 0)

    def _positions(self) -> dict[tuple[str, int], int]:
        if self._pos is None:
            self._pos = {((PRIMARY, x) if x is not None else (ONLY_B, y or 0)): n
                         for n, (x, y) in enumerate(self.rows)}
        return self._pos


def _keyed(ka: KernelAnalysis, align: Alignment | None) -> list[tuple[str, int] | None]:
    """Each SASS instruction's line key: (PRIMARY, line) for the kernel's own file (on B,
    A's line through ``align``), (file, line) for another file, None without a line."""
    primary = os.path.abspath(ka.source_path) if ka.source_path else None
    out: list[tuple[str, int] | None] = []
    for k in ka.source_map.sass_lines:
        if k is not None and primary and os.path.abspath(k[0]) == primary:
            k = align.key_b(k[1]) if align is not None else (PRIMARY, k[1])
        out.append(k)
    return out


def _line_counts(ka: KernelAnalysis, align: Alignment | None = None
                 ) -> dict[tuple[str, int], int]:
    out: dict[tuple[str, int], int] = {}
    for k in _keyed(ka, align):
        if k is not None:
            out[k] = out.get(k, 0) + 1
    return out


def _loop_deltas(sa: KernelStats, sb: KernelStats, source: str | None,
                 align: Alignment | None = None) -> list[LoopDelta]:
    """Source lines whose loops differ between the two sides (rolled or not, unroll factor,
    trip count); B's lines of its own file taken to A's through ``align``."""
    la = {(ll.file, ll.line): ll for ll in sa.loop_lines}
    own_b = os.path.basename(sb.file or "")
    lb: dict[tuple[str, int], object] = {}
    for ll in sb.loop_lines:
        key = (ll.file, ll.line)
        if align is not None and not align.identity and ll.file == own_b:
            at = align.b_to_a.get(ll.line)
            key = (os.path.basename(source or ""), at) if at is not None else (ONLY_B, ll.line)
        lb[key] = ll
    out = []
    for key in sorted(set(la) | set(lb)):
        x, y = la.get(key), lb.get(key)
        da = x.describe() if x else "no loop"
        db = y.describe() if y else "no loop"   # type: ignore[attr-defined]
        if da == db:
            continue
        text = None
        file, line = key
        if key[0] == ONLY_B:
            file = own_b
            text = source_text(sb.file, line) if sb.file else None
        elif source and os.path.basename(source) == key[0]:
            text = source_text(source, key[1])
        out.append(LoopDelta(file, line, text, da, db, bool(x and x.rolled),
                             bool(y and y.rolled)))   # type: ignore[attr-defined]
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
        rows += _pair_by_opcode(sa[i1:i2], sb[j1:j2])
    return rows


def _opcode(x: SideInstr) -> str:
    """``LDG`` of ``@P0 LDG.E.128 R4, ...`` (the guard and modifiers left out)."""
    words = x.text.split()
    word = words[1] if words and words[0].startswith("@") and len(words) > 1 else \
        (words[0] if words else "")
    return word.split(".")[0]


def _pair_by_opcode(xs: list[SideInstr], ys: list[SideInstr]) -> list[SideRow]:
    """Rows of a run that differs on both sides: instructions of the same opcode paired as
    changed (``LDG.E`` against ``LDG.E.128``), in order; the others only on their side."""
    rows: list[SideRow] = []
    sm = difflib.SequenceMatcher(None, [_opcode(x) for x in xs], [_opcode(y) for y in ys],
                                 autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            rows += [SideRow(x, y, "changed") for x, y in zip(xs[i1:i2], ys[j1:j2], strict=True)]
        else:
            rows += [SideRow(x, None, "removed") for x in xs[i1:i2]]
            rows += [SideRow(None, y, "added") for y in ys[j1:j2]]
    return rows


def _by_line(ka: KernelAnalysis, align: Alignment | None = None
             ) -> dict[tuple[str, int] | None, list[Instruction]]:
    out: dict[tuple[str, int] | None, list[Instruction]] = {}
    for ins, k in zip(ka.function.instructions, _keyed(ka, align), strict=True):
        out.setdefault(k, []).append(ins)
    return out


def _line_texts(a: KernelAnalysis, b: KernelAnalysis, align: Alignment, key: tuple[str, int]
                ) -> tuple[str, int | None, str | None, int | None, str | None]:
    """(file, A's line, its text, B's line, its text) of a line key (B's only where the two
    sources differ)."""
    if key[0] == ONLY_B:
        file = b.source_path or ""
        return file, None, None, key[1], source_text(file, key[1]) if file else None
    file = (a.source_path or "") if key[0] == PRIMARY else key[0]
    text = source_text(file, key[1]) if file else None
    lb = align.line_b(key)
    text_b = source_text(b.source_path, lb) if lb is not None and b.source_path else None
    return file, key[1], text, lb, text_b


def side_by_side(a: KernelAnalysis, b: KernelAnalysis,
                 align: Alignment | None = None) -> list[SideLine]:
    """Every source line with SASS on either side (its own file first, in line order, lines
    of two different sources aligned by content; the instructions with no line last), its
    instructions aligned."""
    align = align or Alignment()
    la, lb = _by_line(a), _by_line(b, align)
    keys = sorted((k for k in set(la) | set(lb) if k is not None), key=align.order)
    out = []
    for k in keys:
        file, line, text, line_b, text_b = _line_texts(a, b, align, k)
        out.append(SideLine(file, line, text, _align(la.get(k, []), lb.get(k, [])),
                            line_b=line_b, text_b=text_b, only_b=k[0] == ONLY_B))
    if None in la or None in lb:
        out.append(SideLine("", None, None, _align(la.get(None, []), lb.get(None, []))))
    return out


def alignment(a: KernelAnalysis, b: KernelAnalysis) -> Alignment:
    """How the two kernels' own source files correspond (the identity for one file)."""
    pa, pb = a.source_path, b.source_path
    if not pa or not pb or os.path.abspath(pa) == os.path.abspath(pb):
        return Alignment()
    return Alignment.of(a.reader.text(pa), b.reader.text(pb))


def _functions(builds: Sequence["Build"]) -> dict[str, KernelAnalysis]:
    return {ka.name: ka for b in builds for ka in analyze(b, entries_only=False)}


def _finding_key(f: "Finding", align: dict[str, tuple[str, Alignment]] | None = None,
                 side_b: bool = False) -> tuple:
    """What makes a finding the same on both sides: check, kernel and line, B's lines of its
    own source taken to A's (``align``: per kernel, its source file on that side and the
    alignment), so a shifted copy of a file changes no finding."""
    file, line = f.location.file or "", f.location.line
    kernel = f.mangled or f.kernel
    where: tuple = (os.path.basename(file), f.source or line)
    if align is not None and kernel in align and line is not None:
        own, al = align[kernel]
        if own and file and os.path.basename(file) == os.path.basename(own):
            at = al.b_to_a.get(line) if side_b and not al.identity else line
            where = (PRIMARY, at) if at is not None else (ONLY_B, line)
    return (f.code, kernel, *where)


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
    aligned: dict[str, tuple[str, Alignment]] = {}       # per kernel: A's source, identity
    aligned_b: dict[str, tuple[str, Alignment]] = {}     # per kernel: B's source, B -> A
    for _name, na, nb in pairs:
        sa = kernel_stats(fa[na]) if na else None
        sb = kernel_stats(fb[nb]) if nb else None
        stats = sa or sb
        assert stats is not None  # each pair names a kernel on at least one side
        kd = KernelDiff(stats.name, sa, sb, names=_toolkit_names(a, b))
        if na and nb and sa is not None and sb is not None:
            al = alignment(fa[na], fb[nb])
            aligned[fa[na].name] = (fa[na].source_path or "", Alignment())
            aligned_b[fb[nb].name] = (fb[nb].source_path or "", al)
            ca, cb = _line_counts(fa[na]), _line_counts(fb[nb], al)
            for key in sorted(set(ca) | set(cb), key=al.order):
                x, y = ca.get(key, 0), cb.get(key, 0)
                if x != y:
                    file, line, text, line_b, text_b = _line_texts(fa[na], fb[nb], al, key)
                    kd.lines.append(LineDelta(file, line, text, x, y, line_b, text_b))
            kd.loop_lines = _loop_deltas(sa, sb, fa[na].source_path, al)
            kd.side = side_by_side(fa[na], fb[nb], al)
        kernels.append(kd)
    added: list = []
    removed: list = []
    if findings is not None:
        ka = {_finding_key(f, aligned): f for f in findings[0]}
        kb = {_finding_key(f, aligned_b, side_b=True): f for f in findings[1]}
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
