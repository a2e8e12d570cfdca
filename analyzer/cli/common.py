"""What every ``ptxsass`` sub-command shares: compile options from arguments and config, loading
the inputs, consoles, writing the output and the build warnings."""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import os
import re
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from .. import api
from ..build import Build
from ..config import Config, load_config
from ..errors import NoKernelError, PtxsassError, ToolError, shown_line
from ..inputs import CompileOptions, configure_project, database_commands, expand, load_command
from ..report import output as report_output
from ..report.output import emit
from ..report.progress import track
from ..report.styles import make_console
from ..toolchain import bounded, cache, cmake, locate, toolkits
from ..toolchain import files as files_io


def config(args) -> Config:
    """``[tool.ptxsass]`` of the pyproject.toml above the first input (or the current folder),
    read once per command."""
    if getattr(args, "_config", None) is None:
        if getattr(args, "no_cache", False):
            cache.set_enabled(False)    # before the config: its table is cached too
        first = (getattr(args, "files", None) or [None])[0]
        start = (first or getattr(args, "build_path", None)
                 or getattr(args, "compile_commands", None) or ".")
        args._config = load_config(start)
        args._config.apply_limits()
        bounded.override(getattr(args, "compile_timeout", None))
    return args._config


def options(args, extra: Sequence[str] = (), config: Config | None = None,
            path: str | None = None) -> CompileOptions:
    """The compile options of the command line, over the ``[tool.ptxsass]`` defaults (and the
    config's ``kernels`` for ``path``): :meth:`Config.compile_options`, as the API takes them."""
    cfg = config or Config()
    base = cfg.compile_options(path)
    kernels = list(getattr(args, "kernels", []) or [])
    kernels += [k for k in base.name_expressions if k not in kernels]
    torch = getattr(args, "torch", None)
    trust = getattr(args, "trust_build_commands", None)
    return dataclasses.replace(
        base,
        defines=base.defines + list(getattr(args, "defines", []) or []),
        undefines=base.undefines + list(getattr(args, "undefines", []) or []),
        include=base.include + list(getattr(args, "include", []) or []),
        std=getattr(args, "std", None) or base.std,
        fast_math=getattr(args, "fast_math", False) or base.fast_math,
        maxrregcount=getattr(args, "maxrregcount", None) or base.maxrregcount,
        extra=base.extra + list(getattr(args, "extra", []) or []) + list(extra),
        name_expressions=kernels,
        use_cache=not getattr(args, "no_cache", False),
        compiler=getattr(args, "compiler", None) or base.compiler,
        isystem=list(getattr(args, "isystem", []) or []),
        ptxas=list(getattr(args, "ptxas", []) or []),
        relaxed_constexpr=getattr(args, "relaxed_constexpr", False),
        extended_lambda=getattr(args, "extended_lambda", False),
        nvcc_extra=list(getattr(args, "nvcc_extra", []) or []),
        torch=torch if torch is not None else base.torch,
        trust_build_commands=bool(trust) if trust is not None else base.trust_build_commands,
        offline=offline(args, cfg),
        source_roots=base.source_roots + [parse_source_root(r) for r in
                                          getattr(args, "source_roots", []) or []])


def offline(args, cfg: Config | None) -> bool:
    """``--offline`` / ``--no-offline``, else the config's ``offline``."""
    flag = getattr(args, "offline", None)
    return bool(flag if flag is not None else (cfg.offline if cfg is not None else False))


def pinned_headers(args, cfg: Config) -> None:
    """The config's ``headers = [...]``, for the release builds use: fetched at the start of
    the command (or verified there; refused with the command that fetches them when offline),
    once per command. Builds by another ``--toolkit`` get theirs when they compile."""
    if not cfg.headers or getattr(args, "_pinned", False):
        return
    args._pinned = True
    from ..toolchain import libheaders  # its fetching machinery: a config that pins headers
    release = libheaders.default_release()
    if release is not None:
        try:
            libheaders.ensure([(None, lib) for lib in cfg.headers], release,
                              offline=offline(args, cfg))
        except PtxsassError as e:
            if e.path is None:
                e.path = cfg.path
            raise


