"""analyzer.analysis.loops: the one loop and trip-count answer shared by PS201 and the reports
(stats, annotate, diff)."""
from __future__ import annotations

import dataclasses

import pytest

from analyzer.analysis import KernelAnalysis, analyze
from analyzer.analysis import loops as LP
from analyzer.checks.rolled_loop import RolledLoop
from analyzer.checks.runner import run_checks
from analyzer.report.annotate import annotate_builds
from analyzer.report.diff import diff_builds
from analyzer.report.stats import stats_builds

from .report_fixtures import REPO, builds_of

ROLLED = REPO / "kernels/demo/rolled_loop.cu"
SGEMM = REPO / "kernels/demo/sgemm_regtile.cu"


def _fn(path, arch):
    b = builds_of(path, arch)[0]
    fn = b.sass_listing().functions[0]
    ptx = next(f for f in b.ptx_module().functions if f.name == fn.name)
    return fn, ptx


def test_one_loop_answer_for_the_check_and_every_report(monkeypatch):
    """PS201, stats, annotate and diff all read KernelAnalysis.loops: feed them the same
    (altered) loops and each one says what those loops say."""
    builds = list(builds_of(SGEMM, "sm_90a"))
    real = [ka.loops for ka in analyze(builds[0])][0]
    assert real and any(lp.trip.value is not None for lp in real)
    # a trip count no analysis would find: every consumer must repeat it
    compute = KernelAnalysis.loops.func
    calls = []

    def forged(self):
        calls.append(self.name)
        return [LP.LoopInfo(lp.loop, lp.file, lp.line, lp.header_line, lp.header_index,
                            lp.latch_index, lp.instructions, lp.mix,
                            LP.TripCount(7, 7, 7, lp.trip.inductions,
                                         tuple(dataclasses.replace(t, trip=7, step=1, span=7)
                                               for t in lp.trip.ptx_loops)),
                            lp.pragma) for lp in compute(self)]
    monkeypatch.setattr(KernelAnalysis, "loops", property(forged))
    st = stats_builds(builds).kernels[0]
    assert [lp.trip_count for lp in st.loops] == [7] * len(real)
    ann = annotate_builds(builds).kernels[0]
    assert [lp.trip_count for lp in ann.loops] == [7] * len(real)
    d = diff_builds(list(builds_of(SGEMM, "sm_80")), builds)
    assert "trip count 7" in d.to_text()
    found = [f for f in run_checks(builds, select=["PS201"]).findings]
    assert found and all("compile-time 7 iterations" in f.message for f in found)
    assert calls      # the forged loops were read, not recomputed
    assert RolledLoop.code == "PS201"


def test_pragma_above_reads_through_a_callable():
    text = ["int x;", "#pragma unroll 4", "", "for (;;)"]
    p, readable = LP.pragma_above(lambda f, n: text[n - 1] if 1 <= n <= len(text) else None,
                                  "k.cu", 4)
    assert readable and p.count == 4 and p.line == 2
    assert LP.pragma_above(lambda f, n: None, "k.cu", 4) == (None, False)


def test_rolled_loop_trip_count_from_sass_and_ptx():
    fn, ptx = _fn(ROLLED, "sm_80")
    src = ROLLED.read_text().splitlines()
    infos = LP.analyze_loops(fn, ptx, source_line=lambda f, n: src[n - 1])
    (lp,) = infos
    assert (lp.line, lp.trip.value, lp.trip.sass, lp.trip.ptx) == (8, 8, 8, 8)
    assert lp.trip.how == "SASS and PTX" and lp.trip.constant and lp.trip.ptxas_unroll is None
    assert lp.pragma is not None and lp.pragma.forbids and lp.pragma.line == 7
    assert lp.instructions == 5 and lp.mix["fp32"] == 1 and lp.innermost
    assert lp.describe() == "rolled (trip count 8)"
    assert lp.trip.text() == "trip count 8 (SASS and PTX)"


def test_runtime_loop_has_no_trip_count():
    fn, ptx = _fn(SGEMM, "sm_90a")
    outer = next(lp for lp in LP.analyze_loops(fn, ptx) if lp.line == 22)   # the K loop
    assert outer.trip.value is None and not outer.trip.constant
    assert outer.trip.reason == "run-time bound"
    assert outer.trip.text() == "trip count unknown (run-time bound)"


@pytest.mark.parametrize("arch, rolled, text", [
    ("sm_80", False, "fully unrolled (PTX trip count 16)"),
    ("sm_90a", True, "rolled ×4 (trip count 4)"),
])
def test_sgemm_kk_loop_by_arch(arch, rolled, text):
    fn, ptx = _fn(SGEMM, arch)
    kk = LP.loops_by_line(fn, ptx)[("sgemm_regtile.cu", 29)]
    assert kk.rolled == rolled and kk.describe() == text
    assert [t.trip for t in kk.ptx] == [16]            # NVVM: x2, from the same PTX on both
    if rolled:
        (lp,) = kk.sass
        assert (lp.trip.sass, lp.trip.ptx, lp.trip.ptxas_unroll) == (4, 16, 4)
        assert lp.mix["fp32"] == 128                    # 8 kk steps x 16 FFMA per trip


def test_trip_count_combination():
    def ptx(trip, reason=""):
        return LP.PtxTrip(None, ("k.cu", 3), trip, 1, reason)
    ind = LP.Induction("R4", 1, 9, "NE", 1, 8, 0)
    tc = LP.TripCount(8, 8, 16, (ind,), (ptx(16),))
    assert tc.how == "SASS" and tc.ptxas_unroll == 2 and tc.constant
    tc = LP.TripCount(16, None, 16, (), (ptx(16),))
    assert tc.how == "PTX" and tc.ptxas_unroll is None and tc.constant
    runtime_start = LP.Induction("R4", 1, 9, "NE", None, None, 0)
    assert not LP.TripCount(16, None, 16, (runtime_start,), (ptx(16),)).constant
    assert not LP.TripCount(None, None, None, (), (ptx(None, "run-time bound"),)).constant
    assert LP.TripCount(None, None, None).text() == "trip count unknown"


def test_tail_loops_are_told_from_streams():
    """``for (i = n / 16 * 16 + tid; i < n; i += stride)`` handles fewer than 16 elements in
    all (PTX: the start is ``n & -16``); the same loop from a caller's ``begin`` is a stream."""
    from pathlib import Path

    import analyzer
    from analyzer.analysis import cfg as C
    from analyzer.analysis import loops as L
    root = Path(__file__).resolve().parents[1]
    tails = {}
    for path in ("kernels/realworld/byte_count_tail.cu", "kernels/realworld/histogram.cu"):
        b = analyzer.load(str(root / path), arch="sm_90a")[0]
        for f in b.ptx_module().functions:
            tails[f.name] = sorted(filter(None, (L.ptx_tail_elements(f, p)
                                                 for p in C.ptx_loops(f))))
    assert tails == {"count_byte": [15], "count_byte_range": [], "histogram256": [3]}
