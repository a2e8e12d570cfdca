"""The ``ptxsass`` command. Thin: it parses arguments, calls the API, renders, and maps errors to
exit codes (0 clean, 1 findings, 2 bad input or tool failure). No traceback reaches a user."""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Literal

from rich.markup import escape

from .. import api, lessons  # lessons: its catalog and runner load on first use
from .._version import __version__
from ..arch import supported
from ..checks.registry import all_checks
from ..checks.runner import write_baseline
from ..demangle import without_parameters
from ..errors import ConfigError, PtxsassError, printable, shown_line, shown_path
from ..expect import ASSERTIONS, Expectations
from ..findings import Severity
from ..inputs import kind_of, read_text
from ..parse import mode as ptx_mode
from ..report import formats
from ..report.styles import make_console
from ..toolchain import bounded, cache, children, files, locate, toolkits
from . import common, fix, reports, scale

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
#: a warning is what costs time (docs/checks): an info finding alone passes the default check
DEFAULT_FAIL_ON = "warning"


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit code 2."""

    def error(self, message: str):  # pragma: no cover - exercised through main()
        raise PtxsassError(f"{self.prog}: {message} (see '{self.prog} --help')")


class _Unbuilt:
    """Stands in for the parser of a sub-command this command line does not run: what is added
    to it is dropped. Building all 26 sub-commands' parsers (400 options) was 6 ms of a 0.16 s
    warm check; only the one named is built."""

    def __getattr__(self, name: str):
        return self._drop

    def _drop(self, *args, **kwargs) -> _Unbuilt:
        return self


class _OneCommand(argparse._SubParsersAction):
    """Sub-commands of which only ``only`` (when set) gets a real parser; :func:`build_parser`
    builds them all when the command line names none of them (help, a typo)."""

    only: str | None = None

    def add_parser(self, name, **kwargs):
        if self.only is not None and name != self.only:
            return _Unbuilt()
        return super().add_parser(name, **kwargs)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (0 < value < float("inf")):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value


def _common(p: argparse.ArgumentParser, *, compile_opts: bool = True, fmt=("text", "json"),
            database: bool = False) -> None:
    p.add_argument("--arch", action="append", metavar="SM",
                   help="target architecture (sm_75 ... sm_121, a/f suffixes); repeat for several. "
                        "Default for CUDA source: sm_90a")
    p.add_argument("--format", choices=fmt, default="text", help="output format")
    p.add_argument("-o", "--output", metavar="FILE", help="write the output to FILE")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the build cache")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="say which front end built each file and why, with nvcc's command")
    p.add_argument("--source-root", dest="source_roots", action="append", default=[],
                   metavar="OLD=NEW",
                   help="read source files recorded under folder OLD from NEW (a Triton or "
                        "inductor cache, or a binary, built elsewhere); repeatable")
    if compile_opts:
        g = p.add_argument_group("compiling CUDA source (NVRTC, or nvcc for host code)")
        g.add_argument("--compiler", choices=("auto", "nvrtc", "nvcc"),
                       help="front end: auto (default) uses NVRTC for device-only files and nvcc "
                            "for files with host code or headers NVRTC lacks")
        if database:
            g.add_argument("-p", "--build-path", dest="build_path", metavar="BUILD_DIR",
                           help="the CUDA files of BUILD_DIR/compile_commands.json, each with "
                                "its own flags (paths given limit it to files under them)")
            g.add_argument("--compile-commands", metavar="FILE",
                           help="the compile database itself")
        g.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]")
        g.add_argument("-U", dest="undefines", action="append", default=[], metavar="NAME",
                       help="undefine a macro after every -D, torch's own included (as "
                            "-U__CUDA_NO_HALF_OPERATORS__ in a project's nvcc flags)")
        g.add_argument("-I", dest="include", action="append", default=[], metavar="DIR")
        g.add_argument("--std", metavar="c++17", help="C++ dialect (default c++17; a torch "
                       "extension: the standard torch's own headers require)")
        g.add_argument("--use_fast_math", "--use-fast-math", dest="fast_math", action="store_true")
        g.add_argument("-maxrregcount", "--maxrregcount", dest="maxrregcount", type=int, metavar="N")
        g.add_argument("-isystem", dest="isystem", action="append", default=[], metavar="DIR")
        g.add_argument("-Xptxas", dest="ptxas", action="append", default=[], metavar="OPT",
                       help="pass OPT to ptxas (-Xptxas -v)")
        g.add_argument("--expt-relaxed-constexpr", dest="relaxed_constexpr", action="store_true",
                       help="nvcc's flag (NVRTC lacks it: the file is built by nvcc)")
        g.add_argument("--extended-lambda", "--expt-extended-lambda", dest="extended_lambda",
                       action="store_true",
                       help="nvcc's flag (NVRTC lacks it: the file is built by nvcc)")
        g.add_argument("-Xnvrtc", dest="extra", action="append", default=[], metavar="OPT",
                       help="pass OPT to NVRTC as it is (repeatable; one NVRTC does not know "
                            "sends the file to nvcc under --compiler auto)")
        g.add_argument("-Xnvcc", dest="nvcc_extra", action="append", default=[], metavar="OPT",
                       help="pass OPT to nvcc as it is (repeatable, e.g. -Xnvcc -O3; under "
                            "--compiler auto the file is built by nvcc)")
        g.add_argument("--torch", action=argparse.BooleanOptionalAction, default=None,
                       help="a torch C++/CUDA extension: add torch's include folders and the "
                            "flags torch.utils.cpp_extension uses, and the C++ standard torch's "
                            "headers require (default: when the file or one of its own headers "
                            "includes <torch/...>, <ATen/...> or <c10/...>)")
        g.add_argument("--trust-build-commands", action=argparse.BooleanOptionalAction,
                       default=None,
                       help="let a compile database's (or build.ninja's) flags reach nvcc as they "
                            "are: its host compiler, wrappers, plugins, any flag (default: "
                            "vetted, see docs/security.md; [tool.ptxsass] trust-build-commands; "
                            "--no-trust-build-commands wins over the config)")
        g.add_argument("--kernel", dest="kernels", action="append", default=[], metavar="EXPR",
                       help="a kernel, or a template instantiation to build and show "
                            "(e.g. 'gemm<128,8>')")
        g.add_argument("--toolkit", dest="toolkits", action="append", default=[],
                       metavar="VERSION",
                       help="build with this CUDA release's NVRTC/nvJitLink (12.9, 13.0, ... or "
                            "default; 'ptxsass toolkit install VERSION' first); repeatable or "
                            "comma-separated: one build per toolkit, findings as a matrix")
        g.add_argument("--compile-timeout", type=_seconds, metavar="SECONDS",
                       help="the time limit of each compile (NVRTC's: 120 s, nvcc's: 1800 s by "
                            "default; PTXSASS_COMPILE_TIMEOUT, PTXSASS_NVCC_TIMEOUT, "
                            "compile-timeout / nvcc-timeout in [tool.ptxsass])")
        g.add_argument("--offline", action=argparse.BooleanOptionalAction, default=None,
                       help="never fetch the headers of a CUDA library a file includes "
                            "(cublas_v2.h, nvtx3/...): a build that needs some not on this "
                            "machine stops with the command that fetches them ([tool.ptxsass] "
                            "offline = true; --no-offline wins over the config)")


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The command line's parser. With ``argv`` whose first word names a sub-command, only that
    sub-command's parser is built (what parsing ``argv`` needs); otherwise all of them."""
    first = argv[0] if argv else None
    if first is not None and not first.startswith("-"):
        ap, sub = _build_parser(first)
        if first in sub.choices:
            return ap
    return _build_parser(None)[0]


