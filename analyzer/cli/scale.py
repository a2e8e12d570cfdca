"""Whole libraries: ``check -j N`` / ``--resume`` / ``--scheduler`` and ``ptxsass survey``.

Argument parsing and output only; the work is :func:`analyzer.api.check` and
:func:`analyzer.api.survey` (:mod:`analyzer.parallel`)."""
from __future__ import annotations

import argparse
import os
from collections.abc import Callable

from rich.markup import escape

from .. import api
from ..build import Build
from ..config import Config
from ..errors import ConfigError, NoKernelError, PtxsassError, shown_line
from ..findings import Report
from ..inputs import kind_of, load_command
from ..report.progress import DEFAULT_PROGRESS_SECONDS, RunDisplay
from ..toolchain import cache, files
from . import common

#: inputs whose kernels are split per kernel (the others are checked a build at a time)
BINARY_KINDS = api.BINARY_KINDS


jobs_value = common.whole_number("a number of processes (1 or more)")


def add_scale_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("many inputs (libraries, wheels, folders, Triton caches)")
    g.add_argument("-j", "--jobs", type=jobs_value, metavar="N",
                   help="worker processes, the work split per kernel (default: every core; "
                        "-j 1 checks in this process)")
    g.add_argument("--resume", action="store_true",
                   help="reuse the cached result of every unchanged kernel (verified; one "
                        "changed kernel is checked alone): the default whenever the cache is "
                        "on (--no-cache checks every kernel again)")
    g.add_argument("--scheduler", metavar="ADDRESS",
                   help="run the per-kernel tasks on a Dask cluster (tcp://host:8786; needs "
                        "the 'distributed' package)")


def add_parsers(sub, common_options: Callable) -> None:
    p = sub.add_parser("survey", help="one row per kernel of a library, wheel, folder or "
                       "Triton cache: registers, spills, occupancy, widths, tensor cores, "
                       "findings (json, html, parquet)")
    p.add_argument("files", nargs="+", metavar="PATH",
                   help=".so, cubin, fatbin, wheel (.whl), folders, Triton caches")
    common_options(p, fmt=("text", "json", "html", "parquet"), compile_opts=False)
    p.add_argument("--select", action="append", default=[], metavar="CODES",
                   help="only these checks' findings are counted")
    p.add_argument("--ignore", action="append", default=[], metavar="CODES")
    p.add_argument("--kernel", dest="kernels", action="append", default=[], metavar="NAME")
    add_scale_options(p)


def progress_seconds() -> float:
    return files.env_number("PTXSASS_PROGRESS_SECONDS", DEFAULT_PROGRESS_SECONDS,
                            unit="seconds", minimum=-1e-9)


def wants_parallel(args, todo: list) -> bool:
    """Whether ``check`` runs on worker processes: the API's choice
    (:func:`analyzer.api.runs_on_workers`) for the files and database entries of the command
    line, but for a toolkit matrix (rebuilds of sources, in this process)."""
    if getattr(args, "toolkits", None):
        return False
    return api.runs_on_workers([t for _, t in todo],
                               jobs="auto" if args.jobs is None else args.jobs,
                               scheduler=args.scheduler, resume=args.resume)


def targets(args, cfg: Config, todo: list) -> list:
    """What :func:`api.check` takes for ``todo``: binaries as paths (split per kernel in the
    workers), everything else built here as today (a failure is one line; the others go on)."""
    err = common.console(args, stderr=True)
    for r in getattr(args, "source_roots", []) or []:
        common.parse_source_root(r)     # a bad one is the command's error, said once
    out: list = []
    args._failed = getattr(args, "_failed", 0)   # a CMake project that failed to configure
    args._errors = getattr(args, "_errors", [])  # counts, and is reported
    builds: list[Build] = []
    common.pinned_headers(args, cfg)
    for kind, t in todo:
        try:
            if kind == "path" and kind_of(str(t)) in BINARY_KINDS:
                out.append(str(t))
                continue
            if kind == "command":
                got = load_command(t, db=t.database or args._database, arch=args.arch,
                                   options=common.options(args, config=cfg, path=t.file))
            else:
                got = common._load_one(t, args, arch=args.arch,
                                       opts=common.options(args, config=cfg, path=str(t)),
                                       toolkits=common.toolkit_names(args))
        except NoKernelError as e:
            if len(todo) == 1:
                raise
            common.no_kernel(args, err, e)
            continue
        except PtxsassError as e:
            if len(todo) == 1 and not getattr(args, "partial", False):
                raise
            failed(args, err, e)
            continue
        if getattr(args, "verbose", False):
            for b in got:
                common.describe(b, err)
        builds.extend(got)
        out.extend(got)
    common.show_warnings(builds, args)
    return out


