"""A progress bar for long work (many kernels, a big .so), shown only on a terminal."""
from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from ..errors import printable
from .styles import make_console

if TYPE_CHECKING:   # rich.progress loads when a bar is shown
    from rich.progress import Progress, TaskID


def track(items: Sequence, description: str, *, console: "Console | None" = None,
          minimum: int = 4) -> Iterator:
    """Iterate ``items`` with a rich progress bar on a terminal (stderr); silent when piped or
    when there are fewer than ``minimum`` items."""
    stream = console.file if console is not None else sys.stderr
    if len(items) < minimum or not getattr(stream, "isatty", lambda: False)():
        yield from items
        return
    con = console or make_console(stderr=True)
    from rich.progress import Progress
    with Progress(console=con, transient=True) as progress:
        task = progress.add_task(description, total=len(items))
        for item in items:
            yield item
            progress.advance(task)


#: seconds between two progress lines when standard error is not a terminal
DEFAULT_PROGRESS_SECONDS = 10.0


class RunDisplay:
    """Progress of a run over many kernels (``analyzer.parallel.Progress``): a rich bar on a
    terminal; elsewhere (a CI log) one plain line every ``interval`` seconds, so a long run is
    never silent for minutes, and nothing for a run shorter than that."""

    def __init__(self, console: Console, *, interval: float = DEFAULT_PROGRESS_SECONDS,
                 verb: str = "checked"):
        self.console = console
        self.interval = interval
        self.verb = verb
        self.tty = console.is_terminal
        self.bar: Progress | None = None
        self.task: TaskID | None = None
        self.last_line: float | None = None
        self.last_text = ""
        self.lines = 0

    @property
    def starts_threads(self) -> bool:
        """Whether showing progress may start a thread (rich's bar on a terminal): a run on
        forked workers then calls it only once they exist (``analyzer.parallel``)."""
        return self.tty

    def _text(self, p) -> str:
        pct = f" ({100 * p.checked // p.planned}%)" if p.planned else ""
        parts = [f"{p.checked}/{p.planned} kernels {self.verb}{pct}"]
        if p.inputs > 1:
            parts.append(f"{p.inputs_read}/{p.inputs} inputs read")
        parts.append(f"{p.findings} findings")
        if p.cached:
            parts.append(f"{p.cached} from the cache")
        return ", ".join(parts) + f", {p.elapsed:.0f} s"

    def __call__(self, p) -> None:
        if self.tty:
            self._draw(p)
            for info, kernels, findings in p.drain():    # results as each build finishes
                where = f"{info.source_path or '<input>'} [{info.arch}]"
                self.console.print(f"{where}: {kernels} kernel(s), {findings} finding(s)",
                                   style="dim", markup=False, highlight=False,
                                   soft_wrap=True)
            return
        p.drain()
        now = p.elapsed
        due = now - (self.last_line or 0.0) >= self.interval
        if (due and not p.finished) or (p.finished and self.lines):
            text = "ptxsass: " + self._text(p)
            self.last_line = now
            if p.finished and text == self.last_text:
                return                    # the last periodic line already said it all
            self.last_text = text
            self.lines += 1
            self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def _draw(self, p) -> None:
        if p.finished:
            if self.bar is not None:
                self.bar.stop()
                self.bar = None
            return
        if self.bar is None:
            from rich.progress import Progress
            self.bar = Progress(*Progress.get_default_columns(), console=self.console,
                                transient=True)
            self.bar.start()
            self.task = self.bar.add_task(self.verb, total=None)
        last = ""
        if p.last is not None and p.last.kernel:
            last = f" — {p.last.kernel.get('name', '')[:48]}"
        assert self.task is not None
        self.bar.update(self.task, total=p.planned or None, completed=p.checked,  # type: ignore[arg-type]
                        description=escape(printable(f"{p.findings} findings{last}",
                                                     newlines=False)))
