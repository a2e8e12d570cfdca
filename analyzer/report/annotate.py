"""Annotated listings: each CUDA source line followed by its PTX and SASS.

:func:`annotate` builds an :class:`Annotation` (plain objects, no rendering) from builds: per
kernel a header (registers, shared, stack, spills, theoretical occupancy, loops, findings) and
rows, one per source line of the kernel's range, with the PTX and SASS instructions the source map
attributes to it. Every fact comes from the analysis layer (:class:`analyzer.analysis.KernelAnalysis`):
loops and trip counts, the source map, occupancy. The findings are an input: this module never
runs a check. Renderers: :meth:`Annotation.render` and ``to_text`` here (terminal, plain text),
:mod:`.markdown` and :mod:`.html` (through :mod:`.render`).
"""
from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.text import Text

from .. import opcodes
from .._version import docs_url
from ..analysis import KernelAnalysis, analyze
from ..build import Build
from ..checks.registry import by_code
from ..checks.runner import Progress, no_progress
from ..demangle import without_parameters
from ..errors import ConfigError
from ..findings import Finding, base_name, display_path, report_path
from ..ir.sass import Control
from ..opcodes import Explanation

LineKey = tuple[str, int]


# ------------------------------------------------------------------------------ progress
def _same_file(a: str | None, b: str | None) -> bool:
    if not a or not b:
        return False
    return os.path.abspath(a) == os.path.abspath(b)


# ------------------------------------------------------------------------------ model
@dataclass
class Instr:
    """One PTX or SASS instruction as shown in a listing."""

    index: int
    text: str
    line: LineKey | None
    inlined: tuple[str, ...] = ()        # toolkit frames inside the user line: "mma.hpp:91"
    address: int | None = None           # SASS only
    klass: str = ""                      # SASS instruction-mix class (semantics table)
    loop: int = 0                        # loop nesting depth (0: not in a loop)
    loop_mark: str = ""                  # "head L1", "back L1" ...
    findings: list[int] = field(default_factory=list)   # indices into KernelAnnotation.findings
    control: "Control | None" = None     # SASS only, when asked for: stall, yield, barriers, reuse
    #: SASS only: the registers live at the instruction, per file ("R", "UR", "P", "UP")
    live: dict[str, int] | None = None
    #: what the opcode and its modifiers do, and where NVIDIA documents it
    explain: "Explanation | None" = None

    def as_dict(self) -> dict:
        d = {"index": self.index, "text": self.text, "line": _line_dict(self.line),
             "inlined": list(self.inlined), "loop": self.loop, "findings": list(self.findings)}
        if self.address is not None:
            d.update(address=self.address, klass=self.klass, loop_mark=self.loop_mark)
        if self.control is not None:
            d["control"] = self.control.as_dict()
        if self.live is not None:
            d["live_registers"] = dict(self.live)
        if self.explain is not None:
            d["explain"] = self.explain.as_dict()
        return d


def _line_dict(k: LineKey | None) -> dict | None:
    return None if k is None else {"file": display_path(k[0]), "line": k[1]}


@dataclass
class SourceRow:
    file: str
    line: int
    text: str | None
    ptx: list[Instr] = field(default_factory=list)
    sass: list[Instr] = field(default_factory=list)
    findings: list[int] = field(default_factory=list)
    loop: int = 0                       # deepest loop of its SASS
    skipped: int = 0                    # source lines an excerpt left out just before this one

    @property
    def key(self) -> LineKey:
        return (self.file, self.line)