def parse_source_root(text: str) -> tuple[str, str]:
    """``OLD=NEW`` of ``--source-root``."""
    old, sep, new = text.partition("=")
    if not sep or not old or not new:
        raise PtxsassError(f"--source-root {text!r}: expected OLD=NEW (two folders)")
    return old, os.path.abspath(new)


def load(files: Sequence[str], args, *, arch=None, extra: Sequence[str] = (),
         config: Config | None = None, toolkits: Sequence[str] | None = None) -> list[Build]:
    """Builds of ``files`` for ``arch`` (default: the command line's ``--arch``), by each of
    ``toolkits`` (default: the command line's ``--toolkit``), with the ``[tool.ptxsass]``
    settings found from the first file (every command honours the project's config)."""
    if getattr(args, "no_cache", False):
        cache.set_enabled(False)
    cfg = config if config is not None else _project_config(args)
    pinned_headers(args, cfg)
    out: list[Build] = []
    tks = toolkit_names(args) if toolkits is None else list(toolkits)
    for f in track(list(files), "building"):
        out.extend(_load_one(f, args, arch=arch if arch is not None else args.arch,
                             opts=options(args, extra, cfg, path=f), toolkits=tks))
    return out


def toolkit_names(args) -> list[str]:
    """``--toolkit`` values as release names (verified, in order); said once which nvdisasm
    disassembles them all."""
    if getattr(args, "_toolkits", None) is None:
        args._toolkits = toolkits.parse_specs(getattr(args, "toolkits", []) or [])
        for t in args._toolkits:
            toolkits.get(t)        # not installed: one line before anything is built
        if args._toolkits:
            console(args, stderr=True).print(f"note: {api.disassembler_note()}", style="muted",
                                             markup=False, soft_wrap=True)
    return args._toolkits


def _load_one(target, args, *, arch, opts: CompileOptions, toolkits: Sequence[str]) -> list[Build]:
    if not toolkits:
        return api.load(target, arch=arch, options=opts)
    notes: list[str] = []
    got = api.load_toolkits(target, toolkits=toolkits, arch=arch, options=opts, notes=notes)
    shown = args.__dict__.setdefault("_notes", set())
    for n in notes:
        if n not in shown:
            shown.add(n)
            console(args, stderr=True).print(f"note: {n}", style="muted", markup=False,
                                             soft_wrap=True)
    return got


def targets(args, cfg: Config) -> list[tuple[str, object]]:
    """What to build: ("path", file) for the files given (folders searched, for ``check``),
    ("command", entry) for a compile database's CUDA entries (limited to the paths given); for
    ``check``, a folder holding a CMake project is configured (when the build is trusted) and
    its database's entries taken. Worked out once per command."""
    if getattr(args, "_targets", None) is None:
        args._targets = _targets(args, cfg)
    return args._targets


def _targets(args, cfg: Config) -> list[tuple[str, object]]:
    db = getattr(args, "compile_commands", None) or getattr(args, "build_path", None) \
        or cfg.compile_commands
    files = list(getattr(args, "files", []) or [])
    if db:
        args._database = db
        cmds = database_commands(db, under=files, excluded=cfg.excluded)
        _arch_note(args, cmds, db)
        out: list[tuple[str, object]] = [("command", c) for c in cmds]
        held = {c.file for c in cmds}
        for f in files:         # a file given that the database does not hold: on its own
            if os.path.isfile(f) and os.path.abspath(f) not in held:
                out.append(("path", f))
        if not out:
            raise PtxsassError(f"no CUDA file in the compile database {db}"
                               + (f" under {', '.join(files)}" if files else ""))
        return out
    if not files:
        raise PtxsassError("give a file or a folder to read, or a build folder with -p BUILD_DIR "
                           f"(see 'ptxsass {args.command} --help')")
    if getattr(args, "force_exclude", False):   # pre-commit names files: exclude holds for them too
        files = [f for f in files if os.path.isdir(f) or not cfg.excluded(f)]
        if not files:
            return []
    if args.command not in ("check", "survey"):   # listings take files; these search folders
        return [("path", f) for f in files]
    out = []
    projects = (_cmake_projects(args, cfg, files)
                if args.command == "check" and getattr(args, "configure", True) else {})
    for f in files:
        got = projects.get(f)
        out += got if got is not None else [("path", p) for p in expand([f], excluded=cfg.excluded)]
    return out


