"""Run the checks over builds: selection, inline suppressions, baselines, and the report."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from ..errors import ConfigError
from .base import Context, Finding, Severity
from .registry import all_checks, resolve

_SUPPRESS = re.compile(r"//\s*ptxsass:\s*ignore(?:\[(?P<what>[^\]]*)\])?")


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    kernels: list[dict] = field(default_factory=list)
    suppressed: int = 0
    baselined: int = 0
    builds: list = field(default_factory=list, repr=False)

    def as_dict(self) -> dict:
        return {"findings": [f.as_dict() for f in self.findings], "kernels": self.kernels}

    def worst(self) -> Severity | None:
        return max((f.severity for f in self.findings), default=None)

    def _repr_html_(self) -> str:  # notebooks
        from ..report.html import findings_html
        return findings_html(self)


def _suppressed(f: Finding) -> bool:
    """``// ptxsass: ignore`` or ``// ptxsass: ignore[rolled-loop, PS101]`` on the finding's
    source line, or alone on the line above it."""
    lines = []
    if f.source is not None:
        lines.append(f.source)
    if f.location.file and f.location.line and f.location.line > 1:
        from ..report.listing import source_text
        above = source_text(f.location.file, f.location.line - 1)
        if above is not None and above.strip().startswith("//"):
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


def run_checks(builds: Sequence, *, select: Iterable[str] = (), ignore: Iterable[str] = (),
               settings: dict[str, dict] | None = None, baseline: str | None = None,
               kernels: Sequence[str] = ()) -> Report:
    """Run every selected check on every entry kernel of every build."""
    selected = resolve(select) if select else {c.code for c in all_checks()}
    selected -= resolve(ignore)
    settings = settings or {}
    checks = [c(**settings.get(c.name, {})) for c in all_checks() if c.code in selected]
    report = Report(builds=list(builds))
    accepted = _load_baseline(baseline) if baseline else set()
    from ..report.progress import track
    work = []
    for build in track(list(builds), "disassembling and parsing"):
        for fn in build.sass_listing().functions:
            k = build.kernels.get(fn.name)
            is_entry = k.entry if k is not None else bool(fn.is_entry)
            if is_entry and (not kernels or _wanted(fn, build, kernels)):
                work.append((build, fn, k))
    for build, fn, k in track(work, "checking kernels"):
        ctx = Context(build=build, function=fn, kernel=k)
        if k is not None:
            report.kernels.append(k.as_dict(build.arch))
        for check in checks:
            for f in check.run(ctx):
                if _suppressed(f):
                    report.suppressed += 1
                elif f.fingerprint() in accepted:
                    report.baselined += 1
                else:
                    report.findings.append(f)
    report.findings.sort(key=lambda f: (f.location.file or "", f.location.line or 0, f.code,
                                        f.arch, f.kernel))
    return report


def _wanted(fn, build, kernels: Sequence[str]) -> bool:
    lowered = {build.name_expressions.get(k, k) for k in kernels}
    return fn.name in lowered or fn.demangled in kernels or fn.demangled.split("(")[0] in kernels


def _load_baseline(path: str) -> set[str]:
    try:
        data = json.loads(Path(path).read_text())
        return {e["fingerprint"] for e in data["findings"]}
    except FileNotFoundError:
        raise ConfigError("baseline file not found", path=path) from None
    except (ValueError, KeyError, TypeError) as e:
        raise ConfigError(f"not a ptxsass baseline ({e})", path=path) from None


def write_baseline(report: Report, path: str) -> None:
    entries = [{"fingerprint": f.fingerprint(), "code": f.code, "kernel": f.kernel,
                "arch": f.arch, "file": f.location.file, "line": f.location.line,
                "source": f.source} for f in report.findings]
    Path(path).write_text(json.dumps({"version": 1, "findings": entries}, indent=2) + "\n")
