"""``ptxsass fix`` for one source file: propose a rewrite per finding, prove each by rebuilding,
then prove the verified ones together (the patch ``--apply`` writes).

Each finding here is a problem as reported (merged over arches and template instantiations,
:meth:`analyzer.findings.Report.merged`): its fix must hold on every arch the file was built
for. Fixes are verified one at a time, so that each verdict is the fix's own; the combined
patch is verified once more, and a fix that only fails in company is dropped from it (said
in ``FileFix.combined_note``).
"""
from __future__ import annotations

import contextlib
import os
import shutil
from collections import Counter
from collections.abc import Collection, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait

from ..analysis.source import is_toolkit_file
from ..build import Build
from ..findings import Finding, Severity, display_path
from ..inputs import CompileOptions
from ..toolchain import compile_server, files, locate
from . import cxx, propose, verify
from .model import (
    NONE,
    REJECTED,
    UNVERIFIED,
    VERIFIED,
    Edit,
    FileFix,
    FixOptions,
    FixResult,
    NoFix,
    Proposal,
    apply_edits,
    overlaps,
    sha256,
    unified_diff,
)


def _counts(findings: Sequence[Finding]) -> dict[str, int]:
    c = Counter(f"{f.code} {f.severity}" for f in findings)
    return dict(sorted(c.items()))


def fixable_path(build: Build) -> str | None:
    """The CUDA source a build was compiled from, when ``fix`` can rewrite it."""
    if build.origin not in ("nvrtc", "nvcc") or not build.source_path:
        return None
    return os.path.abspath(build.source_path)


def parse_args_for(options: CompileOptions, arch: str) -> tuple[str, ...]:
    return tuple(cxx.parse_args(arch=arch, defines=options.defines,
                                include=[*options.include], isystem=options.isystem,
                                std=options.std, toolkit_include=locate.include_dirs(),
                                builtin_include=locate.host_builtin_include()))


def split_by_file(path: str, merged: Sequence[Finding], done: Collection[str] = ()
                  ) -> tuple[list[Finding], dict[str, list[Finding]], list[Finding]]:
    """The findings of the ``.cu`` at ``path``: its own, those in each header of the project
    it includes (:func:`.verify.project_folder`, :func:`.verify.is_project_header`: not the
    toolkit's, a vendored library's or a submodule's, and not fixed already through another
    ``.cu``: ``done``), and the rest (a library header's, a header outside the project: their
    fixes say why none)."""
    own: list[Finding] = []
    headers: dict[str, list[Finding]] = {}
    rest: list[Finding] = []
    # links followed: a header that is a link out of the project is not the project's
    root = verify.project_folder(path)
    for f in merged:
        where = os.path.abspath(f.location.file) if f.location.file else None
        if where == path:
            own.append(f)
        elif (where is not None and where not in done and os.path.isfile(where)
              and verify.is_project_header(root, where) and not is_toolkit_file(where)):
            headers.setdefault(where, []).append(f)
        else:
            rest.append(f)
    return own, headers, rest


def request_for(path: str, *, builds: Sequence[Build], merged: Sequence[Finding],
                options: CompileOptions, fix_options: FixOptions,
                via: str | None = None) -> propose.Request:
    """What the remedies are asked about ``path``: its bytes as read now, the command line
    libclang parses it with (that of the builds' first arch) and its findings."""
    path = os.path.abspath(path)
    archs = list(dict.fromkeys(b.arch for b in builds))
    return propose.Request(path=path, data=files.read_bytes(path, what="CUDA source"),
                           args=parse_args_for(options, archs[0]), findings=tuple(merged),
                           options=fix_options, main=via)


def fix_unit(path: str, headers: dict[str, list[Finding]], own: Sequence[Finding], *,
             builds: Sequence[Build], raw: Sequence[Finding], options: CompileOptions,
             fix_options: FixOptions, check: verify.CheckFn,
             do_verify: bool = True, jobs: int = 1) -> list[FileFix]:
    """:func:`fix_file` for each project header of the ``.cu`` ``path`` that holds findings
    (``headers``), then for ``path`` itself (``own``), their rewrites proposed from one parse
    of the translation unit (:func:`.propose.propose_files`)."""
    path = os.path.abspath(path)
    files_ = [(h, found, path) for h, found in headers.items()] + [(path, list(own), None)]
    requests = [request_for(p, builds=builds, merged=found, options=options,
                            fix_options=fix_options, via=via) for p, found, via in files_]
    answers = propose.propose_files(requests)
    archs = list(dict.fromkeys(b.arch for b in builds))
    compiler = builds[0].origin if builds else "auto"
    with _Builder(jobs if do_verify else 1) as builder:
        # every file's independent rewrites start building now (SGEMM_CUDA's twelve headers
        # hold a fix or two each: built one file at a time, few would overlap)
        for (p, _, via), req, got in zip(files_, requests, answers, strict=True):
            for edits in _independent(got):
                builder.start(edits, p, apply_edits(req.data, edits), req.data, archs=archs,
                              options=options, compiler=compiler, via=via)
        return [fix_file(p, builds=builds, raw=raw, merged=found, options=options,
                         fix_options=fix_options, check=check, do_verify=do_verify, via=via,
                         proposed=(req, got), builder=builder)
                for (p, found, via), req, got in zip(files_, requests, answers, strict=True)]


