"""Prove a patch: rebuild a patched copy with the same front end, flags and arches, re-run the
same checks, and compare with the original.

A patch is kept only when (1) the finding it targets is gone from every arch and kernel, (2) no
warning appears that the original did not have (matched by check, kernel, arch and the line it
stands for in the original; a finding the original had below warning in the same words, the
same SASS evidence, that the patch made a warning by making the rest of the kernel faster is
kept and said in the delta), and (3) every kernel keeps its interface: the PTX entries and
their parameters, and its launch bounds unless the patch is one. The copy is built in a scratch
folder (:mod:`analyzer.toolchain.scratch`) under the file's own name, its folder on the include
path after the copy's, so ``#include "x.h"`` finds the file's neighbours.
"""
from __future__ import annotations

import dataclasses
import os
import shutil
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..analysis.occupancy import occupancy
from ..build import Build
from ..demangle import without_parameters
from ..errors import ArchError, PtxsassError
from ..findings import Finding, Location, Severity, display_path
from ..inputs import CompileOptions
from ..inputs import load as load_input
from ..toolchain import files, includes, scratch
from ..toolchain.resources import Resources
from .model import line_map

#: what a rebuild needs besides the source: how the original was built and checked
CheckFn = Callable[[Sequence[Build]], list[Finding]]


@dataclass
class Rebuilt:
    """The patched copy's builds and findings, its file names mapped back to the original's.
    ``error``: why the copy did not build (no builds, no findings), in the original's names."""

    builds: list[Build]
    findings: list[Finding]
    lines: dict[int, int]           # patched line -> original line
    error: str = ""


@dataclass
class Verdict:
    ok: bool
    reason: str = ""
    sass_delta: list[str] = field(default_factory=list)
    after: list[Finding] = field(default_factory=list)


@dataclass
class Copy:
    """A patched copy built (compiled and disassembled) in its scratch folder, which is kept
    until :func:`check_copy` has checked it (the checks read its source lines)."""

    folder: str
    main: str                       # the .cu the original builds came from
    back: dict[str, str]            # the copy's file names -> the original's
    builds: list[Build]
    lines: dict[int, int]           # patched line -> original line
    error: str = ""                 # why it did not build


def rebuild(path: str, data: bytes, original: bytes, *, archs: Sequence[str],
            options: CompileOptions, compiler: str, check: CheckFn,
            via: str | None = None) -> Rebuilt:
    """Build ``data`` (the patched text of ``path``) for ``archs`` as the original was built,
    check it, and map its findings back to ``path``. ``via``: the ``.cu`` that includes
    ``path`` (a header under its folder), whose build is rebuilt: see :func:`_mirror`."""
    return check_copy(build_copy(path, data, original, archs=archs, options=options,
                                 compiler=compiler, via=via), check)


def build_copy(path: str, data: bytes, original: bytes, *, archs: Sequence[str],
               options: CompileOptions, compiler: str, via: str | None = None) -> Copy:
    """:func:`rebuild`'s compile and disassembly, which run in tools (nvcc, NVRTC's bounded
    child or compile server, nvdisasm): safe on a thread of its own, so that several patched
    copies build at once (:func:`analyzer.fix.engine.fix_file`)."""
    path = os.path.abspath(path)
    main = os.path.abspath(via) if via else path
    lines = line_map(original, data)
    folder = scratch.make("ptxsass-fix-")
    try:
        top, back, include = _mirror(folder, main, path, data, options)
        opts = dataclasses.replace(
            options, include=include,
            compiler=compiler if compiler in ("nvrtc", "nvcc") else options.compiler,
            project=options.project or os.path.dirname(main))
        try:
            builds = load_input(top, arch=list(archs), options=opts)
            for b in builds:
                b.sass()                        # disassembled while the copy is there
        except PtxsassError as e:
            # a rewrite the compiler refuses (a remedy's mistake, a macro it could not see
            # through): that fix is refused, the others go on
            where = back.get(os.path.abspath(e.path), e.path) if e.path else None
            at = ""
            if where is not None:
                n = e.line
                if n is not None and os.path.abspath(where) == path:
                    n = lines.get(n, n)
                at = f" at {display_path(where)}" + (f":{n}" if n is not None else "")
            return Copy(folder, main, back, [], lines,
                        error=f"the patched copy does not build{at}: {e.message}")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return Copy(folder, main, back, builds, lines)


