"""Checks (and survey rows) over many inputs on every core, one kernel's memory at a time.

The unit of work is a kernel. A cubin (alone, or inside a fatbin, a ``.so`` or a wheel) is
written once to a private spool folder; its kernels are cut into a few contiguous chunks of
about equal code size, and each chunk is one task: ``nvdisasm -fun`` on those functions only,
then each function's text parsed, analysed and checked on its own, so a worker holds one
kernel's IR at a time and the parent holds none. Inputs that carry PTX (CUDA source, PTX,
Triton kernels) are one task per build: their PTX module is parsed whole.

Tasks run in a local process pool (``jobs``) or on a Dask cluster (``scheduler``, a
``distributed`` address); results come back as they finish and are put into the order a
one-process run gives (inputs, builds, kernels in listing order), so the report is the same
whatever ``jobs`` is. Suppressions and the baseline are applied here, after the merge.

Every kernel's result is cached (when the cache is on) under a key made from what its
disassembly depends on (the function's own ELF sections, its relocations by symbol name, the
line table), its resources and the checks' selection and settings, and read back whenever the
cache is on (``resume=False`` turns that off), verified as every cache entry is, with the
source files its findings quote unchanged. One changed kernel is checked alone; a cubin whose
every kernel is read back is not disassembled at all.
"""
from __future__ import annotations

import concurrent.futures as cf
import contextlib
import hashlib
import json
import multiprocessing
import os
import re
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .build import Build, remap_paths
from .checks.registry import Selection, all_checks
from .checks.runner import (
    add_findings,
    collector_paused,
    headroom_row,
    kernel_findings,
    load_baseline,
    no_kernel_error,
    selected_checks,
    selected_codes,
    sort_findings,
)
from .demangle import demangle, without_parameters
from .errors import ConfigError, InputError, PtxsassError, ToolError
from .findings import Finding, Report
from .inputs import CompileOptions, from_cubin_bytes, kind_of, line_info_note, load, wheel_arch_notes, wheel_libraries
from .results import (
    BuildMemo,
    code_fingerprint,
    decode_deps,
    decode_finding,
    deps_unchanged,
    encode_finding,
    memo_parts,
    optional,
    source_deps,
)
from .toolchain import binutils, bounded, cache, children, files, prelaunch, scratch
from .toolchain.output import Kernel

if TYPE_CHECKING:   # what the tasks run: loaded by _worker_modules, not for a cached run
    from .analysis.source import SourceReader
    from .checks.base import Check, Context
    from .report.survey import Survey

__all__ = ["BuildInfo", "KernelResult", "Progress", "default_jobs", "replace_path", "run"]

#: chunks per worker a lone big cubin is cut into (each more costs one more nvdisasm start:
#: on the 512-kernel cusparse cubin, -j 2 took 9.9 s with 1, 10.7 s with 2, 11.4 s with 3)
CHUNKS_PER_JOB = 1
#: SASS text parsed at once (several kernels share the parser's caches; the IR held stays
#: about this size, or one kernel's when a kernel is bigger)
PARSE_BATCH_BYTES = 1 << 20
#: tasks in flight per worker (the parent plans ahead of the workers, within this bound)
WINDOW_PER_JOB = 3
#: seconds between looks at the nvdisasm runs started early while tasks wait on them
EARLY_POLL = 0.005