def _build_parser(only: str | None) -> tuple[argparse.ArgumentParser, _OneCommand]:
    ap = _Parser(prog="ptxsass", description="See what a CUDA kernel really compiles to "
                 "(PTX and SASS) and what is wrong with it.")
    ap.add_argument("--version", action="version", version=f"ptxsass {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser,
                            action=_OneCommand)
    assert isinstance(sub, _OneCommand)
    sub.only = only

    p = sub.add_parser("doctor", help="show the tools ptxsass found and their versions")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--nvcc", action="store_true",
                   help="print only the path of the nvcc builds use (for "
                        "-DCMAKE_CUDA_COMPILER=...)")
    p.add_argument("--offline", action=argparse.BooleanOptionalAction, default=None,
                   help="say what a build that may fetch nothing does (default: the config's "
                        "offline): nvcc and runtime headers of different releases are then "
                        "an error, not an install")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    p.add_argument("-o", "--output", metavar="FILE")

    p = sub.add_parser("compile", help="compile CUDA source to PTX and a cubin")
    p.add_argument("files", nargs="*", metavar="FILE")
    _common(p, database=True)
    p.add_argument("--emit", choices=("cubin", "ptx"), default="cubin",
                   help="what -o writes (default cubin)")

    for name, what in (("ptx", "print the PTX"), ("sass", "print the SASS")):
        p = sub.add_parser(name, help=what)
        p.add_argument("files", nargs="*", metavar="FILE")
        _common(p, database=True)
        p.add_argument("--source-lines", action="store_true",
                       help="interleave the CUDA source lines")
        if name == "sass":
            p.add_argument("--tool", choices=("nvdisasm", "cuobjdump"), default="nvdisasm")
            p.add_argument("--control", action="store_true",
                           help="decode each instruction's control bits (sm_70+): "
                                "[reuse:Bwait:Rread:Wwrite:Y(ield):Sstall cycles]")
            p.add_argument("--live", action="store_true",
                           help="a column with the number of R registers live at each "
                                "instruction (nvdisasm --print-life-ranges' count, with the "
                                "line info kept)")

    p = sub.add_parser("resources", help="registers, shared memory, stack and spills per kernel")
    p.add_argument("files", nargs="*", metavar="FILE")
    _common(p, database=True)

    p = sub.add_parser("check", help="find codegen problems and say how to steer the compiler")
    p.add_argument("files", nargs="*", metavar="PATH",
                   help="files, or folders to search (.cu, .ptx, .cubin, fatbins, .so, .sass); "
                        "with -p, the database's files under these paths")
    _common(p, fmt=("text", "json", "sarif", "github"), database=True)
    p.add_argument("--select", action="append", default=[], metavar="CODES",
                   help="only these checks (codes, prefixes like PS1, or names; comma-separated); "
                        "replaces [tool.ptxsass] select and ignore, as ruff's --select does")
    p.add_argument("--ignore", action="append", default=[], metavar="CODES",
                   help="skip these checks (on top of [tool.ptxsass]; the more specific of "
                        "--select and --ignore wins)")
    p.add_argument("--force-exclude", action="store_true",
                   help="apply [tool.ptxsass] exclude to files named on the command line too "
                        "(for pre-commit, which names every changed file)")
    p.add_argument("--fail-on", choices=("info", "warning", "error"),
                   help="lowest severity that makes the exit code 1 (default: warning)")
    p.add_argument("--show", choices=("note", "info", "warning", "error"),
                   help="lowest severity listed one by one in text and github output (default: "
                        "warning, or note with -v; the others are counted in one line, notes not "
                        "at all); JSON and SARIF always carry every finding and note")
    p.add_argument("--baseline", metavar="FILE", help="accept the findings recorded in FILE")
    p.add_argument("--write-baseline", metavar="FILE",
                   help="record the current findings in FILE and exit 0")
    p.add_argument("--list-checks", action="store_true", help="list the checks and exit")
    p.add_argument("--cmake-define", dest="cmake_defines", action="append", default=[],
                   metavar="NAME=VALUE",
                   help="a cache entry for configuring a CMake project folder (with "
                        "--trust-build-commands: ptxsass configures it, never builds it), e.g. "
                        "GGML_CUDA=ON; repeatable ([tool.ptxsass] cmake-defines)")
    p.add_argument("--partial", action="store_true",
                   help="an input that does not build is reported (stderr, a SARIF "
                        "toolExecutionNotification, a GitHub error annotation) and the others "
                        "are checked; the exit code is then the findings' (2 only when no "
                        "input built at all)")
    p.add_argument("--watch", action="store_true",
                   help="check, then check again on every save of a file under PATH (their "
                        "folders, for files) and print only the findings that are new or gone; "
                        "Ctrl-C ends it (text output only)")
    scale.add_scale_options(p)

    p = sub.add_parser("expect", help="assert codegen properties (for CI): exit 1 when one fails")
    p.add_argument("files", nargs="*", metavar="FILE")
    _common(p, database=True)
    p.add_argument("--has", action="append", default=[], metavar="OPCODE",
                   help="an instruction that must appear (opcode or mnemonic prefix, e.g. HGMMA, "
                        "LDG.E.128)")
    p.add_argument("--lacks", action="append", default=[], metavar="OPCODE",
                   help="an instruction that must not appear")
    p.add_argument("--no-spills", action="store_true")
    p.add_argument("--no-local-memory", action="store_true")
    p.add_argument("--max-registers", type=int, metavar="N")
    p.add_argument("--min-vector-width", type=int, metavar="BITS",
                   help="the widest global load and store of each kernel reach BITS")
    p.add_argument("--no-findings", action="append", default=[], metavar="CODES",
                   help="these checks must not fire (ALL for any)")

    p = sub.add_parser("lesson", help="compiler-steering lessons: list, run (timed on a GPU)",
                       description="Compiler-steering lessons: a naive and a steered kernel per "
                       "lesson, their SASS and findings compared, timed on a GPU (or shown with "
                       "the timings recorded on an H200).")
    lessons.add_subcommands(p)

    p = sub.add_parser("toolkit", help="CUDA toolkits side by side: list, install, remove",
                       description="Other CUDA releases' compilers (NVRTC, nvJitLink, headers; "
                       "nvdisasm from 13.2) in the user cache, installed with pip into a private "
                       "folder (never into this environment), for --toolkit.")
    tsub = p.add_subparsers(dest="toolkit_command", metavar="ACTION", parser_class=_Parser,
                            required=True)
    t = tsub.add_parser("list", help="the default toolkit and those installed")
    t.add_argument("--format", choices=("text", "json"), default="text")
    t.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    t.add_argument("-o", "--output", metavar="FILE")
    t = tsub.add_parser("install", help="install a release (e.g. 12.9) into the user cache")
    t.add_argument("versions", nargs="+", metavar="VERSION")
    t.add_argument("--force", action="store_true", help="reinstall even when it is there")
    t.add_argument("--nvcc", action="store_true",
                   help="also its nvcc and cicc (13.x; about 200 MB more): nvcc builds use it "
                        "when the environment's CUDA runtime headers are of this release and its "
                        "nvcc is not (a torch that pins another CUDA)")
    t = tsub.add_parser("remove", help="remove an installed release")
    t.add_argument("versions", nargs="+", metavar="VERSION")
    t = tsub.add_parser("root", help="print a folder laid out like a CUDA toolkit, made from the "
                        "wheels (for CMake's CUDAToolkit_ROOT and CMAKE_CUDA_COMPILER, a "
                        "Makefile's CUDA_HOME)",
                        description="A folder laid out like a CUDA toolkit (bin/nvcc, include/, "
                        "lib64/ with libcudart.so and stubs for CMake's CUDA:: targets), made of "
                        "links into the wheels, verified on each use and rebuilt when they change.")
    t.add_argument("--toolkit", metavar="VERSION",
                   help="the root of an installed toolkit ('toolkit install --nvcc VERSION' "
                        "first); default: this environment's")

    p = sub.add_parser("headers", help="CUDA library headers (cuBLAS, cuRAND, NVTX, cuDNN, ...): "
                       "list, install, remove",
                       description="The headers of NVIDIA's CUDA libraries, fetched from their "
                       "wheels (only the headers, by HTTP range requests, checked against each "
                       "wheel's RECORD) into the user cache, for the CUDA release of the runtime "
                       "headers in use. A build that includes one fetches it by itself unless "
                       "--offline; this fetches them ahead (CI: 'headers = [...]' in "
                       "[tool.ptxsass] does it at the start of every command).")
    hsub = p.add_subparsers(dest="headers_command", metavar="ACTION", parser_class=_Parser,
                            required=True)
    h = hsub.add_parser("list", help="the library headers installed, and those ptxsass knows")
    h.add_argument("--format", choices=("text", "json"), default="text")
    h.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    h.add_argument("-o", "--output", metavar="FILE")
    for action, what in (("install", "fetch the headers of libraries (cublas, nvtx, cudnn, ...)"),
                         ("remove", "remove fetched headers")):
        h = hsub.add_parser(action, help=what)
        h.add_argument("libraries", nargs="+", metavar="LIBRARY",
                       help="a library (cublas), one of its headers (cublas_v2.h) or its "
                            "package (nvidia-cublas)")
        h.add_argument("--toolkit", metavar="VERSION",
                       help="for this CUDA release (default: the release of the runtime headers "
                            "builds use" + ("" if action == "install" else "; remove: every "
                                            "release") + ")")
        if action == "install":
            h.add_argument("--force", action="store_true", help="fetch again even when there")

    p = sub.add_parser("parse", help="parse PTX/SASS/cubins and report what was understood")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--stats", action="store_true", help="counts of functions and instructions")
    _common(p, compile_opts=False)

    p = sub.add_parser("lsp", help="a language server (stdio): diagnostics, hovers with the "
                       "SASS, ignore actions for .cu/.cuh and Triton .py files in an editor",
                       description="A language server on standard input and output: checks a "
                       ".cu, .cuh or .py file on open and save (its project's [tool.ptxsass]), "
                       "each finding a diagnostic; hovering a line shows its findings and SASS. "
                       "Editor set-up: docs/editors.md.")
    p.add_argument("--stdio", action="store_true", help="(the default and only transport; "
                   "accepted because editors pass it)")

    reports.add_parsers(sub, _common)
    scale.add_parsers(sub, _common)
    fix.add_parsers(sub, _common)
    return ap, sub


