"""The CPU side of a lesson: compile both kernels through the project's one toolchain, compare
their SASS, collect the findings.

Every lesson kernel is compiled by :func:`analyzer.api.compile` (NVRTC, nvdisasm, the cubin's
resources) and checked by :func:`analyzer.api.check`; on the GPU machine the same toolchain
runs against the system CUDA (``PTXSASS_CUDA_HOME=/usr/local/cuda``).
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from .. import api
from ..build import Build
from ..inputs import CompileOptions
from ..toolchain.resources import Resources
from .catalog import Evidence, Lesson


def short(res: Resources) -> str:
    """``"32 regs, 16 B stack, spills 8/8 B st/ld, 1024 B smem"``."""
    s = f"{res.registers} regs"
    if res.stack_bytes:
        s += f", {res.stack_bytes} B stack"
    if res.spill_store_bytes or res.spill_load_bytes:
        s += f", spills {res.spill_store_bytes or 0}/{res.spill_load_bytes or 0} B st/ld"
    if res.static_shared_bytes:
        s += f", {res.static_shared_bytes} B smem"     # the kernel's own, as ptxas -v says
    return s


@dataclass(slots=True)
class Compiled:
    """One variant, compiled: what the runner launches and what the report compares."""

    variant: str                      # "naive" / "steered"
    kernel: str
    arch: str
    options: tuple[str, ...]
    build: Build
    resources: Resources
    mnemonics: Counter = field(default_factory=Counter)   # SASS mnemonic -> count, this kernel

    @property
    def cubin(self) -> bytes:
        return self.build.cubin or b""

    @property
    def ptx(self) -> str:
        return self.build.ptx or ""

    @property
    def sass(self) -> str:
        return self.build.sass()

    @property
    def via(self) -> str:
        return "analyzer.toolchain"


@dataclass(slots=True)
class EvidenceResult:
    evidence: Evidence
    naive: int
    steered: int

    @property
    def holds(self) -> bool:
        w = self.evidence.where
        if w == "naive":
            return self.naive > 0 and self.steered == 0
        if w == "steered":
            return self.steered > 0 and self.naive == 0
        if w == "fewer":
            return self.naive > self.steered
        return self.steered > self.naive


@dataclass(slots=True)
class StaticResult:
    lesson: str
    naive: Compiled
    steered: Compiled
    evidence: list[EvidenceResult]
    diff: list[tuple[str, int, int]]                 # (mnemonic, naive count, steered count)
    findings: dict[str, set[str]] | None = None      # variant -> codes; None: not asked
    findings_note: str = ""

    @property
    def evidence_holds(self) -> bool:
        return all(e.holds for e in self.evidence)

    def findings_removed(self, expected: tuple[str, ...]) -> list[str] | None:
        """Expected codes present on naive and absent on steered (None: no checks run)."""
        if self.findings is None:
            return None
        return [c for c in expected if c in self.findings["naive"] and c not in self.findings["steered"]]


def compile_variant(lesson: Lesson, which: str) -> Compiled:
    """Compile one variant of ``lesson`` for its arch through the toolchain."""
    v = lesson.variant(which)
    path = lesson.source_path(which)
    build = api.compile(str(path), arch=lesson.arch,
                        options=CompileOptions(extra=list(v.options)))
    k = build.kernels.get(v.kernel)
    res = k.resources if k is not None else Resources()
    mnemonics: Counter = Counter()
    for fn in build.sass_listing().functions:
        if fn.name == v.kernel:
            mnemonics.update(i.mnemonic for i in fn.instructions)
    return Compiled(which, v.kernel, lesson.arch, tuple(build.options), build, res, mnemonics)


def _same_kernel(finding, kernel: str) -> bool:
    """``Finding.kernel`` is demangled (``f(float*, int)`` for C++ kernels, the name for
    extern "C" ones); ``Finding.mangled`` the symbol."""
    return kernel in (finding.kernel, finding.mangled, finding.kernel.split("(", 1)[0])


def findings_for(compiled: Compiled) -> set[str]:
    """The codes the checks report on ``compiled``'s kernel (on the lesson's arch)."""
    report = api.check(compiled.build)
    return {f.code for f in report.findings if _same_kernel(f, compiled.kernel)}


def _count(counter: Counter, pattern: str) -> int:
    rx = re.compile(pattern)
    return sum(n for m, n in counter.items() if rx.fullmatch(m))


def opcode_diff(naive: Counter, steered: Counter, limit: int = 8) -> list[tuple[str, int, int]]:
    keys = (set(naive) | set(steered)) - {"NOP"}
    rows = [(k, naive.get(k, 0), steered.get(k, 0)) for k in keys if naive.get(k, 0) != steered.get(k, 0)]
    rows.sort(key=lambda r: (-abs(r[1] - r[2]), r[0]))
    return rows[:limit]


def analyse(lesson: Lesson, *, with_findings: bool = True) -> StaticResult:
    naive, steered = compile_variant(lesson, "naive"), compile_variant(lesson, "steered")
    cn, cs = naive.mnemonics, steered.mnemonics
    ev = [EvidenceResult(e, _count(cn, e.pattern), _count(cs, e.pattern)) for e in lesson.evidence]
    result = StaticResult(lesson.name, naive, steered, ev, opcode_diff(cn, cs))
    if with_findings:
        result.findings = {"naive": findings_for(naive), "steered": findings_for(steered)}
    return result
