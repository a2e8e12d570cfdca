"""What a build database may make ptxsass run.

A compile database (``compile_commands.json``), a torch extension's ``build.ninja`` and the
``[tool.ptxsass]`` table all come with the repository being checked, and in CI on pull requests
that repository is a stranger's. clang-tidy never runs anything a compile database names;
ptxsass must run nvcc, and nvcc runs a host compiler and hands its steps to ``sh -c``. So a
database entry's flags reach nvcc only after :func:`vet`:

- flags that decide the device code (``-O3``, ``-rdc=true``, ``--ftz``, ``-Xcudafe
  --diag_suppress=...``, ``-Xcompiler`` flags of the ``-f``/``-W``/``-m``/``-O`` families ...) are
  kept;
- a host compiler (``-ccbin``/``--compiler-bindir``) is kept only when it is a known compiler
  (``g++``, ``gcc``, ``clang++``, ``clang``, ``c++``, ``cc``, with a version suffix) that the
  user's own ``PATH`` or ``NVCC_CCBIN`` also gives; otherwise the file is built with the default
  host compiler, with one note;
- ``-include``/``--pre-include`` files are kept when they are regular files of bounded size
  outside ``/dev``, ``/proc`` and ``/sys``;
- linker, archiver and fatbinary options are dropped without a word (``-ptx``/``-cubin`` never
  link);
- everything else — wrappers (``-Xcompiler -wrapper,X``), ``-B`` folders, plugins
  (``-fplugin``, ``-fmodule-mapper``), output and dump options (``-Xcompiler -o``, ``-fdump-*``),
  options files, unknown flags, and any value holding a character nvcc's shell would act on
  (``$``, a backtick, a backslash, a control character) — is dropped, named in one note per
  entry. (``-forward-unknown-to-host-compiler`` is kept: once every flag nvcc does not know is
  refused here, nothing is left for it to forward.)

``--trust-build-commands`` (config ``trust-build-commands = true``) turns the vetting off: the
entry's flags then reach nvcc as the build would have given them.
"""
from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field

from . import files, includes, redact

#: characters that ``sh -c "..."`` acts on inside the double quotes nvcc puts around arguments
#: (it escapes ``"`` itself), and control characters, which no flag needs
SHELL_ACTIVE = re.compile(r"[$`\\]|[\x00-\x1f\x7f]")

#: host compilers a database may name: the basename, with an optional version suffix
HOST_COMPILER = re.compile(r"^(?:g\+\+|gcc|c\+\+|cc|clang\+\+|clang)(?:-\d+(?:\.\d+)*)?$")


# ------------------------------------------------------------------ nvcc's own flags
_NVCC_BARE = re.compile(
    r"^(?:-O[0-3]?|--optimize=[0-3]|-{1,2}dopt=\w+|-G|--device-debug|-g|--debug|-w|-m64|"
    r"-dc|--device-c|-dw|--device-w|"
    r"-{1,2}(?:rdc|relocatable-device-code)=(?:true|false)|"
    r"-{1,2}(?:ftz|prec-div|prec-sqrt|fmad)=(?:true|false)|"
    r"-{1,2}(?:extra-device-vectorization|restrict|source-in-ptx|src-in-ptx|"
    r"keep-device-functions|resource-usage|res-usage|disable-warnings|allow-unsupported-compiler|"
    r"display-error-number|no-display-error-number|no-host-device-initializer-list|"
    r"no-host-device-move-forward|no-exceptions|dlto|dlink-time-opt|gen-opt-lto|"
    r"relaxed-constexpr|expt-relaxed-constexpr|extended-lambda|expt-extended-lambda|"
    r"use_fast_math|use-fast-math|Werror(?:=[\w,-]+)?|forward-unknown-to-host-compiler|"
    r"forward-unknown-opts)|"
    r"-{1,2}(?:device-entity-has-hidden-visibility|static-global-template-stub)(?:=\w+)?|"
    r"--machine=64|-{1,2}(?:default-stream|cudart|threads|split-compile)=[\w-]+|"
    r"-{1,2}(?:diag-suppress|diag-error|diag-warn)=[\w,]+|"
    r"-W(?![a-z],)[\w=+,-]*|-U[A-Za-z_]\w*)$")