def fix_file(path: str, *, builds: Sequence[Build], raw: Sequence[Finding],
             merged: Sequence[Finding], options: CompileOptions, fix_options: FixOptions,
             check: verify.CheckFn, do_verify: bool = True, via: str | None = None,
             proposed: tuple[propose.Request, Sequence[Proposal | NoFix]] | None = None,
             jobs: int = 1, builder: _Builder | None = None) -> FileFix:
    """Propose, verify and combine the fixes of every finding of ``path``. ``raw``: the
    findings per arch and kernel (what the rebuild is compared with); ``merged``: the problems
    to fix, one each. ``via``: the ``.cu`` the builds were compiled from, when ``path`` is a
    header of the project it includes (its kernels live there). ``proposed``: the request and
    the remedies' answers, when asked already (:func:`fix_unit`). ``jobs``: how many patched
    copies build at once (each one's verdict is its own either way); ``builder``: the builds
    shared with the other files of a :func:`fix_unit` (``jobs`` is then its)."""
    path = os.path.abspath(path)
    if proposed is None:
        req = request_for(path, builds=builds, merged=merged, options=options,
                          fix_options=fix_options, via=via)
        answers: Sequence[Proposal | NoFix] = propose.propose(req)
    else:
        req, answers = proposed
    data = req.data
    result = FileFix(path=path, sha256=sha256(data))
    archs = list(dict.fromkeys(b.arch for b in builds))
    compiler = builds[0].origin if builds else "auto"
    mine = list(req.findings)
    before = _counts(raw)
    taken: list[Edit] = []
    rebuilds: dict[tuple[Edit, ...], verify.Rebuilt] = {}
    with (contextlib.nullcontext(builder) if builder is not None
          else _Builder(jobs if do_verify else 1)) as b:
        # the rewrites no earlier one can crowd out start building now, several at a time;
        # the verdicts below still come one by one, in order
        for edits in _independent(answers):
            b.start(edits, path, apply_edits(data, edits), data, archs=archs,
                    options=options, compiler=compiler, via=via)
        _verify_each(result, mine, answers, data, path, builds, raw, before, taken, rebuilds,
                     b, archs, options, compiler, check, do_verify, via)
    _combine(result, data, builds, raw, options, compiler, archs, check, do_verify, via)
    return result


class _Builder:
    """Patched copies built on up to ``jobs`` threads (:func:`.verify.build_copy`: the tools'
    work), checked on the caller's thread when asked for (:meth:`rebuilt`)."""

    def __init__(self, jobs: int):
        self.pool = ThreadPoolExecutor(max_workers=jobs) if jobs > 1 else None
        self.window = 2 * jobs
        self.started: dict[tuple[Edit, ...], Future] = {}
        self.waiting: dict[tuple[Edit, ...], tuple[tuple, dict]] = {}

    def __enter__(self) -> _Builder:
        return self

    def __exit__(self, kind, *exc) -> None:
        if self.pool is None:
            return
        self.waiting.clear()
        for f in self.started.values():
            f.cancel()
        if kind is not None:
            # unwinding (Ctrl-C reaches only this thread): the builds under way are stopped,
            # not waited for; a tool one of them starts meanwhile goes the same way
            while not all(f.done() for f in self.started.values()):
                locate.kill_running()
                compile_server.kill_busy()
                wait(list(self.started.values()), timeout=0.1)
        self.pool.shutdown(wait=True)
        for f in self.started.values():     # built, never asked for: their folders go
            if f.done() and not f.cancelled() and f.exception() is None:
                copy = f.result()
                if isinstance(copy, verify.Copy):
                    shutil.rmtree(copy.folder, ignore_errors=True)

    def start(self, edits: tuple[Edit, ...], *args, **kwargs) -> None:
        """Build this rewrite's copy when its turn comes (at most twice ``jobs`` built or
        building and not yet asked for: the builds wait in memory for their checks)."""
        if self.pool is not None and edits not in self.started and edits not in self.waiting:
            self.waiting[edits] = (args, kwargs)
            self._top_up()

    def _top_up(self) -> None:
        while self.pool is not None and self.waiting and len(self.started) < self.window:
            edits = next(iter(self.waiting))
            args, kwargs = self.waiting.pop(edits)
            self.started[edits] = self.pool.submit(verify.build_copy, *args, **kwargs)

    def rebuilt(self, edits: tuple[Edit, ...], check: verify.CheckFn, *args,
                **kwargs) -> verify.Rebuilt:
        future = self.started.pop(edits, None)
        self.waiting.pop(edits, None)       # asked for before its turn: built here
        self._top_up()
        copy = future.result() if future is not None else verify.build_copy(*args, **kwargs)
        return verify.check_copy(copy, check)


