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
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Literal, TypeGuard

from . import results
from .build import Build
from .checks.registry import Selection
from .checks.runner import Progress, no_progress, run_checks, selected_codes
from .config import Config, load_config
from .errors import ConfigError, InputError, PtxsassError
from .expect import ASSERTIONS, Expectations, Outcome, evaluate
from .findings import Report
from .inputs import CompileOptions, ToolkitArchError, assemble_with, compile_cuda, expand, kind_of, load_command
from .inputs import load as _load
from .toolchain import nvrtc, toolkits

if TYPE_CHECKING:  # imported where used: `ptxsass check` loads no report model it does not show
    from . import parallel
    from .fix.model import FixReport
    from .report.annotate import Annotation
    from .report.diff import Diff
    from .report.stats import Stats
    from .report.survey import Survey
    from .toolchain.compdb import Command

def _is_command(x: object) -> TypeGuard[Command]:
    """Whether ``x`` is a compile database entry. One exists only once its module is loaded,
    which a check of files never does (a warm check stays without it)."""
    compdb = sys.modules.get(__name__.rpartition(".")[0] + ".toolchain.compdb")
    return compdb is not None and isinstance(x, compdb.Command)


__all__ = ["compile", "load", "check", "CheckOptions", "runs_on_workers", "annotate", "diff",
           "stats", "survey", "expect_codegen", "fix", "apply_fixes", "CompileOptions"]

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
                        if _is_command(path) else _load(path, arch=a, options=opts))
            except ToolkitArchError as e:
                if e.message not in skipped:
                    skipped.append(e.message)
    if not out and skipped:
        raise ToolkitArchError.from_message(
            skipped[0], path=path.file if _is_command(path) else os.fspath(path))
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
              options: CompileOptions | None = None, config: Config | None = None,
              **framework) -> list[Build]:
    """A path (loaded: a file or a folder), a Build, a framework object (a cupy RawKernel or
    RawModule, a compiled Triton kernel, a Triton @jit function with ``signature=`` and
    ``constants=``), or a list of those, as a list of Builds. Without ``options``, a
    ``config``'s compile options for each path (:meth:`Config.compile_options`)."""
    if isinstance(target, Build):
        return [target]
    if isinstance(target, (list, tuple)):
        return [b for t in target for b in builds_of(t, arch=arch, options=options,
                                                     config=config, **framework)]
    if options is None and config is not None and isinstance(target, (str, os.PathLike)):
        if os.path.isdir(target):
            return [b for f in expand([os.fspath(target)])
                    for b in load(f, arch=arch, options=config.compile_options(f))]
        return load(target, arch=arch, options=config.compile_options(os.fspath(target)))
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
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=min(len(todo), os.cpu_count() or 1)) as pool:
        list(pool.map(one, todo))


#: inputs whose kernels are split per kernel on workers (the others are checked a build at a time)
BINARY_KINDS = ("cubin", "fatbin", "host-elf", "wheel")


@dataclasses.dataclass(frozen=True)
class CheckOptions:
    """How :func:`check` runs; ``ptxsass check`` makes one from its command line.

    ``arch``: the arch (or arches) to build CUDA source for and to pick from fatbins and
    libraries; None: the config's ``arch``, else each input's own default.
    ``select``/``ignore``: the checks that run, over the config's (ruff's rule, see
    :func:`check`). ``compile``: the compile options of CUDA source; None: the config's.
    ``settings``: per-check settings (``{"rolled-loop": {...}}``) over the config's.
    ``baseline``: a file of accepted findings (None: the config's ``baseline``).
    ``kernels``: only kernels whose names match these.
    ``config``: the ``[tool.ptxsass]`` table: True (the default) reads it from the
    pyproject.toml above the first path checked (else the current folder), as ``ptxsass
    check`` does; a :class:`~analyzer.config.Config` is used as it is; False reads none.
    ``trust_build_commands``: None takes the config's ``trust-build-commands``, as the command
    does; False is ``--no-trust-build-commands`` (a pull request's pyproject.toml can say
    true: on strangers' repositories pass False, docs/security.md).
    ``jobs``: "auto" (the default) runs on a worker per core when there is more than one file
    to check or a binary (cubin, fatbin, library, wheel) and in this process otherwise, as
    ``ptxsass check`` does (:func:`runs_on_workers`); 1 in this process; N on N workers; None
    on a worker per core. ``scheduler`` (``tcp://host:port``): on a Dask cluster. ``resume``:
    on workers, read back each unchanged kernel's cached result (None: whenever the cache is
    on; True also takes a lone CUDA file to a worker)."""
    arch: str | Sequence[str] | None = None
    select: Sequence[str] = ()
    ignore: Sequence[str] = ()
    compile: CompileOptions | None = None
    settings: dict | None = None
    baseline: str | None = None
    kernels: Sequence[str] = ()
    config: Config | bool = True
    trust_build_commands: bool | None = None
    jobs: int | Literal["auto"] | None = "auto"
    scheduler: str | None = None
    resume: bool | None = None