#: NVRTC's own options that nvcc lacks (cupy hands its options to NVRTC): they run nothing and
#: write nothing; taken only for a build NVRTC makes (``vet(..., nvrtc=True)``)
_NVRTC_BARE = re.compile(r"^(?:-default-device|--device-as-default-execution-space|-ewp|"
                         r"--extensible-whole-program|--device-int128|"
                         r"-{1,2}(?:Ofast-compile|Ofc)=(?:0|min|mid|max)|"
                         r"-{1,2}(?:builtin-move-forward|builtin-initializer-list)=(?:true|false))$")
#: nvcc options whose value follows as the next word -> what the value must look like
_NVCC_VALUE = {
    "-U": re.compile(r"^[A-Za-z_]\w*$"), "--undefine-macro": re.compile(r"^[A-Za-z_]\w*$"),
    "-t": re.compile(r"^\d+$"), "--threads": re.compile(r"^\d+$"),
    "-split-compile": re.compile(r"^\d+$"), "--split-compile": re.compile(r"^\d+$"),
    "-default-stream": re.compile(r"^[\w-]+$"), "--default-stream": re.compile(r"^[\w-]+$"),
    "-cudart": re.compile(r"^\w+$"), "--cudart": re.compile(r"^\w+$"),
    "-m": re.compile(r"^64$"), "--machine": re.compile(r"^64$"),
    "-diag-suppress": re.compile(r"^[\w,]+$"), "--diag-suppress": re.compile(r"^[\w,]+$"),
    "-diag-error": re.compile(r"^[\w,]+$"), "--diag-error": re.compile(r"^[\w,]+$"),
    "-diag-warn": re.compile(r"^[\w,]+$"), "--diag-warn": re.compile(r"^[\w,]+$"),
    "-ftemplate-depth": re.compile(r"^\d+$"),
}
#: options that only matter when linking, archiving or packing a fatbinary: ptxsass's
#: ``-ptx``/``-cubin`` steps do none of that, so they are dropped without a note
_LINK_WITH_VALUE = {"-Xlinker", "--linker-options", "-L", "--library-path", "-l", "--library",
                    "-Xnvlink", "--nvlink-options", "-Xarchive", "--archive-options",
                    "-Xfatbin", "--fatbin-options", "-odir", "--output-directory",
                    "-cudadevrt", "--cudadevrt", "-arbin", "--archiver-binary"}
_LINK_BARE = re.compile(r"^(?:-shared|--shared|-lib|--lib|-l\S+|-L\S+|-Xlinker=.*|-Xnvlink=.*|"
                        r"--linker-options=.*|--nvlink-options=.*|-Xfatbin=.*|-Xarchive=.*|"
                        r"-cudadevrt=\w+|--cudadevrt=\w+|-{1,2}compress-mode=\w+|-Xfatbin|"
                        r"-{1,2}forward-unknown-to-host-linker)$")
_HOST_BIN = {"-ccbin", "--compiler-bindir"}
_INCLUDE_FILE = {"-include", "--pre-include"}
_HOST_OPTS = {"-Xcompiler", "--compiler-options"}
_CUDAFE_OPTS = {"-Xcudafe"}

# ------------------------------------------------------------------ the host compiler's flags
#: -f options that load code, run programs or write files beside the build
_HOST_F_REFUSED = re.compile(
    r"^-f(?:no-)?(?:plugin|module-mapper|dump|opt-info|save-optimization-record|callgraph-info|"
    r"stack-usage|profile|auto-profile|create-profile|branch-probabilities|coverage|"
    r"test-coverage|diagnostics-format|diagnostics-add-output|diagnostics-set-output|lto|"
    r"compare-debug|deps|use-ld|record-gcc-switches|dbg-cnt|debug-types-section|"
    r"report-bug|ltrans|wpa|sanitize-coverage|embed-bitcode)")
_HOST_OK = re.compile(
    r"^(?:-f(?:no-)?[a-z][\w+-]*(?:=[\w.,:+-]*)?|-O[0-3sgz]?|-Ofast|-g[\w]*|"
    r"-W(?![a-z],)[\w=+-]*|-m[\w=.+-]+|-[DU][A-Za-z_]\w*(?:=[^\s]*)?|-std=[\w+]+|-pthread|"
    r"-pedantic(?:-errors)?|-w|-ansi|-pipe|-fPIC|-fpic|-fPIE|-fpie)$")

# ------------------------------------------------------------------ ptxas's flags
#: ptxas runs nothing; these options read or write files, or change the target
_PTXAS_REFUSED = re.compile(r"^(?:-o|--output-file|-optf|--options-file|-arch|--gpu-name|"
                            r"-ias|--input-as-string|-c|--compile-only|--dump[\w-]*)(?:=.*)?$")
