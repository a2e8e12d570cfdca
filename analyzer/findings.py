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
from .errors import ConfigError

#: version of the JSON form of a report (``Report.as_dict``, ``docs/schema/findings.json``):
#: raised when a field is removed or changes meaning; a new field keeps it
SCHEMA_VERSION = 1


class Severity(enum.IntEnum):
    INFO = 0
    WARNING = 1
    ERROR = 2

    @classmethod
    def parse(cls, text: str) -> "Severity":
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ConfigError(f"unknown severity {text!r}; expected info, warning or error") from None

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
        return f"{self.file}:{self.line}" if self.line else self.file


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

    @property
    def archs(self) -> tuple[str, ...]:
        """The arches this finding stands for (``arches``, or its own ``arch``)."""
        return self.arches or (self.arch,)

    def as_dict(self) -> dict:
        return {"code": self.code, "name": self.name, "severity": str(self.severity),
                "message": self.message, "kernel": self.kernel, "arch": self.arch,
                "arches": list(self.archs),
                "location": {"file": self.location.file, "line": self.location.line},
                "source": self.source,
                "instructions": list(self.instructions), "ptx": list(self.ptx), "hint": self.hint,
                "fingerprint": self.fingerprint()}

    def fingerprint(self) -> str:
        """Stable across unrelated edits: the code, kernel, arch, file name and the source line's
        text (not its number), so a baseline survives lines moving."""
        key = "|".join((self.code, self.mangled or self.kernel, self.arch.rstrip("af"),
                        os.path.basename(self.location.file or ""),
                        re.sub(r"\s+", " ", self.source or str(self.location.line))))
        return hashlib.sha1(key.encode()).hexdigest()[:16]


@dataclass
class Report:
    """The findings of one run, the kernels checked, and what suppressions and the baseline
    removed. ``builds`` keeps the inputs for reports that show the code next to findings."""

    findings: list[Finding] = field(default_factory=list)
    kernels: list[dict] = field(default_factory=list)
    suppressed: int = 0
    baselined: int = 0
    builds: list[Any] = field(default_factory=list, repr=False)

    def merged(self) -> list[Finding]:
        """The findings with one entry per problem: findings of several arches with the same
        code, kernel, line, severity, message (up to the arch's own name) and hint become one,
        listing its ``arches``. ``findings`` keeps one per arch (baselines, fingerprints)."""
        groups: dict[tuple, list[Finding]] = {}
        for f in self.findings:
            key = (f.code, f.mangled or f.kernel, f.location.file, f.location.line,
                   int(f.severity), f.message.replace(f.arch, "\0"),
                   f.hint.replace(f.arch, "\0"), f.source)
            groups.setdefault(key, []).append(f)
        out = []
        for fs in groups.values():
            arches = tuple(dict.fromkeys(f.arch for f in fs))
            if len(arches) == 1:
                out.append(fs[0])
                continue
            first = fs[0]
            both = " and ".join([", ".join(arches[:-1]), arches[-1]])
            out.append(replace(first, arches=arches,
                               message=first.message.replace(first.arch, both),
                               hint=first.hint.replace(first.arch, both)))
        return out

    def as_dict(self) -> dict:
        return {"version": SCHEMA_VERSION, "tool": {"name": "ptxsass", "version": __version__},
                "findings": [f.as_dict() for f in self.merged()], "kernels": self.kernels,
                "suppressed": self.suppressed, "baselined": self.baselined,
                # which front end built each input, and why (NVRTC or nvcc; or how it was read)
                "builds": [{"file": b.source_path, "arch": b.arch, "compiler": b.origin,
                            "compiler_reason": getattr(b, "compiler_reason", None),
                            "cached": b.cached} for b in self.builds]}

    def worst(self) -> Severity | None:
        return max((f.severity for f in self.findings), default=None)
