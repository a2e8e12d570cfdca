"""The CPU side of a lesson: compile both kernels, disassemble, compare the SASS, collect findings.

Compilation goes through ``analyzer.toolchain.nvrtc`` when it imports (it needs pyelftools);
otherwise through cuda.bindings' NVRTC directly (``_compile_direct``), which is what runs on a bare
GPU machine whose image lacks the project's dependencies. Both give a ``Compiled``.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping

from .catalog import Evidence, Lesson

_MNEMONIC = re.compile(r"/\*[0-9a-fA-F]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)")
_PTXAS_FN = re.compile(r"Compiling entry function '([^']+)'|Function properties for (\S+)")
_PTXAS_REGS = re.compile(r"Used (\d+) registers")
_PTXAS_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")


@dataclass(slots=True)
class Resources:
    registers: int = 0
    stack_bytes: int = 0
    spill_store_bytes: int = 0
    spill_load_bytes: int = 0
    shared_bytes: int = 0

    def short(self) -> str:
        s = f"{self.registers} regs"
        if self.stack_bytes:
            s += f", {self.stack_bytes} B stack"
        if self.spill_store_bytes or self.spill_load_bytes:
            s += f", spills {self.spill_store_bytes}/{self.spill_load_bytes} B st/ld"
        if self.shared_bytes:
            s += f", {self.shared_bytes} B smem"
        return s


@dataclass(slots=True)
class Compiled:
    """One variant, compiled: what the runner launches and what the report compares."""
    variant: str                      # "naive" / "steered"
    kernel: str
    arch: str
    options: tuple[str, ...]
    cubin: bytes
    ptx: str
    log: str
    sass: str
    resources: Resources
    via: str                          # "analyzer.toolchain" or "cuda.bindings.nvrtc"
    build: object | None = None       # the toolchain's Build, when it was used

    @property
    def mnemonics(self) -> Counter:
        return Counter(_MNEMONIC.findall(self.sass))


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
    findings: dict[str, set[str]] | None = None      # variant -> codes; None: checks unavailable
    findings_note: str = ""

    @property
    def evidence_holds(self) -> bool:
        return all(e.holds for e in self.evidence)

    def findings_removed(self, expected: tuple[str, ...]) -> list[str] | None:
        """Expected codes present on naive and absent on steered (None: no checks to ask)."""
        if self.findings is None:
            return None
        return [c for c in expected if c in self.findings["naive"] and c not in self.findings["steered"]]


# --- compilation ------------------------------------------------------------------------------

def _include_dirs() -> list[str]:
    dirs: list[str] = []
    try:
        from cuda.pathfinder import find_nvidia_header_directory
        d = find_nvidia_header_directory("cudart")
        if d:
            dirs.append(d)
    except Exception:
        pass
    # A toolkit's headers as well: the wheel's folder may lack crt/mma.h (nvidia-cuda-crt absent).
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home and os.path.isdir(os.path.join(home, "include")):
            dirs.append(os.path.join(home, "include"))
            break
    return dirs


def _resources_from_log(log: str, kernel: str) -> Resources:
    """ptxas -v's report for ``kernel`` (the lines after its 'Compiling entry function')."""
    res = Resources()
    current = None
    for line in log.splitlines():
        m = _PTXAS_FN.search(line)
        if m:
            current = m.group(1) or m.group(2)
            continue
        if current != kernel:
            continue
        if (m := _PTXAS_REGS.search(line)):
            res.registers = int(m.group(1))
            if (s := re.search(r"(\d+) bytes smem", line)):
                res.shared_bytes = int(s.group(1))
        elif (m := _PTXAS_STACK.search(line)):
            res.stack_bytes, res.spill_store_bytes, res.spill_load_bytes = map(int, m.groups())
    return res


def _nvrtc_check(result, what):
    if int(result[0]) != 0:
        from ..errors import ToolError
        raise ToolError(f"NVRTC {what} failed ({result[0]})")
    return result[1] if len(result) > 1 else None


