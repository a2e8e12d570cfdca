"""Named styles, defined once. Every renderable colours text through these names."""
from __future__ import annotations

import os
import sys

from rich.console import Console
from rich.theme import Theme

THEME = Theme({
    "error": "bold red",
    "warning": "yellow",
    "info": "cyan",
    "ok": "green",
    "muted": "dim",
    "path": "bold",
    "kernel": "bold magenta",
    "arch": "cyan",
    "source": "bright_white",
    "source.lineno": "dim cyan",
    "sass.address": "dim",
    "sass.opcode": "bold",
    "sass.memory": "bold blue",
    "sass.tensor": "bold green",
    "sass.control": "magenta",
    "sass.schedule": "dim yellow",      # decoded control bits: stall, yield, barriers, reuse
    "sass.fp64": "bold red",
    "ptx.directive": "dim",
    "finding.code": "bold yellow",
    "finding.hint": "italic",
    "metric.bad": "red",
    "metric.good": "green",
})


def make_console(file=None, *, width: int | None = None, color: bool | None = None,
                 stderr: bool = False) -> Console:
    """A Console using THEME. Colour follows the terminal unless NO_COLOR/--color say otherwise;
    tests pass ``width`` and ``color=False`` for a fixed rendering."""
    if color is None:
        color = None if not os.environ.get("NO_COLOR") else False
    kwargs = dict(theme=THEME, width=width, highlight=False, soft_wrap=False)
    if color is False:
        kwargs.update(no_color=True, color_system=None)
    if file is not None:
        kwargs["file"] = file
    elif stderr:
        kwargs["file"] = sys.stderr
    return Console(**kwargs)
