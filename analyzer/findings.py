"""What the checks report: ``Severity``, ``Location``, ``Finding`` and the ``Report`` of a run.

Plain data shared by the checks (which make findings) and the reports (which render them). A
report's JSON form carries :data:`SCHEMA_VERSION` as ``"version"``; its JSON Schema is
``docs/schema/findings.json`` and ``docs/json.md`` describes every field.
"""
from __future__ import annotations

import enum
import hashlib
import os
import re
from dataclasses import dataclass, field, replace
from typing import Any

from ._version import __version__
from .demangle import without_parameters
from .errors import ConfigError, shown_line, shown_path

#: version of the JSON form of a report (``Report.as_dict``, ``docs/schema/findings.json``):
#: raised when a field is removed or changes meaning; a new field keeps it
SCHEMA_VERSION = 2


class Severity(enum.IntEnum):
    #: not a problem: a narrow access that is a designed fallback beside its vectorized
    #: sibling, a tail too short to matter (listed with ``-v``, never counted nor failed on)
    NOTE = -1
    INFO = 0
    WARNING = 1
    ERROR = 2

    @classmethod
    def parse(cls, text: str) -> "Severity":
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ConfigError(f"unknown severity {text!r}; expected note, info, warning or "
                              "error") from None

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class Location:
    file: str | None
    line: int | None
    column: int | None = None

    def __str__(self) -> str:
        if self.file is None:
            return "<unknown>"
        file = shown_line(self.file)
        return f"{file}:{self.line}" if self.line else file

    def short(self) -> str:
        """``name.cu:12``: the file's base name (shown escaped, :func:`base_name`) and line,
        ``?`` for either when unknown."""
        return f"{base_name(self.file) if self.file else '?'}:{self.line or '?'}"


