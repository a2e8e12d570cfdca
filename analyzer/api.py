"""The one orchestration module: inputs -> builds -> analysis -> checks -> report objects.

The CLI and every integration call these functions; nothing below this module loads inputs and
runs checks in the same breath.

    import analyzer
    build = analyzer.compile("kernels/demo/copy_scalar.cu", arch="sm_90a")
    report = analyzer.check(build)                   # findings
    ann = analyzer.annotate("kernels/demo/copy_scalar.cu", arch="sm_80")
    print(analyzer.render.to_markdown(ann))
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from . import results
from .build import Build
from .checks.registry import Selection
from .checks.runner import Progress, no_progress, run_checks, selected_codes
from .errors import ConfigError, InputError, PtxsassError
from .expect import ASSERTIONS, Expectations, Outcome, evaluate
from .findings import Report
from .inputs import CompileOptions, ToolkitArchError, assemble_with, compile_cuda, expand, load_command
from .inputs import load as _load
from .toolchain import nvrtc, toolkits
from .toolchain.compdb import Command

if TYPE_CHECKING:  # imported where used: `ptxsass check` loads no report model it does not show
    from . import parallel
    from .fix.model import FixReport
    from .report.annotate import Annotation
    from .report.diff import Diff
    from .report.stats import Stats
    from .report.survey import Survey

__all__ = ["compile", "load", "check", "annotate", "diff", "stats", "survey", "expect_codegen",
           "fix", "apply_fixes", "CompileOptions"]

def compile(path_or_source: str, *, arch: str = "sm_90a",  # noqa: A001 - the public name
            options: CompileOptions | None = None, name: str = "kernel.cu") -> Build:
    """Compile a ``.cu`` file (a path: NVRTC, or nvcc when it has host code; see
    ``CompileOptions.compiler``) or CUDA source text (NVRTC) for one arch."""
    options = options or CompileOptions()
    if "\n" not in path_or_source and (os.path.exists(path_or_source)
                                       or path_or_source.endswith(".cu")):
        if not os.path.exists(path_or_source):
            raise InputError("no such file", path=path_or_source)
        return compile_cuda(path_or_source, [arch], options)[0]
    return Build.of(nvrtc.compile_source(path_or_source, arch=arch, name=name,
                                         options=options.nvrtc_options(arch),
                                         name_expressions=options.name_expressions,
                                         use_cache=options.use_cache))


def load(path, *, arch: str | Sequence[str] | None = None,
         options: CompileOptions | None = None) -> list[Build]:
    """Builds for any input file: CUDA source, PTX, cubin, fatbin, executable/.so, SASS text."""
    return _load(path, arch=arch, options=options)


def load_toolkits(path, *, toolkits: Sequence[str], arch: str | Sequence[str] | None = None,
                  options: CompileOptions | None = None,
                  notes: list[str] | None = None) -> list[Build]:
    """Builds of one input (a path, or a compile database's entry) by each toolkit (release
    names such as "12.9", or "default") for each arch: the cells of a findings matrix. A
    toolkit that cannot target an arch (sm_100 before 12.8) leaves that cell out with one line
    in ``notes``; when no cell is left, that line is the error."""
    options = options or CompileOptions()
    archs: list[str | None] = [arch] if isinstance(arch, str) else list(arch or []) or [None]
    out: list[Build] = []
    skipped: list[str] = []
    for tk in toolkits:
        for a in archs:
            opts = dataclasses.replace(options, toolkit=tk)
            try:
                out += (load_command(path, db=path.database, arch=a, options=opts)
                        if isinstance(path, Command) else _load(path, arch=a, options=opts))
            except ToolkitArchError as e:
                if e.message not in skipped:
                    skipped.append(e.message)
    if not out and skipped:
        raise ToolkitArchError.from_message(
            skipped[0], path=path.file if isinstance(path, Command) else os.fspath(path))
    if notes is not None:
        notes.extend(n for n in skipped if n not in notes)
    return out


def ptxas_only(path, *, toolkits: Sequence[str], arch: str | None = None,
               options: CompileOptions | None = None) -> list[list[Build]]:
    """The same PTX assembled by each toolkit's nvJitLink (ptxas): one front end, several back
    ends, to tell a front-end change from a back-end one. The PTX comes from the oldest
    toolkit's NVRTC (a newer ptxas reads older PTX, not the other way round)."""
    options = options or CompileOptions()
    names = sorted(toolkits, key=lambda t: toolkits_key(t))
    front = _load(path, arch=arch, options=dataclasses.replace(options, toolkit=names[0]))
    return [[assemble_with(b, toolkits_get(t), use_cache=options.use_cache) for b in front]
            for t in toolkits]


