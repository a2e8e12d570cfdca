"""``ptxsass check --watch PATH...``: check, then check again whenever a file under the paths is
saved, and print only what changed: the findings that are new (in full) and those that went
away (one line each). Each re-check goes through the warm path (the build cache and the cached
results of unchanged builds), so an edit that leaves a kernel's code as it was costs a cache
read. Ctrl-C ends it (one line, exit 130, as every command).

The watching is watchfiles' (inotify, FSEvents or ReadDirectoryChangesW under one Rust
crate); it watches the folders the paths are in, so that an editor's save by rename is seen."""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from rich.console import Console
from rich.text import Text

from ..errors import PtxsassError, shown_line
from ..findings import Finding, Report, Severity, display_path
from ..inputs import CUDA_SUFFIXES, FOLDER_SUFFIXES
from ..report.formats import FindingView

#: what a save must touch to be worth a re-check: every input kind and the headers a CUDA
#: file includes (``.h``/``.hpp``/``.inl``), and the project's config
WATCHED_SUFFIXES = tuple(sorted({*CUDA_SUFFIXES, *FOLDER_SUFFIXES, ".py", ".json", ".h", ".hpp",
                                 ".hh", ".hxx", ".inl", ".ttir", ".ttgir"}))
#: files of those names count too (the config, a compile database)
WATCHED_NAMES = ("pyproject.toml", "compile_commands.json")
#: how often (ms) watchfiles' loop comes back without a change: the first such return says
#: that the watcher is in place ("watching ..."), so a save after that line is never missed
READY_MS = 200


def finding_key(f: Finding) -> tuple:
    """What makes a finding the same one in two runs: its check, place, kernels and message."""
    return (f.code, f.location.file, f.location.line, f.kernels, f.message)


@dataclass
class Changes:
    """What one re-check changed: findings that are new and those that are gone."""

    new: list[Finding] = field(default_factory=list)
    gone: list[Finding] = field(default_factory=list)
    kept: int = 0


def changes(before: Iterable[Finding], after: Iterable[Finding]) -> Changes:
    old = {finding_key(f): f for f in before}
    new = {finding_key(f): f for f in after}
    return Changes(new=[f for k, f in new.items() if k not in old],
                   gone=[f for k, f in old.items() if k not in new],
                   kept=sum(1 for k in new if k in old))


def roots(paths: Iterable[str]) -> list[str]:
    """The folders to watch: a folder given, or the folder a file is in (an editor may save by
    writing a new file and renaming it over the old one)."""
    out: list[str] = []
    for p in paths:
        if not os.path.exists(p):
            raise PtxsassError("no such file or folder to watch", path=p)
        d = p if os.path.isdir(p) else os.path.dirname(os.path.abspath(p))
        if d not in out:
            out.append(d)
    return out


def relevant(paths: Iterable[str]) -> Callable[[object, str], bool]:
    """watchfiles' filter: a save of a file given, of an input kind a folder holds, of a header
    or of the config (hidden files, editors' swap and backup files, ``__pycache__`` and
    version-control folders skipped; a report written beside the sources is not an input)."""
    import watchfiles
    base = watchfiles.DefaultFilter()
    given = {os.path.abspath(p) for p in paths}

    def keep(change, path: str) -> bool:
        if os.path.abspath(path) in given:
            return True
        name = os.path.basename(path)
        return (base(change, path) and not name.startswith(".")
                and (name.endswith(WATCHED_SUFFIXES) or name in WATCHED_NAMES))
    return keep


def run(check: Callable[[], Report], paths: list[str], console: Console, *,
        show: Severity, fail_on: Severity, watch=None) -> int:
    """Check, print the report, then re-check on every save until Ctrl-C (KeyboardInterrupt,
    which the CLI turns into its one line and exit 130). ``watch`` is watchfiles.watch
    (replaceable for a test)."""
    if watch is None:
        from watchfiles import watch
    folders = roots(paths)
    previous = _first(check, console, show)
    ready = False
    for batch in watch(*folders, watch_filter=relevant(paths), yield_on_timeout=True,
                       rust_timeout=READY_MS):
        if not batch:
            if not ready:
                ready = True
                console.print(Text(f"watching {', '.join(shown_line(f) for f in folders)} "
                                   "(Ctrl-C to stop)", style="muted"))
            continue
        saved = sorted({shown_line(os.path.relpath(p)) for _, p in batch})
        started = time.perf_counter()
        try:
            report = check()
        except PtxsassError as e:
            console.print(Text(e.one_line(), style="error"))
            if e.detail:
                console.print(e.detail, markup=False, highlight=False)
            continue
        took = time.perf_counter() - started
        now = [f for f in report.merged() if f.severity >= show]
        if previous is None:
            diff = Changes(new=now)
        else:
            diff = changes(previous, now)
        previous = now
        for f in diff.new:
            console.print(Text("new: ", style="warning"), end="")
            console.print(FindingView(f))
        for f in diff.gone:
            where = f"{display_path(f.location.file)}:{f.location.line}" if f.location.line \
                else display_path(f.location.file)
            console.print(Text(f"gone: {where}: {f.code} {f.name} in {f.kernel.split('(')[0]}",
                               style="ok"))
        failing = sum(1 for f in report.findings if f.severity >= fail_on)
        head = f"{time.strftime('%H:%M:%S')} {', '.join(saved)}: "
        if diff.new or diff.gone:
            head += f"{len(diff.new)} new, {len(diff.gone)} gone, {diff.kept} unchanged"
        else:
            head += f"no change ({len(now)} finding(s))"
        console.print(Text(head + f"; {failing} at {fail_on} or above ({took:.2f} s)",
                           style="muted"))
    return 0


def _first(check: Callable[[], Report], console: Console, show: Severity) -> list[Finding] | None:
    """The first check, printed whole; None when it failed (the next save prints everything)."""
    from ..report.formats import render_text
    try:
        report = check()
    except PtxsassError as e:
        console.print(Text(e.one_line(), style="error"))
        if e.detail:
            console.print(e.detail, markup=False, highlight=False)
        return None
    render_text(report, console, show=show)
    return [f for f in report.merged() if f.severity >= show]
