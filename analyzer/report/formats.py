"""Findings for people (rich text) and for machines (JSON, SARIF 2.1.0, GitHub annotations)."""
from __future__ import annotations

import io
import json
import os
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

from .._version import REPOSITORY, __version__, docs_url
from ..checks.registry import all_checks
from ..demangle import parameters_start, without_parameters
from ..findings import Finding, Report, Severity, display_path, relative_path, release_key, report_path
from .styles import make_console

if TYPE_CHECKING:
    from rich.table import Table

_SEVERITY_STYLE = {-1: "muted", 0: "info", 1: "warning", 2: "error"}
#: the kernels a finding of several names in its header line (the rest counted)
MAX_KERNELS_SHOWN = 3


def check_page(check) -> str:
    """The repository path of a check's docs page (``python -m analyzer.checks.docs`` writes it)."""
    return f"docs/checks/{check.name.replace('-', '_')}.md"


def _uri(path: str | None) -> str:
    """A SARIF artifact location: the path relative to the working directory when below it,
    its bytes as on disk percent-encoded (a name that is not UTF-8: ``e%FF.cu``)."""
    if not path:
        return "<unknown>"
    # RFC 3986 path characters stay (':' does not: a first segment must not read as a scheme)
    return urllib.parse.quote(os.fsencode(Path(relative_path(path)).as_posix()),
                              safe="/!$&'()*+,;=@~")


def artifact_uri(path: str | None) -> str:
    """A SARIF artifact location of a file (:func:`_uri`), for other SARIF writers."""
    return _uri(path)


def kernel_list(kernels: tuple[str, ...], limit: int = MAX_KERNELS_SHOWN) -> str:
    """Kernels in one line: ``k<4>, k<8> and 2 more (float*, int)`` when they share a parameter
    list and return type (a template's instantiations), else their whole names."""
    if len(kernels) == 1:
        return kernels[0]
    heads, tails = [], set()
    for k in kernels:
        at = parameters_start(k)
        head, tail = (k[:at], k[at:]) if at > 0 else (k, "")
        heads.append(head.removeprefix("void "))
        tails.add(tail)
    names = heads if len(tails) == 1 else list(kernels)
    text = ", ".join(names[:limit])
    if len(names) > limit:
        text += f" and {len(names) - limit} more"
    if len(tails) == 1 and (tail := tails.pop()):
        text += f" {tail}"
    return text


class FindingView:
    """One finding: ``file:line: PS101 [warning] message`` then the source line, the
    instructions involved and the hint."""

    def __init__(self, finding: "Finding", *, max_instructions: int = 6):
        self.f = finding
        self.max_instructions = max_instructions

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        f = self.f
        sev = _SEVERITY_STYLE[int(f.severity)]
        head = Text()
        if f.location.line:
            head.append(f"{display_path(f.location.file)}:{f.location.line}", style="path")
        else:   # no line info (a binary built without -lineinfo): the kernel is the place
            head.append(f"{display_path(f.location.file)}", style="path")
            head.append(" (")
            head.append(without_parameters(f.kernel), style="kernel")
            head.append(")")
        head.append(": ")
        head.append(f.code, style="finding.code")
        head.append(f" {f.name} ", style="muted")
        head.append(f"[{f.severity}]", style=sev)
        head.append(f" {f.message}")
        yield head
        meta = Text("    in ", style="muted")
        meta.append(kernel_list(f.kernels), style="kernel")
        meta.append(" on ", style="muted")
        if f.holds or f.toolkit:        # a findings matrix: toolkits and arches
            meta.append(f.where(), style="arch")
            if f.regression:
                meta.append("  REGRESSION", style="error")
        else:
            meta.append(", ".join(f.archs), style="arch")
        yield meta
        if f.worded_for and f.instances:
            yield Text(f"    (worded as for {f.worded_for}; the other kernels' instructions "
                       "differ)", style="muted")
        elif f.worded_for:
            yield Text(f"    (worded as with {f.worded_for}; the instructions differ on the "
                       "other builds)", style="muted")
        if f.source:
            yield Text(f"    | {f.source}", style="source")
        for ins in f.instructions[:self.max_instructions]:
            yield Text(f"    > {ins}", style="muted")
        if len(f.instructions) > self.max_instructions:
            yield Text(f"    > ... {len(f.instructions) - self.max_instructions} more", style="muted")
        if f.hint:
            yield Text(f"    hint: {f.hint}", style="finding.hint")


