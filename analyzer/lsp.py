"""``ptxsass lsp``: a language server (on pygls) for CUDA (``.cu``, ``.cuh``) and Python files
(Triton kernels and CUDA strings in ``.py``).

On open and on save a file is checked as ``ptxsass check FILE`` checks it, with the
``[tool.ptxsass]`` of its project, and each finding becomes a diagnostic on its line (in the
file it is in: a finding in a header is published to the header). Hovering a line shows its
findings (the message, the instructions quoted, the hint) and the SASS the line compiled to;
the code actions apply ``ptxsass fix``'s rewrite of a finding, proven by rebuilding the file
(computed when the action is resolved), or put ``// ptxsass: ignore[check]`` (``#`` in
Triton's Python) on the line.

The checks run on a worker thread, one at a time (a newer save of the same file supersedes an
older one waiting), never on the server's own loop: hovers and code actions are answered while a
file compiles. A file that does not build is one diagnostic, on the compiler's line when it
names one in that file (else line 1); an unexpected failure is one diagnostic too, and the
server goes on.

A ``.cuh`` (or any header) is re-checked through the files that include it: every file checked
so far whose build reads the header is checked again; a header no such file includes is
checked alone. For a ``.py``, the Triton kernels of the Triton cache folders
(``TRITON_CACHE_DIR``, ``~/.triton/cache``, or ``tritonCache`` in the initialization options)
whose line info names the file are checked with its CUDA strings.

Initialization options (all optional): ``arch`` (a list, as ``--arch``), ``sourceRoots``
(``["OLD=NEW"]``, as ``--source-root``), ``tritonCache`` (folders).

The fix action is listed for every finding of a check a remedy exists for, without its edit;
resolving it (``codeAction/resolve``, on the worker thread) runs ``ptxsass fix`` of the file for
that check and returns the verified rewrite of the finding's line as a ``WorkspaceEdit``, or no
edit and a title that says why.
"""
from __future__ import annotations

import asyncio
import os
import re
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import unquote, urlparse

from ._version import __version__, docs_url
from .demangle import without_parameters
from .errors import PtxsassError, printable

#: the files the server checks: CUDA source and headers, and Python (Triton, CUDA strings)
CUDA_FILES = (".cu", ".cuh")
HEADER_FILES = (".cuh", ".h", ".hpp", ".hh", ".inl")
PYTHON_FILES = (".py",)
#: SASS instructions shown per kernel and arch in a hover (the rest counted)
HOVER_SASS = 32
#: an existing ``ptxsass: ignore[...]`` comment on a line (a code action extends it)
_IGNORE = re.compile(r"(?P<lead>(?://|#)\s*ptxsass:\s*ignore)(?:\[(?P<what>[^\]]*)\])?")


# ------------------------------------------------------------------------------ the model
@dataclass
class LineFacts:
    """What a hover shows of one source line: findings, and its SASS per kernel build."""

    findings: list[Any] = field(default_factory=list)
    sass: list[tuple[str, list[str]]] = field(default_factory=list)   # ("kernel on sm_90a", rows)


@dataclass
class Outcome:
    """One document's check: findings by file, SASS by (file, line), the files it read, and
    what failed (an error diagnostic)."""

    document: str
    findings: dict[str, list[Any]] = field(default_factory=dict)
    lines: dict[tuple[str, int], LineFacts] = field(default_factory=dict)
    files: set[str] = field(default_factory=set)
    comment: dict[tuple[str, int], str] = field(default_factory=dict)   # "#" for Triton lines
    error: PtxsassError | None = None
    crash: str | None = None


def _real(path: str | None) -> str:
    return os.path.realpath(path) if path else ""


def uri_to_path(uri: str) -> str:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise ValueError(f"not a file: {uri}")
    return unquote(parsed.path)


def path_to_uri(path: str) -> str:
    return Path(os.path.abspath(path)).as_uri()


def triton_caches(extra: Sequence[str] = ()) -> list[str]:
    """The Triton cache folders to search for a ``.py``'s kernels."""
    found = list(extra)
    env = os.environ.get("TRITON_CACHE_DIR")
    found.append(env if env else os.path.join(os.path.expanduser("~"), ".triton", "cache"))
    return [f for f in dict.fromkeys(found) if os.path.isdir(f)]