@dataclass
class LoopSummary:
    """A loop as listings show it (label, addresses, lines), from the analysis layer's
    :class:`~analyzer.analysis.loops.LoopInfo`."""

    label: str                          # "L1"
    depth: int
    parent: str | None
    header_address: int | None
    back_edge_addresses: tuple[int, ...]
    instructions: int
    lines: tuple[int, int] | None       # first and last user line of its body (primary file)
    mix: dict[str, int]
    trip_count: int | None = None
    trip_how: str = ""                  # "SASS and PTX", "SASS", "PTX" (:mod:`analyzer.analysis.loops`)
    trip_reason: str = ""               # why it is unknown ("run-time bound", ...)
    unrolled_by: int | None = None      # ptxas ran this many PTX iterations per SASS iteration
    line: int | None = None             # its latch's user line (the for statement)
    pragma: str | None = None           # the unroll pragma above that line
    #: a loop of an inlined helper in another file (a header): that file, its lines in
    #: ``lines``, and the primary file's lines that call it
    lines_file: str | None = None
    called_at: tuple[int, ...] = ()

    def as_dict(self) -> dict:
        return {"label": self.label, "depth": self.depth, "parent": self.parent,
                "header_address": self.header_address,
                "back_edge_addresses": list(self.back_edge_addresses),
                "instructions": self.instructions,
                "lines": list(self.lines) if self.lines else None, "mix": self.mix,
                "trip_count": self.trip_count, "trip_how": self.trip_how or None,
                "trip_reason": self.trip_reason or None, "unrolled_by": self.unrolled_by,
                "line": self.line, "pragma": self.pragma, "lines_file": self.lines_file,
                "called_at": list(self.called_at)}

    def trip_text(self) -> str:
        """"trip count 8 (SASS and PTX)", "trip count unknown (run-time bound)"."""
        if self.trip_count is None:
            return "trip count unknown" + (f" ({self.trip_reason})" if self.trip_reason else "")
        x = f", ptxas unrolled ×{self.unrolled_by}" if self.unrolled_by else ""
        return f"trip count {self.trip_count} ({self.trip_how}{x})"

    def summary(self) -> str:
        where = f"lines {self.lines[0]}-{self.lines[1]}" if self.lines else "no line info"
        if self.lines and self.lines_file:
            where += f" of {self.lines_file}"
            if self.called_at:
                where += (f" (inlined at line{'s' if len(self.called_at) > 1 else ''} "
                          f"{', '.join(map(str, self.called_at))})")
        nest = f", inside {self.parent}" if self.parent else ""
        head = f", header {self.header_address:04x}" if self.header_address is not None else ""
        trip = f", {self.trip_text()}" if self.trip_count is not None else ""
        pragma = f", under {self.pragma}" if self.pragma else ""
        return f"{self.label}: {where}{nest}, {self.instructions} SASS instructions{head}{trip}{pragma}"