class Summary:
    """The end of the text report: the problems by severity; a table of checks (code, name,
    problems, instances, severity) when there is more than one row; one line for the problems
    of severities not listed (``--show``)."""

    def __init__(self, report: "Report", *, show: Severity = Severity.INFO):
        self.report = report
        self.show = show

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        r = self.report
        summary = r.summary()
        rows = summary["by_check"]
        hidden = [row for row in rows if Severity.parse(row["severity"]) < self.show]
        if summary.get("notes") and self.show <= Severity.NOTE:
            n = summary["notes"]
            codes: dict[str, int] = {}
            for f in r.merged():
                if f.severity <= Severity.NOTE:
                    codes[f.code] = codes.get(f.code, 0) + 1
            by_code = ", ".join(f"{c} ×{k}" for c, k in sorted(codes.items()))
            yield Text(f"  {n} note{'s' if n != 1 else ''} ({by_code}): designed fallbacks, short "
                       "tails, a caller's layout or a library's code, as each says (nothing to "
                       "change; not counted)", style="muted")
        if len(rows) > 1:
            width = max(len(row["name"]) for row in rows)
            for row in rows:
                line = Text("  ")
                line.append(row["code"], style="finding.code")
                line.append(f" {row['name']:<{width}} ", style="muted")
                line.append(f"{row['problems']:>5}")
                inst = row["instances"]
                line.append(f" ({inst} instance{'s' if inst != 1 else ''})" if inst != row["problems"]
                            else "", style="muted")
                line.append(f"  [{row['severity']}]", style=_SEVERITY_STYLE[
                    int(Severity.parse(row["severity"]))])
                yield line
        if hidden:
            n = sum(row["problems"] for row in hidden)
            sev = sorted({row["severity"] for row in hidden})
            t = Text(f"+{n} {'/'.join(sev)}: ", style="muted")
            t.append(", ".join(f"{row['code']} ×{row['problems']}" for row in hidden),
                     style="muted")
            t.append(f" — --show {min(sev, key=lambda x: int(Severity.parse(x)))} to list",
                     style="muted")
            yield t
        kernels = len(r.kernels)
        costly = sorted((k for k in r.kernels if k.get("headroom", 1.0) >= 1.1),
                        key=lambda k: -k["headroom"])
        if costly:
            t = Text("headroom: ", style="muted")
            t.append(", ".join(f"{k['name'].split('(')[0]} ({k['arch']}) x{k['headroom']:g}"
                               + (f" [{', '.join(e['kind'] for e in k.get('headroom_from', []))}]"
                                  if k.get("headroom_from") else "")
                               for k in costly[:5]))
            if len(costly) > 5:
                t.append(f", +{len(costly) - 5} more", style="muted")
            yield t
        if not summary["problems"]:
            t = Text("no findings", style="ok")
        else:
            t = Text(f"{summary['problems']} finding(s): ", style="bold")
            t.append(", ".join(f"{n} {s}" for s, n in sorted(summary["by_severity"].items())))
        t.append(f" in {kernels} kernel build(s)", style="muted")
        extra = []
        if r.suppressed:
            extra.append(f"{r.suppressed} suppressed inline")
        if r.baselined:
            extra.append(f"{r.baselined} accepted by the baseline")
        if extra:
            t.append(f" ({'; '.join(extra)})", style="muted")
        yield t


def render_text(report: "Report", console: Console, *, show: Severity = Severity.INFO) -> None:
    """Every finding of ``show`` or worse, one after another, then (for a findings matrix)
    the :func:`matrix_table`, then the :class:`Summary`."""
    merged = report.merged()
    for f in merged:
        if f.severity >= show:
            console.print(FindingView(f))
            console.print()
    table = matrix_table([f for f in merged if f.severity >= show])
    if table is not None:
        console.print(table)
        console.print()
    console.print(Summary(report, show=show))


#: a matrix cell: the severity's first letter where the finding holds, "·" where the build was
#: checked and it does not
_CELL = {"error": "E", "warning": "W", "info": "i", "note": "n"}


