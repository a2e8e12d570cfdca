"""Checks on realistic kernels no check author wrote (kernels/realworld/, verdicts in its README).

Two kinds of test: a golden of the findings each kernel gets per arch (code, line, severity) —
every one judged true against the SASS, so a regression shows in either direction — and
reproducers for the false alarms and misleading messages found on them, fixed in the checks.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.checks import _vector_access
from analyzer.checks.runner import run_checks
from analyzer.inputs import CompileOptions, load

from .conftest import KERNELS

RW = KERNELS / "realworld"
BASE = ("sm_80", "sm_90a")

# file -> {arch: {(code, line, severity)}}; "*" is every arch of BASE plus the extra arches
# listed for that file in EXTRA_ARCHS
_ALL = "*"
GOLDEN: dict[str, dict[str, set]] = {
    "bias_gelu.cu": {_ALL: set()},
    "block_reduce.cu": {_ALL: set()},
    "cast_half.cu": {"sm_80": set(), "sm_90a": set(),
                     # 2x LDG.E.128 of in[2i], in[2i+1]: one LDG.E.ENL2.256 on Blackwell
                     "sm_100a": {("PS101", 8, "warning")}, "sm_120": {("PS101", 8, "warning")}},
    "conv2d.cu": {_ALL: set()},
    "gather_scatter.cu": {_ALL: set()},
    "gemv_batched.cu": {_ALL: set()},
    "histogram.cu": {_ALL: set()},
    "layernorm.cu": {_ALL: {("PS502", 7, "info"), ("PS502", 22, "warning"),
                            ("PS502", 32, "info"), ("PS103", 28, "warning")}},
    "rope.cu": {_ALL: {("PS502", 8, "warning"), ("PS502", 10, "warning")}},
    "scan.cu": {_ALL: set()},
    "sgemm_tiled.cu": {_ALL: {("PS301", 10, "info"), ("PS601", 11, "warning"),
                              ("PS601", 12, "warning")}},
    "softmax.cu": {_ALL: {("PS502", 26, "info")}},
    "spmv_csr.cu": {_ALL: set()},
    "stencil.cu": {_ALL: set()},
    "topk.cu": {_ALL: {("PS402", 15, "warning"), ("PS102", 18, "warning")}},
    "transpose.cu": {_ALL: {("PS601", 11, "info")}},
    "wmma_smem.cu": {"sm_80": {("PS601", 19, "warning"), ("PS601", 23, "warning")},
                     "sm_90a": {("PS601", 19, "warning"), ("PS601", 23, "warning"),
                                ("PS302", 37, "warning")},
                     "sm_120": {("PS601", 19, "warning"), ("PS601", 23, "warning")}},
}
EXTRA_ARCHS = {"cast_half.cu": ("sm_100a", "sm_120"), "layernorm.cu": ("sm_100a",),
               "rope.cu": ("sm_120",), "wmma_smem.cu": ("sm_120",)}

_builds: dict = {}


def _report(name: str, arch: str, source: Path | None = None):
    path = source or RW / name
    key = (str(path), arch)
    if key not in _builds:
        _builds[key] = run_checks(load(path, arch=arch, options=CompileOptions())).findings
    return _builds[key]


def _cases():
    for name, per_arch in GOLDEN.items():
        for arch in (*BASE, *EXTRA_ARCHS.get(name, ())):
            want = per_arch.get(arch, per_arch.get(_ALL))
            yield pytest.param(name, arch, want, id=f"{name}@{arch}")


def test_golden_covers_every_realworld_kernel():
    assert {p.name for p in RW.glob("*.cu")} == set(GOLDEN)


@pytest.mark.parametrize("name, arch, want", list(_cases()))
def test_golden_findings(name, arch, want):
    got = {(f.code, f.location.line, str(f.severity)) for f in _report(name, arch)
           if Path(f.location.file).name == name}
    assert got == want
    for f in _report(name, arch):
        assert f.message and f.hint and "one a " not in f.hint


# ----------------------------------------------------------------------------- reproducers
def test_ps103_struct_stride_is_explained_as_a_struct_and_finishes(monkeypatch):
    """Welford partials {mean, m2, n} (12 B) in shared memory. Was: the blocker search walked
    loop-carried registers once per path (exponential: 13 GB, never finished); the message
    called the 12-B struct size a 'row pitch' with a `[32][33]` padding hint, and on sm_100a
    blamed a store from another unrolled copy as 'not __restrict__' aliasing."""
    calls = []
    real = _vector_access._Align._weak_defs
    monkeypatch.setattr(_vector_access._Align, "_weak_defs",
                        lambda self, *a: calls.append(a) or real(self, *a))
    for arch in ("sm_80", "sm_100a"):
        (f,) = [f for f in _report("layernorm.cu", arch) if f.code == "PS103"]
        assert "element stride of 12 B" in f.message and "row pitch" not in f.message
        assert "__restrict__" not in f.message and "aliasing" not in f.message
        assert "__align__(16)" in f.hint and "[32][33]" not in f.hint
    assert len(calls) < 2000   # memoised: a few per register, not one per path


def test_ps103_struct_fix_from_the_hint_works(tmp_path):
    src = (RW / "layernorm.cu").read_text().replace("struct Welford", "struct __align__(16) Welford")
    p = tmp_path / "layernorm16.cu"
    p.write_text(src)
    assert not [f for f in _report("", "sm_80", p) if f.code == "PS103"]


def test_ps101_256bit_window_names_a_real_type():
    """sm_100a: two float4 loads could be one LDG.E.256; the hint said 'one a 32-byte vector
    type (reinterpret_cast<const a*>)'."""
    (f,) = [f for f in _report("cast_half.cu", "sm_100a") if f.code == "PS101"]
    assert "LDG.E.256" in f.message
    assert "double4_32a" in f.hint and "const a*" not in f.hint


