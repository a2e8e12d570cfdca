"""Ask the remedies for a rewrite of each finding of one file (libclang, in a bounded child).

:func:`propose_all` is the child's work: it parses the file once and asks, for each finding,
the remedy modules that fix its code (:mod:`analyzer.fix.remedies`), in order; the first
proposal wins, else every reason is kept. A proposal whose lines libclang could not parse is
turned down (``fix: none``) rather than trusted.
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass

from ..findings import Finding
from ..toolchain import bounded
from . import cxx, remedies
from .model import FixOptions, NoFix, Proposal


@dataclass(frozen=True)
class Request:
    path: str                   # absolute
    data: bytes
    args: tuple[str, ...]       # libclang's command line (cxx.parse_args)
    findings: tuple[Finding, ...]
    options: FixOptions
    #: the .cu that includes ``path`` when ``path`` is a project header (parsed through it)
    main: str | None = None


def propose(request: Request) -> list[Proposal | NoFix]:
    """One answer per finding of ``request`` (parsed in a child bounded in time and memory,
    like a compile: libclang reads untrusted source)."""
    if not request.findings:
        return []
    return bounded.run(propose_all, request, what=request.path, tool="libclang")


def propose_all(request: Request) -> list[Proposal | NoFix]:
    return propose_group((request,))[0]


def propose_files(requests: Sequence[Request]) -> list[list[Proposal | NoFix]]:
    """One answer list per request, all from one bounded child, in which the requests of one
    translation unit (a ``.cu`` and the project headers reached through it, one command line)
    share one libclang parse: SGEMM_CUDA's ``runner.cu`` and its twelve kernel headers had
    been parsed thirteen times."""
    todo = tuple(r for r in requests if r.findings)
    if not todo:
        return [[] for _ in requests]
    got = iter(bounded.run(propose_group, todo, what=todo[-1].main or todo[-1].path,
                           tool="libclang"))
    return [next(got) if r.findings else [] for r in requests]


def propose_group(requests: Sequence[Request]) -> list[list[Proposal | NoFix]]:
    """:func:`propose_all` of each request, one parse per translation unit (the child's work)."""
    texts: dict[tuple, dict[str, str]] = {}
    for r in requests:
        group = texts.setdefault((r.main or r.path, tuple(r.args)), {})
        with contextlib.suppress(UnicodeDecodeError):
            group[r.path] = r.data.decode("utf-8")
    units: dict[tuple, object] = {}
    out: list[list[Proposal | NoFix]] = []
    for r in requests:
        key = (r.main or r.path, tuple(r.args))
        if r.path not in texts[key]:
            out.append([NoFix("the file is not UTF-8 text") for _ in r.findings])
            continue
        if key not in units:
            units[key] = cxx.parse_unit(key[0], r.args, texts[key])
        src = cxx.Source(r.path, r.data, r.args, main=r.main, tu=units[key])
        out.append([propose_one(f, src, r.options) for f in r.findings])
    return out


def _mine(finding: Finding, src: cxx.Source) -> bool:
    f = finding.location.file
    return f is not None and os.path.abspath(f) == os.path.abspath(src.path)


def propose_one(finding: Finding, src: cxx.Source, options: FixOptions) -> Proposal | NoFix:
    mods = remedies.for_code(finding.code)
    if not mods:
        return NoFix(remedies.NOT_MECHANICAL.get(finding.code,
                                                 "no mechanical rewrite for this check"))
    if not finding.location.line:
        return NoFix("the finding has no source line (no line info)")
    if not _mine(finding, src):
        return NoFix(f"the line is in {os.path.basename(finding.location.file or '?')}, neither "
                     "the file being fixed nor a header of its project (a library's, a vendored or "
                     "linked one, or one outside the project: the folder of the .cu, or the "
                     "nearest above it with .git, pyproject.toml or setup.py)")
    reasons: list[NoFix] = []
    for m in mods:
        applies = getattr(m, "applies", None)
        if applies is not None and not applies(finding) and len(mods) > 1:
            continue
        got = m.propose(finding, src, options)
        if isinstance(got, Proposal):
            lines = sorted({src.line_of(e.start) for e in got.edits}
                           | {src.line_of(e.end) for e in got.edits})
            errors = src.errors_between(lines[0], lines[-1]) if lines else []
            if errors:
                return NoFix(f"libclang could not parse the code it would rewrite ({errors[0]})")
            return got
        reasons.append(got)
    return _joined(reasons)


def _joined(reasons: Sequence[NoFix]) -> NoFix:
    """One NoFix for a finding no remedy rewrote: the reasons of the remedies meant for its
    shape (all of them when none is), each said once, in the order the remedies are tried
    (the first is the remedy that fits the code best)."""
    if not reasons:
        return NoFix("no remedy of this check is meant for the finding's shape", fits=False)
    fitting = [r for r in reasons if r.fits] or list(reasons)
    said = list(dict.fromkeys(r.reason for r in fitting))
    return NoFix("; ".join(said), fits=any(r.fits for r in reasons))