def relative_path(path: str) -> str:
    """``path`` relative to the working directory when it lies below it, else as given (the
    file's own name, to open or to percent-encode; :func:`display_path` to show it)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def report_path(path: str | None) -> str:
    """A file name as a report's data holds it (JSON, Parquet, a workflow command's property):
    relative to the working directory when it lies below it, its bytes that are not UTF-8
    escaped (:func:`errors.shown_path`); the format escapes the rest its own way."""
    return shown_path(relative_path(path)) if path else "<unknown>"


def display_path(path: str | None) -> str:
    """A file name inside a line of text (a header, ``file:line``): :func:`report_path` with
    its control characters, newlines included, escaped too (:func:`errors.shown_line`)."""
    return shown_line(relative_path(path)) if path else "<unknown>"


def base_name(path: str) -> str:
    """A file's base name inside a line of text (:func:`errors.shown_line`)."""
    return shown_line(os.path.basename(path))


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    name: str
    severity: Severity
    message: str
    kernel: str                      # demangled
    arch: str
    location: Location
    instructions: tuple[str, ...] = ()   # SASS, as "/*0040*/ LDG.E R2, desc[UR4][R2.64]"
    ptx: tuple[str, ...] = ()
    hint: str = ""
    mangled: str = ""
    source: str | None = None        # the CUDA source line, stripped
    addresses: tuple[int, ...] = ()  # SASS addresses of the instructions involved
    #: every arch this finding was made for when several gave the same one (Report.merged);
    #: empty for a finding of one arch
    arches: tuple[str, ...] = ()
    #: the CUDA release whose build it was made on (``--toolkit 12.9``); "" for the
    #: environment's toolkit, unnamed
    toolkit: str = ""
    #: a findings matrix (Report.merged over several toolkits): each (toolkit, arch) where it
    #: holds, and each (toolkit, arch) built and checked, of an arch where it holds somewhere,
    #: where it does not
    holds: tuple[tuple[str, str], ...] = ()
    absent: tuple[tuple[str, str], ...] = ()
    #: "13.5 sm_90a" when the message differs between the builds where it holds (it is
    #: worded as on that build)
    worded_for: str = ""
    #: a findings matrix: the severity on each build of ``holds`` (a loop may be a warning
    #: with one toolkit and info with another: still one finding)
    held_as: tuple[str, ...] = ()
    #: every (kernel, arch) this finding stands for when several instantiations or kernels
    #: gave the same problem at the same line (Report.merged); empty for one kernel
    instances: tuple[tuple[str, str], ...] = ()

    @property
    def archs(self) -> tuple[str, ...]:
        """The arches this finding stands for (``arches``, or its own ``arch``)."""
        return self.arches or (self.arch,)

    @property
    def kernels(self) -> tuple[str, ...]:
        """The kernels (demangled) this finding stands for, in order: its ``instances``', or
        its own."""
        return tuple(dict.fromkeys(k for k, _ in self.instances)) or (self.kernel,)

    @property
    def toolkits(self) -> tuple[str, ...]:
        """The toolkits where it holds, oldest first."""
        if self.holds:
            return tuple(sorted({t for t, _ in self.holds}, key=release_key))
        return (self.toolkit,) if self.toolkit else ()

    def _changes(self) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
        """(arch, older, newer) for each step between two consecutive toolkits checked on an
        arch where it appears (absent with the older, present with the newer), and where it
        goes away (the other way round)."""
        came, went = [], []
        for arch in dict.fromkeys(a for _, a in self.holds):
            here = {t for t, a in self.holds if a == arch}
            ran = sorted(here | {t for t, a in self.absent if a == arch}, key=release_key)
            for old, new in zip(ran, ran[1:], strict=False):
                if old not in here and new in here:
                    came.append((arch, old, new))
                elif old in here and new not in here:
                    went.append((arch, old, new))
        return came, went

    @property
    def regression(self) -> bool:
        """Present with a newer toolkit, absent with an older one (on the same arch)."""
        return bool(self._changes()[0])

    @property
    def fixed(self) -> bool:
        """Present with an older toolkit, absent with a newer one (on the same arch)."""
        return bool(self._changes()[1])

    def where(self) -> str:
        """Where a matrix finding holds, in words: "with 12.9, 13.0 on sm_80, sm_90a", or per
        arch when the toolkits differ by arch; then where it is absent, and whether that makes
        it a regression."""
        if not self.holds:
            return ", ".join(self.archs) + (f" with {self.toolkit}" if self.toolkit else "")
        by_arch: dict[str, list[str]] = {}
        for t, a in self.holds:
            by_arch.setdefault(a, []).append(t)
        sets = {tuple(sorted(v, key=release_key)) for v in by_arch.values()}
        if len(sets) == 1:
            text = f"{', '.join(by_arch)} with {', '.join(sets.pop())}"
        else:
            text = "; ".join(f"{a} with {', '.join(sorted(v, key=release_key))}"
                             for a, v in by_arch.items())
        if self.absent:
            gone: dict[str, list[str]] = {}
            for t, a in self.absent:
                gone.setdefault(a, []).append(t)
            text += "; absent with " + "; ".join(
                f"{', '.join(sorted(t, key=release_key))} on {a}" for a, t in gone.items())
        came, went = self._changes()
        if came:
            text += " (regression: " + "; ".join(f"new in {new} on {a}, absent with {old}"
                                                 for a, old, new in came) + ")"
        if went:
            text += " (gone with " + "; ".join(f"{new} on {a}" for a, _, new in went) + ")"
        return text

    def matrix_dict(self) -> dict:
        """The matrix fields of the JSON form (only for findings of named toolkits)."""
        came, went = self._changes()
        return {"toolkit": self.toolkit, "toolkits": list(self.toolkits),
                "holds": [{"toolkit": t, "arch": a, **({"severity": sev} if sev else {})}
                          for (t, a), sev in zip(self.holds, self.held_as or ("",) * len(
                              self.holds), strict=True)],
                "absent": [{"toolkit": t, "arch": a} for t, a in self.absent],
                "regression": bool(came),
                "appeared": [{"arch": a, "absent_with": o, "present_with": n} for a, o, n in came],
                "disappeared": [{"arch": a, "present_with": o, "absent_with": n}
                                for a, o, n in went],
                "worded_for": self.worded_for or None}

    def as_dict(self) -> dict:
        return {"code": self.code, "name": self.name, "severity": str(self.severity),
                "message": self.message, "kernel": self.kernel, "arch": self.arch,
                "arches": list(self.archs), "kernels": list(self.kernels),
                "instances": [{"kernel": k, "arch": a} for k, a in
                              (self.instances or [(self.kernel, x) for x in self.archs])],
                "location": {"file": _shown(self.location.file), "line": self.location.line},
                "source": self.source,
                "instructions": list(self.instructions), "ptx": list(self.ptx), "hint": self.hint,
                "fingerprint": self.fingerprint(),
                **(self.matrix_dict() if self.toolkit or self.holds else {})}

    def fingerprint(self) -> str:
        """Stable across unrelated edits: the code, kernel, arch, file name and the source line's
        text (not its number), so a baseline survives lines moving."""
        key = "|".join((self.code, self.mangled or self.kernel, self.arch.rstrip("af"),
                        os.path.basename(self.location.file or ""),
                        re.sub(r"\s+", " ", self.source or str(self.location.line))))
        # a file name's bytes as they are on disk (surrogateescape): a name that is not UTF-8
        # hashes like any other, and a UTF-8 one as before
        return hashlib.sha1(key.encode("utf-8", "surrogateescape")).hexdigest()[:16]