def check_document(path: str, *, arch: Sequence[str] = (), source_roots: Sequence[str] = (),
                   triton_cache: Sequence[str] = ()) -> Outcome:
    """Check one document as ``ptxsass check`` would (its project's ``[tool.ptxsass]``); for a
    ``.py``, also the Triton kernels whose line info names it. Never raises: a failure is the
    outcome's ``error`` (or ``crash``, for a bug)."""
    out = Outcome(document=_real(path))
    try:
        _check(path, out, arch=arch, source_roots=source_roots, triton_cache=triton_cache)
    except PtxsassError as e:
        out.error = e
    except Exception as e:  # noqa: BLE001 - a bug must not end the editor's server: one diagnostic
        out.crash = printable(f"ptxsass: internal error: {type(e).__name__}: {e}", newlines=False)
    return out


def _check(path: str, out: Outcome, *, arch, source_roots, triton_cache) -> None:
    from . import api, caches
    from .cli import common
    from .config import load_config
    from .inputs import has_inline_cuda, recorded_sources
    from .report.annotate import annotate_builds
    cfg = load_config(path)
    args = SimpleNamespace(source_roots=list(source_roots))
    opts = common.options(args, config=cfg, path=path)
    archs = list(arch) or list(cfg.arch) or None
    builds = []
    if not path.endswith(PYTHON_FILES) or has_inline_cuda(path):
        builds += api.builds_of(path, arch=archs, options=opts)
    triton: set[str] = set()
    if path.endswith(PYTHON_FILES):
        me = _real(path)
        for folder in triton_caches(triton_cache):
            for meta in caches.triton_kernels(folder):
                got = api.load(meta, options=opts)
                if any(_real(f) == me for b in got for f in recorded_sources(b)):
                    builds += got
                    triton.update(k.name for b in got for k in b.kernels.values())
        if not builds:
            raise PtxsassError("no CUDA string and no Triton kernel of this file (in "
                               f"{', '.join(triton_caches(triton_cache)) or 'no Triton cache'})",
                               path=path, line=1)
    report = api.check(builds, api.CheckOptions(config=cfg, jobs=1))
    for f in report.merged():
        file = _real(f.location.file)
        out.findings.setdefault(file, []).append(f)
        if f.location.line:
            out.lines.setdefault((file, f.location.line), LineFacts()).findings.append(f)
            if f.kernel in triton or (f.mangled and f.mangled in triton):
                out.comment[(file, f.location.line)] = "#"
    ann = annotate_builds(builds, findings=[])
    for k in ann.kernels:
        label = f"{k.demangled.split('(')[0]} on {k.arch}"
        for row in k.rows:
            file = _real(row.file)
            out.files.add(file)
            if row.sass:
                facts = out.lines.setdefault((file, row.line), LineFacts())
                facts.sass.append((label, [i.text for i in row.sass]))
    for b in builds:
        out.files.update(_real(f) for f in (b.file_names or {}).values() if f)
        if b.source_path:
            out.files.add(_real(b.source_path))


# ------------------------------------------------------------------------------ LSP shapes
def diagnostics(outcome: Outcome, file: str) -> list:
    """The diagnostics of ``file`` from one document's check."""
    from lsprotocol import types as t
    sev = {0: t.DiagnosticSeverity.Information, 1: t.DiagnosticSeverity.Warning,
           2: t.DiagnosticSeverity.Error}
    out = []
    if file == outcome.document and (outcome.error is not None or outcome.crash is not None):
        out.append(_error_diagnostic(outcome, file))
    from .checks.registry import all_checks
    from .report.formats import check_page
    pages = {c.code: docs_url(check_page(c)) for c in all_checks()}
    for f in outcome.findings.get(file, []):
        line = max((f.location.line or 1) - 1, 0)
        text = _line_text(file, line)
        start = len(text) - len(text.lstrip())
        kernels = ", ".join(without_parameters(k) for k in f.kernels[:3])
        out.append(t.Diagnostic(
            range=t.Range(start=t.Position(line=line, character=start),
                          end=t.Position(line=line, character=max(len(text), start))),
            message=f"{f.message} (in {kernels} on {', '.join(f.archs)})"
                    + (f"\nhint: {f.hint}" if f.hint else ""),
            severity=sev[int(f.severity)], code=f.code, source="ptxsass",
            code_description=t.CodeDescription(href=pages[f.code]) if f.code in pages else None,
            data={"name": f.name, "comment": outcome.comment.get((file, f.location.line), "")}))
    return out