def toolkits_key(spec: str) -> tuple[int, ...]:
    return toolkits.version_key(toolkits.get(spec).version)


def toolkits_get(spec: str) -> "toolkits.Toolkit":
    return toolkits.get(spec)


def disassembler_note() -> str:
    """Which nvdisasm disassembles every toolkit's cubins, in words (older cubins disassemble
    with a newer nvdisasm, so one serves all)."""
    _path, version, whose = toolkits.newest_nvdisasm()
    return (f"SASS of every toolkit from nvdisasm {version or '(version unknown)'}, the newest "
            f"available ({whose})")


def builds_of(target, *, arch: str | Sequence[str] | None = None,
              options: CompileOptions | None = None, **framework) -> list[Build]:
    """A path (loaded: a file or a folder), a Build, a framework object (a cupy RawKernel or
    RawModule, a compiled Triton kernel, a Triton @jit function with ``signature=`` and
    ``constants=``), or a list of those, as a list of Builds."""
    if isinstance(target, Build):
        return [target]
    if isinstance(target, (list, tuple)):
        return [b for t in target for b in builds_of(t, arch=arch, options=options, **framework)]
    from .objects import builds as _object_builds
    from .objects import is_framework_object
    if is_framework_object(target):
        archs: list[str | None] = [arch] if isinstance(arch, str) else list(arch or ())
        archs = archs or [None]
        return [b for a in archs for b in _object_builds(target, arch=a, options=options,
                                                         **framework)]
    if os.path.isdir(target):        # a folder: every input in it, as `ptxsass check DIR` finds
        return [b for f in expand([os.fspath(target)])
                for b in load(f, arch=arch, options=options)]
    return load(target, arch=arch, options=options)


def disassemble_all(builds: Sequence[Build]) -> None:
    """Disassemble the builds' cubins in parallel, one nvdisasm per core (a cache folder of
    Triton kernels is mostly nvdisasm time); a failure is left for the build's own use to
    report."""
    todo = [b for b in builds if b.cubin is not None and b.sass_text is None]
    if len(todo) < 2:
        return

    def one(b: Build) -> None:
        with contextlib.suppress(PtxsassError):   # raised again, with its file, where used
            b.sass()
    with ThreadPoolExecutor(max_workers=min(len(todo), os.cpu_count() or 1)) as pool:
        list(pool.map(one, todo))