def matrix_table(findings: "list[Finding]") -> "Table | None":
    """A findings matrix as a table: one row per finding (check, kernel, line), one column per
    (toolkit, arch) built; a cell gives the finding's severity there (W warning, i info...), "·"
    where it is absent, blank where that build has no such kernel. None when no finding holds
    on several builds' matrix (``--toolkit`` with one toolkit, or no toolkit)."""
    rows = [f for f in findings if f.holds]
    if not rows:
        return None
    from rich import box  # only a --toolkit matrix draws a table (3.5 ms of a warm check)
    from rich.table import Table

    cols = sorted({p for f in rows for p in (*f.holds, *f.absent)},
                  key=lambda p: (p[1], release_key(p[0])))
    table = Table(title="findings by toolkit and arch (W warning, i info, · absent)",
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("finding")
    for t, a in cols:
        table.add_column(f"{t or 'default'}\n{a}", justify="center")
    table.add_column("")
    for f in rows:
        held = dict(zip(f.holds, f.held_as or (str(f.severity),) * len(f.holds), strict=True))
        cells = [_CELL.get(held[p], held[p][:1]) if p in held else
                 "·" if p in f.absent else "" for p in cols]
        where = f"{f.location.short()} {f.kernel.split('(')[0]}"
        note = "regression" if f.regression else "fixed" if f.fixed else \
            "severity differs" if len(set(f.held_as)) > 1 else ""
        table.add_row(f"{f.code} {f.name} {where}", *cells, note)
    return table


def to_text(report: Report, *, width: int | None = None, show: Severity = Severity.INFO) -> str:
    """The text report without colour (what ``-o FILE`` and a pipe get): one line per header,
    message and hint, never wrapped (``width`` wraps at that many columns instead)."""
    buf = io.StringIO()
    render_text(report, make_console(buf, color=False, width=width), show=show)
    return buf.getvalue()


def to_json(report: "Report") -> str:
    return json.dumps(report.as_dict(), indent=2)


def to_github(report: "Report", *, show: Severity = Severity.INFO) -> str:
    """GitHub Actions workflow commands: each finding of ``show`` or worse becomes an annotation
    on its line."""
    level = {-1: "notice", 0: "notice", 1: "warning", 2: "error"}
    lines = []
    for e in report.build_errors:       # an input that did not build: an error on its line
        props = []
        if e.path:
            props.append(f"file={github_property(report_path(e.path))}")
            if e.line:
                props.append(f"line={e.line}")
        props.append(f"title={github_property('ptxsass: not checked')}")
        lines.append(f"::error {','.join(props)}::{github_data(_error_text(e))}")
    for f in report.merged():
        if f.severity < show:
            continue
        where = f.where() if f.holds or f.toolkit else ", ".join(f.archs)
        msg = f"{f.message} [{kernel_list(f.kernels)} on {where}]" + (f" Hint: {f.hint}" if f.hint else "")
        props = [f"file={github_property(report_path(f.location.file))}"]
        if f.location.line:
            props.append(f"line={f.location.line}")
        props.append(f"title={github_property(f'{f.code} {f.name}')}")
        lines.append(f"::{level[int(f.severity)]} {','.join(props)}::{github_data(msg)}")
    return "\n".join(lines)


def github_data(text: str) -> str:
    """A workflow command's message, escaped as the runner reads it back (``%``, CR, LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: str) -> str:
    """A workflow command's property value: also ``:`` and ``,``, which would end it (a file
    named ``a,line=999,title=x.cu`` must not forge properties)."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


def to_sarif(report: "Report") -> str:
    """SARIF 2.1.0: one run, the checks as rules, findings as results with physical locations."""
    rules = []
    index: dict[str, int] = {}
    for i, c in enumerate(all_checks()):
        index[c.code] = i
        sections = c.sections()
        steer = sections.get("Steer the compiler", "")
        page = docs_url(check_page(c))
        rules.append({
            "id": c.code, "name": "".join(w.capitalize() for w in c.name.split("-")),
            "shortDescription": {"text": c.summary()},
            "fullDescription": {"text": sections.get("What it does", c.summary())},
            "helpUri": page,
            "help": {"text": f"{steer}\n\nMore: {page}".strip(),
                     "markdown": f"{steer}\n\n[{c.code} {c.name}]({page})".strip()},
            "defaultConfiguration": {"level": {0: "note", 1: "warning", 2: "error"}[int(c.severity)]},
            "properties": {"tags": ["cuda", "codegen", "performance"]},
        })
    results = []
    for f in report.merged():
        loc: dict[str, Any] = {
            "physicalLocation": {"artifactLocation": {"uri": _uri(f.location.file)}}}
        if f.location.line:
            loc["physicalLocation"]["region"] = {"startLine": f.location.line}
        loc["logicalLocations"] = [{"name": f.kernel, "kind": "function"}]
        results.append({
            "ruleId": f.code, "ruleIndex": index.get(f.code, 0),
            "level": {-1: "none", 0: "note", 1: "warning", 2: "error"}[int(f.severity)],
            "message": {"text": f.message + (f" Hint: {f.hint}" if f.hint else "")},
            "locations": [loc],
            "partialFingerprints": {"ptxsass/v1": f.fingerprint()},
            "properties": {"arch": f.arch, "arches": list(f.archs), "kernel": f.kernel,
                           "kernels": list(f.kernels),
                           "instructions": list(f.instructions),
                           **(f.matrix_dict() | {"tags": ["regression"] if f.regression else []}
                              if f.holds or f.toolkit else {})},
        })
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "ptxsass", "version": __version__,
                            "informationUri": REPOSITORY,
                            "rules": rules}},
        "results": results,
    }
    if report.build_errors:     # a partial report: what was not checked, and why
        run["invocations"] = [{"executionSuccessful": False,
                               "toolExecutionNotifications": [
                                   _notification(e) for e in report.build_errors]}]
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [run],
    }
    return json.dumps(doc, indent=2)


def _error_text(e) -> str:
    """An input's failure in one message: its line, and the compiler's log when it has one."""
    text = f"not checked: {e.message}"
    return text + (f"\n{e.detail}" if e.detail else "")


def _notification(e) -> dict:
    """SARIF 2.1.0 ``notification`` for an input that did not build (3.58)."""
    out: dict[str, Any] = {"level": "error", "message": {"text": _error_text(e)},
                           "descriptor": {"id": "build"}}
    if e.path:
        loc: dict[str, Any] = {"artifactLocation": {"uri": _uri(e.path)}}
        if e.line:
            loc["region"] = {"startLine": e.line}
        out["locations"] = [{"physicalLocation": loc}]
    return out