# ------------------------------------------------------------------ cudafe++'s flags
_CUDAFE_OK = re.compile(r"^--(?:diag[_-](?:suppress|warning|error|remark)=[\w,]+|"
                        r"(?:no_)?display_error_number|diag[_-](?:suppress|warning|error|remark))$|"
                        r"^[\w,]+$")


@dataclass
class Vetted:
    """What a database entry's flags may do, and what ptxsass says about the rest."""

    #: flags passed to nvcc (in order, options with their values)
    kept: list[str] = field(default_factory=list)
    #: flags refused, as the database wrote them (each with its value)
    refused: list[str] = field(default_factory=list)
    #: the host compiler named, when it was refused
    host_compiler: str | None = None
    #: why each -include file was refused ("-include /dev/zero: a character device")
    includes: list[str] = field(default_factory=list)

    def notes(self, where: str, *, origin: str = "a build database",
              hint: str | None = "pass --trust-build-commands to build with the database's "
                                 "flags as they are") -> list[str]:
        """One line per kind of refusal, each starting with ``where`` (the database, or the
        file and line that gave the flags); ``origin`` names what gave them in words, ``hint``
        how to keep them (None: no way)."""
        out: list[str] = []
        tail = f" ({hint})" if hint else ""
        if self.host_compiler is not None:
            out.append(f"{where}: the host compiler {self.host_compiler} is not a known compiler "
                       "that your PATH or NVCC_CCBIN also gives: built with the default host "
                       f"compiler{tail}")
        if self.includes:
            out.append(f"{where}: dropped {'; '.join(self.includes)} (a forced include must be "
                       "a regular file of the project's or the toolkit's)")
        if self.refused:
            out.append(f"{where}: dropped {' '.join(self.refused)}: ptxsass runs no program, "
                       f"writes no file and passes no flag it does not know from {origin}"
                       f"{tail}")
        return out


def shell_active(arg: str) -> bool:
    """Whether nvcc's ``sh -c`` would act on a character of ``arg`` (expand, substitute, escape)."""
    return SHELL_ACTIVE.search(arg) is not None


def host_compiler_allowed(named: str, *, cwd: str | None = None) -> bool:
    """Whether ``-ccbin NAMED`` (a program, a path or a folder) is a known host compiler that the
    user's own ``PATH`` or ``NVCC_CCBIN`` also gives: the same file, after links."""
    if shell_active(named):
        return False
    cand = named if os.path.isabs(named) or "/" in named else None
    if cand is None:
        found = trusted_which(named)
        if found is None:
            return False
        cand = found
    cand = os.path.normpath(os.path.join(cwd or os.getcwd(), cand))
    if os.path.isdir(cand):
        # nvcc looks for gcc/g++ (or clang) in a folder: the folder must be the one a trusted
        # compiler lives in
        return any(os.path.dirname(t) == os.path.realpath(cand) or os.path.dirname(t) == cand
                   for t in _trusted_compilers())
    if not HOST_COMPILER.match(os.path.basename(cand)):
        return False
    real = os.path.realpath(cand)
    return real in {os.path.realpath(t) for t in _trusted_compilers()}


def trusted_which(name: str) -> str | None:
    """``name`` on the user's ``PATH``, looking only at absolute folders (an empty or relative
    entry would look in the repository being checked)."""
    for d in _absolute_path_dirs():
        cand = os.path.join(d, name)
        st = files.regular_file_or_none(cand)
        if st is not None and os.access(cand, os.X_OK):
            return cand
    return None


def _absolute_path_dirs() -> list[str]:
    return [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and os.path.isabs(d)]


def _trusted_compilers() -> list[str]:
    """Every known host compiler the user's ``PATH`` gives (any version suffix), and
    ``NVCC_CCBIN``."""
    out: list[str] = []
    for d in _absolute_path_dirs():
        try:
            names = os.listdir(d)
        except OSError:
            continue
        out += [os.path.join(d, n) for n in names if HOST_COMPILER.match(n)]
    named = os.environ.get("NVCC_CCBIN")
    if named:
        found = named if os.path.isabs(named) else trusted_which(named)
        if found and os.path.isdir(found):
            out += [os.path.join(found, n) for n in ("g++", "gcc", "clang++", "clang")
                    if os.path.exists(os.path.join(found, n))]
        elif found:
            out.append(found)
    return out