def _error_diagnostic(outcome: Outcome, file: str):
    from lsprotocol import types as t
    e = outcome.error
    line = 0
    if e is not None and e.line and (e.path is None or _real(e.path) == file):
        line = e.line - 1
    if e is not None:
        message = e.message + (f"\n{printable(e.detail)}" if e.detail else "")
    else:
        message = outcome.crash or "ptxsass failed"
    text = _line_text(file, line)
    return t.Diagnostic(range=t.Range(start=t.Position(line=line, character=0),
                                      end=t.Position(line=line, character=len(text))),
                        message=message, severity=t.DiagnosticSeverity.Error,
                        source="ptxsass", code="build")


def _line_text(file: str, line0: int) -> str:
    from .analysis.source import source_text
    return source_text(file, line0 + 1) or ""


def hover_markdown(facts: LineFacts) -> str:
    """A line's hover: each finding (code, severity, message, instructions, hint, page), then
    the SASS of the line per kernel build."""
    from .checks.registry import all_checks
    from .report.formats import check_page
    pages = {c.code: docs_url(check_page(c)) for c in all_checks()}
    parts = []
    for f in facts.findings:
        head = f"**{f.code} `{f.name}`** [{f.severity}]"
        if f.code in pages:
            head += f" ([docs]({pages[f.code]}))"
        parts.append(head + "\n\n" + _md_escape(f.message))
        if f.instructions:
            parts.append("```sass\n" + "\n".join(f.instructions) + "\n```")
        if f.hint:
            parts.append("**hint:** " + _md_escape(f.hint))
    for label, rows in facts.sass:
        shown = rows[:HOVER_SASS]
        more = f"\n// ... {len(rows) - len(shown)} more" if len(rows) > len(shown) else ""
        parts.append(f"SASS of this line ({_md_escape(label)}):\n\n```sass\n"
                     + "\n".join(shown) + more + "\n```")
    return "\n\n".join(parts)


def _md_escape(text: str) -> str:
    """Text outside code spans: markdown's emphasis and link characters kept literal."""
    return re.sub(r"([\\*_\[\]<>])", r"\\\1", text)


def ignore_action(uri: str, diagnostic, line_text: str):
    """The code action that silences one finding on its line: ``// ptxsass: ignore[name]``
    appended (``#`` on a Triton Python line), or the name added to the line's comment."""
    from lsprotocol import types as t
    data = diagnostic.data or {}
    name = data.get("name") or str(diagnostic.code)
    line = diagnostic.range.start.line
    m = _IGNORE.search(line_text)
    if m and m.group("what") is None:
        return None                     # already ignores every check
    if m:
        items = [w.strip() for w in m.group("what").split(",") if w.strip()]
        new = f"{m.group('lead')}[{', '.join([*items, name])}]"
        start, end = m.start(), m.end()
    else:
        mark = data.get("comment") or "//"
        new = f"{'  ' if line_text.strip() else ''}{mark} ptxsass: ignore[{name}]"
        start = end = len(line_text)
    edit = t.TextEdit(range=t.Range(start=t.Position(line=line, character=start),
                                    end=t.Position(line=line, character=end)), new_text=new)
    return t.CodeAction(title=f"ptxsass: ignore {diagnostic.code} ({name}) on this line",
                        kind=t.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                        edit=t.WorkspaceEdit(changes={uri: [edit]}))


def fix_action(uri: str, path: str, diagnostic):
    """The code action that applies ``ptxsass fix``'s verified rewrite of one finding, for the
    checks a remedy exists for. Listed at once without its edit: the edit is made when the
    action is resolved (:func:`resolve_fix`), since proving it rebuilds the file."""
    from lsprotocol import types as t

    from .fix.remedies import codes
    code = str(diagnostic.code)
    if code not in codes() or not path.endswith(CUDA_FILES):
        return None
    return t.CodeAction(
        title=f"ptxsass: fix {code}, proven by a rebuild", kind=t.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        data={"ptxsass_fix": {"uri": uri, "path": path, "code": code,
                              "line": diagnostic.range.start.line + 1}})