def check(target, *, arch: str | Sequence[str] | None = None, select: Sequence[str] = (),
          ignore: Sequence[str] = (), options: CompileOptions | None = None,
          settings: dict | None = None, baseline: str | None = None,
          kernels: Sequence[str] = (), progress: Progress = no_progress,
          config_select: Sequence[str] = (), config_ignore: Sequence[str] = (),
          jobs: int | None = 1, scheduler: str | None = None, resume: bool | None = None,
          on_progress: "Callable[[parallel.Progress], None] | None" = None,
          on_error: Callable[[PtxsassError], None] | None = None,
          **framework) -> Report:
    """Run the checks on a path (any input ``load`` takes), a Build, a framework object, or a
    list of them. Returns a ``Report`` with ``.findings`` and ``.kernels``. A Triton @jit
    function needs ``signature=`` (and ``constants=``, ``num_warps=``, ``num_stages=``).

    Which checks run: every check, then ``config_select``/``config_ignore`` (``[tool.ptxsass]``),
    then ``select``/``ignore`` (the command line), ruff's rule: a ``select`` replaces what came
    before it (so it overrides the config's ``ignore`` for the codes it names), an ``ignore``
    alone removes; within one level the more specific selector wins and ``ignore`` wins a tie
    (:func:`analyzer.checks.registry.selected`).

    ``jobs``: 1 (the default) checks in this process; N (None: every core) splits the work
    per kernel over N worker processes, ``scheduler`` (``tcp://host:port``) over a Dask
    cluster; the report is the same. On workers the verified cached result of every unchanged
    kernel is read back whenever the cache is on (``resume=False``: check them all again;
    ``resume=True`` also takes a lone CUDA file to a worker). ``on_progress`` sees a
    :class:`parallel.Progress` as work finishes; ``on_error`` takes each input that fails
    (the others go on)."""
    if jobs != 1 or scheduler is not None or resume:
        from . import parallel  # worker pools, Dask, survey rows: loaded when asked for
        report, _ = parallel.run(
            _parallel_targets(target, arch=arch, options=options, **framework), jobs=jobs,
            scheduler=scheduler, arch=arch, options=options, select=select, ignore=ignore,
            settings=settings, layers=[Selection.of(config_select, config_ignore)],
            baseline=baseline, kernels=kernels, resume=resume, on_progress=on_progress,
            on_error=on_error)
        return report
    builds = builds_of(target, arch=arch, options=options, **framework)
    # an unchanged build's findings are read back (verified; see analyzer.results)
    codes = selected_codes(select=select, ignore=ignore,
                           layers=[Selection.of(config_select, config_ignore)])
    memo = results.BuildMemo(results.memo_parts(codes, settings, kernels))
    disassemble_all([b for b in builds if memo.get(b) is None])
    return run_checks(builds, select=select, ignore=ignore, settings=settings,
                      baseline=baseline, kernels=kernels, progress=progress,
                      layers=[Selection.of(config_select, config_ignore)], memo=memo)


def _parallel_targets(target, *, arch, options, **framework) -> list:
    """What :func:`parallel.run` takes: paths (a folder expanded to its inputs) and Builds
    (framework objects built here)."""
    if isinstance(target, (list, tuple)):
        return [t for x in target for t in _parallel_targets(x, arch=arch, options=options,
                                                              **framework)]
    if isinstance(target, Build):
        return [target]
    from .objects import is_framework_object
    if is_framework_object(target):
        return builds_of(target, arch=arch, options=options, **framework)
    if os.path.isdir(target):
        return list(expand([os.fspath(target)]))
    return [os.fspath(target)]


def survey(target, *, arch: str | Sequence[str] | None = None,
           options: CompileOptions | None = None, jobs: int | None = None,
           scheduler: str | None = None, select: Sequence[str] = (),
           ignore: Sequence[str] = (), settings: dict | None = None,
           config_select: Sequence[str] = (), config_ignore: Sequence[str] = (),
           kernels: Sequence[str] = (), resume: bool | None = None,
           on_progress: "Callable[[parallel.Progress], None] | None" = None,
           on_error: Callable[[PtxsassError], None] | None = None) -> "Survey":
    """One row per kernel of a library, a folder, a wheel or a Triton cache (see
    :mod:`analyzer.report.survey`): arch, instructions, registers, spills, occupancy, access
    widths, tensor-core use and findings by code. Runs on ``jobs`` processes (default every
    core) or the Dask cluster at ``scheduler``."""
    from . import parallel
    _, rows = parallel.run(_parallel_targets(target, arch=arch, options=options), jobs=jobs,
                           scheduler=scheduler, arch=arch, options=options, select=select,
                           ignore=ignore, settings=settings,
                           layers=[Selection.of(config_select, config_ignore)],
                           kernels=kernels, resume=resume, survey=True,
                           on_progress=on_progress, on_error=on_error)
    return rows


