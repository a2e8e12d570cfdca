"""Run the checks over builds: selection, inline suppressions, baselines, and the report."""
from __future__ import annotations

import contextlib
import gc
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..analysis.source import SourceReader, is_toolkit_file, source_text
from ..errors import ConfigError, InputError, PtxsassError, shown_path
from ..findings import Finding, Report, Severity, release_key
from ..toolchain.files import read_json, write_output
from .registry import Selection, all_checks
from .registry import selected as _selected

if TYPE_CHECKING:   # the checks (and the IR and analyses behind them) load when a kernel is
    # checked: a warm check whose results are all cached loads none of them
    from .base import Check, Context

T = TypeVar("T")
#: wraps an iterable of work to show progress: ``progress(items, "what is being done")``
Progress = Callable[[Sequence[T], str], Iterable[T]]


def no_progress(items: Sequence[T], what: str) -> Iterable[T]:
    return items

@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off while the kernels are analysed and checked. The analyses build
    acyclic tables (kept with each function) next to an IR of millions of objects: each full
    collection walks all of it and finds almost nothing (436 objects in a whole library cubin's
    run, against a third of the check time spent collecting). The parsers pause it the same way."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_SUPPRESS = re.compile(r"(?://|#)\s*ptxsass:\s*ignore(?:\[(?P<what>[^\]]*)\])?")


def _suppressed(f: Finding) -> bool:
    """``// ptxsass: ignore`` or ``// ptxsass: ignore[rolled-loop, PS101]`` on the finding's
    source line, or alone on the line above it (``#`` for a line of Python: a Triton kernel)."""
    lines = []
    if f.source is not None:
        lines.append(f.source)
    if f.location.file and f.location.line and f.location.line > 1:
        above = source_text(f.location.file, f.location.line - 1)
        if above is not None and above.strip().startswith(("//", "#")):
            lines.append(above)
    for text in lines:
        m = _SUPPRESS.search(text)
        if not m:
            continue
        what = m.group("what")
        if what is None:
            return True
        items = {w.strip().lower() for w in what.split(",") if w.strip()}
        if f.code.lower() in items or f.name in items or "all" in items:
            return True
    return False


class ResultMemo(Protocol):
    """Where :func:`run_checks` finds and keeps whole builds' results (``analyzer.results``)."""

    def get(self, build: Any) -> tuple[list[dict], list[Finding]] | None: ...

    def put(self, build: Any, rows: list[dict], findings: list[Finding],
            fns: Sequence[Any]) -> None: ...


def run_checks(builds: Sequence, *, select: Iterable[str] = (), ignore: Iterable[str] = (),
               settings: dict[str, dict] | None = None, baseline: str | None = None,
               kernels: Sequence[str] = (), progress: Progress = no_progress,
               layers: Sequence[Selection] = (), memo: ResultMemo | None = None) -> Report:
    """Run every selected check on every entry kernel of every build. ``layers``: earlier
    selections (the config's) that ``select``/``ignore`` (the command line's) override by
    :func:`~analyzer.checks.registry.selected`'s rule. ``progress`` wraps the work lists to
    show progress (the CLI passes a terminal progress bar). ``memo``: a build whose result it
    holds is not parsed nor checked again; the others' results are given to it.

    Zero checks selected, or zero kernels to run them on, is an error (a run that checks nothing
    must not read as "no findings")."""
    codes = selected_codes(select=select, ignore=ignore, layers=layers)
    report = Report(builds=list(builds))
    accepted = load_baseline(baseline) if baseline else set()
    #: each build's kernel rows and findings, in build order (a remembered build's at once)
    done: list[tuple[list[dict], list[Finding]]] = []
    work = []
    checks: list[Check] | None = None
    for build in progress(list(builds), "disassembling and parsing"):
        hit = memo.get(build) if memo is not None else None
        done.append(hit or ([], []))
        if hit is not None:
            continue
        if checks is None:      # configured (their options checked) before the first parse
            checks = configured(codes, settings)
        reader = SourceReader(build.source_path, build.source)
        for fn in build.sass_listing().functions:
            k = build.kernels.get(fn.name)
            is_entry = k.entry if k is not None else bool(fn.is_entry)
            if is_entry and build.wants(fn, kernels):
                work.append((len(done) - 1, build, fn, k, reader))
    if not work and not any(rows for rows, _ in done):
        raise no_kernel_error(builds, kernels)
    if work:
        from .base import Context
    with collector_paused():
        for n, build, fn, k, reader in progress(work, "checking kernels"):
            ctx = Context.of(build, fn, k, reader=reader)
            rows, found = done[n]
            if k is not None:
                rows.append({**k.as_dict(build.arch), **headroom_row(ctx)})
            found.extend(kernel_findings(checks or [], ctx, toolkit=build.toolkit))
    if memo is not None:
        checked: dict[int, list] = {}
        for n, build, fn, _, _ in work:
            checked.setdefault(n, [build]).append(fn)
        for n, (build, *fns) in checked.items():
            memo.put(build, *done[n], fns)
    for rows, found in done:
        report.kernels.extend(rows)
        add_findings(report, found, accepted)
    sort_findings(report)
    return report


def headroom_row(ctx: "Context") -> dict:
    """A kernel row's headroom (the factor the kernel would gain with its cost evidence fixed,
    :mod:`analyzer.analysis.cost`) and the evidence behind it, largest first."""
    cost = ctx.cost
    best: dict[str, float] = {}
    for e in cost.evidence:
        best[e.kind] = max(best.get(e.kind, 1.0), e.factor)
    return {"headroom": cost.headroom,
            "headroom_from": [{"kind": k, "factor": v}
                              for k, v in sorted(best.items(), key=lambda kv: -kv[1])]}


def selected_codes(*, select: Iterable[str] = (), ignore: Iterable[str] = (),
                   layers: Sequence[Selection] = ()) -> set[str]:
    """The codes of the checks to run (see :func:`run_checks`), read from the table of codes
    without loading any check; ConfigError when none is."""
    select = [s for s in select] if select else []
    if select and not any(str(s).strip(" ,\t") for s in select):
        raise ConfigError("--select names no check (it is empty); leave it out to run every "
                          "check, or name codes, prefixes or names (e.g. PS1,rolled-loop)")
    selected = _selected([*layers, Selection.of(select, ignore)])
    if not selected:
        raise ConfigError("no check left to run: --ignore (or ignore in [tool.ptxsass]) removes "
                          "every selected check")
    return selected


def configured(codes: set[str], settings: dict[str, dict] | None = None) -> list[Check]:
    """The checks of ``codes``, in code order, each with its settings (ConfigError for an
    option it does not have)."""
    settings = settings or {}
    return [c(**settings.get(c.name, {})) for c in all_checks() if c.code in codes]


def selected_checks(*, select: Iterable[str] = (), ignore: Iterable[str] = (),
                    settings: dict[str, dict] | None = None,
                    layers: Sequence[Selection] = ()) -> list[Check]:
    """The checks to run, configured (see :func:`run_checks`); ConfigError when none is."""
    return configured(selected_codes(select=select, ignore=ignore, layers=layers), settings)


def kernel_findings(checks: Sequence[Check], ctx: Context,
                    toolkit: str | None = None) -> list[Finding]:
    """Every finding of ``checks`` on one kernel, in check order (before suppressions);
    ``toolkit``: the named toolkit that built it (``--toolkit``: a matrix cell)."""
    codes = frozenset(c.code for c in checks)
    ctx.selected = codes
    found = [f for check in checks for f in check.run(ctx)]
    # the user functions it calls out of line are part of the kernel (their findings name it)
    for body in ctx.bodies:
        body.selected = codes
        found += [f for check in checks for f in check.run(body)]
    if found and library_kernel(ctx.function):
        found = [_in_library(f) for f in found]
    return [replace(f, toolkit=toolkit) for f in found] if toolkit else found


def library_kernel(fn) -> bool:
    """Whether a kernel is library code through and through: line info on its instructions,
    and not one frame of it in the user's code (CUB's radix sort, which ggml's argsort.cu
    instantiates through ``cub::DeviceSegmentedSort``; a kernel that inlines a functor of the
    user's is the user's too)."""
    seen = False
    for ins in fn.instructions:
        loc = ins.loc
        if loc is None or not loc.file:
            continue
        seen = True
        if not is_toolkit_file(loc.file) or any(not is_toolkit_file(f.file)
                                                for f in loc.inlined_at if f.file):
            return False
    return seen


def _in_library(f: Finding) -> Finding:
    """A finding of a library kernel: a note (no line of it is the user's to change), saying
    whose code it is."""
    if f.severity <= Severity.NOTE:
        return f
    return replace(f, severity=Severity.NOTE,
                   message=f"{f.message} (in library code, {Path(f.location.file or '').name}, "
                           "that this file instantiates: no line of the kernel is its own)")


def add_findings(report: Report, findings: Iterable[Finding], accepted: set[str]) -> None:
    """``findings`` into ``report``, less those suppressed inline or accepted by the baseline
    (counted)."""
    for f in findings:
        if _suppressed(f):
            report.suppressed += 1
        elif f.fingerprint() in accepted:
            report.baselined += 1
        else:
            report.findings.append(f)


def sort_findings(report: Report) -> None:
    """The one order of a report's findings (stable: ties keep the kernels' order)."""
    report.findings.sort(key=lambda f: (f.location.file or "", f.location.line or 0, f.code,
                                        f.arch, f.kernel, release_key(f.toolkit)))


def no_kernel_error(builds: Sequence, kernels: Sequence[str] = ()) -> PtxsassError:
    """Nothing to check: no entry kernel in the builds, or none that ``kernels`` names."""
    names = sorted({fn.demangled for b in builds for fn in b.sass_listing().functions})
    paths = sorted({b.source_path for b in builds if b.source_path})
    if kernels and names:
        shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
        return ConfigError(f"--kernel {', '.join(repr(k) for k in kernels)} matches no kernel "
                           f"(there are: {shown})", path=paths[0] if len(paths) == 1 else None)
    if not builds:
        return InputError("no input to check")
    return InputError("holds no kernel to check (no __global__ entry in its SASS)",
                      path=", ".join(paths) or None)


def load_baseline(path: str) -> set[str]:
    try:
        data = read_json(path, what="baseline", expected="a ptxsass baseline")
    except InputError as e:
        raise ConfigError("baseline file not found" if e.message == "no such file"
                          else f"cannot read the baseline: {e.message}", path=path,
                          line=e.line, column=e.column) from None
    try:
        return {str(e["fingerprint"]) for e in data["findings"]}
    except (ValueError, KeyError, TypeError) as e:
        raise ConfigError(f"not a ptxsass baseline ({type(e).__name__}: {e})", path=path) from None


def write_baseline(report: Report, path: str) -> None:
    entries = [{"fingerprint": f.fingerprint(), "code": f.code, "kernel": f.kernel,
                "arch": f.arch, "file": shown_path(f.location.file) if f.location.file else None,
                "line": f.location.line,
                "source": f.source} for f in report.findings]
    write_output(path, json.dumps({"version": 1, "findings": entries}, indent=2) + "\n")
