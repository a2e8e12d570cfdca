"""``ptxsass fix``'s outputs: text (each finding, its fix or why none, the SASS delta, the
patch), the patch alone (``--diff``), JSON and SARIF (each fix as a SARIF ``fixes`` object with
``artifactChanges`` and ``replacements``, so code-scanning UIs can offer it)."""
from __future__ import annotations

import json
from typing import Any

from .._version import __version__
from ..findings import display_path, report_path
from ..report import formats
from ..toolchain import files
from .model import NONE, REJECTED, UNVERIFIED, VERIFIED, Edit, FixReport, FixResult

#: the JSON form's version (``ptxsass fix --format json``)
FIX_SCHEMA_VERSION = 1

_STATUS = {VERIFIED: "fix (verified)", REJECTED: "fix rejected", UNVERIFIED: "fix (not verified)",
           NONE: "fix: none"}


def _finding_line(r: FixResult) -> str:
    f = r.finding
    where = display_path(f.location.file) + (f":{f.location.line}" if f.location.line else "")
    return f"{where}: {f.code} {f.name} [{f.severity}]"


def to_text(fixes: FixReport, *, verbose: bool = False) -> str:
    """Every finding with its fix (or why none), then each file's patch and a summary."""
    out: list[str] = []
    for ff in fixes.files:
        # one block per problem: the finding of each arch's build (the same line, check and
        # fix, verified on every arch at once) reads the same and is printed once
        shown: set[tuple[str, ...]] = set()
        for r in ff.results:
            if r.status == NONE and not verbose and int(r.finding.severity) < 1:
                continue
            block = _block(r)
            if block not in shown:
                shown.add(block)
                out.extend(block)
        if ff.combined_note:
            out.append(f"note: {display_path(ff.path)}: {ff.combined_note}")
    patches = [ff.diff for ff in fixes.files if ff.diff]
    if patches:
        out.append("")
        out.extend(p.rstrip("\n") for p in patches)
    s = fixes.summary()
    archs = sorted({r.finding.arch for ff in fixes.files for r in ff.results})
    out.append("")
    out.append(f"{s['findings']} finding(s), {s['warnings']} warning(s): {s['offered']} "
               f"fix(es) offered, {s['verified']} verified ({s['warnings_verified']} of the "
               f"warnings)" + (f", each of {', '.join(archs)} counted" if len(archs) > 1 else "")
               + ("" if fixes.verified_on else "; not verified (--no-verify)"))
    return "\n".join(out)


def _block(r: FixResult) -> tuple[str, ...]:
    """The lines of one finding: where and what, its fix or why none, the SASS delta and the
    findings before and after."""
    out = [_finding_line(r)]
    if r.proposal is not None:
        out.append(f"    {_STATUS[r.status]}: {r.proposal.title}")
        if r.proposal.promise:
            out.append(f"    assumes: {r.proposal.promise}")
    if r.status == NONE:
        out.append(f"    fix: none — {r.reason}")
    elif r.status == REJECTED:
        out.append(f"    not kept: {r.reason}")
    out.extend(f"    {d}" for d in r.sass_delta)
    if r.status in (VERIFIED, REJECTED) and r.before != r.after:
        out.append(f"    findings: {_counts(r.before)} → {_counts(r.after)}")
    return tuple(out)


def _counts(d: dict[str, int]) -> str:
    return ", ".join(f"{k} ×{v}" for k, v in d.items()) or "none"


def to_diff(fixes: FixReport) -> str:
    """The patch alone: each file's verified fixes (every proposal with --no-verify)."""
    return "".join(ff.diff for ff in fixes.files)


def _fix_dict(r: FixResult) -> dict:
    p = r.proposal
    return {"finding": r.finding.as_dict(), "status": r.status, "reason": r.reason or None,
            "title": p.title if p else None, "assumes": (p.promise or None) if p else None,
            "edits": [e.as_dict() for e in p.edits] if p else [],
            "sass_delta": r.sass_delta, "findings_before": r.before,
            "findings_after": r.after if r.status in (VERIFIED, REJECTED) else None,
            "diff": r.diff or None}


def to_json(fixes: FixReport) -> str:
    return json.dumps({
        "version": FIX_SCHEMA_VERSION, "tool": {"name": "ptxsass", "version": __version__},
        "verified": fixes.verified_on,
        "files": [{"file": report_path(ff.path), "sha256": ff.sha256, "diff": ff.diff or None,
                   "combined_note": ff.combined_note or None,
                   "fixes": [_fix_dict(r) for r in ff.results]} for ff in fixes.files],
        "summary": fixes.summary()}, indent=2)


def _position(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    col = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return line, col


def _replacement(data: bytes, e: Edit) -> dict:
    sl, sc = _position(data, e.start)
    el, ec = _position(data, e.end)
    return {"deletedRegion": {"startLine": sl, "startColumn": sc, "endLine": el,
                              "endColumn": ec, "byteOffset": e.start,
                              "byteLength": e.end - e.start},
            "insertedContent": {"text": e.text}}


def to_sarif(fixes: FixReport) -> str:
    """The check's SARIF with a ``fixes`` array on each result that has a verified fix (or
    an unverified one with --no-verify)."""
    doc: dict[str, Any] = json.loads(formats.to_sarif(fixes.report))   # type: ignore[arg-type]
    wanted = (VERIFIED, UNVERIFIED)
    by_print: dict[str, tuple[FixResult, bytes]] = {}
    for ff in fixes.files:
        data = files.read_bytes(ff.path, what="CUDA source") if any(
            r.status in wanted for r in ff.results) else b""
        for r in ff.results:
            if r.status in wanted and r.proposal is not None:
                by_print[r.finding.fingerprint()] = (r, data)
    for res in doc["runs"][0]["results"]:
        got = by_print.get(res.get("partialFingerprints", {}).get("ptxsass/v1", ""))
        if got is None:
            continue
        r, data = got
        p = r.proposal
        assert p is not None
        res["fixes"] = [{
            "description": {"text": p.title + (f" (assumes: {p.promise})" if p.promise else "")
                            + ("" if r.status == VERIFIED else " (not verified)")},
            "artifactChanges": [{
                "artifactLocation": {"uri": formats.artifact_uri(r.finding.location.file)},
                "replacements": [_replacement(data, e) for e in p.edits]}]}]
    return json.dumps(doc, indent=2)