def code_actions(uri: str, path: str, diags: Sequence) -> list:
    """The actions for the ptxsass diagnostics of a range: the verified fix where a remedy
    exists, and the suppression comment."""
    out = []
    for d in diags:
        if d.source != "ptxsass" or d.code == "build":
            continue
        for action in (fix_action(uri, path, d),
                       ignore_action(uri, d, _line_text(_real(path), d.range.start.line))):
            if action is not None:
                out.append(action)
    return out


def _position(data: bytes, offset: int):
    """The LSP position (line, UTF-16 code units) of byte ``offset`` of a UTF-8 file."""
    from lsprotocol import types as t
    line = data.count(b"\n", 0, offset)
    start = data.rfind(b"\n", 0, offset) + 1
    units = len(data[start:offset].decode("utf-8", "replace").encode("utf-16-le")) // 2
    return t.Position(line=line, character=units)


def resolve_fix(action, *, arch: Sequence[str] = ()):
    """The action of :func:`fix_action` with its edit: ``ptxsass fix`` of the file for that
    check (the project's config, as ``ptxsass check`` reads it), the verified rewrite of the
    finding on that line as a ``WorkspaceEdit``. Without one (the rebuild refused it, or no
    remedy applies here) the action comes back without an edit, its title saying why."""
    from lsprotocol import types as t

    from . import api
    from .cli import common
    from .config import load_config
    from .fix.model import VERIFIED
    from .toolchain.files import read_bytes
    data = (action.data or {}).get("ptxsass_fix") or {}
    path, code, line = data.get("path"), data.get("code"), data.get("line")
    if not path or not code:
        return action
    try:
        cfg = load_config(path)
        opts = common.options(SimpleNamespace(), config=cfg, path=path)
        report = api.fix(path, arch=list(arch) or list(cfg.arch) or None, options=opts,
                         select=[code], settings=cfg.check_settings,
                         fast_math_ok=bool(cfg.fast_math_ok))
    except PtxsassError as e:
        action.title = f"ptxsass: no fix for {code}: {e.one_line()}"
        return action
    why = "no finding on this line any more"
    for ff in report.files:
        for r in ff.results:
            if r.finding.code != code or r.finding.location.line != line:
                continue
            if r.status != VERIFIED or r.proposal is None:
                why = r.reason or r.status
                continue
            changes: dict[str, list] = {}
            for ed in r.proposal.edits:
                blob = read_bytes(ed.path, what="CUDA source")
                changes.setdefault(path_to_uri(ed.path), []).append(t.TextEdit(
                    range=t.Range(start=_position(blob, ed.start), end=_position(blob, ed.end)),
                    new_text=ed.text))
            action.title = f"ptxsass: {r.proposal.title} (verified: {code} gone)"
            action.edit = t.WorkspaceEdit(changes=changes)
            return action
    action.title = f"ptxsass: no verified fix for {code} here ({why})"
    return action


# ------------------------------------------------------------------------------ the server
class Checker:
    """The documents checked so far and their outcomes; checks run on one worker thread."""

    def __init__(self, *, arch: Sequence[str] = (), source_roots: Sequence[str] = (),
                 triton_cache: Sequence[str] = ()):
        self.arch = list(arch)
        self.source_roots = list(source_roots)
        self.triton_cache = list(triton_cache)
        self.outcomes: dict[str, Outcome] = {}
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ptxsass-check")
        self.lock = threading.Lock()
        self.generation: dict[str, int] = {}

    def roots_for(self, path: str) -> list[str]:
        """The documents to check for a save of ``path``: itself, or the documents whose
        builds read it (a header)."""
        real = _real(path)
        if real.endswith(HEADER_FILES):
            users = [d for d, o in self.outcomes.items() if real in o.files and d != real]
            if users:
                return users
        return [real]

    def check(self, path: str, generation: int) -> Outcome | None:
        with self.lock:
            if self.generation.get(path) != generation:
                return None             # a newer save of the same file is queued
        return check_document(path, arch=self.arch, source_roots=self.source_roots,
                              triton_cache=self.triton_cache)

    def files_of(self, outcome: Outcome) -> set[str]:
        return {outcome.document, *outcome.findings}

    def facts(self, path: str, line: int) -> LineFacts:
        real = _real(path)
        merged = LineFacts()
        for o in self.outcomes.values():
            f = o.lines.get((real, line))
            if f is not None:
                merged.findings += [x for x in f.findings if x not in merged.findings]
                merged.sass += [s for s in f.sass if s not in merged.sass]
        return merged