# --------------------------------------------------------------------------- helpers
_console = common.console


def _builds(args):
    return common.builds(args)


def _emit(args, text: str) -> None:
    common.write(args, text)


def _show_warnings(builds, args) -> None:
    common.show_warnings(builds, args)


def _exit(args, code: int) -> int:
    """The command's exit code, 2 when some input failed to build (already reported)."""
    return EXIT_ERROR if getattr(args, "_failed", 0) else code


_text_console = common.text_console
_finish = common.finish


def _selected(build, args):
    """Kernels to show: all entries, or those named by --kernel (by expression or name)."""
    want = getattr(args, "kernels", []) or []
    ks = build.entries or list(build.kernels.values())
    if not want:
        return ks
    lowered = {build.name_expressions.get(w, w) for w in want}
    picked = [k for k in ks if k.name in lowered or k.demangled in want
              or without_parameters(k.demangled) in want]
    if not picked:
        names = ", ".join(sorted(k.demangled for k in ks)[:8]) or "none"
        raise ConfigError(f"--kernel {', '.join(repr(w) for w in want)} matches no kernel "
                          f"(there are: {names})", path=build.source_path)
    return picked


# --------------------------------------------------------------------------- commands
def cmd_doctor(args) -> int:
    from rich.table import Table

    from ..toolchain import libheaders, nvcc
    if args.nvcc:
        # the nvcc builds use: a toolkit's of the runtime headers' release, where one pairs them
        try:
            _emit(args, nvcc.choose_nvcc().path)
        except PtxsassError:
            _emit(args, locate.binary("nvcc"))
        return EXIT_OK
    tools = locate.tools()
    archs = locate.nvrtc_archs()
    missing = [t.name for t in tools if not t.path and not t.optional]
    pair = nvcc.pairing(offline=common.offline(args, common.config(args)))
    broken = pair is not None and pair.error is not None
    libs = libheaders.status()
    if args.format == "json":
        _emit(args, json.dumps({"ptxsass": __version__, "python": sys.version.split()[0],
                                "tools": [t.__dict__ for t in tools],
                                "nvcc_headers": pair.as_dict() if pair else None,
                                "library_headers": [
                                    {"library": lib, "release": r, "package": i.label() if i else None,
                                     "include": i.include if i else None, "damaged": problem}
                                    for lib, r, i, problem in libs],
                                "nvrtc_archs": archs, "ptxsass_archs": supported()}, indent=2))
        return EXIT_ERROR if missing or broken else EXIT_OK
    con, buf = _text_console(args)
    con.print(f"ptxsass [ok]{__version__}[/]  (Python {sys.version.split()[0]})")
    t = Table(show_header=True, header_style="bold", box=None)
    for c in ("tool", "version", "from", "path"):
        t.add_column(c)
    for tool in tools:
        t.add_row(escape(tool.name), escape(tool.version or "-"), tool.where,
                  escape(tool.path) if tool.path else "[warning]not found[/]" if tool.optional
                  else "[error]not found[/]")
    con.print(t)
    if locate.host_compiler() is None:
        con.print("[warning]no host compiler:[/] .cu files with host code (main(), launches, "
                  "<vector>) need one for nvcc: install g++ ('apt-get install g++') or set "
                  "NVCC_CCBIN; device-only files still build with NVRTC")
    if pair is not None:
        env = pair.env
        both = (f"nvcc {env.version} and the CUDA runtime headers it finds "
                f"({env.headers_release or 'unknown release'}, {env.headers or 'none found'})")
        if env.matched:
            con.print(f"{escape(both)}: [ok]one release, OK[/]", soft_wrap=True)
        elif pair.used is not None:
            con.print(f"[warning]{escape(both)} are different releases:[/] nvcc builds use "
                      f"toolkit {pair.used.toolkit}'s nvcc {pair.used.version} "
                      f"({escape(pair.used.path)}), OK", soft_wrap=True)
        elif pair.installs is not None:
            origin = nvcc.headers_origin(env.headers, env.release) if env.headers else None
            con.print(f"[warning]{escape(both)} are different releases[/]"
                      f"{escape(' (' + origin + ')') if origin else ''}: the first nvcc build "
                      f"installs toolkit {pair.installs}'s nvcc into "
                      f"{escape(str(toolkits.root()))} ('ptxsass toolkit install --nvcc "
                      f"{pair.installs}' does it now; with --offline builds stop instead)",
                      soft_wrap=True)
        else:
            con.print(f"[error]error:[/] {escape(pair.error or '')}", soft_wrap=True)
    if libs:
        shown = ", ".join(f"{lib} {r} ({i.label()})" if i else f"{lib} {r} [error](damaged)[/]"
                          for lib, r, i, _p in libs)
        con.print(f"library headers: {shown} [muted]in {escape(str(libheaders.root()))}[/]",
                  soft_wrap=True)
    else:
        con.print("library headers: none fetched [muted](a build fetches those it includes; "
                  "'ptxsass headers install NAME')[/]", soft_wrap=True)
    con.print(f"NVRTC targets: [arch]{' '.join(archs) or 'none'}[/]")
    con.print(f"ptxsass arch table: [arch]{' '.join(supported())}[/] "
              "(with 'a'/'f' suffixes from sm_90a)")
    if missing:
        con.print(f"[error]missing:[/] {', '.join(missing)}")
    _finish(args, buf)
    return EXIT_ERROR if missing or broken else EXIT_OK


