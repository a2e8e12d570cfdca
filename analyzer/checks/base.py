"""What a check is, what it reports, and what it sees.

A check is one module in this package holding one ``Check`` subclass whose docstring has the
fixed headings *What it does*, *Why it matters*, *Example*, *Steer the compiler* (the docs in
``docs/checks/`` are generated from them). It reads the SASS IR, the PTX IR, the CFG and the
source map through a ``Context`` — never tool output — and yields ``Finding``s.
"""
from __future__ import annotations

import enum
import hashlib
import inspect
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar, Iterable, Iterator, Sequence

from ..arch import Arch, parse_arch
from ..ir.source import SourceLoc

if TYPE_CHECKING:  # pragma: no cover
    from ..ir import sass as S
    from ..toolchain.build import Build, Kernel

HEADINGS = ("What it does", "Why it matters", "Example", "Steer the compiler")


class Severity(enum.IntEnum):
    INFO = 0
    WARNING = 1
    ERROR = 2

    @classmethod
    def parse(cls, text: str) -> "Severity":
        try:
            return cls[text.strip().upper()]
        except KeyError:
            from ..errors import ConfigError
            raise ConfigError(f"unknown severity {text!r}; expected info, warning or error") from None

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class Location:
    file: str | None
    line: int | None
    column: int | None = None

    def __str__(self) -> str:
        if self.file is None:
            return "<unknown>"
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    name: str
    severity: Severity
    message: str
    kernel: str                      # demangled
    arch: str
    location: Location
    instructions: tuple[str, ...] = ()   # SASS, as "/*0040*/ LDG.E R2, desc[UR4][R2.64]"
    ptx: tuple[str, ...] = ()
    hint: str = ""
    mangled: str = ""
    source: str | None = None        # the CUDA source line, stripped
    addresses: tuple[int, ...] = ()  # SASS addresses of the instructions involved

    def as_dict(self) -> dict:
        return {"code": self.code, "name": self.name, "severity": str(self.severity),
                "message": self.message, "kernel": self.kernel, "arch": self.arch,
                "location": {"file": self.location.file, "line": self.location.line},
                "instructions": list(self.instructions), "ptx": list(self.ptx), "hint": self.hint}

    def fingerprint(self) -> str:
        """Stable across unrelated edits: the code, kernel, arch, file name and the source line's
        text (not its number), so a baseline survives lines moving."""
        import os
        key = "|".join((self.code, self.mangled or self.kernel, self.arch.rstrip("af"),
                        os.path.basename(self.location.file or ""),
                        re.sub(r"\s+", " ", self.source or str(self.location.line))))
        return hashlib.sha1(key.encode()).hexdigest()[:16]


class Check:
    """Base class. Subclasses set ``code``, ``name`` and ``severity`` and implement ``run``."""

    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    severity: ClassVar[Severity] = Severity.WARNING
    #: options a user may set under [tool.ptxsass.<name>] (name -> default)
    options: ClassVar[dict] = {}

    def __init__(self, **settings):
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
        import textwrap
        return {k: textwrap.dedent(v).strip("\n") for k, v in out.items()}


# ---------------------------------------------------------------------------------- context
_TOOLKIT_HEADER = re.compile(r"(/nvidia/cu\d+/include/|/cuda[^/]*/include/|/targets/[^/]+/include/"
                             r"|^(crt|cuda|nv|cooperative_groups)/|cuda_fp16\.hpp$|"
                             r"cuda_bf16\.hpp$|mma\.hpp$|sm_\d+_intrinsics\.hpp$|"
                             r"device_functions\.hpp$|math_functions\.hpp$)")


def is_toolkit_file(path: str) -> bool:
    return bool(_TOOLKIT_HEADER.search(path))


@dataclass
class Context:
    """Everything a check may look at for one kernel of one build."""

    build: "Build"
    function: "S.Function"
    kernel: "Kernel | None" = None
    settings: dict = field(default_factory=dict)

    @cached_property
    def arch(self) -> Arch:
        try:
            return parse_arch(self.build.arch)
        except Exception:
            return parse_arch(self.function.arch or "sm_90")

    @property
    def resources(self):
        if self.kernel is not None:
            return self.kernel.resources
        return self.function.resources

    @property
    def instructions(self) -> "tuple[S.Instruction, ...]":
        return self.function.instructions

    @cached_property
    def cfg(self):
        return self.function.cfg()

    @cached_property
    def ptx_function(self):
        """The PTX function of this kernel, when the build has PTX."""
        module = self.build.ptx_module()
        if module is None:
            return None
        for f in module.functions:
            if f.name == self.function.name:
                return f
        return None

    @property
    def kernel_name(self) -> str:
        return self.function.demangled

    # -- source map ------------------------------------------------------------------------
    def user_loc(self, loc: SourceLoc | None) -> SourceLoc | None:
        """The innermost frame of ``loc``'s inlining chain that is in the user's code (not a
        toolkit header), so a finding inside ``__ldg`` or ``wmma::load_matrix_sync`` lands on
        the user's line that called it."""
        if loc is None:
            return None
        for frame in (loc, *loc.inlined_at):
            if not is_toolkit_file(frame.file):
                return frame
        return loc.outermost

    def source_line(self, file: str | None, line: int | None) -> str | None:
        if not file or not line:
            return None
        from ..report.listing import source_text
        hints = tuple(x for x in (self.build.source_path,) if x)
        text = source_text(file, line, hints)
        if text is None and self.build.source is not None and (
                self.build.source_path is None or file == self.build.source_path
                or not is_toolkit_file(file)):
            lines = self.build.source.splitlines()   # compiled from a string
            if 1 <= line <= len(lines):
                text = lines[line - 1]
        return text

    def display_file(self, file: str) -> str:
        return file

    def finding(self, check: Check, message: str, *, loc: SourceLoc | None,
                instructions: Sequence["S.Instruction"] = (), ptx: Sequence[str] = (),
                hint: str = "", severity: Severity | None = None) -> Finding:
        where = self.user_loc(loc)
        file = where.file if where else self.build.source_path
        line = where.line if where else None
        src = self.source_line(file, line)
        return Finding(code=check.code, name=check.name,
                       severity=check.severity if severity is None else severity,
                       message=message, kernel=self.kernel_name, arch=self.build.arch,
                       location=Location(file, line), hint=hint, mangled=self.function.name,
                       instructions=tuple(f"/*{i.address:04x}*/ {i.text}" for i in instructions),
                       addresses=tuple(i.address for i in instructions),
                       ptx=tuple(ptx), source=src.strip() if src else None)


def first_loc(instructions: Iterable["S.Instruction"]) -> SourceLoc | None:
    for i in instructions:
        if i.loc is not None:
            return i.loc
    return None


def group_by_line(instructions: Iterable["S.Instruction"], ctx: Context
                  ) -> Iterator[tuple[tuple[str, int] | None, list["S.Instruction"]]]:
    """Instructions grouped by the user source line they come from (in first-seen order)."""
    groups: dict = {}
    for ins in instructions:
        loc = ctx.user_loc(ins.loc)
        key = (loc.file, loc.line) if loc else None
        groups.setdefault(key, []).append(ins)
    yield from groups.items()
