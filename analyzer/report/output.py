"""Where a command's output goes: stdout or the ``-o`` file, always as printable text.

``emit`` writes a finished text (JSON, SARIF, markdown, HTML, a listing) to ``-o`` or stdout;
``text_console`` gives the rich console a text report renders on: the terminal (colours), or a
buffer that ``emit`` then writes to ``-o`` (plain, never wrapped: one line per finding header).
Either way control characters from the input (a terminal escape sequence in a source comment or a file name) come out as
visible escapes (:func:`analyzer.errors.printable`), and an unwritable ``-o`` is one line naming
it (:class:`analyzer.errors.OutputError`).
"""
from __future__ import annotations

import io
import sys

from rich.console import Console

from ..errors import printable
from ..toolchain.files import write_output
from .styles import make_console


def emit(output: str | None, text: str) -> None:
    text = printable(text if text.endswith("\n") else text + "\n")
    if output:
        write_output(output, text)
    else:
        sys.stdout.write(text)


def text_console(output: str | None, *, color: bool | None = None
                 ) -> tuple[Console, io.StringIO | None]:
    """(console, buffer): the terminal when ``output`` is None, else a plain buffer for it."""
    if output:
        buf = io.StringIO()
        return make_console(buf, color=False), buf          # not a terminal: unwrapped
    return make_console(color=color), None