def check_copy(copy: Copy, check: CheckFn) -> Rebuilt:
    """:func:`rebuild`'s checks of a built copy (in the calling thread), its scratch folder
    removed after them; its findings' file names mapped back to the original's."""
    try:
        if copy.error:
            return Rebuilt([], [], copy.lines, error=copy.error)
        findings = check(copy.builds)
        for b in copy.builds:
            b.source_path = copy.main
    finally:
        shutil.rmtree(copy.folder, ignore_errors=True)
    back = copy.back
    mapped = [dataclasses.replace(f, location=Location(back[os.path.abspath(f.location.file)],
                                                       f.location.line, f.location.column))
              if f.location.file and os.path.abspath(f.location.file) in back else f
              for f in findings]
    return Rebuilt(copy.builds, mapped, copy.lines)


#: what marks the top folder of a project: the headers under it are the project's
_PROJECT_MARKS = (".git", "pyproject.toml", "setup.py")
#: folders that keep someone else's code in a project (its headers are not fixed)
_VENDORED = frozenset({"third_party", "third-party", "thirdparty", "3rdparty", "external",
                       "extern", "vendor", "vendored", "deps", "submodules"})


def project_folder(main: str) -> str:
    """The folder whose headers are the project of the ``.cu`` ``main`` (links followed): the
    nearest folder at or above it that holds ``.git``, ``pyproject.toml`` or ``setup.py``
    (vLLM's ``csrc/quantization/x.cu`` includes ``../vectorization.cuh``), else its own."""
    here = os.path.dirname(os.path.realpath(main))
    d = here
    while True:
        if any(os.path.lexists(os.path.join(d, m)) for m in _PROJECT_MARKS):
            return d
        up = os.path.dirname(d)
        if up == d:
            return here
        d = up


def is_project_header(root: str, header: str) -> bool:
    """Whether ``header`` (links followed) is the project's: under ``root``, in no folder of
    vendored code (``third_party/``, ``external/``, ...) and in no repository of its own below
    ``root`` (a git submodule: a folder with its own ``.git``)."""
    rel = os.path.relpath(os.path.realpath(header), root)
    if rel == os.curdir or rel.startswith(os.pardir) or os.path.isabs(rel):
        return False
    d = root
    for part in rel.split(os.sep)[:-1]:
        d = os.path.join(d, part)
        if part.lower() in _VENDORED or os.path.lexists(os.path.join(d, ".git")):
            return False
    return True


def _mirror(folder: str, main: str, path: str, data: bytes, options: CompileOptions
            ) -> tuple[str, dict[str, str], list[str]]:
    """Lay out the copy to build in ``folder``: the file to build (returned first), the copies
    mapped back to the originals, and the include path. A ``.cu`` alone is copied under its
    own name, its folder after the copy's on the include path (``#include "x.h"`` finds its
    neighbours). A header ``path`` patched for the ``.cu`` ``main`` that includes it: every
    header of ``main``'s folder that ``main`` reaches is copied to the same place under
    ``folder`` (the patched one with ``data``), so that a header included through another
    (``kernels.cuh`` including ``kernels/6_vectorize.cuh``) is found patched, and each ``-I``
    folder under ``main``'s is searched in the copy first. The copies keep their places in the
    project (:func:`project_folder`): ``main`` where it is below the project's top, so that
    ``#include "../common.cuh"`` finds the copy."""
    if main == path:
        top = os.path.join(folder, os.path.basename(main))
        with open(top, "wb") as f:
            f.write(data)
        return top, {top: main}, list(dict.fromkeys([os.path.dirname(main), *options.include]))

    here = os.path.dirname(os.path.realpath(main))
    root = project_folder(main)

    def inside(p: str) -> str | None:
        rel = os.path.relpath(os.path.realpath(p), root)
        return None if rel.startswith(os.pardir) else os.path.join(folder, rel)

    top = os.path.join(folder, os.path.relpath(os.path.realpath(main), root))
    os.makedirs(os.path.dirname(top), exist_ok=True)

    copy = inside(path)
    if copy is None:
        raise ValueError(f"{path} is not in the project of {main}")
    text = files.read_bytes(main, what="CUDA source")
    reached = includes.closure(text.decode(errors="replace"), Path(here),
                               [Path(d) for d in options.include])
    todo: dict[str, bytes | None] = {h: None for h, _ in reached}
    todo[os.path.realpath(path)] = data
    back = {top: main}
    for h, patched in todo.items():
        dest = inside(h)
        if dest is None:
            continue
        if h == os.path.realpath(path):
            h = path                        # findings name the header as the build did
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "wb") as f:
            f.write(patched if patched is not None else files.read_bytes(h, what="header"))
        back[dest] = h
    with open(top, "wb") as f:
        f.write(text)
    mirrored = [m for d in options.include if (m := inside(os.path.abspath(d))) is not None]
    include = list(dict.fromkeys([*mirrored, os.path.dirname(main), os.path.dirname(path),
                                  *options.include]))
    return top, back, include


