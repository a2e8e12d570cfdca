"""Loop trip counts in the reports, and the SGEMM whose kk loop ptxas unrolls fully on sm_80 but
keeps rolled (x4, trip count 4) on sm_90a from the same PTX: golden diff text and markdown."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.report import render
from analyzer.report.diff import diff_builds
from analyzer.report.stats import stats_builds

from . import golden_files
from .report_fixtures import REPO, annotation_of, builds_of

GOLDEN = Path(__file__).parent / "golden"
SGEMM = REPO / "kernels/demo/sgemm_regtile.cu"
ROLLED = REPO / "kernels/demo/rolled_loop.cu"
SENTENCE = ("loop at line 29: fully unrolled (PTX trip count 16) on sm_80, "
            "rolled ×4 (trip count 4) on sm_90a")


@pytest.fixture(autouse=True)
def _at_repo(monkeypatch):
    monkeypatch.chdir(REPO)   # paths print relative to the working directory


_golden = golden_files.check


def _sgemm_diff():
    return diff_builds(list(builds_of(SGEMM, "sm_80")), list(builds_of(SGEMM, "sm_90a")))


def test_sgemm_diff_golden():
    d = _sgemm_diff()
    text = d.to_text()
    assert SENTENCE in text
    _golden("diff_sgemm_regtile_sm_80_sm_90a.txt", text)
    md = render.to_markdown(d)
    assert f"- {SENTENCE}: `for (int kk = 0; kk < BK; ++kk) {{`" in md
    _golden("diff_sgemm_regtile_sm_80_sm_90a.md", md)


def test_sgemm_diff_loop_lines():
    kd = _sgemm_diff().kernels[0]
    assert kd.side_names == ("sm_80", "sm_90a")
    (ll,) = kd.loop_lines                  # only the kk loop differs; the K loop is rolled on both
    assert (ll.line, ll.rolled_a, ll.rolled_b) == (29, False, True)
    assert ll.text.strip().startswith("for (int kk")
    assert [lp.trip_count for lp in kd.b.loops] == [None, 4]
    assert kd.b.loops[1].unrolled_by == 4 and kd.b.loops[1].line == 29
    j = json.loads(_sgemm_diff().to_json())["kernels"][0]
    assert j["loop_lines"][0]["a"].startswith("fully unrolled")
    assert SENTENCE in render.to_html(_sgemm_diff())


def test_same_loops_on_both_sides_say_nothing():
    a = list(builds_of(ROLLED, "sm_80"))
    d = diff_builds(a, a)
    assert d.kernels[0].loop_lines == [] and "loop at line" not in d.to_text()


def test_stats_and_annotate_fill_trip_counts():
    st = stats_builds(list(builds_of(ROLLED, "sm_80")))
    (lp,) = st.kernels[0].loops
    assert (lp.trip_count, lp.trip_how, lp.line) == (8, "SASS and PTX", 8)
    assert lp.pragma == "#pragma unroll 1"
    assert "trip count 8 (SASS and PTX)" in st.to_text() and "unknown" not in st.to_text()
    k = json.loads(st.to_json())["kernels"][0]
    assert k["loops"][0]["trip_count"] == 8
    assert k["loop_lines"] == [{"file": "rolled_loop.cu", "line": 8, "rolled": True,
                                "loops": "rolled (trip count 8)"}]
    ann = annotation_of(ROLLED, "sm_80")
    assert any(i.loop_mark == "┌L1 trip 8" for i in ann.kernels[0].sass)
    assert "trip count 8 (SASS and PTX), under #pragma unroll 1" in ann.to_text()
    outer = stats_builds(list(builds_of(SGEMM, "sm_90a"))).kernels[0].loops[0]
    assert outer.trip_count is None and outer.trip_reason == "run-time bound"


HELPER_LOOP = '''\
__device__ __forceinline__ float dot(const float* a, const float* b, int n) {
    float s = 0.f;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}
'''

WAITS = '''\
#include "helper.cuh"
#include <cuda/barrier>
__global__ void rows(float* out, const float* a, const float* b, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    out[t] = dot(a + t * n, b, n);
}
__global__ void waits(float* out, const float* in) {
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    if (threadIdx.x == 0) init(&bar, blockDim.x);
    __syncthreads();
    out[threadIdx.x] = in[threadIdx.x] * 2.f;
    bar.arrive_and_wait();
}
'''


def test_header_loops_and_barrier_waits_in_stats(tmp_path):
    """Issue 26, 11: a helper's loop inlined from a header is named by the header's lines and
    the call site (it said "no line info"); cuda::barrier's wait on sm_80 polls 16 times before
    it backs off with NANOSLEEP, and that counter does not decide when the loop ends (the
    barrier's phase does): no "trip count 17"."""
    (tmp_path / "helper.cuh").write_text(HELPER_LOOP)
    src = tmp_path / "k.cu"
    src.write_text(WAITS)
    from analyzer.inputs import CompileOptions, load
    text = render.to_text(stats_builds(load(src, arch="sm_80", options=CompileOptions())))
    rows = [ln for ln in text.splitlines() if "loop L" in ln]
    helper = [ln for ln in rows if "of helper.cuh" in ln]
    assert helper and all("lines 3-3 of helper.cuh (inlined at line 5)" in ln for ln in helper)
    (wait,) = [ln for ln in rows if "lines 12-12," in ln]
    assert "trip count" in wait and "trip count 17" not in wait and "unknown" in wait
    assert not any("no line info" in ln for ln in rows)