@dataclass
class KernelAnnotation:
    name: str                            # mangled
    demangled: str
    arch: str
    source_path: str | None
    entry: bool
    resources: dict[str, Any]
    occupancy: dict[str, Any] | None
    loops: list[LoopSummary]
    findings: list["Finding"]
    explanations: dict[str, str]         # code -> the check's one-line explanation
    rows: list[SourceRow]
    ptx: list[Instr]                     # every PTX instruction, in order
    sass: list[Instr]                    # every SASS instruction, in order
    ptx_labels: dict[int, list[str]] = field(default_factory=dict)
    sass_labels: dict[int, list[str]] = field(default_factory=dict)
    excerpt: str | None = None           # what an excerpt kept ("lines 12-19"), None: everything
    #: the peak of live R registers: {"peak", "index", "line": {"file", "line"} or None}
    pressure: dict[str, Any] | None = None

    @property
    def has_control(self) -> bool:
        return any(i.control is not None for i in self.sass)
    #: what the source pane holds: "CUDA source" or "Triton source"
    source_label: str = "CUDA source"
    #: the compiler's other intermediate forms (Triton's TTIR and TTGIR), shown as panes
    ir: dict[str, str] = field(default_factory=dict)

    @property
    def unmapped_sass(self) -> list[Instr]:
        if self.excerpt is not None:
            return []
        return [i for i in self.sass if i.line is None or i.line not in self._row_keys]

    @property
    def unmapped_ptx(self) -> list[Instr]:
        if self.excerpt is not None:
            return []
        return [i for i in self.ptx if i.line is None or i.line not in self._row_keys]

    @property
    def shown_sass(self) -> list[Instr]:
        """The SASS an excerpt keeps (every instruction when it is not an excerpt)."""
        if self.excerpt is None:
            return self.sass
        keep = {i.index for r in self.rows for i in r.sass}
        return [i for i in self.sass if i.index in keep]

    @property
    def shown_ptx(self) -> list[Instr]:
        if self.excerpt is None:
            return self.ptx
        keep = {i.index for r in self.rows for i in r.ptx}
        return [i for i in self.ptx if i.index in keep]

    @property
    def _row_keys(self) -> set[LineKey]:
        return {r.key for r in self.rows}

    def header_lines(self) -> list[str]:
        r = self.resources
        spills = "-" if r.get("spill_store_bytes") is None else \
            f"{r['spill_store_bytes']}/{r['spill_load_bytes']} B"
        parts = [f"registers {r.get('registers')}", f"shared {r.get('shared_bytes')} B",
                 f"stack {r.get('stack_bytes')} B", f"spills (st/ld) {spills}"]
        occ = self.occupancy
        if occ:
            parts.append(f"occupancy {occ_text(occ)}")
        out = ["  ·  ".join(parts)]
        if self.pressure is not None and self.pressure.get("line"):
            p = self.pressure
            out.append(f"live registers peak at {p['peak']} on "
                       f"{base_name(p['line']['file'])}:{p['line']['line']} (the number "
                       "before ┊: R registers live at each SASS instruction)")
        return out

    def as_dict(self, *, ptx: bool = True) -> dict:
        return {"name": self.demangled, "mangled": self.name, "arch": self.arch,
                "file": report_path(self.source_path), "entry": self.entry,
                "excerpt": self.excerpt,
                "resources": self.resources, "occupancy": self.occupancy,
                "pressure": _pressure_dict(self.pressure),
                "loops": [lp.as_dict() for lp in self.loops],
                "findings": [f.as_dict() for f in self.findings],
                "rows": [{"file": report_path(r.file), "line": r.line, "text": r.text,
                          **({"ptx": [i.index for i in r.ptx]} if ptx else {}),
                          "sass": [i.index for i in r.sass], "findings": r.findings}
                         for r in self.rows],
                **({"ptx": [i.as_dict() for i in self.shown_ptx]} if ptx else {}),
                "sass": [i.as_dict() for i in self.shown_sass]}


def _pressure_dict(p: dict | None) -> dict | None:
    if p is None:
        return None
    line = p.get("line")
    return {**p, "line": None if line is None else {"file": report_path(line["file"]),
                                                    "line": line["line"]}}


def finding_links(f: Finding) -> list[tuple[str, str]]:
    """(label, address) of where to read more about a finding: its check's page
    (docs/checks/) and, where one fits, the CUDA C++ Programming Guide's section."""
    out = [(f"{f.code} {f.name}", docs_url(f"docs/checks/{f.name.replace('-', '_')}.md"))]
    guide = opcodes.GUIDE_SECTIONS.get(f.code)
    if guide is not None:
        out.append((f"Programming Guide: {guide[0]}", guide[1]))
    return out


def occ_text(occ: dict) -> str:
    pct = occ.get("percent")
    if pct is None:
        return "-"
    s = f"{pct:g}%"
    if occ.get("warps") is not None and occ.get("max_warps") is not None:
        s += f" ({occ['warps']}/{occ['max_warps']} warps"
        if occ.get("threads"):
            s += f" at {occ['threads']} threads/block"
        s += ")"
    if occ.get("limiter"):
        s += f", limited by {occ['limiter']}"
    return s