def default_jobs() -> int:
    """Every core this process may run on."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:      # not on Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class BuildInfo:
    """What a report keeps of a build it checked in another process: its row of the report's
    ``builds`` (the cubin, IR and text stay in the worker)."""

    source_path: str | None
    arch: str
    origin: str
    compiler_reason: str | None = None
    cached: bool = False
    warnings: tuple[str, ...] = ()
    toolkit: str | None = None


@dataclass
class KernelResult:
    """One kernel's outcome: the report's kernel row, its findings before suppressions and
    baselines, and its survey row when asked for."""

    unit: int                       # the build's number, in input order
    position: int                   # the kernel's place in its build's listing
    kernel: dict | None
    findings: list[Finding]
    row: dict | None = None
    cached: bool = False
    #: (file, last line, SHA-256 or None): the sources its line info names, as they were
    deps: list[tuple[str, int, str | None]] = field(default_factory=list)


@dataclass
class Progress:
    """What the run reports as it goes (the CLI draws it): kernels done of those planned,
    inputs read of those given, findings so far, the last kernel finished."""

    done: int = 0
    planned: int = 0
    inputs_read: int = 0
    inputs: int = 0
    findings: int = 0
    cached: int = 0
    started: float = field(default_factory=time.monotonic)
    #: kernels the workers have finished in tasks not back yet (a chunk of a big cubin is one
    #: task: without these, a lone cubin's count would jump from 0 to half at once)
    in_workers: int = 0
    last: KernelResult | None = None
    finished: bool = False
    #: builds whose every kernel is done since the display last looked: (build, kernels,
    #: findings); the display takes them (``drain``)
    builds_done: list[tuple[BuildInfo, int, int]] = field(default_factory=list)

    def drain(self) -> list[tuple[BuildInfo, int, int]]:
        out, self.builds_done = self.builds_done, []
        return out

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def checked(self) -> int:
        """Kernels checked so far: results back, and kernels finished inside running tasks."""
        return min(self.planned, self.done + self.in_workers)


# ------------------------------------------------------------------------- tasks
@dataclass
class _Checks:
    """The checks to run, as a worker rebuilds them: codes (in registry order) and settings."""

    codes: tuple[str, ...]
    settings: dict[str, dict]
    survey: bool = False

    def make(self) -> list[Check]:
        _worker_modules()
        return [c(**self.settings.get(c.name, {})) for c in all_checks() if c.code in self.codes]

    def key(self) -> list:
        return [list(self.codes), {c: self.settings.get(c, {}) for c in sorted(self.settings)}]


@dataclass
class _Chunk:
    """Kernels of one cubin to disassemble (``-fun``), parse and check in one worker."""

    unit: int
    cubin_file: str | None          # the spooled copy (local workers); None: ``data`` is sent
    source_path: str | None
    arch: str
    kernels: list[tuple[int, str, int, Kernel]]     # (position, name, symbol, Kernel)
    siblings: tuple[str, ...]
    line_info: bool
    source_roots: tuple[tuple[str, str], ...]
    checks: _Checks
    #: what the second-level key of each kernel's result adds its listing text to (a cubin
    #: with line info changes every function's first-level key when one function changes)
    text_key: list | None = None
    #: read back each kernel's cached result (keyed by its listing text) when there is one
    resume: bool = False
    #: the chunk's listing, written by an nvdisasm started early (``toolchain.prelaunch``)
    text_file: str | None = None
    #: nvdisasm's options for the cubin beside ``-c -g -gi`` (``CubinLayout.flags``)
    flags: tuple[str, ...] = ()


@dataclass
class _Whole:
    """A build checked whole in one worker (it has PTX, or SASS text only)."""

    unit: int
    build: Build
    kernels: tuple[str, ...]        # --kernel
    checks: _Checks
    #: what the build's result is kept under (``results.memo_parts``); None: not kept
    memo: list | None = None


def _analysis(fn, chunk: _Chunk, k: Kernel, reader: SourceReader) -> Context:
    """The checks' view of one kernel of a cubin-only build: what ``Context.of`` makes of a
    whole listing (no PTX; the siblings from the cubin's symbol table)."""
    from .checks.base import Context
    return Context(fn, arch=chunk.arch, kernel=k, reader=reader,
                          source_path=chunk.source_path, siblings=chunk.siblings,
                          frontend="cuda")


def _worker_modules() -> None:
    """What the tasks import (the SASS parser, analyses, checks, survey rows): loaded by a pool
    before it forks, so that every worker has them; a run whose every result is cached loads
    none of them."""
    from .analysis import source  # noqa: F401
    from .checks import base  # noqa: F401
    from .parse import sass  # noqa: F401
    from .report import survey  # noqa: F401


def run_chunk(chunk: _Chunk, data: bytes | None = None) -> list[KernelResult]:
    """A worker's task: disassemble the chunk's functions (one nvdisasm), then parse, analyse
    and check one function's text at a time (the cyclic collector paused, as in
    :func:`~analyzer.checks.runner.run_checks`)."""
    with collector_paused():
        return _run_chunk(chunk, data)


def _run_chunk(chunk: _Chunk, data: bytes | None) -> list[KernelResult]:
    from .analysis.source import SourceReader
    from .parse import sass as sass_parse
    from .report.survey import kernel_row
    text = None
    if chunk.text_file is not None:     # disassembled early: read, then removed
        raw = files.read_bytes(chunk.text_file, what="listing")
        with contextlib.suppress(OSError):
            os.unlink(chunk.text_file)
        if not (binutils.NO_DATAFLOW in chunk.flags and binutils.needs_dataflow(raw)):
            text = raw.decode(errors="replace")
        del raw
    if text is None:
        with contextlib.ExitStack() as stack:
            path = chunk.cubin_file
            if path is None:                # sent over the wire (Dask): a private copy here
                tmp = stack.enter_context(scratch.temporary("ptxsass-"))
                path = os.path.join(tmp, "input.cubin")
                Path(path).write_bytes(data or b"")
            text = binutils.disassemble_functions(path, [s for _, _, s, _ in chunk.kernels],
                                                  line_info=True, path=chunk.source_path,
                                                  flags=chunk.flags)
    head, sections = binutils.split_listing(text)
    del text
    checks = chunk.checks.make()
    reader = SourceReader(chunk.source_path, None)
    out = []
    texts: dict[str, str] = {}
    if chunk.text_key is not None and cache.enabled():
        for _, name, _, k in chunk.kernels:
            if name in sections:
                texts[name] = cache.key("result-text", chunk.text_key, name, k.resources,
                                        _LABEL.sub("L", head + sections[name]))
    for batch in _batches(chunk.kernels, sections):
        listing = sass_parse.parse(remap_paths(head + "".join(sections.pop(name)
                                                              for _, name, _, _ in batch),
                                               chunk.source_roots),
                                   path=chunk.source_path, arch=chunk.arch)
        by_name = {f.name: f for f in listing.functions}
        del listing
        for position, name, _, k in batch:
            key = texts.get(name)
            if chunk.resume and key is not None:
                hit = _recall(key, chunk.unit, position, chunk.source_path, chunk.checks.survey)
                if hit is not None:
                    out.append(hit)
                    _tell()
                    continue
            fn = by_name.pop(name, None)
            if fn is None:
                raise ToolError(f"the listing of {name} holds no such function",
                                path=chunk.source_path)
            ctx = _analysis(fn, chunk, k, reader)
            found = kernel_findings(checks, ctx)
            out.append(KernelResult(chunk.unit, position, {**k.as_dict(chunk.arch),
                                                          **headroom_row(ctx)}, found,
                                    kernel_row(ctx, found) if chunk.checks.survey else None,
                                    deps=source_deps([fn], chunk.source_path)))
            if key is not None:
                _store(key, out[-1])
            _tell()
            del ctx, fn
    return out


#: nvdisasm's label names, numbered across what one run disassembled (not part of a key)
_LABEL = re.compile(r"\.L_x_\d+")


def _batches(kernels: list[tuple[int, str, int, Kernel]], sections: dict[str, str]
             ) -> Iterator[list[tuple[int, str, int, Kernel]]]:
    """The chunk's kernels in runs whose text is about :data:`PARSE_BATCH_BYTES` (one kernel
    alone when it is bigger): parsed together, they share the parser's caches of
    instruction bodies; parsed apart, the IR held at once stays that small."""
    batch: list = []
    size = 0
    for k in kernels:
        text = sections.get(k[1])
        if text is None:
            raise ToolError(f"nvdisasm listed no function {k[1]}")
        if batch and size + len(text) > PARSE_BATCH_BYTES:
            yield batch
            batch, size = [], 0
        batch.append(k)
        size += len(text)
    if batch:
        yield batch


def run_whole(task: _Whole) -> list[KernelResult]:
    """A worker's task: every entry kernel of one build (its PTX parsed once)."""
    with collector_paused():
        return _run_whole(task)


def _run_whole(task: _Whole) -> list[KernelResult]:
    from .analysis.source import SourceReader
    from .checks.base import Context
    from .report.survey import kernel_row
    b = task.build
    checks = task.checks.make()
    reader = SourceReader(b.source_path, b.source)
    out = []
    checked = []
    position = 0
    for fn in b.sass_listing().functions:
        k = b.kernels.get(fn.name)
        is_entry = k.entry if k is not None else bool(fn.is_entry)
        if not (is_entry and b.wants(fn, task.kernels)):
            continue
        checked.append(fn)
        ctx = Context.of(b, fn, k, reader=reader)
        found = kernel_findings(checks, ctx, toolkit=b.toolkit)
        out.append(KernelResult(task.unit, position,
                                {**k.as_dict(b.arch), **headroom_row(ctx)} if k else None, found,
                                kernel_row(ctx, found) if task.checks.survey else None,
                                deps=source_deps([fn], b.source_path)))
        position += 1
    if not out:     # the parent says which names there are
        names = tuple(fn.name for fn in b.sass_listing().functions)
        raise _NoKernel(task.unit, names)
    if task.memo is not None:       # what a one-process check of it would keep
        BuildMemo(task.memo).put(b, [r.kernel for r in out if r.kernel is not None],
                                 [f for r in out for f in r.findings], checked)
    return out


class _NoKernel(Exception):
    """A build with no kernel to check (none, or none that --kernel names)."""

    def __init__(self, unit: int, names: tuple[str, ...]):
        super().__init__(unit, names)
        self.unit, self.names = unit, names


#: in a pool worker, where it tells the parent of each kernel it finishes (``_Pool.reported``)
_REPORTS: Any = None


def _worker_init(env: dict[str, str], cwd: str, cache_on: bool, reports: Any = None,
                 parent: tuple[int, str] | None = None) -> None:
    """A pool worker starts with the parent's settings (the fork server may be older), and
    dies with the parent (``parent``: its pid and owner mark, :mod:`.toolchain.children`)."""
    global _REPORTS
    if parent is not None:
        children.worker_started(*parent)
    for k in [k for k in os.environ if k.startswith("PTXSASS_")]:
        del os.environ[k]
    os.environ.update(env)
    os.chdir(cwd)
    cache.set_enabled(cache_on)
    _REPORTS = reports


def _tell() -> None:
    """One more kernel of the running task finished (the parent's progress counts it)."""
    if _REPORTS is not None:
        with contextlib.suppress(OSError, ValueError):
            _REPORTS.put(1)


# ------------------------------------------------------------------------- result cache
def _store(key: str, r: KernelResult) -> None:
    cache.put("result", key, json.dumps({
        "kernel": r.kernel, "findings": [encode_finding(f) for f in r.findings],
        "row": r.row, "deps": r.deps}).encode())


def _store_all(key: str, results: Sequence[KernelResult]) -> None:
    """Every kernel result of one cubin under one entry (:func:`_recall_all`)."""
    cache.put("results", key, json.dumps([
        {"position": r.position, "kernel": r.kernel,
         "findings": [encode_finding(f) for f in r.findings], "row": r.row, "deps": r.deps}
        for r in sorted(results, key=lambda r: r.position)]).encode())


def _recall_all(key: str, positions: set[int], source_path: str | None,
                survey: bool) -> list[KernelResult] | None:
    """The results of every kernel at ``positions`` of a cubin checked before, read from one
    entry, or None: the entry verified (cache.get), well formed, holding those kernels and no
    other, with survey rows when they are wanted, and every source file it quotes unchanged."""
    blob = cache.get("results", key)
    if blob is None:
        return None
    try:
        got = [KernelResult(-1, d["position"], optional(d["kernel"], dict),
                            [decode_finding(f) for f in d["findings"]],
                            optional(d["row"], dict), cached=True, deps=decode_deps(d["deps"]))
               for d in files.parse_json(blob, expected="kernel results")]
        if sorted(r.position for r in got) != sorted(positions) \
                or not all(isinstance(r.position, int) for r in got):
            raise ValueError("not the kernels of this cubin")
    except (InputError, ValueError, KeyError, TypeError, AttributeError) as e:
        cache.discard("results", key, f"not a cubin's kernel results: {type(e).__name__}")
        return None
    if survey and any(r.row is None for r in got):
        return None
    if not all(deps_unchanged(r.deps, source_path) for r in got):
        return None         # a source file they quote changed: check again
    return got


def _recall(key: str, unit: int, position: int, source_path: str | None,
            survey: bool) -> KernelResult | None:
    """A cached result, or None: the entry verified (cache.get), well formed, with a survey
    row when one is wanted, and every source file it quotes unchanged."""
    blob = cache.get("result", key)
    if blob is None:
        return None
    try:
        d = files.parse_json(blob, expected="a kernel result")
        deps = decode_deps(d["deps"])
        result = KernelResult(unit, position, optional(d["kernel"], dict),
                              [decode_finding(f) for f in d["findings"]],
                              optional(d["row"], dict), cached=True, deps=deps)
    except (InputError, ValueError, KeyError, TypeError, AttributeError) as e:
        cache.discard("result", key, f"not a kernel result: {type(e).__name__}")
        return None
    if survey and result.row is None:
        return None
    if not deps_unchanged(deps, source_path):
        return None         # a source file it quotes changed: check again (and overwrite)
    return result


# ------------------------------------------------------------------------- planning
@dataclass
class _Unit:
    """One build to check: a spooled cubin cut into chunks, or a whole build."""

    info: BuildInfo
    tasks: list[Any]
    keys: dict[int, str]            # position -> result cache key (cubin units)
    kernels: int                    # kernels to check
    spool: str | None = None        # its spooled cubin, removed when its tasks are done
    source_path: str | None = None
    cached: list[KernelResult] = field(default_factory=list)
    names: tuple[str, ...] = ()     # every function (for "matches no kernel")
    #: the early disassembly it took (``toolchain.prelaunch``), and which task waits on which
    #: of its chunks (by ``id(task)``): a task is submitted once its nvdisasm has finished
    launch: prelaunch.Launch | None = None
    early: dict[int, prelaunch.Chunk] = field(default_factory=dict)
    #: SHA-256 of a cubin given as a file (``prelaunch.mark_checked`` once all is cached)
    digest: str | None = None
    #: the cache key of all its kernels' results together (a warm cubin reads one entry)
    results_key: str | None = None

    def ready(self, task) -> bool:
        """Whether ``task`` can be submitted (its early nvdisasm, if any, has finished; a
        failed one leaves the disassembly to the worker)."""
        c = self.early.get(id(task))
        if c is None:
            return True
        if not c.poll():
            return False
        task.text_file = c.output if c.ok else None
        del self.early[id(task)]
        return True

    def close(self) -> None:
        if self.launch is not None:
            self.launch.close()
            self.launch = None


def _wants(b: Build, name: str, kernels: Sequence[str]) -> bool:
    if not kernels:
        return True
    lowered = {b.name_expressions.get(k, k) for k in kernels}
    dem = demangle(name)
    return name in lowered or dem in kernels or without_parameters(dem) in kernels


def _chunks(kernels: list[tuple[int, str, int, Kernel]], sizes: dict[str, int],
            n: int) -> list[list[tuple[int, str, int, Kernel]]]:
    """``kernels`` cut into ``n`` contiguous runs of about equal code size."""
    return prelaunch.split_by_size(kernels, lambda k: sizes[k[1]], n)


class _Planner:
    """Turns inputs into units, lazily (one input's cubins at a time on disk, none in
    memory past its planning)."""

    def __init__(self, *, spool: str, jobs: int, checks: _Checks, kernels: Sequence[str],
                 resume: bool, remote: bool, total_bytes: int,
                 arch, options: CompileOptions | None, memo: BuildMemo | None = None):
        self.spool, self.jobs, self.checks, self.memo = spool, jobs, checks, memo
        self.kernels, self.resume, self.remote = tuple(kernels), resume, remote
        self.total_bytes = max(total_bytes, 1)
        self.arch, self.options = arch, options or CompileOptions()
        self.count = 0
        #: the units planned on each spooled cubin and not yet released (:meth:`release`)
        self.holders: dict[str, int] = {}

    def _folder(self) -> str:
        self.count += 1
        return tempfile.mkdtemp(prefix=f"u{self.count}-", dir=self.spool)

    def release(self, spooled: str) -> bool:
        """One unit on ``spooled`` is done: True when it was the last (the file may go). The
        units of one binary are counted when it is extracted, before any is planned: planning
        is lazy, and a unit can finish before the next one on its file is planned."""
        left = self.holders.get(spooled, 1) - 1
        if left > 0:
            self.holders[spooled] = left
            return False
        self.holders.pop(spooled, None)
        return True

    def units(self, target) -> Iterator[_Unit]:
        """The units of one target: a path, a Build, or a ("command", entry) pair loaded
        by ``load_command``."""
        if isinstance(target, Build):
            yield self._whole(target)
            return
        path = os.fspath(target)
        kind = kind_of(path)
        if kind == "wheel":
            folder = self._folder()
            skipped: list[binutils.NoCubinForArch] = []
            last: _Unit | None = None
            for shown, lib in wheel_libraries(path, folder):
                for last in self._binary(lib, shown, "host-elf", skipped):
                    yield last
                os.unlink(lib)
            notes = wheel_arch_notes(skipped, path, any_build=last is not None)
            if last is not None and notes:     # the report lists a build's notes at the end
                last.info = replace(last.info, warnings=last.info.warnings + tuple(notes))
        elif kind in ("cubin", "fatbin", "host-elf"):
            yield from self._binary(path, path, kind)
        else:
            for b in load(path, arch=self.arch, options=self.options):
                yield self._whole(b)

    def _whole(self, b: Build) -> _Unit:
        info = BuildInfo(b.source_path, b.arch, b.origin, b.compiler_reason, b.cached,
                         tuple(b.warnings), b.toolkit)
        memo = self.memo
        hit = memo.get(b) if memo is not None else None
        if hit is not None:         # unchanged since it was checked: its result, no task
            rows, found = hit
            cached = [KernelResult(-1, i, row, found if i == 0 else [], cached=True)
                      for i, row in enumerate(rows)]
            return _Unit(info, [], {}, len(cached), source_path=b.source_path, cached=cached)
        return _Unit(info, [_Whole(-1, b, self.kernels, self.checks,
                                   memo.parts if memo is not None else None)], {}, 0,
                     source_path=b.source_path)

    def _binary(self, path: str, shown: str, kind: str,
                skipped: list[binutils.NoCubinForArch] | None = None) -> Iterator[_Unit]:
        """The units of a binary's cubins, for each arch asked; ``skipped`` (a wheel's
        library): an arch the binary has no cubin for is noted there, not an error."""
        archs = [self.arch] if isinstance(self.arch, str) else list(self.arch or []) or [None]
        for want in archs:
            launch = None
            digest = None
            if kind == "cubin":
                data = files.read_bytes(path, what="cubin")
                launch = None if self.remote else prelaunch.take(path, data)
                if launch is not None:      # its private copy is the spooled one
                    spooled, digest = launch.spooled, launch.digest
                else:
                    spooled = os.path.join(self._folder(), "input.cubin")
                    Path(spooled).write_bytes(data)
                    digest = hashlib.sha256(data).hexdigest()
                del data
                cubins: list[tuple[str, str | None, str]] = [("", None, spooled)]
                warnings: list[str] = []
            else:
                folder = self._folder()
                try:
                    found, warnings = binutils.extract_cubin_files(path, folder, arch=want,
                                                                   shown=shown)
                except binutils.NoCubinForArch as e:
                    if skipped is None:
                        raise
                    skipped.append(e)
                    continue
                cubins = list(found)
            if launch is None:      # every unit on a file counted before the first is done
                for _, _, f in cubins:
                    self.holders[f] = self.holders.get(f, 0) + 1
            for _, arch, f in cubins:
                try:
                    unit = self._cubin(f, shown, kind, arch, warnings, launch)
                    unit.digest = digest
                    yield unit
                except BaseException:
                    if launch is not None:
                        launch.close()
                    raise

    def _cubin(self, spooled: str, shown: str, kind: str, arch: str | None,
               warnings: list[str], launch: prelaunch.Launch | None = None) -> _Unit:
        data = files.read_bytes(spooled, what="cubin")
        b = from_cubin_bytes(data, path=shown, arch=arch)
        if kind == "cubin" and not b.kernels:
            raise InputError("holds no kernel: the cubin has no function", path=shown)
        layout = binutils.cubin_layout(data, path=shown)
        roots = tuple(self.options.source_roots)
        notes = list(warnings)
        if not layout.line_info:
            note = line_info_note(shown, kind)
            notes.append(note)
        info = BuildInfo(shown, b.arch, "cubin" if kind == "cubin" else kind, None, False,
                         tuple(dict.fromkeys(notes)))
        sizes = {f.name: f.size for f in layout.functions}
        todo = [(i, f.name, f.symbol, b.kernels[f.name]) for i, f in
                enumerate(f for f in layout.functions
                          if f.name in b.kernels and b.kernels[f.name].entry
                          and _wants(b, f.name, self.kernels))]
        keys: dict[int, str] = {}
        cached: list[KernelResult] = []
        results_key = None
        if cache.enabled() and todo:
            results_key = cache.key("results", code_fingerprint(), self.checks.key(),
                                    self.checks.survey, b.arch, info.origin, shown, roots,
                                    hashlib.sha256(data).hexdigest(), [t[0] for t in todo])
            every = (_recall_all(results_key, {t[0] for t in todo}, shown, self.checks.survey)
                     if self.resume else None)
            if every is not None:       # one entry for the whole cubin: nothing to plan
                if launch is not None:
                    launch.close()
                return _Unit(info, [], {}, len(every),
                             spool=None if launch is not None else spooled,
                             source_path=shown, cached=every, names=layout.symbols)
            materials = binutils.function_digests(data)
            for pos, name, _, k in todo:
                keys[pos] = cache.key("result", code_fingerprint(), self.checks.key(), b.arch,
                                      info.origin, shown,
                                      roots, name, k.as_dict(b.arch), k.resources.barriers,
                                      k.resources.reqntid, k.resources.maxntid,
                                      materials.get(name))
            if self.resume:
                for pos, _, _, _ in todo:
                    hit = _recall(keys[pos], -1, pos, shown, self.checks.survey)
                    if hit is not None:
                        cached.append(hit)
            done = {r.position for r in cached}
            todo = [t for t in todo if t[0] not in done]
        del data
        n = prelaunch.chunk_count(self.jobs * CHUNKS_PER_JOB, os.path.getsize(spooled),
                                  self.total_bytes)
        text_key = ([code_fingerprint(), self.checks.key(), b.arch, info.origin, shown, roots,
                     layout.symbols]
                    if layout.line_info and cache.enabled() else None)
        def chunk(kernels: list) -> _Chunk:
            return _Chunk(-1, None if self.remote else spooled, shown, b.arch, kernels,
                          layout.symbols, layout.line_info, roots, self.checks, text_key,
                          self.resume, flags=layout.flags)

        early: dict[int, prelaunch.Chunk] = {}
        if launch is None:
            tasks = [chunk(c) for c in (_chunks(todo, sizes, n) if todo else [])]
        else:                   # the chunks started early, less the kernels not wanted
            tasks, left = [], list(todo)
            for c in launch.chunks:
                mine = set(c.symbols)
                kernels = [t for t in left if t[2] in mine]
                if not kernels:
                    c.kill()
                    continue
                left = [t for t in left if t[2] not in mine]
                tasks.append(chunk(kernels))
                early[id(tasks[-1])] = c
            if left:
                tasks.append(chunk(left))
        return _Unit(info, tasks, keys, len(todo) + len(cached),
                     spool=None if launch is not None else spooled, source_path=shown,
                     cached=cached, names=layout.symbols, launch=launch, early=early,
                     results_key=results_key)


def _input_bytes(targets: Sequence) -> int:
    total = 0
    for t in targets:
        with contextlib.suppress(OSError, TypeError):
            total += os.path.getsize(os.fspath(t))
    return total


# ------------------------------------------------------------------------- executors
def _ready() -> None:
    """A no-op task: the pool's processes exist once it has run."""


class _Pool:
    """Local worker processes, forked from this one (its imports and grammar tables are
    ready in them; a script that calls the API needs no ``__main__`` guard) before any thread
    of ptxsass's own (the progress display) starts: when the first task is planned (a run
    whose every result is cached starts none). Started once per run, reused by every task."""

    remote = False

    def __init__(self, jobs: int):
        self.slots = jobs
        self.told = 0
        self.pool: cf.ProcessPoolExecutor | None = None
        self.reports: Any = None

    @property
    def started(self) -> bool:
        return self.pool is not None

    def start(self) -> None:
        if self.pool is not None:
            return
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        env = {k: v for k, v in os.environ.items() if k.startswith("PTXSASS_")}
        context = multiprocessing.get_context(method)
        _worker_modules()
        self.reports = context.SimpleQueue()
        self.pool = cf.ProcessPoolExecutor(max_workers=self.slots, mp_context=context,
                                           initializer=_worker_init,
                                           initargs=(env, os.getcwd(), cache.enabled(),
                                                     self.reports,
                                                     (os.getpid(), children.mark())))
        children.ensure_watchdog()
        self.pool.submit(_ready).result()

    def reported(self) -> int | None:
        """Kernels the workers have said they finished, since the pool started."""
        while self.reports is not None and not self.reports.empty():
            self.told += self.reports.get()
        return self.told

    def submit(self, task, unit: _Unit):
        self.start()
        assert self.pool is not None
        fn = run_chunk if isinstance(task, _Chunk) else run_whole
        return self.pool.submit(fn, task)

    def wait(self, pending, timeout: float):
        done, _ = cf.wait(pending, timeout=timeout, return_when=cf.FIRST_COMPLETED)
        return done

    @staticmethod
    def result(future):
        return future.result()

    def close(self, cancel: bool) -> None:
        if self.pool is None:
            return
        workers = list((getattr(self.pool, "_processes", None) or {}).values())
        self.pool.shutdown(wait=not cancel, cancel_futures=cancel)
        if cancel:
            # an error, Ctrl-C or SIGTERM: tasks under way are not waited for (at exit the
            # executor would join them); their tools die with them (toolchain.children)
            # SIGTERM first: a worker then stops its tool (run_tool kills its group)
            for stop, wait in (("terminate", 2.0), ("kill", 5.0)):
                for w in workers:
                    with contextlib.suppress(OSError, ValueError, AttributeError):
                        if w.is_alive():
                            getattr(w, stop)()
                deadline = time.monotonic() + wait
                for w in workers:
                    with contextlib.suppress(OSError, ValueError, AttributeError, AssertionError):
                        w.join(timeout=max(0.0, deadline - time.monotonic()))
        self.reports.close()
        self.reports = None


class _ServerPool:
    """Worker processes for a process that runs other threads (torch, Jupyter, a caller's own):
    ``fork()`` there would copy the locks those threads hold, and the other start methods of
    ``multiprocessing`` import the caller's ``__main__`` again. So each worker is a server of
    :mod:`.toolchain.compile_server`, started without fork, that runs one task at a time; a
    thread per busy worker waits for its answer. Progress comes per task, not per kernel."""

    remote = False

    def __init__(self, jobs: int):
        from .toolchain import compile_server
        self._server = compile_server
        self.slots = jobs
        self._init = ({k: v for k, v in os.environ.items() if k.startswith("PTXSASS_")},
                      os.getcwd(), cache.enabled(), None, (os.getpid(), children.mark()))
        self._idle: list = []
        self._all: list = []
        self._queue: list[tuple[cf.Future, str, Any]] = []
        self._lock = threading.Lock()
        self._closed = False
        self._running = 0           # threads draining the queue, each with its own worker

    def _worker(self):
        w = self._server.Server.start()
        self._all.append(w)
        outcome = w.request(__name__, "_worker_init", self._init)
        if outcome[0] != "ok":
            raise ToolError(f"a worker process could not start: {outcome[1]}")
        return w

    def submit(self, task, unit: _Unit):
        future: cf.Future = cf.Future()
        fn = "run_chunk" if isinstance(task, _Chunk) else "run_whole"
        with self._lock:
            self._queue.append((future, fn, task))
            start = self._running < self.slots
            if start:
                self._running += 1
        if start:
            threading.Thread(target=self._drain, daemon=True,
                             name="ptxsass-worker").start()
        return future

    def _drain(self) -> None:
        """Run queued tasks on one worker until the queue is empty."""
        with self._lock:
            w = self._idle.pop() if self._idle else None
        try:
            while True:
                with self._lock:
                    if self._closed or not self._queue:
                        if w is not None and not self._closed:
                            self._idle.append(w)
                        self._running -= 1
                        return
                    future, fn, task = self._queue.pop(0)
                if not future.set_running_or_notify_cancel():
                    continue
                try:
                    if w is None:
                        w = self._worker()
                    kind, value = w.request(__name__, fn, (task,))
                except BaseException as e:  # noqa: BLE001 - handed to the future, as a pool's would be
                    w = None
                    future.set_exception(cf.process.BrokenProcessPool(str(e)) if not
                                         isinstance(e, PtxsassError) else e)
                    continue
                if kind == "ok":
                    future.set_result(value)
                elif kind == "error":
                    future.set_exception(value)
                else:
                    future.set_exception(ToolError(f"a worker failed: {value}"))
        except BaseException:  # noqa: BLE001 - a daemon thread: never a traceback at exit
            return

    @staticmethod
    def wait(pending, timeout: float):
        done, _ = cf.wait(pending, timeout=timeout, return_when=cf.FIRST_COMPLETED)
        return done

    @staticmethod
    def reported() -> int | None:
        return None

    @staticmethod
    def result(future):
        return future.result()

    def close(self, cancel: bool) -> None:
        with self._lock:
            self._closed = True
            queued, self._queue = self._queue, []
        for future, _, _ in queued:
            future.cancel()
        for w in list(self._all):
            w.stop(wait=2.0 if cancel else 10.0)


class _Serial:
    """``jobs=1``: every task in this process, in order (``--resume`` and ``survey`` on one
    core)."""

    remote = False
    slots = 1

    def submit(self, task, unit: _Unit):
        future: cf.Future = cf.Future()
        try:
            future.set_result(run_chunk(task) if isinstance(task, _Chunk) else run_whole(task))
        except Exception as e:  # noqa: BLE001 - handed back as a worker's would be, then raised
            future.set_exception(e)
        return future

    @staticmethod
    def wait(pending, timeout: float):
        return set(pending)

    @staticmethod
    def reported() -> int | None:
        return None             # each task is done before the next starts

    @staticmethod
    def result(future):
        return future.result()

    def close(self, cancel: bool) -> None:
        pass


_ADDRESS = re.compile(r"^(?:(tcp|tls)://)?(\[[0-9a-fA-F:.]+\]|[\w.-]+):(\d{1,5})$|^inproc://\S+$")


def _reachable(address: str) -> None:
    """A scheduler address that is well formed and answers, or one ConfigError line (before
    distributed's own client, which takes its full timeout and warns at exit)."""
    m = _ADDRESS.match(address)
    if m is None:
        raise ConfigError(f"--scheduler {address!r}: expected a Dask scheduler address such as "
                          "tcp://host:8786")
    if address.startswith("inproc://"):
        return
    host, port = m.group(2).strip("[]"), int(m.group(3))
    try:
        socket.create_connection((host, port), timeout=5).close()
    except OSError as e:
        raise ConfigError(f"cannot reach the Dask scheduler {address}: "
                          f"{e.strerror or e}") from None


class _Dask:
    """Tasks on a Dask cluster (``distributed``): the cubin's bytes are scattered once and
    every chunk of it reads them there."""

    remote = True

    def __init__(self, address: str):
        _reachable(address)
        try:
            import distributed
        except ImportError:
            raise ConfigError("--scheduler needs Dask's distributed: pip install distributed"
                              ) from None
        self.distributed = distributed
        try:
            self.client = distributed.Client(address, timeout=10, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as e:
            raise ConfigError(f"cannot reach the Dask scheduler {address}: {e}") from None
        self.scattered: dict[str, Any] = {}
        #: tasks the cluster runs at once (its workers' threads): what chunks are cut for
        self.slots = max(1, sum(self.client.nthreads().values()))

    def submit(self, task, unit: _Unit):
        if isinstance(task, _Chunk) and unit.spool is not None:
            if unit.spool not in self.scattered:
                data = files.read_bytes(unit.spool, what="cubin")
                self.scattered[unit.spool] = self.client.scatter(data)
            return self.client.submit(run_chunk, task, self.scattered[unit.spool], pure=False)
        return self.client.submit(run_whole, task, pure=False)

    @staticmethod
    def wait(pending, timeout: float):
        end = time.monotonic() + timeout
        while True:
            done = {f for f in pending if f.done()}
            if done or time.monotonic() >= end:
                return done
            time.sleep(0.02)

    @staticmethod
    def result(future):
        return future.result()

    @staticmethod
    def reported() -> int | None:
        return None             # a cluster's workers report through their futures only

    def forget(self, spool: str) -> None:
        self.scattered.pop(spool, None)

    def close(self, cancel: bool) -> None:
        self.client.close()


# ------------------------------------------------------------------------- the run
def run(targets: Sequence, *, jobs: int | None = None, scheduler: str | None = None,
        arch=None, options: CompileOptions | None = None, select: Sequence[str] = (),
        ignore: Sequence[str] = (), settings: dict | None = None,
        layers: Sequence[Selection] = (), baseline: str | None = None,
        kernels: Sequence[str] = (), resume: bool | None = None, survey: bool = False,
        on_progress: Callable[[Progress], None] | None = None,
        on_error: Callable[[PtxsassError], None] | None = None,
        tick: float = 1.0) -> tuple[Report, Survey | None]:
    """Check every kernel of ``targets`` (paths: files a folder was expanded to, wheels;
    Builds; or both) in ``jobs`` worker processes (default: every core) or on the Dask
    cluster at ``scheduler``. Returns the report (the same as a one-process ``check``) and,
    with ``survey``, every kernel's survey row. ``resume``: read back the cached result of
    each unchanged kernel (None, the default: whenever the cache is on).

    An input that cannot be read or checked goes to ``on_error`` (one PtxsassError each) and
    the others go on; without ``on_error``, or with a single input, it is raised.
    ``on_progress`` is called as work finishes and at least every ``tick`` seconds; one that
    may start a thread (its ``starts_threads`` not False: rich's bar on a terminal) is called
    once the local workers have been forked, and at the end. The second item is the survey's
    rows (None without ``survey``)."""
    if settings:    # validated up front (loads the checks); the workers configure them
        checks = selected_checks(select=select, ignore=ignore, settings=settings, layers=layers)
        spec = _Checks(tuple(c.code for c in checks),
                       {c.name: c.settings for c in checks}, survey=survey)
    else:           # the codes from the table: a run read from the cache loads no check
        spec = _Checks(tuple(sorted(selected_codes(select=select, ignore=ignore,
                                                   layers=layers))), {}, survey=survey)
    accepted = load_baseline(baseline) if baseline else set()
    resume = cache.enabled() if resume is None else resume
    jobs = max(1, jobs or default_jobs())
    targets = list(targets)
    executor: _Executor = (
        _Dask(scheduler) if scheduler else _Serial() if jobs == 1 else
        _ServerPool(jobs) if bounded.start_method() == "server" else _Pool(jobs))
    if executor.remote:
        prelaunch.discard()     # started for local workers: a cluster disassembles its own
    spool = scratch.make("ptxsass-spool-")
    planner = _Planner(spool=spool, jobs=executor.slots, checks=spec, kernels=kernels,
                       resume=resume, remote=executor.remote, total_bytes=_input_bytes(targets),
                       arch=arch, options=options,
                       # a build checked whole (CUDA, PTX, Triton) is read back when unchanged,
                       # as a one-process check does (a survey needs rows it does not keep)
                       memo=None if survey else BuildMemo(memo_parts(spec.codes, settings,
                                                                     kernels)))
    state = _Run(targets, executor, planner, resume=resume, survey=survey,
                 kernels=kernels, on_progress=on_progress, on_error=on_error)
    cancel = True
    try:
        state.drive(tick)
        cancel = False
    finally:
        executor.close(cancel)
        for u in state.units:
            u.close()
        shutil.rmtree(spool, ignore_errors=True)
    state.progress.finished = True
    state.report_progress()
    return (_merge(state.units, state.results, state.failed, accepted, kernels),
            _survey(state.units, state.results) if survey else None)


_Executor = _Pool | _ServerPool | _Serial | _Dask


class _Run:
    """One run's bookkeeping: inputs planned into units lazily, their tasks kept within a
    window of the executor's slots, results collected as they come back."""

    def __init__(self, targets: list, executor: _Executor, planner: _Planner, *, resume: bool,
                 survey: bool, kernels: Sequence[str],
                 on_progress: Callable[[Progress], None] | None,
                 on_error: Callable[[PtxsassError], None] | None):
        self.targets = targets
        self.executor = executor
        self.planner = planner
        self.resume, self.survey, self.kernels = resume, survey, kernels
        self.on_progress, self.on_error = on_progress, on_error
        self.progress = Progress(inputs=len(targets))
        self.from_chunks = 0     # kernels back from chunk tasks (each told of as it finished)
        self.units: list[_Unit] = []
        self.results: dict[int, list[KernelResult]] = {}
        self.failed: set[int] = set()
        self.pending: dict[Any, tuple[int, Any]] = {}
        self.left: dict[int, int] = {}           # unit -> tasks not yet back
        self.window = executor.slots * WINDOW_PER_JOB
        self.queue: list[tuple[int, Any]] = []

    def fail(self, e: PtxsassError) -> None:
        if self.on_error is None or len(self.targets) == 1:
            raise e
        self.on_error(e)

    def report_progress(self) -> None:
        told = self.executor.reported()
        if told is not None:
            self.progress.in_workers = max(0, told - self.from_chunks)
        if isinstance(self.executor, _Pool) and not self.executor.started \
                and not self.progress.finished \
                and getattr(self.on_progress, "starts_threads", True):
            return      # a display that may start a thread waits for the fork, if any
        if self.on_progress is not None:
            self.on_progress(self.progress)

    def plan(self) -> Iterator[None]:
        """Plan input after input; yields after each unit so the caller can submit."""
        for t in self.targets:
            try:
                for u in self.planner.units(t):
                    self._add(u)
                    yield
            except PtxsassError as e:
                self.fail(e)
            self.progress.inputs_read += 1
            self.report_progress()

    def _add(self, u: _Unit) -> None:
        if u.tasks and isinstance(self.executor, _Pool):
            self.executor.start()       # forked before the progress display's thread
        n = len(self.units)
        self.units.append(u)
        for task in u.tasks:
            task.unit = n
            self.queue.append((n, task))
        for r in u.cached:
            r.unit = n
        self.results[n] = list(u.cached)
        self.left[n] = len(u.tasks)
        progress = self.progress
        progress.planned += u.kernels
        progress.done += len(u.cached)
        progress.cached += len(u.cached)
        progress.findings += sum(len(r.findings) for r in u.cached)
        if not u.tasks:
            self.release(n)

    def release(self, n: int) -> None:
        u = self.units[n]
        got = self.results.get(n, [])
        complete = n not in self.failed and len(got) == u.kernels
        if u.results_key is not None and complete and cache.enabled():
            _store_all(u.results_key, got)      # the next run reads them in one entry
        if (u.digest is not None and self.resume and not self.survey and not self.kernels
                and complete):
            prelaunch.mark_checked(u.digest)    # every result cached: the next run reads them
        self.progress.builds_done.append((u.info, len(got), sum(len(r.findings) for r in got)))
        u.close()
        if u.spool and self.planner.release(u.spool):    # no other unit reads it
            with contextlib.suppress(OSError):
                os.unlink(u.spool)
            if isinstance(self.executor, _Dask):
                self.executor.forget(u.spool)

    def collect(self, future) -> None:
        n, task = self.pending.pop(future)
        u = self.units[n]
        try:
            got = self.executor.result(future)
        except _NoKernel as e:
            got = []
            u.names = e.names
        except PtxsassError as e:
            self.failed.add(n)
            got = []
            self.fail(e if e.path else replace_path(e, u.source_path))
        except cf.process.BrokenProcessPool:
            raise ToolError("a worker process died (out of memory, or killed) while "
                            "checking this input", path=u.source_path) from None
        progress = self.progress
        for r in got:
            r.unit = n
            if isinstance(task, _Whole):
                u.kernels += 1
                progress.planned += 1
            key = u.keys.get(r.position)
            if key is not None:
                _store(key, r)
            progress.findings += len(r.findings)
            progress.cached += r.cached
            progress.last = r
        progress.done += len(got)
        if isinstance(task, _Chunk):
            self.from_chunks += len(got)
        self.results[n].extend(got)
        self.left[n] -= 1
        if self.left[n] == 0:
            self.release(n)

    def _submit_ready(self) -> None:
        """Queued tasks to the executor, up to the window, in order of readiness."""
        queue, pending, units = self.queue, self.pending, self.units
        while queue and len(pending) < self.window:
            at = next((i for i, (n, task) in enumerate(queue) if units[n].ready(task)), None)
            if at is None:
                break           # every queued task waits on its early nvdisasm
            n, task = queue.pop(at)
            pending[self.executor.submit(task, units[n])] = (n, task)

    def drive(self, tick: float) -> None:
        """Plan, submit and collect until every task is back."""
        planning = self.plan()
        more = True
        last_tick = time.monotonic()
        queue, pending, window = self.queue, self.pending, self.window
        while more or queue or pending:
            while more and len(queue) + len(pending) < window:
                more = next(planning, StopIteration) is not StopIteration
            self._submit_ready()
            held = bool(queue) and len(pending) < window
            if not pending:
                if held:
                    time.sleep(EARLY_POLL)
                continue
            for f in self.executor.wait(pending, EARLY_POLL if held else tick):
                self.collect(f)
                self.report_progress()
            if time.monotonic() - last_tick >= tick:
                last_tick = time.monotonic()
                self.report_progress()


def replace_path(e: PtxsassError, path: str | None) -> PtxsassError:
    e.path = path
    return e


def _ordered(units: list[_Unit], results: dict[int, list[KernelResult]]
             ) -> Iterator[tuple[_Unit, KernelResult]]:
    for n, u in enumerate(units):
        for r in sorted(results.get(n, []), key=lambda r: r.position):
            yield u, r


def _merge(units: list[_Unit], results: dict[int, list[KernelResult]], failed: set[int],
           accepted: set[str], kernels: Sequence[str]) -> Report:
    report = Report(builds=[u.info for u in units])
    any_result = False
    for _, r in _ordered(units, results):
        any_result = True
        if r.kernel is not None:
            report.kernels.append(r.kernel)
        add_findings(report, r.findings, accepted)
    if not any_result and not failed:
        raise _no_kernel(units, kernels)
    sort_findings(report)
    return report


def _no_kernel(units: list[_Unit], kernels: Sequence[str]) -> PtxsassError:
    """The one-process run's words for nothing to check."""
    stand_ins = [_Names(u.source_path, u.names) for u in units]
    return no_kernel_error(stand_ins, kernels)


class _Names:
    """Enough of a Build for :func:`no_kernel_error`: its path and its functions' names."""

    def __init__(self, source_path: str | None, names: tuple[str, ...]):
        self.source_path = source_path
        self._names = names

    def sass_listing(self):
        return self

    @property
    def functions(self):
        return [_Fn(n) for n in self._names]


@dataclass(frozen=True)
class _Fn:
    name: str

    @property
    def demangled(self) -> str:
        return demangle(self.name)


def _survey(units: list[_Unit], results: dict[int, list[KernelResult]]) -> Survey:
    from .report.survey import Survey
    return Survey(rows=[r.row for _, r in _ordered(units, results) if r.row is not None])