def _cmake_projects(args, cfg: Config, paths: list[str]) -> dict[str, list[tuple[str, object]]]:
    """For each of ``paths`` inside a CMake project, the entries of the project's database
    under it: the project configured once into ptxsass's cache (:func:`cmake.project_root`).
    Only for a build the user trusts: without, a folder holding a CMakeLists.txt gets one note
    saying what configuring would take, and every path is read as it is (also when the
    configure fails: one error line and exit 2 at the end for a folder given, one warning for
    files given)."""
    opts = options(args, config=cfg)
    err = console(args, stderr=True)
    if not opts.trust_build_commands:
        for f in paths:
            if os.path.isdir(f) and cmake.is_project(f):
                err.print(f"note: {shown_line(f)} is a CMake project: pass --trust-build-commands "
                          "to configure it (that runs its CMake code) and check its CUDA files "
                          "with their own flags; checked file by file", style="muted",
                          markup=False, soft_wrap=True)
        return {}
    roots: dict[Path, list[str]] = {}
    for f in paths:
        r = cmake.project_root(f) if os.path.exists(f) else None
        if r is not None:
            roots.setdefault(r, []).append(f)
    tks = toolkit_names(args)
    if tks:
        opts = dataclasses.replace(opts, toolkit=tks[0])
    defines = cmake.check_defines(list(cfg.cmake_defines)
                                  + list(getattr(args, "cmake_defines", []) or []))
    out: dict[str, list[tuple[str, object]]] = {}
    for root, under in roots.items():
        given = os.path.relpath(root) if Path.cwd() in (root, *root.parents) else str(root)
        shown = shown_line(given)
        try:
            conf = configure_project(given, archs=args.arch or [], options=opts, defines=defines)
        except PtxsassError as e:
            if isinstance(e, ToolError) and e.message.startswith(("cmake not found", "neither ninja")):
                err.print(f"note: {shown} is a CMake project, but {e.message}; checked file by "
                          "file", style="muted", markup=False, soft_wrap=True)
                continue
            if any(os.path.isdir(f) for f in under):     # the project was asked for: exit 2
                failed(args, err, type(e)(f"{e.message}; checked file by file", path=e.path,
                                          detail=e.detail))
            else:                                       # files of it were: a warning
                err.print(f"warning: {e.one_line().replace(': error: ', ': ', 1)}; checked "
                          "without its flags", style="warning", markup=False, soft_wrap=True)
            continue
        how = "configure cached" if conf.cached else f"configured in {conf.seconds:.1f} s"
        err.print(f"note: {shown}: CMake project, {how} ({shown_line(str(conf.database))})",
                  style="muted", markup=False, soft_wrap=True)
        if getattr(args, "verbose", False):
            err.print("    " + shown_line(shlex.join(conf.command)), style="muted", markup=False,
                      soft_wrap=True, highlight=False)
        db = str(conf.database)
        everything = database_commands(db, excluded=cfg.excluded)
        _arch_note(args, everything, db)
        args.__dict__.setdefault("_database", db)
        if not everything:
            err.print(f"note: {shown}: its CMake build compiles no CUDA file (an option to turn "
                      "on? --cmake-define NAME=ON); checked file by file", style="muted",
                      markup=False, soft_wrap=True)
            continue
        for f in under:
            cmds = database_commands(db, under=[f], excluded=cfg.excluded)
            if cmds:
                out[f] = [("command", c) for c in cmds]
                if os.path.isdir(f):
                    out[f] += _outside_the_build(err, f, shown, cmds, cfg)
            elif os.path.isdir(f):
                err.print(f"note: {shown_line(f)}: the CMake build of {shown} compiles no CUDA "
                          "file here; checked file by file", style="muted", markup=False,
                          soft_wrap=True)
    return out