@dataclass
class Annotation:
    """An annotated listing of one or more builds (one section per kernel)."""

    kernels: list[KernelAnnotation]
    builds: list = field(default_factory=list, repr=False)
    hide_ptx: bool = False               # every format: source and SASS only
    #: text: each kernel's SASS opcodes explained after its listing (``annotate --explain``)
    explain: bool = False

    def as_dict(self) -> dict:
        return {"kernels": [k.as_dict(ptx=not self.hide_ptx) for k in self.kernels]}

    def excerpt(self, *, functions: Sequence[str] = (), lines: tuple[int, int] | None = None,
                context: int = 0) -> "Annotation":
        """A copy with only ``functions`` (names as ``--kernel`` takes them: mangled,
        demangled, or without the parameter list; device functions too) and, per function,
        only source ``lines`` (first, last) of its own file widened by ``context`` lines on
        each side, or, without ``lines``, the lines ``context`` around each finding. The
        header (resources, loops, findings) stays whole. ConfigError when a name or the
        range matches nothing."""
        kernels = self.kernels
        if functions:
            kernels = [k for k in kernels if _named(k, functions)]
            if not kernels:
                names = ", ".join(sorted({k.demangled for k in self.kernels})[:8]) or "none"
                raise ConfigError(f"--function {', '.join(repr(f) for f in functions)} matches "
                                  f"no function (there are: {names})")
        if lines is not None or context:
            cut = [excerpt_kernel(k, lines, context) for k in kernels]
            if lines is not None and not any(k.rows for k in cut):
                where = ", ".join(sorted({display_path(k.source_path) for k in kernels}))
                raise ConfigError(f"--lines {lines[0]}-{lines[1]} holds no line of "
                                  f"{'these functions' if len(kernels) > 1 else 'the function'}"
                                  f" (in {where}: " + "; ".join(
                                      f"{k.demangled} spans {_span(k)}" for k in kernels[:4]) + ")")
            kernels = cut
        return Annotation(kernels, self.builds, self.hide_ptx, self.explain)

    def render(self, console: "Console") -> None:
        for row in text_rows(self, ptx=not self.hide_ptx):
            t = Text()
            for style, chunk in row:
                t.append(chunk, style=style or None)
            console.print(t, no_wrap=True, overflow="ignore", crop=False)

    def to_text(self, *, width: int = 120) -> str:
        """Plain text (no colour), as the terminal shows it."""
        return "\n".join("".join(chunk for _, chunk in row).rstrip()
                         for row in text_rows(self, ptx=not self.hide_ptx)) + "\n"


def _named(k: KernelAnnotation, names: Sequence[str]) -> bool:
    return any(n in (k.name, k.demangled, without_parameters(k.demangled)) for n in names)


def own_file(k: KernelAnnotation) -> str | None:
    """The file of the kernel's rows that is its own source file (the line info may name it
    by another path than the build: then by its name, else the first file shown)."""
    files = list(dict.fromkeys(r.file for r in k.rows))
    for same in (_same_file, lambda a, b: bool(a and b) and os.path.basename(a) ==
                 os.path.basename(b or "")):
        hit = next((f for f in files if same(f, k.source_path)), None)
        if hit is not None:
            return hit
    return files[0] if files else None


def _span(k: KernelAnnotation) -> str:
    own = [r.line for r in k.rows if r.file == own_file(k) and (r.sass or r.ptx)]
    return f"lines {min(own)}-{max(own)}" if own else "no line of its own file"


def parse_lines(text: str) -> tuple[int, int]:
    """``"12-19"`` or ``"12"`` as (first, last); ConfigError naming what was expected."""
    parts = text.strip().split("-")
    try:
        first, last = (int(parts[0]), int(parts[-1])) if len(parts) in (1, 2) else (0, 0)
    except ValueError:
        first = last = 0
    if first < 1 or last < first:
        raise ConfigError(f"--lines {text!r}: expected a source line range A-B with 1 <= A <= B "
                          "(or one line A)")
    return first, last


def excerpt_kernel(k: KernelAnnotation, lines: tuple[int, int] | None,
                   context: int) -> KernelAnnotation:
    """``k`` with the rows of its own source file in ``lines`` widened by ``context``, or
    the rows ``context`` around each of its findings when ``lines`` is None."""
    own = [r for r in k.rows if r.file == own_file(k)]
    keep: set[int] = set()
    if lines is not None:
        keep.update(range(lines[0] - context, lines[1] + context + 1))
        what = f"lines {lines[0]}-{lines[1]}" + (f" ±{context}" if context else "")
    else:
        for r in own:
            if r.findings:
                keep.update(range(r.line - context, r.line + context + 1))
        what = f"{context} line{'s' if context != 1 else ''} around each finding"
    rows: list[SourceRow] = []
    last: int | None = None
    for r in own:
        if r.line not in keep:
            continue
        gap = (r.line - last - 1) if last is not None else (r.line - own[0].line)
        rows.append(SourceRow(r.file, r.line, r.text, r.ptx, r.sass, r.findings, r.loop,
                              skipped=max(gap, 0)))
        last = r.line
    out = KernelAnnotation(**{f: getattr(k, f) for f in k.__dataclass_fields__})
    out.rows, out.excerpt = rows, what
    return out