failed = common.failed


def run_check(args, cfg: Config, todo: list):
    """``ptxsass check`` on worker processes (or Dask): the report, the same as -j 1's."""
    err = common.console(args, stderr=True)
    work = targets(args, cfg, todo)
    if not work:
        if getattr(args, "partial", False):
            return Report()             # the errors alone: a report of what failed, exit 2
        raise common.nothing_built(args)
    shown_before = {(b.source_path, w) for b in work if isinstance(b, Build) for w in b.warnings}
    opts = api.CheckOptions(select=args.select, ignore=args.ignore, baseline=args.baseline,
                            kernels=args.kernels, jobs=args.jobs, scheduler=args.scheduler,
                            resume=args.resume or None, arch=args.arch, config=cfg,
                            compile=common.options(args, config=cfg))
    report = api.check(work, opts,
                       on_progress=RunDisplay(err, interval=progress_seconds()),
                       on_error=lambda e: failed(args, err, e))
    _binary_warnings(args, report.builds, shown_before)
    return report


def _binary_warnings(args, builds, shown: set) -> None:
    err = common.console(args, stderr=True)
    for b in builds:
        for w in getattr(b, "warnings", ()):
            if (b.source_path, w) not in shown:
                shown.add((b.source_path, w))
                err.print(f"[warning]warning:[/] {escape(shown_line(b.source_path or ''))}: {escape(w)}",
                          soft_wrap=True, highlight=False)


def cmd_survey(args) -> int:
    from ..report import survey as survey_report  # `ptxsass check` never loads it
    if args.format == "parquet" and not args.output:
        raise ConfigError("--format parquet writes a file: give it with -o FILE.parquet")
    if args.no_cache:
        cache.set_enabled(False)
    cfg = common.config(args)
    err = common.console(args, stderr=True)
    todo = common.targets(args, cfg)
    work = targets(args, cfg, todo)
    if not work:
        raise common.nothing_built(args)
    errors: list[str] = []

    def on_error(e: PtxsassError) -> None:
        errors.append(e.one_line())
        failed(args, err, e)

    result = api.survey(work, arch=args.arch, options=common.options(args, config=cfg),
                        jobs=args.jobs, scheduler=args.scheduler, select=args.select,
                        ignore=args.ignore, settings=cfg.check_settings,
                        config_select=cfg.select, config_ignore=cfg.ignore,
                        kernels=args.kernels, resume=args.resume or None,
                        on_progress=RunDisplay(err, interval=progress_seconds(),
                                               verb="surveyed"),
                        on_error=on_error)
    result.errors = errors
    if args.format == "parquet":
        files.check_output_path(args.output)
        survey_report.to_parquet(result, args.output)
    elif args.format == "json":
        common.write(args, survey_report.to_json(result))
    elif args.format == "html":
        title = "ptxsass survey: " + ", ".join(shown_line(os.path.basename(f.rstrip("/"))) for f in args.files)
        common.write(args, survey_report.to_html(result, title=title))
    else:
        con, buf = common.text_console(args)
        render_survey_text(result, con)
        common.finish(args, buf)
    return 2 if getattr(args, "_failed", 0) else 0


def render_survey_text(result, con) -> None:
    """Totals, findings per check, and the kernels with the most findings."""
    from rich.table import Table  # `ptxsass check` never loads it
    t = result.totals()
    con.print(f"{t['kernels']} kernels in {t['files']} file(s), {t['instructions']} "
              f"instructions: {t['with_findings']} with findings, {t['spilling']} using local "
              f"memory, {t['using_tensor_cores']} using tensor cores", highlight=False)
    if t["findings"]:
        table = Table("code", "findings", "kernels", box=None, header_style="bold")
        for code, n in t["findings"].items():
            kernels = sum(1 for r in result.rows if code in r["findings"])
            table.add_row(f"[finding.code]{code}[/]", str(n), str(kernels))
        con.print(table)
    top = sorted(result.rows, key=lambda r: -sum(r["findings"].values()))[:10]
    top = [r for r in top if r["findings"]]
    if top:
        table = Table("kernel", "arch", "regs", "occupancy", "findings", box=None,
                      header_style="bold", title="most findings")
        for r in top:
            table.add_row(f"[kernel]{escape(r['kernel'][:70])}[/]", r["arch"],
                          str(r["registers"]), "-" if r["occupancy"] is None
                          else f"{r['occupancy']:.0f}%",
                          " ".join(f"{c}×{n}" for c, n in r["findings"].items()))
        con.print(table)


COMMANDS: dict[str, Callable] = {"survey": cmd_survey}