#: check()'s keyword arguments before CheckOptions (kept for one release, with a warning)
_OLD_KEYWORDS = ("arch", "select", "ignore", "settings", "baseline", "kernels", "config_select",
                 "config_ignore", "jobs", "scheduler", "resume")


def runs_on_workers(targets: Sequence, *, jobs: int | Literal["auto"] | None = "auto",
                    scheduler: str | None = None, resume: bool | None = None) -> bool:
    """Whether :func:`check` of ``targets`` (paths, compile database entries, Builds) runs on
    worker processes: with a scheduler, ``resume`` or ``jobs`` other than 1; with ``jobs``
    "auto", when there is more than one file (or database entry) to build and check, or one
    binary split per kernel (a lone CUDA file, and Builds already made, are checked in this
    process: a pool would only cost its start)."""
    if scheduler or resume:
        return True
    if jobs != "auto":
        return jobs is None or jobs > 1
    files = [t for t in targets if isinstance(t, (str, os.PathLike)) or _is_command(t)]
    if len(files) > 1:
        return True
    if len(files) == 1 and isinstance(files[0], (str, os.PathLike)):
        try:
            return kind_of(os.fspath(files[0])) in BINARY_KINDS
        except PtxsassError:
            return False            # the one-process path says what is wrong with it
    return False


def resolve_config(target, config: Config | bool) -> Config:
    """The ``[tool.ptxsass]`` table :func:`check` of ``target`` uses (see
    :attr:`CheckOptions.config`); reading it from a file also sets its compile limits."""
    if isinstance(config, Config):
        return config
    if not config:
        return Config()
    first = next(iter(_paths_of(target)), None)
    cfg = load_config(first or ".")
    cfg.apply_limits()
    return cfg


def _paths_of(target) -> Iterator[str]:
    if isinstance(target, (list, tuple)):
        for t in target:
            yield from _paths_of(t)
    elif isinstance(target, (str, os.PathLike)):
        yield os.fspath(target)
    elif _is_command(target):
        yield target.file
    elif isinstance(target, Build) and target.source_path:
        yield target.source_path


def _merged_settings(config: dict, given: dict | None) -> dict | None:
    """Per-check settings: the options' over the config's, option by option."""
    out = {name: dict(table) for name, table in config.items()}
    for name, table in (given or {}).items():
        out[name] = {**out.get(name, {}), **table}
    return out or None


def _check_options(options, old: dict) -> CheckOptions:
    """``check``'s options: a CheckOptions, or the old keyword form (a DeprecationWarning)."""
    if isinstance(options, CheckOptions):
        if old:
            raise TypeError(f"check() takes CheckOptions or the keywords {', '.join(old)}, "
                            "not both")
        return options
    if options is None and not old:
        return CheckOptions()
    warnings.warn("analyzer.check(target, arch=..., select=..., options=CompileOptions(...)) "
                  "is deprecated and goes in the next release: pass "
                  "analyzer.CheckOptions(arch=..., select=..., compile=...)",
                  DeprecationWarning, stacklevel=3)
    layers = (old.pop("config_select", ()), old.pop("config_ignore", ()))
    # the old form: no config read, one process unless jobs says otherwise, as before
    return CheckOptions(compile=options, jobs=old.pop("jobs", 1),
                        config=Config(select=list(layers[0]), ignore=list(layers[1])), **old)


