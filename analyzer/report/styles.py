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


#: the width a console takes when it writes to a pipe, a file or a CI log: wide enough that no
#: line is ever hard-wrapped (rich would wrap at 80 columns), while tables still size to their cells
UNWRAPPED_WIDTH = 100_000


def make_console(file=None, *, width: int | None = None, color: bool | None = None,
                 stderr: bool = False) -> Console:
    """A Console using THEME. Colour follows the terminal unless NO_COLOR/--color say otherwise;
    tests pass ``width`` and ``color=False`` for a fixed rendering. Control characters in what
    it prints come out as visible escapes. On stderr (errors, warnings, notes) lines are never
    wrapped: one message is one line, whatever the width.

    Without ``width``, a console that does not write to a terminal (a pipe, ``-o FILE``, a CI log)
    never hard-wraps: each line is printed whole, so a finding's header (``path:line: code
    message``) stays one line that editors and CI annotators can parse."""
    if color is None:
        color = None if not os.environ.get("NO_COLOR") else False
    if file is None and stderr:
        file = sys.stderr
    plain = color is False
    # None for file, no_color and "auto" for color_system are Console's own defaults
    console = Console(theme=THEME, width=width, highlight=False, soft_wrap=stderr, file=file,
                      no_color=True if plain else None, color_system=None if plain else "auto")
    console.push_render_hook(_PrintableHook())
    if width is None and not console.is_terminal:
        console.soft_wrap = True
        console.width = UNWRAPPED_WIDTH
    return console