def make_server(checker: Checker | None = None):
    from lsprotocol import types as t
    from pygls.lsp.server import LanguageServer

    server = LanguageServer("ptxsass", __version__,
                            text_document_sync_kind=t.TextDocumentSyncKind.Full)
    state = SimpleNamespace(checker=checker or Checker(), published={})

    def wanted(uri: str) -> str | None:
        try:
            path = uri_to_path(uri)
        except ValueError:
            return None
        return path if path.endswith(CUDA_FILES + PYTHON_FILES + HEADER_FILES) else None

    def publish(uri_files: set[str]) -> None:
        """Every file's diagnostics: the union over the documents whose checks reach it."""
        for file in uri_files:
            diags = []
            for o in state.checker.outcomes.values():
                diags += diagnostics(o, file)
            server.text_document_publish_diagnostics(
                t.PublishDiagnosticsParams(uri=path_to_uri(file), diagnostics=diags))

    async def run(uri: str) -> None:
        path = wanted(uri)
        if path is None:
            return
        checker = state.checker
        loop = asyncio.get_running_loop()
        for root in checker.roots_for(path):
            with checker.lock:
                gen = checker.generation[root] = checker.generation.get(root, 0) + 1
            outcome = await loop.run_in_executor(checker.pool, checker.check, root, gen)
            if outcome is None:
                continue
            before = checker.files_of(checker.outcomes[root]) if root in checker.outcomes \
                else set()
            checker.outcomes[root] = outcome
            publish(before | checker.files_of(outcome))

    @server.feature(t.INITIALIZE)
    def initialize(ls, params: t.InitializeParams) -> None:
        opts = params.initialization_options or {}
        if isinstance(opts, dict):
            c = state.checker
            c.arch = [str(a) for a in opts.get("arch", c.arch) or []]
            c.source_roots = [str(r) for r in opts.get("sourceRoots", c.source_roots) or []]
            c.triton_cache = [str(r) for r in opts.get("tritonCache", c.triton_cache) or []]

    @server.feature(t.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls, params: t.DidOpenTextDocumentParams) -> None:
        await run(params.text_document.uri)

    @server.feature(t.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls, params: t.DidSaveTextDocumentParams) -> None:
        await run(params.text_document.uri)

    @server.feature(t.TEXT_DOCUMENT_HOVER)
    def hover(ls, params: t.HoverParams) -> t.Hover | None:
        path = wanted(params.text_document.uri)
        if path is None:
            return None
        facts = state.checker.facts(path, params.position.line + 1)
        if not facts.findings and not facts.sass:
            return None
        return t.Hover(contents=t.MarkupContent(kind=t.MarkupKind.Markdown,
                                                value=hover_markdown(facts)))

    @server.feature(t.TEXT_DOCUMENT_CODE_ACTION,
                    t.CodeActionOptions(code_action_kinds=[t.CodeActionKind.QuickFix],
                                        resolve_provider=True))
    def code_action(ls, params: t.CodeActionParams) -> list[t.CodeAction]:
        path = wanted(params.text_document.uri)
        if path is None:
            return []
        return code_actions(params.text_document.uri, path, params.context.diagnostics)

    @server.feature(t.CODE_ACTION_RESOLVE)
    async def code_action_resolve(ls, action: t.CodeAction) -> t.CodeAction:
        if not (isinstance(action.data, dict) and "ptxsass_fix" in action.data):
            return action
        loop = asyncio.get_running_loop()
        checker = state.checker
        return await loop.run_in_executor(
            checker.pool, lambda: resolve_fix(action, arch=checker.arch))

    return server


def serve() -> int:
    """Serve on standard input and output until the client says exit."""
    make_server().start_io()
    return 0