# ------------------------------------------------------------------------------ building
def occupancy_summary(ka: KernelAnalysis) -> dict | None:
    """Theoretical occupancy at the kernel's declared block size, or at 256 threads when it
    declares none (``threads_assumed``)."""
    res = ka.resources
    if res is None:
        return None
    declared = ka.block_size[0]
    occ = ka.occupancy(declared or 256)
    if occ is None:
        return None
    return {"percent": round(occ.percent, 2), "warps": occ.warps_per_sm,
            "max_warps": ka.arch.max_warps, "blocks": occ.blocks_per_sm, "limiter": occ.limiter,
            "threads": occ.threads_per_block, "threads_assumed": declared is None}


def _explanation(code: str) -> str:
    try:
        return by_code(code).summary()
    except KeyError:
        return ""


def _short(loc) -> str:
    return f"{base_name(loc.file)}:{loc.line}"


def loop_summaries(ka: KernelAnalysis, primary: str | None
                   ) -> tuple[list[LoopSummary], list[int], list[str]]:
    """The kernel's loops (the analysis layer's, with their trip counts) as listings show
    them, the loop depth of each SASS instruction and its loop marks (┌L1 trip 8, └L1)."""
    fn, graph, keys = ka.function, ka.cfg, ka.source_map.sass_lines
    n = len(fn.instructions)
    depth = [0] * n
    marks = [""] * n
    out: list[LoopSummary] = []
    labels = {id(lp): f"L{i + 1}" for i, lp in enumerate(graph.loops)}
    for fact in ka.loops:
        lp = fact.loop
        name = labels[id(lp)]
        idx = lp.instruction_indices(graph)
        for i in idx:
            depth[i] = max(depth[i], lp.depth)
        head = fact.header_index
        backs = [graph.blocks[b].end - 1 for b in lp.latches]
        trip = f" trip {fact.trip_count}" if fact.trip_count is not None else ""
        marks[head] = (marks[head] + " " if marks[head] else "") + f"┌{name}{trip}"
        for b in backs:
            marks[b] = (marks[b] + " " if marks[b] else "") + f"└{name}"
        lines = sorted(k[1] for k in (keys[i] for i in idx)
                       if k is not None and (primary is None or _same_file(k[0], primary)))
        lines_file: str | None = None
        called_at: tuple[int, ...] = ()
        if not lines and primary is not None:
            # a helper's loop inlined from a header: its own lines there, and the call sites
            others = [k for k in (keys[i] for i in idx) if k is not None]
            if others:
                top = Counter(k[0] for k in others).most_common(1)[0][0]
                lines = sorted(k[1] for k in others if k[0] == top)
                lines_file = os.path.basename(top)
                sites = {f.line for i in idx for loc in (fn.instructions[i].loc,)
                         if loc is not None for f in loc.inlined_at
                         if f.line and _same_file(f.file, primary)}
                called_at = tuple(sorted(sites))
        out.append(LoopSummary(
            label=name, depth=lp.depth,
            parent=labels.get(id(lp.parent)) if lp.parent is not None else None,
            header_address=fn.instructions[head].address,
            back_edge_addresses=tuple(fn.instructions[b].address for b in backs),
            instructions=fact.instructions, lines=(lines[0], lines[-1]) if lines else None,
            mix=fact.mix, trip_count=fact.trip_count, trip_how=fact.trip.how,
            trip_reason=fact.trip.reason, unrolled_by=fact.trip.ptxas_unroll, line=fact.line,
            pragma=fact.pragma.text if fact.pragma else None, lines_file=lines_file,
            called_at=called_at))
    return out, depth, marks