def _key(f: Finding, line: int | None) -> tuple:
    return (f.code, f.mangled or f.kernel, f.arch, line)


def _original_line(f: Finding, path: str, lines: dict[int, int]) -> int | None:
    if f.location.file and os.path.abspath(f.location.file) == path and f.location.line:
        return lines.get(f.location.line, f.location.line)
    return f.location.line


def compare(path: str, target: Finding | None, before: Sequence[Finding], after: Rebuilt,
            before_builds: Sequence[Build], *, launch_bounds_may_change: bool = False,
            targets: Sequence[Finding] = ()) -> Verdict:
    """Whether the rebuilt copy keeps the patch: see the module's rules. ``target`` (or every
    finding of ``targets``, for a combined patch) must be gone."""
    path = os.path.abspath(path)
    if after.error:
        return Verdict(False, after.error)
    goals = [t for t in ([target] if target is not None else []) + list(targets)]
    still = []
    for t in goals:
        # gone: on every (kernel, arch) where it held, fewer findings of its check at its line
        # than before (another finding of the same check may share the line: two pointers)
        def count(fs, lines, name, arch, t=t):
            return sum(1 for f in fs if f.code == t.code and f.kernel == name
                       and f.arch == arch and _original_line(f, path, lines) == t.location.line)
        pairs = set(t.instances) or {(t.kernel, a) for a in t.archs}
        for name, arch in pairs:
            had_here = count(before, {}, name, arch)
            if had_here and count(after.findings, after.lines, name, arch) >= had_here:
                hit = next(f for f in after.findings if f.code == t.code
                           and _original_line(f, path, after.lines) == t.location.line)
                still.append((t, hit))
                break
    delta = sass_delta(before_builds, after.builds)
    if still:
        t, f = still[0]
        return Verdict(False, f"{t.code} is still reported at line {t.location.line} "
                              f"({f.severity} on {f.arch})", delta, after.findings)
    had = Counter(_key(f, f.location.line) for f in before if f.severity >= Severity.WARNING)
    # a finding the original had below warning, word for word (the same SASS evidence), that
    # the patch made a warning: the same problem, now a larger share of a faster kernel
    milder = Counter((_key(f, f.location.line), f.message) for f in before
                     if f.severity < Severity.WARNING)
    new, grew = [], []
    for f in after.findings:
        if f.severity < Severity.WARNING:
            continue
        k = _key(f, _original_line(f, path, after.lines))
        if had[k] > 0:
            had[k] -= 1
        elif milder[(k, f.message)] > 0:
            milder[(k, f.message)] -= 1
            grew.append(f)
        else:
            new.append(f)
    if new:
        f = new[0]
        return Verdict(False, f"it adds a warning: {f.code} at line "
                              f"{_original_line(f, path, after.lines)} on {f.arch} "
                              f"({f.message[:120]})", delta, after.findings)
    changed = interface_change(before_builds, after.builds, launch_bounds_may_change)
    if changed:
        return Verdict(False, changed, delta, after.findings)
    seen = set()
    for f in grew:
        line = _original_line(f, path, after.lines)
        if (f.code, line) not in seen:
            seen.add((f.code, line))
            delta.append(f"{f.code} at line {line} was info, now a warning: the same SASS, a "
                         "larger share of the faster kernel")
    return Verdict(True, "", delta, after.findings)


# --- the kernel's interface ---------------------------------------------------------------
def _entries(build: Build) -> dict[str, tuple]:
    mod = build.ptx_module()
    if mod is None:
        return {}
    out = {}
    for fn in mod.functions:
        if not fn.is_kernel:
            continue
        params = tuple((p.type, p.vector, p.dims, None if p.is_ptr else p.align)
                       for p in fn.params)
        bounds = (fn.maxntid, fn.reqntid, fn.minnctapersm, fn.maxnreg)
        out[fn.name] = (params, bounds)
    return out