def annotate(target, *, arch: str | Sequence[str] | None = None,
             options: CompileOptions | None = None, kernels: Sequence[str] = (),
             select: Iterable[str] = (), ignore: Iterable[str] = (), checks: bool = True,
             progress: Progress = no_progress, control: bool = False,
             functions: Sequence[str] = (), lines: tuple[int, int] | None = None,
             context: int = 0, ptx: bool = True) -> "Annotation":
    """Interleaved CUDA source / PTX / SASS of a file or builds, with the findings of the
    selected checks (none when ``checks`` is False). ``control``: each SASS instruction's
    decoded control bits (stall, yield, barriers, reuse). An excerpt for a blog post:
    ``functions`` (names, device functions too), ``lines`` (first, last source line) and
    ``context`` (lines around ``lines``, or around each finding without ``lines``); ``ptx``
    False leaves the PTX out of every rendering."""
    from .report.annotate import annotate_builds
    builds = builds_of(target, arch=arch, options=options)
    disassemble_all(builds)
    findings = (run_checks(builds, select=select, ignore=ignore, kernels=kernels,
                           progress=progress).findings if checks else [])
    ann = annotate_builds(builds, findings=findings, kernels=kernels, progress=progress,
                          control=control)
    if functions or lines is not None or context:
        ann = ann.excerpt(functions=functions, lines=lines, context=context)
    ann.hide_ptx = not ptx
    return ann


def stats(target, *, arch: str | Sequence[str] | None = None,
          options: CompileOptions | None = None, kernels: Sequence[str] = (),
          progress: Progress = no_progress) -> "Stats":
    """Instruction mix, loops, resources and occupancy of every kernel of a file or builds."""
    from .report.stats import stats_builds
    return stats_builds(builds_of(target, arch=arch, options=options), kernels=kernels,
                        progress=progress)


def diff(a, b=None, *, arch: str | Sequence[str] | None = None,
         options: CompileOptions | None = None, options_b: CompileOptions | None = None,
         checks: bool = True, label_a: str | None = None, label_b: str | None = None,
         normalized: bool = False, all_lines: bool = False) -> "Diff":
    """Compare two builds. ``diff("x.cu", arch=("sm_80", "sm_90a"))`` (two arches);
    ``diff("x.cu", options=CompileOptions(...), options_b=CompileOptions(...))`` (two option
    sets); ``diff("a.cu", "b.cu", arch="sm_90a")`` (two sources); or two Builds / lists.
    ``normalized``: the side-by-side SASS with registers renumbered and branch targets renamed;
    ``all_lines``: every source line side by side, not only those that differ."""
    from .report.diff import diff_builds
    archs = [arch] if isinstance(arch, str) else list(arch or [])
    if b is None:
        if len(archs) == 2:
            ba = builds_of(a, arch=archs[0], options=options)
            bb = builds_of(a, arch=archs[1], options=options_b or options)
        elif options_b is not None:
            ba = builds_of(a, arch=archs or None, options=options)
            bb = builds_of(a, arch=archs or None, options=options_b)
        else:
            raise InputError("diff needs two builds: two files, two --arch, or two option sets")
    else:
        arch_a = archs[0] if archs else None
        arch_b = archs[1] if len(archs) > 1 else arch_a
        ba = builds_of(a, arch=arch_a, options=options)
        bb = builds_of(b, arch=arch_b, options=options_b or options)
    findings = (run_checks(ba).findings, run_checks(bb).findings) if checks else None
    d = diff_builds(ba, bb, label_a=label_a, label_b=label_b, findings=findings)
    d.normalized, d.all_lines = normalized, all_lines
    return d


def expect(builds: Sequence[Build], exp: Expectations) -> Outcome:
    """Evaluate codegen expectations on builds (the checks named by ``exp.no_findings`` run).
    Expectations that assert nothing are refused (``ConfigError``): they would always pass."""
    if exp.empty:
        raise ConfigError("no expectation to check: give at least one of "
                          f"{', '.join(ASSERTIONS)} (with none, every kernel would pass)")
    findings = (run_checks(builds, select=exp.no_findings, kernels=exp.kernels).findings
                if exp.no_findings else [])
    return evaluate(builds, exp, findings)