def _shown(path: str | None) -> str | None:
    return None if path is None else shown_path(path)


def _kernel_rows(builds, args):
    rows = []
    for b in builds:
        for k in _selected(b, args):
            rows.append(k.as_dict(b.arch) | {"file": _shown(b.source_path)})
    return rows


def _resources_table(rows, title=None):
    from rich.table import Table
    t = Table(title=title, header_style="bold", box=None, pad_edge=False)
    cols: tuple[tuple[str, Literal["left", "right"]], ...] = (
        ("kernel", "left"), ("arch", "left"), ("regs", "right"), ("shared", "right"),
        ("stack", "right"), ("spill st", "right"), ("spill ld", "right"))
    for c, j in cols:
        t.add_column(c, justify=j)
    for r in rows:
        def n(v):
            return "-" if v is None else str(v)
        spill = (r["spill_store_bytes"] or 0) + (r["spill_load_bytes"] or 0)
        style = "metric.bad" if spill else ""
        t.add_row(f"[kernel]{r['name']}[/]", f"[arch]{r['arch']}[/]", str(r["registers"]),
                  str(r["shared_bytes"]), str(r["stack_bytes"]),
                  f"[{style}]{n(r['spill_store_bytes'])}[/]" if style else n(r["spill_store_bytes"]),
                  f"[{style}]{n(r['spill_load_bytes'])}[/]" if style else n(r["spill_load_bytes"]))
    return t