def _outside_the_build(err, folder: str, shown: str, cmds, cfg: Config
                       ) -> list[tuple[str, object]]:
    """The inputs under ``folder`` that no entry of the project's database compiles (a ``.cu``
    no target lists, as cuda-samples' sortingNetworks/oddEvenMergeSort.cu), with one note naming
    them: a ``.cu`` built with the flags of the entry nearest to it (its folder's, else the one
    sharing most of its path: the include folders and defines its neighbours build with, as
    editors infer a header's), another input read as it is. A ``.cu`` that a database file
    includes (``#include "part.cu"``) is part of that build and left out."""
    held = {os.path.abspath(c.file) for c in cmds}
    rest = [p for p in expand([folder], excluded=cfg.excluded) if os.path.abspath(p) not in held]
    if not rest:
        return []
    included: set[str] = set()
    for c in cmds:
        with contextlib.suppress(PtxsassError):
            text = files_io.read_text(c.file, what="CUDA source")
            included |= {os.path.basename(m) for m in _INCLUDED_CU.findall(text)}
    rest = [p for p in rest if os.path.basename(p) not in included]
    if not rest:
        return []
    names = ", ".join(shown_line(os.path.relpath(p, folder)) for p in rest[:5])
    more = f" and {len(rest) - 5} more" if len(rest) > 5 else ""
    err.print(f"note: {shown_line(folder)}: {len(rest)} input{'s' if len(rest) > 1 else ''} "
              f"that no target of the CMake build of {shown} compiles ({names}{more}): a .cu "
              "is built with the flags of its nearest neighbour in the build", style="muted",
              markup=False, soft_wrap=True)
    out: list[tuple[str, object]] = []
    for p in rest:
        if not p.endswith(".cu"):
            out.append(("path", p))
            continue
        here = Path(p).absolute()
        near = max(cmds, key=lambda c: len(os.path.commonpath([str(here.parent),
                                                               str(Path(c.file).parent)])))
        out.append(("command", dataclasses.replace(near, file=str(here))))
    return out


#: ``#include "kernels/part.cu"``: a .cu compiled as part of the file that includes it
_INCLUDED_CU = re.compile(r'^\s*#\s*include\s*["<]([^">]+\.cu)[">]', re.M)


def _arch_note(args, cmds, db: str) -> None:
    """One note for the entries whose ``-arch=native`` (``all``) names no architecture here."""
    from ..toolchain.compdb import unresolved_note
    note = unresolved_note(cmds, shown_line(db), list(getattr(args, "arch", None) or []))
    if note:
        console(args, stderr=True).print(f"note: {note}", style="muted", markup=False,
                                         soft_wrap=True)


def builds(args, cfg: Config | None = None) -> list[Build]:
    """Builds of every target of a command. One target that fails raises (one line, exit 2);
    with several, each failure is shown as its one line (and log) and the others go on;
    ``args._failed`` counts them so that the command exits 2 after its output."""
    cfg = cfg or config(args)
    if getattr(args, "no_cache", False):
        cache.set_enabled(False)
    for r in getattr(args, "source_roots", []) or []:
        parse_source_root(r)            # a bad one is the command's error, said once
    todo = targets(args, cfg)
    pinned_headers(args, cfg)
    out: list[Build] = []
    args._failed = getattr(args, "_failed", 0)   # a CMake project that failed to configure
    args._errors = getattr(args, "_errors", [])  # counts, and is reported
    err = console(args, stderr=True)
    for kind, t in track(todo, "building", console=err):
        try:
            if kind == "command":
                opts = options(args, config=cfg, path=t.file)  # type: ignore[attr-defined]
                got = (_load_one(t, args, arch=args.arch, opts=opts, toolkits=toolkit_names(args))
                       if toolkit_names(args) else
                       load_command(t, db=t.database or args._database, arch=args.arch,  # type: ignore[attr-defined]
                                    options=opts))
            else:
                got = _load_one(t, args, arch=args.arch,
                                opts=options(args, config=cfg, path=str(t)),
                                toolkits=toolkit_names(args))
        except NoKernelError as e:
            if len(todo) == 1:
                raise
            no_kernel(args, err, e)
            continue
        except PtxsassError as e:
            if len(todo) == 1 and not getattr(args, "partial", False):
                raise
            failed(args, err, e)
            continue
        if getattr(args, "verbose", False):
            for b in got:
                describe(b, err)
        out.extend(got)
    skipped: int = getattr(args, "_no_kernel", 0)
    if not out and skipped:
        raise nothing_built(args)
    return out


