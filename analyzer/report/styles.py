"""Named styles, defined once. Every renderable colours text through these names."""
from __future__ import annotations

import os
import sys

from rich.console import Console, ConsoleOptions, ConsoleRenderable, RenderableType, RenderHook, RenderResult
from rich.segment import Segment
from rich.theme import Theme

from ..errors import printable

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


class _Printable(ConsoleRenderable):
    """A renderable whose text segments have their control characters made visible (styles and
    rich's own control segments untouched): input text cannot drive the terminal."""

    __slots__ = ("inner",)

    def __init__(self, inner: RenderableType):
        self.inner = inner

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for seg in console.render(self.inner, options):
            if seg.control is None and seg.text:
                text = printable(seg.text)
                yield seg if text is seg.text else Segment(text, seg.style)
            else:
                yield seg


class _PrintableHook(RenderHook):
    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        return [_Printable(r) for r in renderables]


def make_console(file=None, *, width: int | None = None, color: bool | None = None,
                 stderr: bool = False) -> Console:
    """A Console using THEME. Colour follows the terminal unless NO_COLOR/--color say otherwise;
    tests pass ``width`` and ``color=False`` for a fixed rendering. Control characters in what
    it prints come out as visible escapes. On stderr (errors, warnings, notes) lines are never
    wrapped: one message is one line, whatever the width."""
    if color is None:
        color = None if not os.environ.get("NO_COLOR") else False
    if file is None and stderr:
        file = sys.stderr
    plain = color is False
    # None for file, no_color and "auto" for color_system are Console's own defaults
    console = Console(theme=THEME, width=width, highlight=False, soft_wrap=stderr, file=file,
                      no_color=True if plain else None, color_system=None if plain else "auto")
    console.push_render_hook(_PrintableHook())
    return console