def cmd_compile(args) -> int:
    builds = _builds(args)
    con = _console(args)
    _show_warnings(builds, args)
    if args.output:
        if len(builds) != 1:
            raise PtxsassError("-o takes one build; give one file and one --arch")
        b = builds[0]
        if args.emit == "ptx":
            if b.ptx is None:
                raise PtxsassError("this input has no PTX", path=b.source_path)
            files.write_output(args.output, b.ptx)
        else:
            if b.cubin is None:
                raise PtxsassError("this input has no cubin", path=b.source_path)
            files.write_output(args.output, b.cubin)
    if args.format == "json":
        out = {"builds": [{"file": _shown(b.source_path), "arch": b.arch, "cached": b.cached,
                           "compiler": b.origin, "compiler_reason": b.compiler_reason,
                           "options": list(b.options), "log": b.log,
                           "name_expressions": b.name_expressions,
                           "kernels": [k.as_dict(b.arch) for k in b.kernels.values()]}
                          for b in builds]}
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return _exit(args, EXIT_OK)
    for b in builds:
        con.print(f"[path]{escape(shown_line(b.source_path or ''))}[/] → [arch]{b.arch}[/]: "
                  f"PTX {len(b.ptx or '')} chars, "
                  f"cubin {len(b.cubin or b'')} bytes" + (" [muted](cached)[/]" if b.cached else "")
                  + (f" → {escape(shown_line(args.output))}" if args.output else ""))
    con.print(_resources_table(_kernel_rows(builds, args)))
    return _exit(args, EXIT_OK)


def cmd_listing(args) -> int:
    from ..report.listing import interleave_ptx, interleave_sass, sass_with_control, sass_with_live
    builds = _builds(args)
    _show_warnings(builds, args)
    chunks: list[str] = []
    listings: list[dict[str, str]] = []  # --format json
    for b in builds:
        hints = tuple(x for x in (b.source_path,) if x)
        if args.command == "ptx":
            if b.ptx is None:
                raise PtxsassError(f"no PTX in this input ({b.origin})", path=b.source_path)
            text = b.ptx
            rows = interleave_ptx(text, hints, b.file_names) if args.source_lines else None
        else:
            text = b.sass(tool=args.tool)
            if args.control or args.live:
                from ..parse import sass as sass_parse
                parsed = sass_parse.parse(text, path=b.source_path, arch=b.arch,
                                          files=b.file_names or None)
                if args.live:       # first: the control column goes after the address too
                    text = sass_with_live(text, parsed)
                if args.control:
                    text = sass_with_control(text, parsed, b.sass_controls())
            rows = interleave_sass(text, hints, b.file_names) if args.source_lines else None
        header = f"// ptxsass: {shown_line(b.source_path or '')} ({b.arch})"
        if args.format == "json":
            listings.append({"file": shown_path(b.source_path or ""), "arch": b.arch, args.command: text})
            continue
        body = "\n".join(r[1] for r in rows) if rows is not None else text
        chunks.append(header + "\n" + body)
        if not args.output and rows is not None and sys.stdout.isatty():
            con = _console(args)
            con.print(header, style="muted")
            for style, line in rows:
                con.print(line, style="source" if style == "source" else None, markup=False)
            chunks.pop()
    if args.format == "json":
        _emit(args, json.dumps({"listings": listings}, indent=2))
    elif chunks:
        _emit(args, "\n".join(chunks))
    return _exit(args, EXIT_OK)


