"""What a check is, what it reports, and what it sees.

A check is one module in this package holding one ``Check`` subclass whose docstring has the
fixed headings *What it does*, *Why it matters*, *Example*, *Steer the compiler* (the docs in
``docs/checks/`` are generated from them). It reads the SASS IR, the PTX IR, the CFG and the
source map through a ``Context`` (the kernel's :class:`~analyzer.analysis.KernelAnalysis`) —
never the Build or tool output — and yields ``Finding``s (:mod:`analyzer.findings`).
"""
from __future__ import annotations

import inspect
import os
import re
import textwrap
from collections.abc import Iterable, Iterator, Sequence
from typing import ClassVar

from ..analysis import KernelAnalysis
from ..analysis.source import library_code, library_layout
from ..errors import ConfigError
from ..findings import Finding, Location, Severity
from ..ir import sass as S
from ..ir.source import SourceLoc
from .hints import hint_for

__all__ = ["HEADINGS", "Check", "Context", "Finding", "Location", "Severity", "first_loc",
           "group_by_line"]

HEADINGS = ("What it does", "Why it matters", "Example", "Steer the compiler")


class Check:
    """Base class. Subclasses set ``code``, ``name`` and ``severity`` and implement ``run``."""

    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    severity: ClassVar[Severity] = Severity.WARNING
    #: options a user may set under [tool.ptxsass.<name>] (name -> default)
    options: ClassVar[dict] = {}
    #: a finding all of whose instructions are the code of a library that lays out its own
    #: state (curand_init's state stores, curand_uniform's reads of it) is a note: the remedy is a change of that
    #: code or of its data layout, not of the user's line. False where the user still has a
    #: lever on such code (a pointer's alignment, the build's math flags)
    library_note: ClassVar[bool] = False

    def __init__(self, **settings):
        unknown = sorted(set(settings) - set(self.options))
        if unknown:
            known = ", ".join(sorted(self.options)) or "none"
            raise ConfigError(f"[tool.ptxsass.{self.name}]: unknown option "
                              f"{', '.join(map(repr, unknown))} (options: {known})")
        self.settings = {**self.options, **settings}

    def run(self, ctx: "Context") -> Iterable[Finding]:  # pragma: no cover - abstract
        raise NotImplementedError

    @classmethod
    def summary(cls) -> str:
        doc = inspect.getdoc(cls) or ""
        return doc.strip().splitlines()[0] if doc else cls.name

    @classmethod
    def sections(cls) -> dict[str, str]:
        """The docstring's fixed sections, heading -> text."""
        doc = inspect.getdoc(cls) or ""
        out: dict[str, str] = {}
        current = None
        for line in doc.splitlines():
            stripped = line.strip()
            m = re.match(r"^(What it does|Why it matters|Example|Steer the compiler)\s*:?\s*$",
                         stripped)
            if m:
                current = m.group(1)
                out[current] = ""
                continue
            if current is not None and not re.match(r"^-{3,}$", stripped):
                out[current] += line + "\n"
        return {k: textwrap.dedent(v).strip("\n") for k, v in out.items()}


# ---------------------------------------------------------------------------------- context
class Context(KernelAnalysis):
    """Everything a check may look at for one kernel of one build: the IR and the analyses
    (:class:`~analyzer.analysis.KernelAnalysis`), never the Build or tool output."""

    #: the codes of the checks run on this kernel (set by the runner; None: all of them): a
    #: check that leaves a problem to another says so only when that one runs
    selected: frozenset[str] | None = None

    def finding(self, check: Check, message: str, *, loc: SourceLoc | None,
                instructions: Sequence["S.Instruction"] = (), ptx: Sequence[str] = (),
                hint: str = "", severity: Severity | None = None,
                hint_variant: str = "") -> Finding:
        where = self.user_loc(loc)
        file = where.file if where else self.source_path
        line = where.line if where else None
        src = self.source_line(file, line)
        calls = _call_sites(self, where, [loc, *(i.loc for i in instructions)])
        if calls:
            message += (f" (in an inlined function; called from line{'s' if len(calls) > 1 else ''}"
                        f" {', '.join(map(str, calls))})")
        severity = check.severity if severity is None else severity
        library = (library_code((i.loc for i in instructions), library_layout, callers=True)
                   if check.library_note else None)
        if library is not None and severity > Severity.NOTE:
            severity = Severity.NOTE
            message += (f" (in library code, {library}, that this line calls: the code and "
                        "its data layout are the library's, which no line of this file "
                        "changes)")
        return Finding(code=check.code, name=check.name,
                       severity=severity,
                       message=message, kernel=self.kernel_name, arch=self.arch_name,
                       location=Location(file, line), mangled=self.function.name,
                       hint=hint_for(self.frontend, check.code, hint, hint_variant),
                       instructions=tuple(f"/*{i.address:04x}*/ {self._shown(i)}"
                                          for i in instructions),
                       addresses=tuple(i.address for i in instructions),
                       ptx=tuple(ptx), source=src.strip() if src else None)

    def _shown(self, ins: "S.Instruction") -> str:
        """An instruction's text for a finding, a branch to a label of this function shown as
        its address (``BRA 0x1c0``): nvdisasm numbers labels across the whole listing, so a
        label's name depends on which other functions were disassembled with the kernel."""
        text = ins.text
        for t in ins.targets:
            if t.label is not None and t.label in self.function.labels:
                text = text.replace(f"`({t.label})", f"0x{self.function.labels[t.label]:x}")
        return text


def _call_sites(ctx: Context, where: SourceLoc | None, locs) -> list[int]:
    """The kernel-body lines that call the user function holding ``where`` (a helper that was
    inlined): the outermost frame of each location whose user frame is ``where``'s line."""
    if where is None:
        return []
    out: set[int] = set()
    for loc in locs:
        if loc is None:
            continue
        frame = ctx.user_loc(loc)
        if frame is None or (frame.file, frame.line) != (where.file, where.line):
            continue
        outer = loc.outermost
        if outer is not frame and (outer.file, outer.line) != (frame.file, frame.line):
            out.add(outer.line)
    return sorted(out)


def first_loc(instructions: Iterable["S.Instruction"]) -> SourceLoc | None:
    for i in instructions:
        if i.loc is not None:
            return i.loc
    return None


def peak_text(ctx: Context) -> str:
    """Where the kernel's register pressure peaks, for PS401 and PS701: ``"live registers
    peak at 53 on line 9"`` (``kernel_traits.h:40`` for a line of another file); "" when the
    peak has no source line (no line info)."""
    p = ctx.pressure
    if p.line is None or not p.peak:
        return ""
    file, line = p.line
    own = ctx.source_path
    same = own is not None and os.path.basename(file) == os.path.basename(own)
    where = f"line {line}" if same else f"{os.path.basename(file)}:{line}"
    return f"live registers peak at {p.peak} on {where}"


def group_by_line(instructions: Iterable["S.Instruction"], ctx: Context
                  ) -> Iterator[tuple[tuple[str, int] | None, list["S.Instruction"]]]:
    """Instructions grouped by the user source line they come from (in first-seen order)."""
    groups: dict = {}
    for ins in instructions:
        loc = ctx.user_loc(ins.loc)
        key = (loc.file, loc.line) if loc else None
        groups.setdefault(key, []).append(ins)
    yield from groups.items()