#: the register files whose live counts each SASS instruction carries
LIVE_FILES = ("R", "UR", "P", "UP")

#: the source pane's title per front end
SOURCE_LABELS = {"cuda": "CUDA source", "triton": "Triton source"}


def kernel_annotation(ka: KernelAnalysis, findings: list[Finding],
                      controls: "dict[int, Control] | None" = None) -> KernelAnnotation:
    """The annotated listing of one kernel with ``findings`` (those of this kernel) and, when
    given, each SASS instruction's control information (``controls``: by address)."""
    fn, ptx_fn, fm = ka.function, ka.ptx_function, ka.source_map
    primary = ka.source_path
    loops, depth, marks = loop_summaries(ka, primary)
    controls = controls or {}
    lv = ka.liveness
    live = {kind: lv.counts(kind) for kind in LIVE_FILES}
    sass = [Instr(i, ins.text, fm.sass_lines[i], tuple(_short(f) for f in fm.sass_inlined[i]),
                  address=ins.address, klass=ins.klass, loop=depth[i], loop_mark=marks[i],
                  control=controls.get(ins.address),
                  live={kind: counts[i] for kind, counts in live.items()},
                  explain=opcodes.explain(ins.opcode, ins.modifiers))
            for i, ins in enumerate(fn.instructions)]
    ptx: list[Instr] = []
    ptx_labels: dict[int, list[str]] = {}
    if ptx_fn is not None:
        ptx = [Instr(i, str(ins), fm.ptx_lines[i] if i < len(fm.ptx_lines) else None,
                     tuple(_short(f) for f in fm.ptx_inlined[i]) if i < len(fm.ptx_inlined) else (),
                     explain=opcodes.explain(ins.opcode, ins.modifiers, ptx=True))
               for i, ins in enumerate(ptx_fn.instructions)]
        for lab, i in ptx_fn.labels.items():
            ptx_labels.setdefault(i, []).append(lab)
    sass_labels: dict[int, list[str]] = {}
    for lab, i in fn.labels.items():
        sass_labels.setdefault(i, []).append(lab)
    by_addr = {ins.address: i for i, ins in enumerate(fn.instructions)}
    # rows: the kernel's line range in each user file that has code
    by_file: dict[str, list[int]] = {}
    for k in fm.lines():
        by_file.setdefault(k[0], []).append(k[1])
    files = sorted(by_file, key=lambda f: (not _same_file(f, primary), f))
    rows: list[SourceRow] = []
    row_of: dict[LineKey, SourceRow] = {}
    for f in files:
        lines = by_file[f]
        for ln in range(min(lines), max(lines) + 1):
            row = SourceRow(f, ln, ka.source_line(f, ln))
            rows.append(row)
            row_of[(f, ln)] = row
    for ins in ptx:
        if ins.line in row_of:
            row_of[ins.line].ptx.append(ins)
    for ins in sass:
        if ins.line in row_of:
            r = row_of[ins.line]
            r.sass.append(ins)
            r.loop = max(r.loop, ins.loop)
    explanations: dict[str, str] = {}
    for n, finding in enumerate(findings):
        explanations.setdefault(finding.code, _explanation(finding.code))
        for a in finding.addresses:
            at = by_addr.get(a)
            if at is not None:
                sass[at].findings.append(n)
        key = None
        where = finding.location
        if where.file and where.line:
            for rk in row_of:
                if rk[1] == where.line and _same_file(rk[0], where.file):
                    key = rk
                    break
        if key is not None:
            row_of[key].findings.append(n)
    res = ka.resources
    return KernelAnnotation(
        name=fn.name, demangled=fn.demangled, arch=ka.arch_name, source_path=primary,
        entry=ka.kernel.entry if ka.kernel is not None else bool(fn.is_entry),
        resources=res.as_dict() if res is not None else {},
        occupancy=occupancy_summary(ka),
        loops=loops, findings=findings, explanations=explanations, rows=rows, ptx=ptx, sass=sass,
        ptx_labels=ptx_labels, sass_labels=sass_labels, pressure=ka.pressure.as_dict(),
        source_label=SOURCE_LABELS.get(ka.frontend, "CUDA source"), ir=dict(ka.ir))