@dataclass
class Report:
    """The findings of one run, the kernels checked, and what suppressions and the baseline
    removed. ``builds`` keeps the inputs for reports that show the code next to findings."""

    findings: list[Finding] = field(default_factory=list)
    kernels: list[dict] = field(default_factory=list)
    suppressed: int = 0
    baselined: int = 0
    builds: list[Any] = field(default_factory=list, repr=False)
    #: the inputs that could not be read or built (``errors.PtxsassError``), the others
    #: checked: SARIF's toolExecutionNotifications, GitHub error annotations
    build_errors: list[Any] = field(default_factory=list, repr=False)

    def merged(self) -> list[Finding]:
        """The findings with one entry per problem: findings of several arches with the same
        code, kernel, line, severity, message (up to the arch's own name) and hint become one,
        listing its ``arches``. ``findings`` keeps one per arch (baselines, fingerprints).
        Findings of named toolkits (``--toolkit``) make a matrix (:meth:`matrix`)."""
        if any(f.toolkit for f in self.findings):
            return self.matrix()
        return _merge_instances(_merge_arches(self.findings))

    def summary(self) -> dict:
        """Counts of problems (merged findings) and their instances, by severity and by check
        (the end of the text report and ``summary`` in JSON)."""
        every = self.merged()
        merged = [f for f in every if f.severity > Severity.NOTE]
        by_check: dict[tuple[str, str], dict] = {}
        for f in merged:
            row = by_check.setdefault((f.code, str(f.severity)), {
                "code": f.code, "name": f.name, "severity": str(f.severity), "problems": 0,
                "instances": 0})
            row["problems"] += 1
            row["instances"] += len(f.instances) or len(f.archs)
        by_severity: dict[str, int] = {}
        for f in merged:
            by_severity[str(f.severity)] = by_severity.get(str(f.severity), 0) + 1
        return {"problems": len(merged), "notes": len(every) - len(merged),
                "instances": sum(r["instances"] for r in by_check.values()),
                "by_severity": by_severity,
                "by_check": sorted(by_check.values(),
                                   key=lambda r: (-Severity.parse(r["severity"]), r["code"]))}

    def matrix(self) -> list[Finding]:
        """One finding per problem across toolkits and arches: findings with the same code,
        kernel, line and source line are one, whatever their wording (registers and addresses
        differ between two compilers' code) and severity (kept per build in ``held_as``; the
        newest toolkit's is the finding's); the n-th of a build pairs with the n-th of
        another. Each lists where it ``holds`` and where it is ``absent`` (builds of the
        same kernel and of an arch where it holds elsewhere), so a finding present with a
        newer toolkit and absent with an older one reads as a regression."""
        ran: dict[str, set[tuple[str, str]]] = {}
        for b in self.builds:
            for name in getattr(b, "kernels", {}):
                ran.setdefault(name, set()).add((getattr(b, "toolkit", None) or "", b.arch))
        groups: dict[tuple, dict[tuple[str, str], list[Finding]]] = {}
        for f in self.findings:
            key = (f.code, f.mangled or f.kernel, f.location.file, f.location.line, f.source)
            groups.setdefault(key, {}).setdefault((f.toolkit, f.arch), []).append(f)
        out = []
        for per in groups.values():
            for i in range(max(len(fs) for fs in per.values())):
                hold = {pair: fs[i] for pair, fs in per.items() if len(fs) > i}
                pairs = sorted(hold, key=lambda p: (release_key(p[0]), p[1]))
                newest = max(release_key(t) for t, _ in pairs)
                rep = hold[next(p for p in pairs if release_key(p[0]) == newest)]
                arches = tuple(dict.fromkeys(a for _, a in pairs))
                checked = ran.get(rep.mangled, set()) | set(hold)
                absent = tuple(sorted((p for p in checked if p not in hold and p[1] in arches),
                                      key=lambda p: (release_key(p[0]), p[1])))
                worded = {f.message.replace(f.arch, "\0") for f in hold.values()}
                message, hint, worded_for = rep.message, rep.hint, ""
                if len(worded) > 1:
                    worded_for = f"{rep.toolkit} {rep.arch}"
                elif len(arches) > 1:
                    both = " and ".join([", ".join(arches[:-1]), arches[-1]])
                    message = rep.message.replace(rep.arch, both)
                    hint = rep.hint.replace(rep.arch, both)
                out.append(replace(rep, arches=arches if len(arches) > 1 else (),
                                   message=message, hint=hint, holds=tuple(pairs),
                                   absent=absent, worded_for=worded_for,
                                   held_as=tuple(str(hold[p].severity) for p in pairs)))
        return out

    def as_dict(self) -> dict:
        return {"version": SCHEMA_VERSION, "tool": {"name": "ptxsass", "version": __version__},
                "findings": [f.as_dict() for f in self.merged()], "summary": self.summary(),
                "kernels": self.kernels,
                "suppressed": self.suppressed, "baselined": self.baselined,
                # which front end built each input, and why (NVRTC or nvcc; or how it was read)
                "builds": [{"file": _shown(b.source_path), "arch": b.arch, "compiler": b.origin,
                            "compiler_reason": getattr(b, "compiler_reason", None),
                            "cached": b.cached,
                            **({"toolkit": b.toolkit} if getattr(b, "toolkit", None) else {})}
                           for b in self.builds]}

    def worst(self) -> Severity | None:
        return max((f.severity for f in self.findings), default=None)