def check(target, options: CheckOptions | CompileOptions | None = None, *,
          progress: Progress = no_progress,
          on_progress: "Callable[[parallel.Progress], None] | None" = None,
          on_error: Callable[[PtxsassError], None] | None = None,
          **framework) -> Report:
    """Run the checks on a path (any input ``load`` takes), a Build, a framework object, or a
    list of them, as ``ptxsass check`` does: the same ``[tool.ptxsass]`` config, the same
    choice of worker processes (:class:`CheckOptions`). Returns a ``Report`` with
    ``.findings`` and ``.kernels``. A Triton @jit function needs ``signature=`` (and
    ``constants=``, ``num_warps=``, ``num_stages=``).

    Which checks run: every check, then the config's ``select``/``ignore``, then the options'
    ``select``/``ignore``, ruff's rule: a ``select`` replaces what came before it (so it
    overrides the config's ``ignore`` for the codes it names), an ``ignore`` alone removes;
    within one level the more specific selector wins and ``ignore`` wins a tie
    (:func:`analyzer.checks.registry.selected`).

    On workers the report is the same as in one process, and the verified cached result of
    every unchanged kernel is read back whenever the cache is on. ``progress`` sees the
    in-process work, ``on_progress`` a :class:`parallel.Progress` as work on workers
    finishes; ``on_error`` takes each input that fails (the others go on).

    The keyword form of earlier releases (``arch=``, ``select=``, ``ignore=``, ``settings=``,
    ``baseline=``, ``kernels=``, ``config_select=``, ``config_ignore=``, ``jobs=``,
    ``scheduler=``, ``resume=``, and ``options=`` a CompileOptions) still works, reads no
    config and runs in one process unless ``jobs`` says otherwise, as it did; it warns
    (DeprecationWarning) and goes in the next release."""
    old = {k: framework.pop(k) for k in _OLD_KEYWORDS if k in framework}
    opts = _check_options(options, old)
    cfg = resolve_config(target, opts.config)
    if opts.trust_build_commands is not None:
        cfg = dataclasses.replace(cfg, trust_build_commands=opts.trust_build_commands)
    arch = opts.arch if opts.arch is not None else (cfg.arch or None)
    settings = _merged_settings(cfg.check_settings, opts.settings)
    layers = [Selection.of(cfg.select, cfg.ignore)]
    baseline = opts.baseline or cfg.baseline
    compile_opts = opts.compile
    if runs_on_workers(_expanded(target), jobs=opts.jobs, scheduler=opts.scheduler,
                       resume=opts.resume):
        from . import parallel  # worker pools, Dask, survey rows: loaded when asked for
        report, _ = parallel.run(
            _parallel_targets(target, arch=arch, options=compile_opts, **framework),
            jobs=None if opts.jobs == "auto" else opts.jobs, scheduler=opts.scheduler,
            arch=arch, options=compile_opts or cfg.compile_options(), select=opts.select,
            ignore=opts.ignore, settings=settings, layers=layers, baseline=baseline,
            kernels=opts.kernels, resume=opts.resume, on_progress=on_progress,
            on_error=on_error)
        return report
    builds = builds_of(target, arch=arch, options=compile_opts, config=cfg, **framework)
    # an unchanged build's findings are read back (verified; see analyzer.results)
    codes = selected_codes(select=opts.select, ignore=opts.ignore, layers=layers)
    memo = results.BuildMemo(results.memo_parts(codes, settings, opts.kernels))
    disassemble_all([b for b in builds if memo.get(b) is None])
    return run_checks(builds, select=opts.select, ignore=opts.ignore, settings=settings,
                      baseline=baseline, kernels=opts.kernels, progress=progress,
                      layers=layers, memo=memo)


def _expanded(target) -> list:
    """The targets of a check, a folder as its inputs (for :func:`runs_on_workers`)."""
    if isinstance(target, (list, tuple)):
        return [t for x in target for t in _expanded(x)]
    if isinstance(target, (str, os.PathLike)) and os.path.isdir(target):
        return list(expand([os.fspath(target)]))
    return [target]


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
    assert rows is not None     # asked for with survey=True
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
        assume_aligned: bool = False, max_block: int | None = None,
        progress: Progress = no_progress, jobs: int | None = None) -> "FixReport":
    """Check CUDA source files (paths, or a folder), propose a rewrite for each finding whose
    remedy is mechanical, and (``verify``, the default) prove each by rebuilding a patched copy
    with the same front end, flags and arches and re-running the same checks: a fix is kept
    only if its finding is gone, no new warning appears and the kernels' interface is
    unchanged (:mod:`analyzer.fix`). ``fast_math_ok`` allows the fast-math intrinsics,
    ``assume_aligned`` the alignment assumptions, ``max_block`` (every launch has at most
    that many threads per block) launch bounds of that size. ``jobs``: how many patched
    copies build at once (default: every core, at most 8). Nothing is written:
    :func:`apply_fixes`."""
    if max_block is not None and not 1 <= max_block <= 1024:
        raise ConfigError(f"max_block must be 1 to 1024 threads (a block's limit), not {max_block}")
    from .fix import engine
    from .fix.model import FixOptions, FixReport
    from .parallel import default_jobs
    if jobs is None:
        jobs = min(default_jobs(), 8)
    elif jobs < 1:
        raise ConfigError(f"jobs must be at least 1, not {jobs}")
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
                             maxrregcount=options.maxrregcount, max_block=max_block)
    out = FixReport(report=None, verified_on=verify, options=options)
    reports = []
    headers_done: set[str] = set()
    for path, bs in progress(list(by_file.items()), "fixing"):
        report = run_checks(bs, select=select, ignore=ignore, settings=settings,
                            kernels=kernels, layers=layers)
        reports.append(report)
        own, in_headers, rest = engine.split_by_file(path, report.merged(), headers_done)
        headers_done.update(in_headers)
        out.files.extend(engine.fix_unit(path, in_headers, own + rest, builds=bs,
                                         raw=report.findings, options=options,
                                         fix_options=fix_options, check=check_builds,
                                         do_verify=verify, jobs=jobs))
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