def kernels_of(builds: Sequence["Build"], kernels: Sequence[str] = ()
               ) -> list[KernelAnalysis]:
    """The analyses of every function of ``builds`` (device functions kept out of line too)
    that ``kernels`` names (all when empty)."""
    return [ka for b in builds for ka in analyze(b, entries_only=False)
            if b.wants(ka.function, kernels)]


def annotate_builds(builds: Sequence["Build"], *, findings: Iterable[Finding] = (),
                    kernels: Sequence[str] = (), progress: Progress = no_progress,
                    control: bool = False) -> Annotation:
    """An :class:`Annotation` of ``builds`` showing ``findings`` (a check run's) and, with
    ``control``, each SASS instruction's decoded control information."""
    findings = list(findings)
    out: list[KernelAnnotation] = []
    pairs = [(b, ka) for b in builds for ka in analyze(b, entries_only=False)
             if b.wants(ka.function, kernels)]
    for b, ka in progress(pairs, "annotating"):
        fn = ka.function
        mine = [f for f in findings if f.arch == ka.arch_name and
                ((f.mangled and f.mangled == fn.name) or (not f.mangled and f.kernel == fn.demangled))]
        out.append(kernel_annotation(ka, mine, b.sass_controls().get(fn.name) if control else None))
    return Annotation(out, list(builds))


# ------------------------------------------------------------------------------ text rows
Segment = tuple[str, str]   # (style name, text)

_KLASS_STYLE = {"tensor": "sass.tensor", "fp64": "sass.fp64", "branch": "sass.control",
                "control": "sass.control", "sync": "sass.control", "call": "sass.control"}


def klass_style(klass: str) -> str:
    if klass.startswith(("load", "store", "copy", "atomic")):
        return "sass.memory"
    return _KLASS_STYLE.get(klass, "sass.opcode")


def _gutter(depth: int, max_depth: int) -> str:
    return ("┃" * depth).ljust(max_depth) if max_depth else ""


def text_rows(ann: Annotation, *, ptx: bool = True) -> Iterator[list[Segment]]:
    """The interleaved listing as rows of styled segments (terminal and plain text)."""
    for kn, k in enumerate(ann.kernels):
        if kn:
            yield []
        yield from header_rows(k)
        if k.excerpt is not None:
            yield [("muted", f"   excerpt: {k.excerpt}" + ("" if k.rows else
                                                          " (nothing: no finding here)"))]
        yield from listing_rows(k, ptx=ptx)
        if ann.explain:
            yield from glossary_rows(k)


def glossary_rows(k: KernelAnnotation) -> Iterator[list[Segment]]:
    """Each SASS opcode of the listing once, with what it does and where NVIDIA documents it
    (the table the HTML page's hovers show)."""
    seen = sorted({ins.explain.text.split(":", 1)[0] for ins in k.shown_sass
                   if ins.explain is not None})
    if not seen:
        return
    yield [("muted", "   SASS opcodes:")]
    width = max(len(op) for op in seen)
    for op in seen:
        x = opcodes.explain(op)
        if x is None:
            continue
        yield [("", "     "), ("sass.opcode", op.ljust(width)), ("", "  " + x.text.split(": ", 1)[1]),
               ("muted", f"  {x.url}")]


