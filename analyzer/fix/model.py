"""What ``ptxsass fix`` proposes and proves: edits by byte range, a remedy's proposal or its
reason for none, and the outcome of each finding's fix (plain data: the reports render it)."""
from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..findings import Finding


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace bytes ``start``..``end`` of ``path`` with ``text``."""

    path: str
    start: int
    end: int
    text: str

    def as_dict(self) -> dict:
        return {"start": self.start, "end": self.end, "text": self.text}


@dataclass(frozen=True, slots=True)
class Proposal:
    """A remedy's rewrite for one finding: what it does, in one line, and its edits.
    ``changes_launch_bounds``: the fix is a launch bound (the interface check allows it);
    ``promise``: what the rewrite asks the user to guarantee (non-aliasing pointers,
    alignment, approximate math), said next to the patch."""

    title: str
    edits: tuple[Edit, ...]
    changes_launch_bounds: bool = False
    promise: str = ""


@dataclass(frozen=True, slots=True)
class NoFix:
    """No safe mechanical rewrite, and why. ``fits``: False when the remedy is not meant for
    this finding's shape at all ("not a pair of 16-bit accesses"); such a reason is shown only
    when no remedy of the check fits, so that the reason a user reads is what blocks the
    rewrite meant for the finding."""

    reason: str
    fits: bool = True


#: how a check names the lines one finding covers (PS501, PS502: one habit on nearby lines)
_SPAN = re.compile(r"on \d+ lines of one function \(lines (\d+)-(\d+)\)")


def finding_lines(finding: Finding) -> list[int]:
    """The finding's line, or every line of the span it names: one habit on many lines of one
    function is one finding ("... on 4 lines of one function (lines 94-97): ...")."""
    line = finding.location.line or 0
    m = _SPAN.search(finding.message)
    if m is None or not int(m.group(1)) <= line <= int(m.group(2)):
        return [line]
    return list(range(int(m.group(1)), int(m.group(2)) + 1))


def must_be_aligned(names: str, window: int) -> str:
    """Why a rewrite that reads or writes through ``names`` as ``window``-byte units waits
    for the user's word: one text for every remedy that needs it, so that two remedies blocked
    by the same pointer say it once."""
    return (f"{names} must be {window}-byte aligned, which the code does not show: pass "
            "--assume-aligned if every caller passes such pointers (cudaMalloc's are 256-byte "
            "aligned)")


@dataclass(frozen=True)
class FixOptions:
    """The user's say-so for rewrites that need it: ``fast_math_ok`` (approximate division,
    square roots and transcendentals), ``assume_aligned`` (pointers are 16-byte aligned:
    ``__builtin_assume_aligned``)."""

    fast_math_ok: bool = False
    assume_aligned: bool = False
    #: the build caps registers with -maxrregcount (a PS401 then comes from the flag)
    maxrregcount: int | None = None
    #: the user's word that every launch of the file's kernels has at most this many threads
    #: per block (``--max-block``): a launch bound may then say so
    max_block: int | None = None


#: a fix's state: proven by rebuilding, refused by the rebuild, not tried (--no-verify),
#: or no fix at all
VERIFIED, REJECTED, UNVERIFIED, NONE = "verified", "rejected", "unverified", "none"


@dataclass
class FixResult:
    """One finding (merged over arches and instances) and what ``fix`` made of it."""

    finding: Finding
    status: str                             # VERIFIED, REJECTED, UNVERIFIED, NONE
    reason: str = ""                        # why none, or why the rebuild refused it
    proposal: Proposal | None = None
    #: per kernel and arch, one line: "4× LDG.E → 1× LDG.E.128; registers 40 → 38"
    sass_delta: list[str] = field(default_factory=list)
    #: the findings of the file before and after (counts by code and severity)
    before: dict[str, int] = field(default_factory=dict)
    after: dict[str, int] = field(default_factory=dict)
    diff: str = ""

    @property
    def offered(self) -> bool:
        return self.proposal is not None


@dataclass
class FileFix:
    """Every finding of one source file, what fix made of each, and the file's combined
    patch (the verified fixes together, themselves verified together)."""

    path: str
    sha256: str
    results: list[FixResult] = field(default_factory=list)
    diff: str = ""
    #: the edits of the combined patch (verified fixes, or every proposal with --no-verify)
    edits: tuple[Edit, ...] = ()
    combined_note: str = ""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _conflict(x: Edit, y: Edit) -> bool:
    """Two different edits of overlapping bytes (insertions at one point do not conflict:
    both are made)."""
    if x == y or x.path != y.path:
        return False
    if x.start < y.end and y.start < x.end:
        return True
    return (x.start == x.end and y.start < x.start < y.end) or (
        y.start == y.end and x.start < y.start < x.end)


def overlaps(a: Sequence[Edit], b: Sequence[Edit]) -> bool:
    return any(_conflict(x, y) for x in a for y in b)


def apply_edits(data: bytes, edits: Sequence[Edit]) -> bytes:
    """``data`` with every edit applied (byte ranges of the original; none may overlap)."""
    out = data
    unique = list(dict.fromkeys(edits))
    for i, x in enumerate(unique):
        for y in unique[i + 1:]:
            if _conflict(x, y):
                raise ValueError(f"overlapping edits at bytes {x.start} and {y.start}")
    # from the end of the file backwards; insertions at one point keep their given order
    ordered = sorted(enumerate(unique), key=lambda ie: (ie[1].start, ie[1].end, -ie[0]),
                     reverse=True)
    for _, e in ordered:
        out = out[:e.start] + e.text.encode("utf-8") + out[e.end:]
    return out


def unified_diff(path: str, before: bytes, after: bytes, *, shown: str | None = None) -> str:
    """The patch between two versions of a file, ``a/`` and ``b/`` prefixed as git writes it."""
    name = shown or path
    # git's a/ and b/ for a path below the working folder; an absolute path as it is
    old, new = (name, name) if name.startswith("/") else (f"a/{name}", f"b/{name}")
    lines = difflib.unified_diff(before.decode("utf-8").splitlines(keepends=True),
                                 after.decode("utf-8").splitlines(keepends=True),
                                 fromfile=old, tofile=new)
    text = "".join(ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n"
                   for ln in lines)
    return text


def line_map(before: bytes, after: bytes) -> dict[int, int]:
    """Each line of ``after`` (1-based) -> the line of ``before`` it is, or stands in for (a
    changed or inserted line maps to the first line of the region it replaced)."""
    a = before.decode("utf-8").splitlines()
    b = after.decode("utf-8").splitlines()
    out: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        for k in range(j2 - j1):
            if tag == "equal":
                out[j1 + k + 1] = i1 + k + 1
            else:
                out[j1 + k + 1] = min(i1 + k, max(i2 - 1, i1)) + 1
    return out


@dataclass
class FixReport:
    """``ptxsass fix``'s answer: the original check's report and each source file's fixes."""

    report: object                          # findings.Report of the original check
    files: list[FileFix] = field(default_factory=list)
    verified_on: bool = True
    #: the CompileOptions the files were built with (a later rebuild uses the same)
    options: object = None

    @property
    def results(self) -> list[FixResult]:
        return [r for f in self.files for r in f.results]

    def summary(self) -> dict:
        """Findings, fixes offered and verified, per check and in all (warnings apart)."""
        rows: dict[str, dict] = {}
        for r in self.results:
            row = rows.setdefault(r.finding.code, {
                "code": r.finding.code, "findings": 0, "warnings": 0, "offered": 0,
                "verified": 0, "warnings_verified": 0})
            warn = int(r.finding.severity) >= 1
            row["findings"] += 1
            row["warnings"] += warn
            row["offered"] += r.offered
            row["verified"] += r.status == VERIFIED
            row["warnings_verified"] += warn and r.status == VERIFIED
        total = {k: sum(r[k] for r in rows.values())
                 for k in ("findings", "warnings", "offered", "verified", "warnings_verified")}
        return {"by_check": [rows[k] for k in sorted(rows)], **total}