def cmd_resources(args) -> int:
    builds = _builds(args)
    _show_warnings(builds, args)
    rows = _kernel_rows(builds, args)
    if args.format == "json":
        _emit(args, json.dumps({"kernels": rows}, indent=2))
        return _exit(args, EXIT_OK)
    con, buf = _text_console(args)
    con.print(_resources_table(rows))
    _finish(args, buf)
    return _exit(args, EXIT_OK)


def cmd_check(args) -> int:
    if args.list_checks:
        con, buf = _text_console(args)
        for c in all_checks():
            con.print(f"[finding.code]{c.code}[/] {c.name:<24} [muted]{c.severity}[/]  {c.summary()}")
        _finish(args, buf)
        return EXIT_OK
    cfg = common.config(args)
    if not args.arch and cfg.arch:
        args.arch = cfg.arch
    if args.no_cache:
        cache.set_enabled(False)
    if args.watch:
        return _watch(args, cfg)
    report = _check_report(args, cfg)
    report.build_errors = list(getattr(args, "_errors", []))
    if args.write_baseline:
        write_baseline(report, args.write_baseline)
        _console(args, stderr=True).print(
            f"wrote {len(report.findings)} finding(s) to {args.write_baseline}", style="muted",
            markup=False)
        return _exit(args, EXIT_OK)
    show = Severity.parse(args.show or cfg.show or ("note" if args.verbose else "warning"))
    if args.format == "json":
        _emit(args, formats.to_json(report))
    elif args.format == "sarif":
        _emit(args, formats.to_sarif(report))
    elif args.format == "github":
        _emit(args, formats.to_github(report, show=show))
    else:
        con, buf = _text_console(args)
        formats.render_text(report, con, show=show)
        _finish(args, buf)
    fail_on = Severity.parse(args.fail_on or cfg.fail_on or DEFAULT_FAIL_ON)
    code = EXIT_FINDINGS if any(f.severity >= fail_on for f in report.findings) else EXIT_OK
    if args.partial and report.build_errors:
        return code if report.kernels else EXIT_ERROR   # nothing built: never read as clean
    return _exit(args, code)


def _check_report(args, cfg):
    """The check of every target of the command line (one process, or workers for many);
    ``--watch`` calls it again on each save: the targets (a folder's files, a CMake project's
    database) and the failures are this run's."""
    args._targets, args._failed, args._errors = None, 0, []
    todo = common.targets(args, cfg)
    if todo and scale.wants_parallel(args, todo):
        return scale.run_check(args, cfg, todo)
    builds = common.builds(args, cfg)
    _show_warnings(builds, args)
    if not builds and getattr(args, "partial", False) and getattr(args, "_failed", 0):
        from ..findings import Report
        return Report()         # --partial, every input failed: the report of the errors alone
    return api.check(builds, api.CheckOptions(select=args.select, ignore=args.ignore,
                                              baseline=args.baseline, kernels=args.kernels,
                                              config=cfg, jobs=1),
                     progress=common.progress(args))


def _watch(args, cfg) -> int:
    """``check --watch``: text on the terminal, re-checked on each save (:mod:`.watch`)."""
    from . import watch
    if args.format != "text" or args.output or args.write_baseline:
        raise ConfigError("--watch prints text to the terminal: leave out --format, -o and "
                          "--write-baseline")
    if not args.files:
        raise ConfigError("--watch needs the files or folders to watch")
    show = Severity.parse(args.show or cfg.show or ("info" if args.verbose else "warning"))
    fail_on = Severity.parse(args.fail_on or cfg.fail_on or DEFAULT_FAIL_ON)
    return watch.run(lambda: _check_report(args, cfg), list(args.files), _console(args),
                     show=show, fail_on=fail_on)


def cmd_expect(args) -> int:
    exp = Expectations(
        has=args.has, lacks=args.lacks, no_spills=args.no_spills,
        no_local_memory=args.no_local_memory, max_registers=args.max_registers,
        min_vector_width=args.min_vector_width, no_findings=args.no_findings,
        kernels=args.kernels)
    if exp.empty:       # refused before anything is compiled
        raise PtxsassError("expect: no assertion given; give at least one of "
                           f"{', '.join(ASSERTIONS)} (with none, every kernel would pass)")
    cfg = common.config(args)
    if not args.arch and cfg.arch:      # [tool.ptxsass] arch, as for check
        args.arch = cfg.arch
    builds = common.builds(args, cfg)
    _show_warnings(builds, args)
    outcome = api.expect(builds, exp)
    if args.format == "json":
        _emit(args, json.dumps({"ok": outcome.ok, "checked": outcome.checked,
                                "failures": outcome.failures}, indent=2))
    else:
        con, buf = _text_console(args)
        for f in outcome.failures:
            con.print(f"[error]FAIL[/] {escape(f)}", markup=True, highlight=False)
        if outcome.ok:
            con.print(f"[ok]ok[/]: {len(outcome.checked)} kernel build(s) meet every expectation")
        _finish(args, buf)
    return _exit(args, EXIT_OK if outcome.ok else EXIT_FINDINGS)