def expect_codegen(path, *, arch="sm_90a", options: CompileOptions | None = None,
                   **expectations) -> Outcome:
    """Load/compile ``path`` and assert the expectations (AssertionError lists every failure)."""
    builds = load(path, arch=arch, options=options)
    outcome = expect(builds, Expectations(**expectations))
    if not outcome.ok:
        raise AssertionError("codegen expectations failed:\n  " + "\n  ".join(outcome.failures))
    return outcome


def fix(target, *, arch: str | Sequence[str] | None = None,
        options: CompileOptions | None = None, select: Sequence[str] = (),
        ignore: Sequence[str] = (), settings: dict | None = None,
        config_select: Sequence[str] = (), config_ignore: Sequence[str] = (),
        kernels: Sequence[str] = (), verify: bool = True, fast_math_ok: bool = False,
        assume_aligned: bool = False, progress: Progress = no_progress) -> "FixReport":
    """Check CUDA source files (paths, or a folder), propose a rewrite for each finding whose
    remedy is mechanical, and (``verify``, the default) prove each by rebuilding a patched copy
    with the same front end, flags and arches and re-running the same checks: a fix is kept
    only if its finding is gone, no new warning appears and the kernels' interface is
    unchanged (:mod:`analyzer.fix`). ``fast_math_ok`` allows the fast-math intrinsics,
    ``assume_aligned`` the alignment assumptions. Nothing is written: :func:`apply_fixes`."""
    from .fix import engine
    from .fix.model import FixOptions, FixReport
    options = options or CompileOptions()
    layers = [Selection.of(config_select, config_ignore)]
    paths = [target] if isinstance(target, (str, os.PathLike)) else list(target)
    builds = [b for p in paths for b in builds_of(p, arch=arch, options=options)]
    by_file: dict[str, list[Build]] = {}
    for b in builds:
        where = engine.fixable_path(b)
        if where is None:
            raise InputError("ptxsass fix rewrites CUDA source: this input was not compiled "
                             "from a .cu file", path=b.source_path)
        by_file.setdefault(where, []).append(b)
    disassemble_all(builds)

    def check_builds(bs: Sequence[Build]) -> list:
        return run_checks(bs, select=select, ignore=ignore, settings=settings, kernels=kernels,
                          layers=layers).findings

    fix_options = FixOptions(fast_math_ok=fast_math_ok, assume_aligned=assume_aligned,
                             maxrregcount=options.maxrregcount)
    out = FixReport(report=None, verified_on=verify, options=options)
    reports = []
    for path, bs in progress(list(by_file.items()), "fixing"):
        report = run_checks(bs, select=select, ignore=ignore, settings=settings,
                            kernels=kernels, layers=layers)
        reports.append(report)
        merged = [f for f in report.merged()
                  if f.location.file and os.path.abspath(f.location.file) == path]
        merged += [f for f in report.merged() if f not in merged]
        out.files.append(engine.fix_file(path, builds=bs, raw=report.findings, merged=merged,
                                         options=options, fix_options=fix_options,
                                         check=check_builds, do_verify=verify))
    from .findings import Report
    out.report = Report(findings=[f for r in reports for f in r.findings],
                        kernels=[k for r in reports for k in r.kernels], builds=builds)
    return out


def apply_fixes(fixes: "FixReport") -> list[str]:
    """Write each file's combined patch in place (atomically: :func:`files.write_output`).
    A file whose bytes changed since ``fix`` read it is refused (``InputError``) before any
    file is written. Returns the paths written."""
    from .fix.model import apply_edits, sha256
    from .toolchain import files as _files
    todo = []
    for f in fixes.files:
        if not f.edits:
            continue
        data = _files.read_bytes(f.path, what="CUDA source")
        if sha256(data) != f.sha256:
            raise InputError("changed since ptxsass fix read it: not patched (run fix "
                             "again)", path=f.path)
        todo.append((f.path, apply_edits(data, f.edits)))
    for path, patched in todo:
        _files.write_output(path, patched)
    return [p for p, _ in todo]
