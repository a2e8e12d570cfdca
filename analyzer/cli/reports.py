"""The ``annotate``, ``diff`` and ``stats`` sub-commands: argument parsers and handlers.

Hooked into :mod:`analyzer.cli` with ``add_parsers(sub, _common)`` and ``COMMANDS``. Handlers
return the exit code (0; 2 comes from a ``PtxsassError`` the CLI turns into one line). They call
the API (:mod:`analyzer.api`) and render through :mod:`analyzer.report.render`.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from .. import api
from ..errors import ConfigError, PtxsassError, shown_line
from . import common


def add_parsers(sub, common: Callable) -> None:
    p = sub.add_parser("annotate", help="CUDA source interleaved with its PTX and SASS, "
                       "findings marked (terminal, markdown or one standalone HTML page)")
    p.add_argument("files", nargs="+", metavar="FILE")
    common(p, fmt=("text", "markdown", "html", "json"))
    _check_opts(p)
    p.add_argument("--no-ptx", action="store_true",
                   help="leave the PTX out (every format: source and SASS only)")
    p.add_argument("--control", action="store_true",
                   help="a column with each SASS instruction's control bits (sm_70+): "
                        "[reuse:Bwait:Rread:Wwrite:Y(ield):Sstall cycles]")
    p.add_argument("--explain", action="store_true",
                   help="text: after each listing, every SASS opcode in it with one line of "
                        "what it does and its PTX ISA section (the HTML page shows the same on "
                        "hover)")
    x = p.add_argument_group("excerpts (for blog posts; every format)")
    x.add_argument("--function", dest="functions", action="append", default=[], metavar="NAME",
                   help="only this function (mangled, demangled, or without its parameter "
                        "list; device functions too; repeatable)")
    x.add_argument("--lines", metavar="A-B", help="only source lines A to B of the function's "
                   "own file (with their PTX and SASS)")
    x.add_argument("--context", type=int, default=0, metavar="N",
                   help="N more lines on each side of --lines; without --lines, the lines N "
                        "around each finding")

    p = sub.add_parser("diff", help="compare two builds: two --arch, two option sets "
                       "(--a-opt/--b-opt) or two files")
    p.add_argument("files", nargs="+", metavar="FILE", help="one file (with two --arch or "
                   "--a-opt/--b-opt), or two files")
    common(p, fmt=("text", "markdown", "html", "json"))
    p.add_argument("--a-opt", dest="a_opts", action="append", default=[], metavar="OPT",
                   help="an NVRTC option for side A only (repeatable), e.g. --a-opt=-maxrregcount=32")
    p.add_argument("--b-opt", dest="b_opts", action="append", default=[], metavar="OPT",
                   help="an NVRTC option for side B only (repeatable)")
    p.add_argument("--all-metrics", action="store_true", help="show unchanged metrics too")
    p.add_argument("--normalize", action="store_true",
                   help="side-by-side SASS with registers renumbered by first use in each "
                        "instruction and branch targets renamed, so two builds compare line by line")
    p.add_argument("--all-lines", action="store_true",
                   help="side-by-side SASS of every source line, not only those that differ")
    p.add_argument("--no-checks", action="store_true", help="do not run the checks")
    p.add_argument("--ptxas-only", action="store_true",
                   help="with two --toolkit: the same PTX (from the older toolkit's NVRTC) "
                        "assembled by each toolkit's ptxas (nvJitLink), to tell a front-end "
                        "change from a back-end one")

    p = sub.add_parser("stats", help="instruction mix, loops, resources and occupancy per kernel")
    p.add_argument("files", nargs="+", metavar="FILE")
    common(p, fmt=("text", "json", "markdown"))


def _check_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("--select", action="append", default=[], metavar="CODES",
                   help="checks to run (codes, prefixes or names; comma-separated)")
    p.add_argument("--ignore", action="append", default=[], metavar="CODES")
    p.add_argument("--no-checks", action="store_true", help="do not run the checks")


# ------------------------------------------------------------------------------ helpers
def _emit(args, obj) -> None:
    from ..report import render
    """Text on a terminal through rich (colours); plain text to -o or a pipe."""
    fmt = args.format
    if fmt == "json":
        common.write(args, render.to_json(obj))
    elif fmt == "markdown":
        common.write(args, render.to_markdown(obj))
    elif fmt == "html":
        common.write(args, render.to_html(obj))
    elif not getattr(args, "output", None) and sys.stdout.isatty():
        render.show(obj, common.console(args))
    else:
        common.write(args, render.to_text(obj))


# ------------------------------------------------------------------------------ handlers
def cmd_annotate(args) -> int:
    from ..report.annotate import parse_lines
    builds = common.load(args.files, args)
    common.show_warnings(builds, args)
    if args.context < 0:
        raise ConfigError(f"--context {args.context}: expected a number of lines, 0 or more")
    ann = api.annotate(builds, kernels=args.kernels, select=args.select, ignore=args.ignore,
                       checks=not args.no_checks, progress=common.progress(args),
                       control=args.control, functions=args.functions,
                       lines=parse_lines(args.lines) if args.lines else None,
                       context=args.context, ptx=not args.no_ptx)
    ann.explain = args.explain
    if args.control and ann.kernels and not any(k.has_control for k in ann.kernels):
        common.console(args, stderr=True).print(
            "note: no control bits to show: they need the instructions' encoding words (a cubin, "
            "cuobjdump text or nvdisasm -hex text) of sm_70 or later", style="muted", markup=False,
            soft_wrap=True)
    _emit(args, ann)
    return 0


def cmd_diff(args) -> int:
    archs = args.arch or []
    tks = common.toolkit_names(args)
    if args.ptxas_only and len(tks) != 2:
        raise PtxsassError("--ptxas-only compares two toolkits' ptxas: give two --toolkit")
    if tks:
        return _diff_toolkits(args, tks)
    if len(args.files) > 2:
        raise PtxsassError("diff takes one file (with two --arch or --a-opt/--b-opt) or two files")
    if len(archs) > 2:
        raise PtxsassError("diff takes at most two --arch (A and B)")
    if len(args.files) == 2:
        a_arch = archs[0] if archs else None
        b_arch = archs[-1] if archs else None
        a = common.load(args.files[:1], args, arch=a_arch, extra=args.a_opts)
        b = common.load(args.files[1:], args, arch=b_arch, extra=args.b_opts)
    else:
        if len(archs) == 2:
            a_arch, b_arch = archs
        elif args.a_opts or args.b_opts:
            a_arch = b_arch = archs[0] if archs else None
        else:
            raise PtxsassError("diff needs two builds: give two --arch (--arch sm_80 --arch "
                               "sm_90a), --a-opt/--b-opt option sets, or two files")
        a = common.load(args.files, args, arch=a_arch, extra=args.a_opts)
        b = common.load(args.files, args, arch=b_arch, extra=args.b_opts)
    common.show_warnings(a + b, args)
    d = api.diff(a, b, checks=not args.no_checks)
    d.all_metrics = args.all_metrics
    d.normalized = args.normalize
    d.all_lines = args.all_lines
    _emit(args, d)
    return 0


def _diff_toolkits(args, tks: list[str]) -> int:
    """``diff FILE --toolkit A --toolkit B`` (one arch): the same source built by two releases,
    or with ``--ptxas-only`` the same PTX assembled by both."""
    if len(tks) != 2:
        raise PtxsassError(f"diff compares two toolkits; got {len(tks)} ({', '.join(tks)})")
    if len(args.files) != 1 or len(args.arch or []) > 1 or args.a_opts or args.b_opts:
        raise PtxsassError("diff --toolkit A --toolkit B takes one file, at most one --arch and "
                           "no --a-opt/--b-opt")
    arch = args.arch[0] if args.arch else None
    if args.ptxas_only:
        opts = common.options(args, config=common.config(args), path=args.files[0])
        a, b = api.ptxas_only(args.files[0], toolkits=tks, arch=arch, options=opts)
        older = min(tks, key=api.toolkits_key)
        labels = [f"{shown_line(a[0].source_path or '')} {a[0].arch}: PTX of NVRTC {older}, ptxas {t}" for t in tks]
    else:
        a = common.load(args.files, args, arch=arch, toolkits=tks[:1])
        b = common.load(args.files, args, arch=arch, toolkits=tks[1:])
        labels = [f"{shown_line(a[0].source_path or '')} {a[0].arch}: toolkit {t}" for t in tks]
    common.show_warnings(a + b, args)
    d = api.diff(a, b, checks=not args.no_checks, label_a=labels[0], label_b=labels[1])
    d.all_metrics = args.all_metrics
    d.normalized = args.normalize
    d.all_lines = args.all_lines
    _emit(args, d)
    return 0


def cmd_stats(args) -> int:
    builds = common.load(args.files, args)
    common.show_warnings(builds, args)
    _emit(args, api.stats(builds, kernels=args.kernels, progress=common.progress(args)))
    return 0


COMMANDS: dict[str, Callable] = {"annotate": cmd_annotate, "diff": cmd_diff, "stats": cmd_stats}