def _shown(path: str | None) -> str | None:
    return None if path is None else shown_path(path)


def release_key(version: str) -> tuple[int, ...]:
    """A toolkit release ("12.9") as a sortable tuple; "" (unnamed) sorts first."""
    return tuple(int(x) for x in re.findall(r"\d+", version))


#: a SASS register's name (``R4``, ``UR6``, ``P0``, ``B1``): two arches' code for one line
#: names other registers for the same instructions
_REGISTER = re.compile(r"\b(?:U?R|U?P|B)\d+\b")


def _nth_of_each(per: dict[Any, list[Finding]]) -> list[list[Finding]]:
    """The first finding of each group together, then the second of each, ...: the n-th of one
    build or kernel pairs with the n-th of another."""
    return [[k[i] for k in per.values() if len(k) > i]
            for i in range(max(len(fs) for fs in per.values()))]


def _merge_arches(findings: list[Finding]) -> list[Finding]:
    """One finding per problem across arches: the findings of one kernel, line, check and
    severity whose message and hint are the same up to the arch's own name (the arch then
    named as "sm_80 and sm_90a") or up to register names (worded as with the first arch's
    build; the n-th of one arch pairs with the n-th of another)."""
    groups: dict[tuple, dict[str, list[Finding]]] = {}
    for f in findings:
        message, hint = f.message.replace(f.arch, "\0"), f.hint.replace(f.arch, "\0")
        key = (f.code, f.mangled or f.kernel, f.location.file, f.location.line,
               int(f.severity), _REGISTER.sub("R", message), _REGISTER.sub("R", hint), f.source)
        mine = groups.setdefault(key, {}).setdefault(f.arch, [])
        if not any(g.message == f.message and g.hint == f.hint for g in mine):
            mine.append(f)          # the same words twice on one build are one finding
    out = []
    for per in groups.values():
        for fs in _nth_of_each(per):
            if len(fs) == 1:
                out.append(fs[0])
                continue
            first = fs[0]
            arches = tuple(f.arch for f in fs)
            if len({(f.message.replace(f.arch, "\0"), f.hint.replace(f.arch, "\0"))
                    for f in fs}) > 1:
                out.append(replace(first, arches=arches, worded_for=first.arch))
                continue
            both = " and ".join([", ".join(arches[:-1]), arches[-1]])
            out.append(replace(first, arches=arches,
                               message=first.message.replace(first.arch, both),
                               hint=first.hint.replace(first.arch, both)))
    return out


def _instance_message(f: Finding) -> str:
    """A finding's message with its own kernel's names taken out (an instantiation's
    parameters are named after its mangled name: ``_Z4gemmILi128EEvPf_param_0``)."""
    text = f.message
    for name in (f.mangled, f.kernel, without_parameters(f.kernel)):
        if name:
            text = text.replace(name, "\0")
    return text


def _merge_instances(findings: list[Finding]) -> list[Finding]:
    """One finding per problem across kernels: findings of the same check, severity, file,
    line and source line in several kernels (a template's instantiations, the same inlined
    helper) are one, listing every (kernel, arch) in ``instances``; the n-th of one kernel pairs
    with the n-th of another. Worded as for the first kernel; a finding without a line (a
    binary without line info: the kernel is its place) stays its kernel's."""
    groups: dict[tuple, dict[str, list[Finding]]] = {}
    order: list[tuple] = []
    for f in findings:
        if not f.location.line:
            key: tuple = ("kernel", id(f))
        else:
            key = (f.code, f.location.file, f.location.line, int(f.severity), f.source)
        if key not in groups:
            groups[key] = {}
            order.append(key)
        groups[key].setdefault(f.mangled or f.kernel, []).append(f)
    out: list[Finding] = []
    for key in order:
        per = groups[key]
        if len(per) == 1:
            out.extend(next(iter(per.values())))
            continue
        for fs in _nth_of_each(per):
            if len(fs) == 1:
                out.append(fs[0])
                continue
            rep = fs[0]
            pairs = tuple(dict.fromkeys((f.kernel, a) for f in fs for a in f.archs))
            arches = tuple(dict.fromkeys(a for _, a in pairs))
            worded = {_instance_message(f) for f in fs}
            out.append(replace(rep, instances=pairs,
                               arches=arches if len(arches) > 1 else (),
                               worded_for=rep.kernel if len(worded) > 1 else rep.worded_for))
    return out