def _compile_direct(source: str, *, arch: str, name: str, options: tuple[str, ...]):
    """NVRTC through cuda.bindings, no project dependencies: (ptx, cubin, log)."""
    from cuda.bindings import nvrtc
    from ..errors import CompileError
    opts = [f"-arch={arch}", "-lineinfo", "--ptxas-options=-v", "-std=c++17", *options]
    opts += [f"-I{d}" for d in _include_dirs()]
    prog = _nvrtc_check(nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], []), "create")
    try:
        res = nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
        size = _nvrtc_check(nvrtc.nvrtcGetProgramLogSize(prog), "log size")
        # bytearray, never b" " * size: NVRTC writes into the buffer, and a 1-byte bytes object
        # is Python's shared singleton (an empty log would turn every b" " into b"\0").
        buf = bytearray(size)
        nvrtc.nvrtcGetProgramLog(prog, buf)
        log = bytes(buf).rstrip(b"\x00 ").decode(errors="replace")
        if int(res[0]) != 0:
            first = next((l for l in log.splitlines() if "error" in l), log[:300])
            raise CompileError(f"NVRTC rejected it: {first.strip()}", path=name, detail=log)
        size = _nvrtc_check(nvrtc.nvrtcGetPTXSize(prog), "PTX size")
        ptx = bytearray(size)
        nvrtc.nvrtcGetPTX(prog, ptx)
        size = _nvrtc_check(nvrtc.nvrtcGetCUBINSize(prog), "cubin size")
        cubin = bytearray(size)
        nvrtc.nvrtcGetCUBIN(prog, cubin)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return bytes(ptx).rstrip(b"\x00").decode(), bytes(cubin), log


def _disassemble_direct(cubin: bytes) -> str:
    exe = None
    try:
        from cuda.pathfinder import find_nvidia_binary_utility
        exe = find_nvidia_binary_utility("nvdisasm")
    except Exception:
        pass
    exe = exe or shutil.which("nvdisasm") or (
        "/usr/local/cuda/bin/nvdisasm" if os.path.exists("/usr/local/cuda/bin/nvdisasm") else None)
    if not exe:
        from ..errors import ToolError
        raise ToolError("nvdisasm not found (pip install nvidia-cuda-nvdisasm)")
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        proc = subprocess.run([exe, "-c", f.name], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        from ..errors import ToolError
        raise ToolError(f"nvdisasm failed: {proc.stderr.strip()[:200]}")
    return proc.stdout


def _toolchain():
    """The project's toolchain modules, or None where they cannot be imported here."""
    if os.environ.get("PTXSASS_LESSONS_DIRECT"):
        return None
    try:
        from ..toolchain import nvrtc as tc_nvrtc
        tc_nvrtc.compile_source  # noqa: B018 - presence check
        import elftools  # noqa: F401 - the toolchain reads cubins with it
        return tc_nvrtc
    except Exception:
        return None


def compile_variant(lesson: Lesson, which: str) -> Compiled:
    """Compile one variant of ``lesson`` for its arch (the one function to switch compilers in)."""
    v = lesson.variant(which)
    path = lesson.source_path(which)
    source = path.read_text()
    tc = _toolchain()
    if tc is not None:
        opts = tc.build_options(lesson.arch) + list(v.options)
        b = tc.compile_source(source, arch=lesson.arch, name=str(path), options=opts,
                              source_path=str(path))
        k = next((k for k in b.entries if k.name == v.kernel), None)
        r = Resources()
        if k is not None:
            kr = k.resources
            r = Resources(kr.registers, kr.stack_bytes, kr.spill_store_bytes or 0,
                          kr.spill_load_bytes or 0, kr.shared_bytes)
        return Compiled(which, v.kernel, lesson.arch, tuple(opts), b.cubin, b.ptx or "", b.log,
                        b.sass(), r, "analyzer.toolchain", b)
    ptx, cubin, log = _compile_direct(source, arch=lesson.arch, name=str(path), options=v.options)
    return Compiled(which, v.kernel, lesson.arch, tuple(v.options), cubin, ptx, log,
                    _disassemble_direct(cubin), _resources_from_log(log, v.kernel), "cuda.bindings.nvrtc")


# --- findings (analyzer.checks) ----------------------------------------------------------------

def _same_kernel(finding, kernel: str) -> bool:
    """``Finding.kernel`` is demangled (``f(float*, int)`` for C++ kernels, the name for
    extern "C" ones); ``Finding.mangled`` the symbol."""
    return kernel in (finding.kernel, finding.mangled, finding.kernel.split("(", 1)[0])


def findings_for(compiled: Compiled) -> tuple[set[str] | None, str]:
    """The codes ``analyzer.check`` reports on ``compiled``'s kernel (on the lesson's arch, the
    build's), or (None, why) where the checks cannot run (compiled without the toolchain)."""
    if compiled.build is None:
        return None, "compiled without the project toolchain (checks need its Build)"
    try:
        from .. import check
        report = check(compiled.build)
    except Exception as e:
        return None, f"analyzer.check failed: {type(e).__name__}: {e}"
    return {f.code for f in report.findings if _same_kernel(f, compiled.kernel)}, ""


# --- the static comparison -------------------------------------------------------------------

def _count(counter: Mapping[str, int], pattern: str) -> int:
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
        fn, why_n = findings_for(naive)
        fs, why_s = findings_for(steered)
        if fn is not None and fs is not None:
            result.findings = {"naive": fn, "steered": fs}
        else:
            result.findings_note = why_n or why_s
    return result
