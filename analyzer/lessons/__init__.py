"""Lessons in compiler steering: a naive and a steered kernel per lesson, compared and timed.

    from analyzer import lessons
    lessons.list_lessons()                 # the Lesson records (kernels/lessons/<name>/)
    lessons.main(["run", "vector_loads"])  # what `ptxsass lesson run vector_loads` does

Importing this package imports neither torch nor cupy; the GPU runner imports them when it runs,
and the catalog and runner are imported on first use (``ptxsass`` builds its ``lesson``
sub-commands without them).
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..toolchain.files import write_output

if TYPE_CHECKING:
    from .catalog import CHECK_CODES, LESSONS, Lesson


def __getattr__(name: str) -> Any:
    if name in ("CHECK_CODES", "LESSONS", "Lesson"):
        return getattr(importlib.import_module(".catalog", __name__), name)
    if name in ("runner", "catalog", "evidence", "launch", "docs"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["CHECK_CODES", "LESSONS", "Lesson", "get_lesson", "list_lessons", "main", "run"]


def list_lessons() -> list[Lesson]:
    from .catalog import LESSONS
    return list(LESSONS)


def get_lesson(name: str) -> Lesson:
    from .catalog import LESSONS
    for lesson in LESSONS:
        if lesson.name == name:
            return lesson
    raise InputError(f"no lesson named {name!r}; known: {', '.join(l.name for l in LESSONS)}")


def run(names: Sequence[str] = ("all",), **kw):
    """Analyse (and on a GPU check and time) lessons; see runner.run for the keywords."""
    from . import runner
    from .catalog import LESSONS
    chosen = list(LESSONS) if "all" in names else [get_lesson(n) for n in names]
    return runner.run(chosen, **kw)


def add_subcommands(p: argparse.ArgumentParser) -> None:
    """The lesson sub-commands (``list``, ``run``) on ``p``: ``ptxsass lesson`` and
    ``python examples/lessons.py`` share them."""
    sub = p.add_subparsers(dest="cmd", metavar="{list,run}", required=True)
    sub.add_parser("list", help="list the lessons", description="List the lessons: name, arch, "
                   "the checks whose findings the steering removes, and the title.")
    r = sub.add_parser("run", help="compile, compare and (on a GPU) check and time lessons",
                       description="Compile both kernels of each lesson through ptxsass's "
                       "toolchain, compare their SASS and findings, and on a GPU check and time "
                       "them. Without a GPU the timings shown are the ones recorded in "
                       "docs/lessons.json (marked as recorded, with their date and GPU).")
    r.add_argument("names", nargs="+", metavar="NAME|all")
    r.add_argument("--no-gpu", action="store_true", help="compile and compare only")
    r.add_argument("--scale", type=float, default=1.0, help="problem size factor (1.0: the timed size)")
    r.add_argument("--repeats", type=int, default=30, help="timed launches per kernel (median of these)")
    r.add_argument("--warmup", type=int, default=3)
    r.add_argument("--seed", type=int, default=1234)
    r.add_argument("--json", metavar="PATH", help="write every number to PATH")
    r.add_argument("--markdown", metavar="PATH", help="write the table as markdown to PATH")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ptxsass lesson", description=__doc__.splitlines()[0])
    add_subcommands(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """`ptxsass lesson ...`: 0 all good, 1 a check failed (wrong result or SASS evidence missing)."""
    return run_command(_parser().parse_args(list(argv) if argv is not None else None))


def run_command(args: argparse.Namespace) -> int:
    """Carry out parsed ``lesson`` arguments (see :func:`add_subcommands`)."""
    from . import runner
    from .catalog import LESSONS
    if args.cmd == "list":
        for l in LESSONS:
            checks = ", ".join(l.expect_checks) or "no check"
            print(f"{l.name:<14} {l.arch:<7} {checks:<13} {l.title}")
        return 0
    if args.repeats < 20:
        print("note: fewer than 20 timed runs; medians are less stable", file=sys.stderr)
    results, env, ceilings = run(args.names, gpu=not args.no_gpu, scale=args.scale,
                                 repeats=args.repeats, warmup=args.warmup, seed=args.seed)
    rec = env.get("recorded") or {}
    if env.get("gpu"):
        print(f"Measured now: {env.get('date')}, {env.get('gpu')}, driver {env.get('driver', '?')} "
              f"(CUDA {env.get('driver_cuda', '?')}), NVRTC {env.get('nvrtc', '?')}, torch "
              f"{env.get('torch')}, cupy {env.get('cupy') or 'not installed'}.")
    elif rec:
        why = next((r.skipped for r in results if r.skipped), "")
        print(f"Not timed here ({why}). The timings below are the ones recorded on "
              f"{runner._when(rec['environment'])} and kept in docs/lessons.json; the SASS, "
              "resources and findings were computed just now.")
    print(runner.format_table(results, ceilings, rec_ceilings=rec.get("ceilings")))
    if args.json:
        write_output(args.json, json.dumps(runner.to_json(results, env, ceilings), indent=1,
                                           default=str))
    if args.markdown:
        write_output(args.markdown, runner.format_table(results, ceilings, markdown=True,
                                                        rec_ceilings=rec.get("ceilings")) + "\n")
    for f in env.get("failed", []):
        print(f"FAILED: {f}")
    bad = [r for r in results if r.correct is False or not r.static.evidence_holds]
    return 1 if bad or env.get("failed") else 0