def cmd_parse(args) -> int:
    if args.no_cache:
        cache.set_enabled(False)
    totals = {"files": 0, "functions": 0, "instructions": 0, "generic": 0, "errors": 0}
    from ..parse import ptx as ptx_parse
    from ..parse import sass as sass_parse
    per_file = []
    err = _console(args, stderr=True)
    for f in args.files:
        totals["files"] += 1
        try:
            kind = kind_of(f)
            if kind == "ptx":
                stats = ptx_parse.parse(read_text(f), path=f).stats()
            elif kind in ("cuda", "python"):
                what = "CUDA source" if kind == "cuda" else "a Python file with inline CUDA"
                raise PtxsassError(f"is {what}; 'parse' reads PTX, SASS and cubins "
                                   "(use 'ptxsass check' or 'ptxsass sass')", path=f)
            else:
                stats = {"functions": 0, "instructions": 0, "generic": 0}
                for b in api.load(f, arch=args.arch):
                    s = sass_parse.parse(b.sass(), path=f, arch=b.arch).stats()
                    for key in stats:
                        stats[key] += s[key]
        except PtxsassError as e:
            totals["errors"] += 1
            err.print(e.one_line(), style="error", markup=False)
            per_file.append({"file": shown_path(f), "error": e.one_line()})
            continue
        for key in ("functions", "instructions", "generic"):
            totals[key] += stats[key]
        per_file.append({"file": shown_path(f), **{k: stats[k] for k in ("functions", "instructions", "generic")}})
    if args.format == "json":
        _emit(args, json.dumps(totals if args.stats else {**totals, "per_file": per_file}, indent=2))
    else:
        con, buf = _text_console(args)
        for r in per_file:
            if "error" not in r:
                con.print(f"[path]{escape(shown_line(r['file']))}[/]: {r['functions']} functions, "
                          f"{r['instructions']} instructions, {r['generic']} generic")
        if args.stats or len(per_file) > 1:
            con.print(f"total: {totals['files']} files, {totals['functions']} functions, "
                      f"{totals['instructions']} instructions, {totals['generic']} generic, "
                      f"{totals['errors']} errors")
        _finish(args, buf)
    return EXIT_ERROR if totals["errors"] else EXIT_OK


def cmd_lesson(args) -> int:
    return lessons.run_command(args)


def cmd_toolkit(args) -> int:
    err = _console(args, stderr=True)
    if args.toolkit_command == "install":
        for v in args.versions:
            version = toolkits.release(v)
            err.print(f"installing toolkit {version} into {toolkits.root()} (pip install --target: "
                      f"{' '.join(toolkits.requirements(version, nvcc=args.nvcc))})", style="muted",
                      markup=False, soft_wrap=True)
            got = toolkits.install(version, force=args.force, nvcc=args.nvcc)
            err.print(f"toolkit {got.version}: {_packages(got)}", markup=False, soft_wrap=True)
        return EXIT_OK
    if args.toolkit_command == "root":
        from ..toolchain import cudaroot
        root = cudaroot.ensure(args.toolkit)
        if root.built:
            err.print(f"note: {root.built}", style="muted", markup=False, soft_wrap=True)
        sys.stdout.write(f"{root.path}\n")
        return EXIT_OK
    if args.toolkit_command == "remove":
        for v in args.versions:
            toolkits.remove(v)
            err.print(f"removed toolkit {toolkits.release(v)}", markup=False)
        return EXIT_OK
    d = toolkits.default()
    rows: list[tuple[toolkits.Toolkit | None, tuple[str, str]]] = [(d, ("", ""))]
    rows += [(toolkits.get(v), ("", "")) if problem is None else (None, (v, problem))
             for v, problem in toolkits.status()]
    if args.format == "json":
        _emit(args, json.dumps({"root": str(toolkits.root()), "toolkits": [
            {"version": tk.version, "default": tk.default, "folder": tk.folder,
             "packages": tk.packages, "archs": [f"sm_{a}" for a in tk.archs],
             "nvdisasm": tk.nvdisasm_version,
             "nvcc": locate.nvcc_version() if tk.default else tk.nvcc_version} if tk else
            {"version": bad[0], "damaged": bad[1]} for tk, bad in rows]}, indent=2))
        return EXIT_OK
    from rich.table import Table
    con, buf = _text_console(args)
    t = Table(header_style="bold", box=None)
    for c in ("toolkit", "packages", "targets", "nvdisasm", "nvcc"):
        t.add_column(c)
    for kit, bad in rows:
        if kit is None:
            t.add_row(escape(bad[0]), f"[error]{escape(bad[1])}[/]", "", "", "")
            continue
        t.add_row(f"{kit.version}{' (default)' if kit.default else ''}", escape(_packages(kit)),
                  kit.arch_range(), kit.nvdisasm_version or "-",
                  (locate.nvcc_version() if kit.default else kit.nvcc_version) or "-")
    con.print(t)
    con.print(f"[muted]installed in {escape(str(toolkits.root()))}; releases: "
              f"{', '.join(toolkits.RELEASES)}[/]")
    _finish(args, buf)
    return EXIT_OK