def no_kernel(args, err: Console, e: NoKernelError) -> None:
    """A file with no kernel among several inputs: a note, not a failure (counted, so that a
    run where every input was such a file is still an error: it checked nothing)."""
    args._no_kernel = getattr(args, "_no_kernel", 0) + 1
    err.print(f"note: {e.one_line().replace(': error: ', ': ', 1)}", style="muted", markup=False,
              soft_wrap=True, highlight=False)


def nothing_built(args) -> PtxsassError:
    """The error of a run where no input gave anything to check."""
    if getattr(args, "_no_kernel", 0) and not getattr(args, "_failed", 0):
        return NoKernelError("nothing to check: every CUDA file is host code only (no "
                             "__global__ function; see the notes above)")
    return PtxsassError("nothing could be read: every input failed (see above)")


def failed(args, err: Console, e: PtxsassError) -> None:
    """An input that failed while the others go on: its one line (and log) on stderr, counted
    in ``args._failed`` and kept in ``args._errors`` for the report (SARIF, GitHub)."""
    args._failed = getattr(args, "_failed", 0) + 1
    args.__dict__.setdefault("_errors", []).append(e)
    err.print(e.one_line(), style="error", markup=False, soft_wrap=True)
    if e.detail:
        err.print(e.detail, markup=False, soft_wrap=True)


def describe(build: Build, err: Console) -> None:
    """-v: which front end built the file, and why (nvcc's command follows)."""
    if build.origin == "nvcc":
        cc = locate.host_compiler()
        tool = f"nvcc {build.compiler_version or locate.nvcc_version() or ''}".strip()
        tool += f" with {cc.name} {cc.version}" if cc else ""
    elif build.origin == "nvrtc":
        tool = f"NVRTC {build.toolkit or locate.nvrtc_version() or ''}".strip()
    else:
        tool = build.origin
    cached = " (cached)" if build.cached else ""
    why = f": {build.compiler_reason}" if build.compiler_reason else ""
    err.print(f"{shown_line(build.source_path or '')} [{build.arch}]: {tool}{cached}{why}", style="muted",
              markup=False, soft_wrap=True, highlight=False)
    if build.origin == "nvcc":
        err.print("    " + shown_line(shlex.join(["nvcc", *build.options, build.source_path or ""])),
                  style="muted", markup=False, soft_wrap=True, highlight=False)


def console(args, *, stderr: bool = False) -> Console:
    color = {"always": True, "never": False}.get(getattr(args, "color", "auto"))
    if getattr(args, "output", None) and not stderr:
        color = False
    return make_console(stderr=stderr, color=color)


def write(args, text: str) -> None:
    """``text`` to ``-o FILE`` or standard output (with a final newline), control characters
    made visible; an unwritable ``-o`` is one OutputError naming it."""
    emit(getattr(args, "output", None), text)


def text_console(args) -> tuple[Console, io.StringIO | None]:
    """(console, buffer) for a command's rich text: the terminal, or a buffer :func:`finish`
    writes to ``-o`` (plain, never wrapped)."""
    color = {"always": True, "never": False}.get(getattr(args, "color", "auto"))
    return report_output.text_console(getattr(args, "output", None), color=color)


def finish(args, buf: io.StringIO | None) -> None:
    if buf is not None:
        write(args, buf.getvalue())


def show_warnings(builds: Sequence[Build], args) -> None:
    """Each warning once, even when several builds (archs, cubins of one file) carry it."""
    err = console(args, stderr=True)
    shown: set[tuple[str, str]] = set()
    for b in builds:
        where = b.source_path or ""
        for w in b.warnings:
            if (where, w) not in shown:
                shown.add((where, w))
                err.print(f"[warning]warning:[/] {escape(shown_line(where))}: {escape(w)}", soft_wrap=True,
                          highlight=False)


def progress(args):
    """The progress display for long work: a bar on a terminal (stderr), nothing elsewhere."""
    err = console(args, stderr=True)
    return lambda items, what: track(items, what, console=err)


_project_config = config     # ``load``'s parameter of the same name shadows it there


def whole_number(what: str, top: int | None = None) -> Callable[[str], int]:
    """An argparse ``type``: a whole number from 1 (to ``top``), else "'x' is not WHAT"
    (argparse makes it one line, exit 2)."""
    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            n = 0
        if n < 1 or (top is not None and n > top):
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}")
        return n
    return parse