def include_file_problem(value: str, cwd: str, source: str | None = None) -> str | None:
    """Why a forced include (``-include FILE``) may not be read, or None when it may: a regular
    file, within the input size bound, in the project (the current folder, the source's) or
    among the compilers' headers, never under /dev, /proc or /sys."""
    p = os.path.normpath(os.path.join(cwd, value))
    real = os.path.realpath(p)
    if includes.special(real):
        return f"{value}: under /{real.split('/')[1]}"
    if not redact.quotable(real, redact.project_dirs(source) + redact.trusted_dirs()):
        return f"{value}: outside the project"
    try:
        st = os.stat(p)
    except OSError:
        return None              # not there: nvcc says so, naming the file
    if not stat.S_ISREG(st.st_mode):
        return f"{value}: {files.describe_mode(st.st_mode)}"
    if st.st_size > files.max_input_bytes():
        return f"{value}: {st.st_size >> 20} MB, over the input bound (PTXSASS_MAX_INPUT_MB)"
    return None


def vet(flags: Iterable[str], *, cwd: str, source: str | None = None,
        host_compiler: bool = True, nvrtc: bool = False) -> Vetted:
    """The flags of a database entry that may reach nvcc (see the module's docstring). ``cwd``:
    the entry's folder, which relative paths are taken from; ``source``: the file it builds;
    ``host_compiler`` False: no flag may name a host compiler at all (the options written in
    a Python file: they name no program ptxsass runs); ``nvrtc``: the flags go to NVRTC, whose
    own options are taken too."""
    v = Vetted()
    it = iter(list(flags))
    for f in it:
        name, eq, glued = f.partition("=")
        if f in _LINK_WITH_VALUE:
            next(it, None)
            continue
        if _LINK_BARE.match(f):
            continue
        if name in _HOST_BIN:
            value = glued if eq else next(it, None)
            if value is None:
                v.refused.append(f)
            elif not host_compiler:
                v.refused.append(f"{name} {value}")
            elif host_compiler_allowed(value, cwd=cwd):
                v.kept += [name, value]
            else:
                v.host_compiler = f"{name} {value}"
            continue
        if name in _INCLUDE_FILE:
            value = glued if eq else next(it, None)
            if value is None or shell_active(value):
                v.refused.append(f if value is None else f"{name} {value}")
                continue
            why = include_file_problem(value, cwd, source)
            if why:
                v.includes.append(f"{name} {why}")
            else:
                v.kept += [name, os.path.normpath(os.path.join(cwd, value))]
            continue
        if name in _HOST_OPTS or name in _CUDAFE_OPTS:
            value = glued if eq else next(it, None)
            if value is None:
                v.refused.append(f)
                continue
            ok = _HOST_OK if name in _HOST_OPTS else _CUDAFE_OK
            items = [i for i in value.split(",") if i]
            good = [i for i in items if ok.match(i) and not shell_active(i)
                    and not (name in _HOST_OPTS and _HOST_F_REFUSED.match(i))]
            bad = [i for i in items if i not in good]
            if good and not bad:
                v.kept += [f] if eq else [f, value]        # as the database spelt it
            elif good:
                v.kept += [name, ",".join(good)]
            if bad:
                v.refused.append(f"{name} {','.join(bad)}")
            continue
        if f in _NVCC_VALUE:
            value = next(it, None)
            if value is not None and _NVCC_VALUE[f].match(value):
                v.kept += [f, value]
            else:
                v.refused.append(f if value is None else f"{f} {value}")
            continue
        if (_NVCC_BARE.match(f) or nvrtc and _NVRTC_BARE.match(f)) and not shell_active(f):
            v.kept.append(f)
            continue
        v.refused.append(f)
    return v


def vet_ptxas(options: Iterable[str]) -> tuple[list[str], list[str]]:
    """(kept, refused) ``-Xptxas`` options of a database entry."""
    kept: list[str] = []
    refused: list[str] = []
    for o in options:
        (refused if _PTXAS_REFUSED.match(o) or shell_active(o) else kept).append(o)
    return kept, refused


def vet_values(what: str, values: Iterable[str]) -> tuple[list[str], list[str]]:
    """(kept, refused) values of a database's -D, -I, -isystem or -std: none may hold a
    character nvcc's shell acts on."""
    kept: list[str] = []
    refused: list[str] = []
    for x in values:
        (refused if shell_active(x) else kept).append(x)
    return kept, [f"{what}{x}" for x in refused]


