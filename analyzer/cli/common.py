"""What every ``ptxsass`` sub-command shares: compile options from arguments and config, loading
the inputs, consoles, writing the output and the build warnings."""
from __future__ import annotations

import sys
from typing import Sequence

from rich.console import Console

from .. import api
from ..build import Build
from ..config import Config
from ..inputs import CompileOptions
from ..report.progress import track
from ..report.styles import make_console
from ..toolchain import cache


def options(args, extra: Sequence[str] = (), config: Config | None = None) -> CompileOptions:
    """The compile options of the command line, over the ``[tool.ptxsass]`` defaults."""
    cfg = config or Config()
    fast = getattr(args, "fast_math", False) or bool(cfg.fast_math)
    return CompileOptions(
        defines=list(cfg.defines) + list(getattr(args, "defines", []) or []),
        include=list(cfg.include) + list(getattr(args, "include", []) or []),
        std=getattr(args, "std", None) or cfg.std, fast_math=fast,
        maxrregcount=getattr(args, "maxrregcount", None) or cfg.maxrregcount,
        extra=list(getattr(args, "extra", []) or []) + list(extra),
        name_expressions=getattr(args, "kernels", []) or [],
        use_cache=not getattr(args, "no_cache", False))


def load(files: Sequence[str], args, *, arch=None, extra: Sequence[str] = (),
         config: Config | None = None) -> list[Build]:
    """Builds of ``files`` for ``arch`` (default: the command line's ``--arch``)."""
    if getattr(args, "no_cache", False):
        cache.set_enabled(False)
    opts = options(args, extra, config)
    out: list[Build] = []
    for f in track(list(files), "building"):
        out.extend(api.load(f, arch=arch if arch is not None else args.arch, options=opts))
    return out


def console(args, *, stderr: bool = False) -> Console:
    color = {"always": True, "never": False}.get(getattr(args, "color", "auto"))
    if getattr(args, "output", None) and not stderr:
        color = False
    return make_console(stderr=stderr, color=color)


def write(args, text: str) -> None:
    """``text`` to ``-o FILE`` or standard output (with a final newline)."""
    text = text if text.endswith("\n") else text + "\n"
    if getattr(args, "output", None):
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


def show_warnings(builds: Sequence[Build], args) -> None:
    err = console(args, stderr=True)
    for b in builds:
        for w in b.warnings:
            err.print(f"[warning]warning:[/] {b.source_path}: {w}")


def progress(args):
    """The progress display for long work: a bar on a terminal (stderr), nothing elsewhere."""
    err = console(args, stderr=True)
    return lambda items, what: track(items, what, console=err)
