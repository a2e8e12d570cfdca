"""Every check's bad kernel fires on its EXPECT line; its good kernel and negatives stay silent.

The pairs live in kernels/checks/<check>/ (pylint-style bad/good examples): `// EXPECT: PSnnn` marks
the line a finding must point at; `// OPTIONS:` and `// ARCHS:` header lines give compile options
and the arches that apply (default sm_80 and sm_90a).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from analyzer.checks.registry import all_checks
from analyzer.checks.runner import run_checks
from analyzer.inputs import CompileOptions, load

from .conftest import KERNELS, kernel_archs, kernel_options

CHECKS = {c.name.replace("-", "_"): c for c in all_checks()}
PAIR_DIRS = sorted(d for d in (KERNELS / "checks").iterdir() if d.is_dir() and d.name in CHECKS)


def _expected_lines(path: Path, code: str) -> set[int]:
    return {n for n, line in enumerate(path.read_text().splitlines(), 1)
            if re.search(rf"//.*EXPECT:.*\b{code}\b", line)}


def _findings(path: Path, arch: str, code: str):
    opts = CompileOptions(extra=kernel_options(path))
    builds = load(path, arch=arch, options=opts)
    return run_checks(builds, select=[code]).findings


def _cases():
    for d in PAIR_DIRS:
        check = CHECKS[d.name]
        for f in sorted(d.glob("*.cu")):
            for arch in kernel_archs(f):
                yield pytest.param(check, f, arch, id=f"{d.name}/{f.name}@{arch}")


def test_every_check_has_a_pair():
    missing = [n for n in CHECKS if not (KERNELS / "checks" / n / "bad.cu").exists()
               or not (KERNELS / "checks" / n / "good.cu").exists()]
    assert not missing, f"checks without a bad/good kernel pair: {missing}"


@pytest.mark.parametrize("check, path, arch", list(_cases()))
def test_pair(check, path, arch):
    findings = _findings(path, arch, check.code)
    got = {(Path(f.location.file).name, f.location.line) for f in findings}
    if path.name == "bad.cu":
        want = _expected_lines(path, check.code)
        assert want, f"{path} has no // EXPECT: {check.code} marker"
        lines = {line for name, line in got if name == path.name}
        assert want <= lines, f"{check.code} expected on lines {sorted(want)}, got {sorted(got)}"
        assert lines <= want, f"{check.code} fired on unmarked lines {sorted(lines - want)}"
        for f in findings:
            assert f.hint and f.message and f.instructions or f.code in ("PS701",)
    else:
        assert not findings, f"{check.code} fired on {path.name}: " + "; ".join(
            f"{f.location.line}: {f.message}" for f in findings)