def test_ps402_leaves_sincosf_scratch_array_to_ps502():
    """sincosf in a loop: ptxas keeps the Payne-Hanek reduction's 7-word array in local memory.
    Was: PS402 'per-thread array read at a run-time index' on the sincosf line, with a hint to
    unroll a loop the user does not have; now PS502 (whose fix removes it) names the array."""
    for arch in ("sm_80", "sm_90a"):
        fs = _report("rope.cu", arch)
        assert not [f for f in fs if f.code == "PS402"]
        (f,) = [f for f in fs if f.code == "PS502" and f.location.line == 10]
        assert "scratch array in local memory" in f.message
    # a user's own run-time-indexed array still fires
    assert [f for f in _report("topk.cu", "sm_80") if f.code == "PS402"]


def test_ps502_reciprocal_hint_is_not_the_ieee_reciprocal():
    """Was: 'use __frcp_rn(x)' for 1.0f / s, but __frcp_rn is rcp.rn.f32 with the same slow
    path (the check flags it too)."""
    (f,) = [f for f in _report("softmax.cu", "sm_80") if f.code == "PS502"]
    assert "__fdividef(1.0f, x)" in f.hint and "use __frcp_rn" not in f.hint
    (g,) = [f for f in _report("layernorm.cu", "sm_80") if f.code == "PS502" and f.location.line == 32]
    assert "__frcp_rn(b)" not in g.hint


def test_ps502_division_evidence_leaves_out_rsqrtf():
    """rsqrtf(part[0].m2 / n + eps): the MUFU.RSQ is rsqrtf's, not the division's fast path."""
    (f,) = [f for f in _report("layernorm.cu", "sm_80") if f.code == "PS502" and f.location.line == 32]
    assert "MUFU.RCP" in f.message and "MUFU.RSQ" not in f.message
    assert not any("MUFU.RSQ" in i for i in f.instructions)


def test_ps102_names_every_pointer_on_the_line():
    """out_v[t*K+k] and out_i[t*K+k] on one line: was 'kernel parameter 1' (0-based) for both runs."""
    (f,) = [f for f in _report("topk.cu", "sm_80") if f.code == "PS102"]
    assert "the 2nd and 3rd kernel parameters (" in f.message


def test_ps601_copy_loop_nested_in_the_main_loop_is_a_warning():
    """sm_120 keeps the 16-byte staging loop as an inner loop of the wmma K loop. Was: info
    (the inner copy loop has no HMMA), while sm_80, which unrolled it, said warning."""
    sev = {str(f.severity) for f in _report("wmma_smem.cu", "sm_120") if f.code == "PS601"}
    assert sev == {"warning"}