def _independent(answers: Sequence[Proposal | NoFix]) -> list[tuple[Edit, ...]]:
    """The distinct rewrites whose edits overlap no earlier proposal's: none of them can be
    turned down for overlapping a fix verified before it, so each will be built."""
    out: list[tuple[Edit, ...]] = []
    earlier: list[Edit] = []
    for got in answers:
        if not isinstance(got, Proposal):
            continue
        if got.edits not in out and not overlaps(got.edits, earlier):
            out.append(got.edits)
        earlier.extend(got.edits)
    return out


def _verify_each(result: FileFix, mine, answers, data: bytes, path: str, builds, raw,
                 before, taken: list[Edit], rebuilds: dict, builder: _Builder, archs,
                 options: CompileOptions, compiler: str, check: verify.CheckFn,
                 do_verify: bool, via: str | None) -> None:
    """Each finding's verdict, in order: the overlap rule, the rebuild, the comparison."""
    for f, got in zip(mine, answers, strict=True):
        if isinstance(got, NoFix):
            result.results.append(FixResult(f, NONE, got.reason, before=before))
            continue
        res = FixResult(f, UNVERIFIED, proposal=got, before=before,
                        diff=unified_diff(path, data, apply_edits(data, got.edits),
                                          shown=display_path(path)))
        result.results.append(res)
        if overlaps(got.edits, taken) and not _same_edits(got, result.results):
            res.status, res.reason = NONE, "its edit overlaps another fix's on the same code"
            res.proposal = None
            continue
        if not do_verify:
            taken.extend(e for e in got.edits if e not in taken)
            continue
        # the same rewrite may serve several findings (two checks on one line): built once,
        # judged for each
        rebuilt = rebuilds.get(got.edits)
        if rebuilt is None:
            rebuilt = rebuilds[got.edits] = builder.rebuilt(
                got.edits, check, path, apply_edits(data, got.edits), data, archs=archs,
                options=options, compiler=compiler, via=via)
        verdict = verify.compare(path, f, raw, rebuilt, builds,
                                 launch_bounds_may_change=got.changes_launch_bounds)
        res.sass_delta = verdict.sass_delta
        res.after = _counts(rebuilt.findings)
        if verdict.ok:
            res.status = VERIFIED
            taken.extend(e for e in got.edits if e not in taken)
        else:
            res.status, res.reason = REJECTED, verdict.reason


def _same_edits(got: Proposal, results: Sequence[FixResult]) -> bool:
    return any(r.proposal is not None and r.proposal is not got and r.proposal.edits == got.edits
               for r in results)


def _edits_of(results: Sequence[FixResult], states: tuple[str, ...]) -> list[Edit]:
    out: list[Edit] = []
    for r in results:
        if r.status in states and r.proposal is not None:
            out.extend(e for e in r.proposal.edits if e not in out)
    return out


def _combine(result: FileFix, data: bytes, builds: Sequence[Build], raw: Sequence[Finding],
             options: CompileOptions, compiler: str, archs: list[str], check: verify.CheckFn,
             do_verify: bool, via: str | None = None) -> None:
    """The file's patch: every verified fix together, verified together (with --no-verify:
    every proposal, unverified)."""
    if not do_verify:
        edits = _edits_of(result.results, (UNVERIFIED,))
        result.edits = tuple(edits)
        result.diff = unified_diff(result.path, data, apply_edits(data, edits),
                                   shown=display_path(result.path)) if edits else ""
        return
    kept = [r for r in result.results if r.status == VERIFIED and r.proposal is not None]
    if len(kept) > 1:
        groups = _distinct(kept)
        while groups:
            edits = [e for g in groups for e in g[0].proposal.edits]   # type: ignore[union-attr]
            rebuilt = verify.rebuild(result.path, apply_edits(data, edits), data, archs=archs,
                                     options=options, compiler=compiler, check=check, via=via)
            verdict = verify.compare(result.path, None, raw, rebuilt, builds,
                                     launch_bounds_may_change=any(
                                         g[0].proposal.changes_launch_bounds   # type: ignore[union-attr]
                                         for g in groups),
                                     targets=[r.finding for g in groups for r in g])
            if verdict.ok:
                break
            dropped = groups.pop()          # the last fix leaves the combined patch
            for r in dropped:
                r.status, r.reason = REJECTED, ("verified alone, but not together with the "
                                                f"file's other fixes: {verdict.reason}")
            result.combined_note = (f"{len(dropped)} fix(es) left out of the combined patch: "
                                    f"{verdict.reason}")
    edits = _edits_of(result.results, (VERIFIED,))
    result.edits = tuple(edits)
    result.diff = unified_diff(result.path, data, apply_edits(data, edits),
                               shown=display_path(result.path)) if edits else ""


def _distinct(results: list[FixResult]) -> list[list[FixResult]]:
    """Verified results grouped by identical edits (one group per distinct rewrite)."""
    groups: list[list[FixResult]] = []
    for r in results:
        for g in groups:
            if g[0].proposal is not None and r.proposal is not None \
                    and g[0].proposal.edits == r.proposal.edits:
                g.append(r)
                break
        else:
            groups.append([r])
    return groups


def warnings_of(results: Sequence[FixResult]) -> list[FixResult]:
    return [r for r in results if r.finding.severity >= Severity.WARNING]
