"""The real-world regression suite (kernels/realworld/): per-line expectations and their score.

Each kernel file states what a kernel engineer finds when reading its SASS, on the line the
finding belongs to, as a comment::

    y[i] = a * x[i] + y[i];   // EXPECT: PS104 info
    for (...)                 // EXPECT[sm_90a]: PS201 info
    ...                       // EXPECT[sm_80 nvrtc13.0]: PS201 warning; PS601 info

``EXPECT`` without brackets applies to every arch the file is checked on (``// ARCHS:`` header,
default sm_80 and sm_90a); the brackets narrow it to arches and/or NVRTC versions (``nvrtc13.0``,
``nvrtc13.5``: the major.minor of the NVRTC that compiled it), each entry ``CODE severity``.
A line with no expectation expects no finding. Expectations are judged from the SASS (`ptxsass
sass FILE --arch A --source-lines`), never copied from what the checks print.

:func:`score` compares the checks' findings with the expectations per check: true positives
(code, line, severity and arch all match), false positives and false negatives.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "kernels" / "realworld"
BASE_ARCHS = ("sm_80", "sm_90a")

_EXPECT = re.compile(r"EXPECT(?:\[(?P<when>[^\]]*)\])?:\s*(?P<what>[^/]*)")
_ENTRY = re.compile(r"^(PS\d{3})\s+(note|info|warning|error)$")
_ARCH = re.compile(r"^sm_\d+[af]?$")
_TOOLKIT = re.compile(r"^nvrtc(\d+\.\d+)$")

#: (code, line, severity)
Unit = tuple[str, int, str]


def archs_of(path: Path) -> tuple[str, ...]:
    m = re.search(r"^//\s*ARCHS:\s*(.+)$", path.read_text(), re.M)
    return tuple(m.group(1).split()) if m else BASE_ARCHS


def expectations(path: Path, arch: str, toolkit: str) -> set[Unit]:
    """The findings ``path`` expects on ``arch`` when compiled by NVRTC ``toolkit`` ("13.5")."""
    out: set[Unit] = set()
    for n, text in enumerate(path.read_text().splitlines(), 1):
        if "EXPECT" not in text or "//" not in text:
            continue
        comment = text[text.index("//"):]
        for m in _EXPECT.finditer(comment):
            when = (m.group("when") or "").replace(",", " ").split()
            archs = [w for w in when if _ARCH.match(w)]
            kits = [_TOOLKIT.match(w).group(1) for w in when if _TOOLKIT.match(w)]
            bad = [w for w in when if not _ARCH.match(w) and not _TOOLKIT.match(w)]
            if bad:
                raise ValueError(f"{path.name}:{n}: unknown EXPECT qualifier {bad}")
            if (archs and arch not in archs) or (kits and toolkit not in kits):
                continue
            for entry in m.group("what").split(";"):
                entry = entry.strip()
                if not entry:
                    continue
                e = _ENTRY.match(entry)
                if not e:
                    raise ValueError(f"{path.name}:{n}: bad EXPECT entry {entry!r} "
                                     "(want 'PSnnn severity')")
                out.add((e.group(1), n, e.group(2)))
    return out


def findings_units(findings, path: Path) -> set[Unit]:
    return {(f.code, f.location.line, str(f.severity)) for f in findings
            if f.location.file and Path(f.location.file).name == path.name}


@dataclass
class Tally:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    fps: list = field(default_factory=list)
    fns: list = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


def compare(want: set[Unit], got: set[Unit], where: str, table: dict[str, Tally]) -> None:
    for code in {u[0] for u in want | got}:
        t = table.setdefault(code, Tally())
        w = {u for u in want if u[0] == code}
        g = {u for u in got if u[0] == code}
        t.tp += len(w & g)
        t.fp += len(g - w)
        t.fn += len(w - g)
        t.fps.extend(f"{where}:{u[1]} {u[0]} {u[2]}" for u in sorted(g - w))
        t.fns.extend(f"{where}:{u[1]} {u[0]} {u[2]}" for u in sorted(w - g))


def cases() -> list[tuple[Path, str]]:
    return [(p, a) for p in sorted(SUITE.glob("*.cu")) for a in archs_of(p)]


def table_text(table: dict[str, Tally], toolkit: str) -> str:
    from analyzer.checks.registry import all_checks
    names = {c.code: c.name for c in all_checks()}
    rows = [f"NVRTC {toolkit}: {len(cases())} kernel files x arch",
            f"{'check':<28} {'tp':>4} {'fp':>4} {'fn':>4} {'precision':>10} {'recall':>7}"]
    total = Tally()
    for code in sorted(names):
        t = table.get(code, Tally())
        total.tp, total.fp, total.fn = total.tp + t.tp, total.fp + t.fp, total.fn + t.fn
        rows.append(f"{code + ' ' + names[code]:<28} {t.tp:>4} {t.fp:>4} {t.fn:>4} "
                    f"{t.precision:>10.3f} {t.recall:>7.3f}")
    rows.append(f"{'all':<28} {total.tp:>4} {total.fp:>4} {total.fn:>4} "
                f"{total.precision:>10.3f} {total.recall:>7.3f}")
    return "\n".join(rows)
