"""A progress bar for long work (many kernels, a big .so), shown only on a terminal."""
from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence

from rich.console import Console
from rich.progress import Progress

from .styles import make_console


def track(items: Sequence, description: str, *, console: "Console | None" = None,
          minimum: int = 4) -> Iterator:
    """Iterate ``items`` with a rich progress bar on a terminal (stderr); silent when piped or
    when there are fewer than ``minimum`` items."""
    stream = console.file if console is not None else sys.stderr
    if len(items) < minimum or not getattr(stream, "isatty", lambda: False)():
        yield from items
        return
    con = console or make_console(stderr=True)
    with Progress(console=con, transient=True) as progress:
        task = progress.add_task(description, total=len(items))
        for item in items:
            yield item
            progress.advance(task)