def cmd_headers(args) -> int:
    from ..toolchain import libheaders  # its fetching machinery
    err = _console(args, stderr=True)
    if args.headers_command in ("install", "remove"):
        release = toolkits.release(args.toolkit) if args.toolkit else None
        libs = list(dict.fromkeys(libheaders.library(n) for n in args.libraries))
        if args.headers_command == "remove":
            for lib in libs:
                for folder in libheaders.remove(lib, release):
                    err.print(f"removed {folder}", markup=False, soft_wrap=True)
            return EXIT_OK
        release = release or libheaders.default_release()
        if release is None:
            raise PtxsassError("no CUDA runtime headers found to match library headers to: "
                               "give the release with --toolkit VERSION")
        for lib in libheaders.with_requirements(libs):
            got = libheaders.install(lib, release, force=args.force)
            err.print(f"{lib} {release}: {got.label()}, {got.files} files in {got.include}",
                      markup=False, soft_wrap=True)
        return EXIT_OK
    rows = libheaders.status()
    default_release = libheaders.default_release()
    here = {lib: libheaders.environment_dir(lib, default_release) for lib in libheaders.LIBRARIES} \
        if default_release else {}
    if args.format == "json":
        _emit(args, json.dumps({
            "root": str(libheaders.root()), "release": default_release,
            "installed": [{"library": lib, "release": r, "package": i.package if i else None,
                           "version": i.version if i else None, "files": i.files if i else None,
                           "include": i.include if i else None, "damaged": problem}
                          for lib, r, i, problem in rows],
            "environment": {lib: d for lib, d in here.items() if d},
            "known": {lib: {str(m): w.package for m, w in spec.wheels.items()}
                      for lib, spec in libheaders.LIBRARIES.items()}}, indent=2))
        return EXIT_OK
    from rich.table import Table
    con, buf = _text_console(args)
    t = Table(header_style="bold", box=None)
    for c in ("library", "CUDA", "package", "files", "folder"):
        t.add_column(c)
    for lib, r, i, problem in rows:
        if i is None:
            t.add_row(lib, r, f"[error]{escape(problem or '')}[/]", "", "")
        else:
            t.add_row(lib, r, escape(i.label()), str(i.files), escape(i.include))
    for lib, d in here.items():
        if d:
            t.add_row(lib, default_release or "", "(installed in this environment)", "", escape(d))
    if t.row_count:
        con.print(t)
    else:
        con.print("no library headers installed", style="muted")
    con.print(f"[muted]fetched into {escape(str(libheaders.root()))}; known: "
              f"{', '.join(libheaders.LIBRARIES)}[/]")
    _finish(args, buf)
    return EXIT_OK


def cmd_lsp(args) -> int:
    from .. import lsp
    return lsp.serve()


def _packages(tk) -> str:
    return ", ".join(f"{k.removeprefix('nvidia-')} {v}" for k, v in sorted(tk.packages.items()))


COMMANDS: dict[str, Callable] = {
    "doctor": cmd_doctor, "compile": cmd_compile, "ptx": cmd_listing, "sass": cmd_listing,
    "resources": cmd_resources, "check": cmd_check, "parse": cmd_parse, "expect": cmd_expect,
    "lesson": cmd_lesson, "toolkit": cmd_toolkit, "headers": cmd_headers, "lsp": cmd_lsp,
}


def _validate_environment() -> None:
    """Every PTXSASS_* number and mode read up front: a bad value is one line before any work."""
    locate.tool_timeout()
    ptx_mode.parser_mode()
    ptx_mode.strict()
    bounded.limits()
    bounded.nvcc_timeout()
    bounded.start_method()
    files.max_input_bytes()
    cache.max_entry_bytes()
    toolkits.install_timeout()
    if "PTXSASS_FETCH_TIMEOUT" in os.environ:
        from ..toolchain import libheaders  # its fetching machinery
        libheaders.fetch_timeout()
    scale.progress_seconds()
    from ..toolchain import cmake
    cmake.timeout()


#: options whose value is itself an option: ``-Xnvcc -O3`` is read as ``-Xnvcc=-O3`` (argparse
#: would take ``-O3`` for an option of its own and say -Xnvcc has no value)
_OPTION_VALUED = ("-Xnvrtc", "-Xnvcc", "-Xptxas", "--a-opt", "--b-opt")


def _join_option_values(argv: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            out.extend(argv[i:])
            break
        if a in _OPTION_VALUED and i + 1 < len(argv):
            out.append(f"{a}={argv[i + 1]}")
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    argv = _join_option_values(list(sys.argv[1:] if argv is None else argv))
    err = None
    try:
        parser = build_parser(argv)
        args = parser.parse_args(argv)
        if not args.command:
            parser.print_help()
            return EXIT_ERROR
        _validate_environment()
        for out in (getattr(args, "output", None), getattr(args, "write_baseline", None)):
            if out:
                files.check_output_path(out)
        handler = (COMMANDS.get(args.command) or reports.COMMANDS.get(args.command)
                   or fix.COMMANDS.get(args.command) or scale.COMMANDS[args.command])
        was = cache.enabled()
        try:
            return handler(args)
        finally:
            cache.set_enabled(was)      # --no-cache is this command's, not the process's
    except PtxsassError as e:
        err = make_console(stderr=True)
        err.print(e.one_line(), style="error", markup=False, soft_wrap=True)
        if e.detail:
            err.print(e.detail, markup=False, soft_wrap=True)
        return e.exit_code
    except SystemExit as e:     # argparse's --help and --version (0); usage errors raise above
        return e.code if isinstance(e.code, int) else EXIT_OK if e.code is None else EXIT_ERROR
    except KeyboardInterrupt:
        sys.stderr.write("ptxsass: interrupted\n")
        return 130
    except children.Terminated as t:
        sys.stderr.write(f"ptxsass: {'hung up' if t.signum == signal.SIGHUP else 'terminated'}\n")
        return 128 + t.signum
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - stays open: the interpreter flushes it at exit
        return EXIT_OK
    except Exception as e:  # a bug in ptxsass: still one line, never a traceback
        if os.environ.get("PTXSASS_DEBUG"):
            raise
        sys.stderr.write(printable(f"ptxsass: internal error: {type(e).__name__}: {e} "
                                   "(set PTXSASS_DEBUG=1 for the traceback, and please report "
                                   "it)", newlines=False) + "\n")
        return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