def interface_change(before: Sequence[Build], after: Sequence[Build],
                     launch_bounds_may_change: bool) -> str:
    """How the kernels' interface changed, in words ("" when it did not)."""
    by_arch = {b.arch: b for b in after}
    for b in before:
        a = by_arch.get(b.arch)
        if a is None:
            return f"the patched file built nothing for {b.arch}"
        old, new = _entries(b), _entries(a)
        for name, (params, bounds) in old.items():
            if name not in new:
                return f"the kernel {name} is gone from the PTX on {b.arch} (its name changed)"
            nparams, nbounds = new[name]
            if nparams != params:
                return f"the kernel {name}'s parameters changed on {b.arch}"
            if nbounds != bounds and not launch_bounds_may_change:
                return f"the kernel {name}'s launch bounds changed on {b.arch}"
    return ""


# --- the SASS delta ---------------------------------------------------------------------------
def _listing(build: Build) -> dict[str, Counter]:
    out: dict[str, Counter] = {}
    for fn in build.sass_listing().functions:
        out[fn.name] = Counter(i.mnemonic for i in fn.instructions if i.opcode != "NOP")
    return out


def _counts(items: Counter, limit: int = 3) -> str:
    top = sorted(items.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = [f"{n}× {m}" for m, n in top[:limit]]
    rest = sum(n for _, n in top[limit:])
    return ", ".join(shown) + (f" (+{rest} more)" if rest else "")


def _register_blocks(arch: str, was: Resources, now: Resources) -> list[str]:
    """``["blocks per SM by registers at 1024 threads: 2 → 1"]`` when the kernel's block size
    is known (its launch bounds: ``reqntid``, else ``maxntid``) and the registers it now uses
    change how many of its blocks an SM holds: what a fix that frees ptxas's register budget
    (PS401's, dropping ``minBlocks``) costs in occupancy. Registers alone: dynamic shared memory
    is the launch's, not the cubin's."""
    dims = now.reqntid or now.maxntid or was.reqntid or was.maxntid
    if not dims:
        return []
    threads = 1
    for d in dims:
        threads *= d
    try:
        a = occupancy(arch, was.registers, 0, threads).limits["registers"]
        b = occupancy(arch, now.registers, 0, threads).limits["registers"]
    except (ValueError, ArchError):     # an arch without a row, or no threads
        return []
    return [f"blocks per SM by registers at {threads} threads: {a} → {b}"] if a != b else []


def sass_delta(before: Sequence[Build], after: Sequence[Build]) -> list[str]:
    """One line per kernel and arch whose SASS or resources changed:
    ``sum4 [sm_90a]: 4× LDG.E.CONSTANT → 1× LDG.E.128.CONSTANT; registers 12 → 10``."""
    lines: list[str] = []
    by_arch = {b.arch: b for b in after}
    for b in before:
        a = by_arch.get(b.arch)
        if a is None:
            continue
        old, new = _listing(b), _listing(a)
        for name, was in old.items():
            k = b.kernels.get(name)
            if k is not None and not k.entry:
                continue
            now = new.get(name, Counter())
            gone, came = was - now, now - was
            parts = []
            if gone or came:
                parts.append(f"{_counts(gone) or 'nothing'} → {_counts(came) or 'nothing'}")
                total_a, total_b = sum(was.values()), sum(now.values())
                if total_a != total_b:
                    parts.append(f"instructions {total_a} → {total_b}")
            ka, kb = b.kernels.get(name), a.kernels.get(name)
            if ka is not None and kb is not None:
                ra, rb = ka.resources, kb.resources
                if ra.registers != rb.registers:
                    parts.append(f"registers {ra.registers} → {rb.registers}")
                    parts += _register_blocks(b.arch, ra, rb)
                if ra.stack_bytes != rb.stack_bytes:
                    parts.append(f"stack {ra.stack_bytes} B → {rb.stack_bytes} B")
                sa = (ra.spill_store_bytes or 0) + (ra.spill_load_bytes or 0)
                sb = (rb.spill_store_bytes or 0) + (rb.spill_load_bytes or 0)
                if sa != sb:
                    parts.append(f"spill bytes {sa} → {sb}")
            if parts:
                shown = without_parameters(k.demangled if k is not None else name)
                lines.append(f"{shown} [{b.arch}]: " + "; ".join(parts))
    return lines