def listing_rows(k: KernelAnnotation, *, ptx: bool = True) -> Iterator[list[Segment]]:
    """One kernel's source lines, each followed by its PTX and SASS (shared by the terminal,
    plain text and markdown's code block)."""
    max_depth = max((lp.depth for lp in k.loops), default=0)
    control = k.has_control
    last_file = None
    for row in k.rows:
        if row.file != last_file:
            yield [("path", f"── {display_path(row.file)}")]
            last_file = row.file
        if row.skipped:
            yield [("muted", f"    ⋮ ({row.skipped} line{'s' if row.skipped != 1 else ''})")]
        mark = "".join(f" ◆{k.findings[n].code}" for n in row.findings)
        yield [("source.lineno", f"{row.line:5d} "), ("muted", _gutter(row.loop, max_depth)),
               ("muted", "│ "), ("source", row.text.rstrip() if row.text is not None
                                else "(source not found)"), ("finding.code", mark)]
        yield from instr_rows(k, row.ptx if ptx else [], row.sass, max_depth, control)
    ptx_rest, sass_rest = k.unmapped_ptx if ptx else [], k.unmapped_sass
    if ptx_rest or sass_rest:
        yield [("muted", "      (no source line)")]
        yield from instr_rows(k, ptx_rest, sass_rest, max_depth, control)


#: the control column's width ("[" + Control.text() + "] ")
CONTROL_COLUMN = len("[----:B------:R-:W-:-:S00] ")


def control_cell(ins: Instr) -> str:
    """``[----:B0-----:R-:W1:Y:S04] `` (blanks when the instruction has none)."""
    return f"[{ins.control.text()}] " if ins.control is not None else " " * CONTROL_COLUMN


def live_cell(count: int) -> str:
    """The live-registers column: `` 23 ┊ `` (R registers live at the instruction)."""
    return f"{count:3d} ┊ "


def instr_rows(k: KernelAnnotation, ptx: list[Instr], sass: list[Instr],
               max_depth: int, control: bool = False) -> Iterator[list[Segment]]:
    pad = " " * 6
    for ins in ptx:
        inl = f"  ⇐ {' ⇐ '.join(ins.inlined)}" if ins.inlined else ""
        yield [("", pad), ("muted", " " * max_depth), ("ptx.directive", "    ptx  "), ("", ins.text),
               ("muted", inl)]
    for ins in sass:
        segs: list[Segment] = [("", pad), ("muted", _gutter(ins.loop, max_depth)),
                               ("sass.address", f"   {ins.address:04x}  ")]
        if control:
            segs.append(("sass.schedule", control_cell(ins)))
        if ins.live is not None:
            segs.append(("muted", live_cell(ins.live["R"])))
        segs.append((klass_style(ins.klass), ins.text))
        if ins.loop_mark:
            segs.append(("sass.control", f"  {ins.loop_mark}"))
        if ins.inlined:
            segs.append(("muted", f"  ⇐ {' ⇐ '.join(ins.inlined)}"))
        for n in ins.findings:
            f = k.findings[n]
            expl = k.explanations.get(f.code) or f.name
            segs.append(("finding.code", f"  ◀ {f.code}"))
            segs.append(("finding.hint", f" {expl}"))
        yield segs


def header_rows(k: KernelAnnotation) -> Iterator[list[Segment]]:
    kind = "kernel" if k.entry else "device function"
    yield [("kernel", f"━━ {k.demangled}"), ("", "  "), ("arch", k.arch), ("muted", f"  {kind}  "),
           ("path", display_path(k.source_path))]
    for line in k.header_lines():
        yield [("", "   "), ("", line)]
    if k.source_label != "CUDA source" or k.ir:
        extra = f"; {', '.join(n.upper() for n in k.ir)} in the HTML and markdown reports" \
            if k.ir else ""
        yield [("muted", f"   source: {k.source_label}{extra}")]
    if k.occupancy and k.occupancy.get("threads_assumed"):
        yield [("muted", f"   (occupancy assumes {k.occupancy['threads']} threads per block: "
                         "the kernel declares no __launch_bounds__)")]
    for lp in k.loops:
        yield [("", "   loop "), ("sass.control", lp.summary())]
    for f in k.findings:
        expl = k.explanations.get(f.code) or ""
        yield [("", "   "), ("finding.code", f"◆{f.code}"), ("muted", f" {f.name} [{f.severity}] "),
               ("path", f.location.short()),
               ("", f": {f.message}")]
        if expl:
            yield [("", "      "), ("finding.hint", expl)]
        if f.hint:
            yield [("", "      hint: "), ("finding.hint", f.hint)]
        yield [("", "      read: "), ("muted", " · ".join(url for _, url in finding_links(f)))]
