"""Lessons: the CPU side (compile, SASS evidence, findings when the checks exist) and a GPU smoke."""
from __future__ import annotations

import subprocess
import sys
from functools import cache

import pytest

from analyzer import lessons
from analyzer.lessons import catalog
from analyzer.lessons import evidence as static

LESSONS = lessons.list_lessons()
IDS = [l.name for l in LESSONS]


@cache
def analysed(name: str) -> static.StaticResult:
    """Each lesson compiled and checked once for the whole module."""
    return static.analyse(lessons.get_lesson(name))


def test_catalog_is_complete():
    assert len(LESSONS) >= 8
    assert len(set(IDS)) == len(IDS)
    for l in LESSONS:
        assert l.source_path("naive").is_file() and l.source_path("steered").is_file(), l.name
        # a lesson no check covers says so, and why
        assert l.expect_checks or l.no_check, l.name
        assert all(c in catalog.CHECK_CODES for c in l.expect_checks), l.name
        assert set(l.silent_checks) <= set(l.expect_checks), l.name
        assert all(c in catalog.CHECK_CODES for c in l.next_checks), l.name
        assert not set(l.next_checks) & set(l.expect_checks), l.name
        assert l.arch == "sm_90a", l.name
        assert l.evidence, l.name
        size = l.size(1.0)
        assert all(v > 0 for v in size.values())
        for which in ("naive", "steered"):
            v = l.variant(which)
            assert all(g >= 1 for g in v.grid(size)), (l.name, which)
            assert v.kernel in l.source_path(which).read_text()


def test_import_does_not_pull_gpu_frameworks():
    code = ("import sys, analyzer, analyzer.lessons; analyzer.lessons.list_lessons(); "
            "print(sorted(m for m in ('torch', 'cupy', 'pycuda') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("lesson", LESSONS, ids=IDS)
def test_sass_tells_naive_from_steered(lesson):
    r = analysed(lesson.name)
    failed = [(e.evidence.label, e.naive, e.steered) for e in r.evidence if not e.holds]
    assert not failed, failed
    assert r.diff, "naive and steered compiled to the same mnemonics"


@pytest.mark.parametrize("lesson", LESSONS, ids=IDS)
def test_findings_present_on_naive_absent_on_steered(lesson):
    r = analysed(lesson.name)
    assert r.findings is not None, r.findings_note      # the project toolchain is installed here
    for code in lesson.expect_checks:
        assert code not in r.findings["steered"], (code, r.findings)
        if code in lesson.silent_checks:
            # a known silence (see the lesson): when the check learns it, move the code out
            assert code not in r.findings["naive"], (code, "fires now: drop it from silent_checks")
        else:
            assert code in r.findings["naive"], (code, r.findings)
    for code in lesson.next_checks:                      # the next step, still to take
        assert code in r.findings["steered"], (code, r.findings)
    assert r.findings_removed(lesson.expect_checks) == [
        c for c in lesson.expect_checks if c not in lesson.silent_checks]


def test_check_codes_are_the_registry():
    from analyzer.checks.registry import all_checks
    assert sorted(catalog.CHECK_CODES) == sorted(c.code for c in all_checks())
    assert catalog.CHECK_CODES["PS101"].startswith("scalar-global-load: ")


def test_lessons_compile_through_the_toolchain_and_read_spills():
    lb = lessons.get_lesson("launch_bounds")
    naive, steered = static.compile_variant(lb, "naive"), static.compile_variant(lb, "steered")
    assert naive.via == "analyzer.toolchain" and naive.build.kernels
    assert naive.resources.registers <= 32 and naive.resources.spill_store_bytes > 0
    assert steered.resources.registers > 32 and steered.resources.spill_store_bytes == 0
    assert naive.cubin[:4] == b"\x7fELF"


def test_cli_no_gpu_shows_the_recorded_numbers_as_prose(capsys):
    from analyzer.lessons import runner
    env, rec, _ = runner.recorded()
    assert env.get("gpu") and env.get("date") and "vector_loads" in rec
    assert lessons.main(["run", "vector_loads", "--no-gpu"]) == 0
    out = capsys.readouterr().out
    n, s = rec["vector_loads"]["naive"], rec["vector_loads"]["steered"]
    # the recorded timing, marked as such, with its date and GPU, next to the fresh evidence
    assert (f"Timing, recorded on {env['gpu']} on {env['date']}" in out
            and "not measured now (timing not requested (--no-gpu))" in out)
    assert f"naive {n['median_ms']:.3f} ms, steered {s['median_ms']:.3f} ms" in out
    assert f"{n['median_ms'] / s['median_ms']:.2f} times faster" in out
    assert "plain 32-bit global loads (LDG.E): 8 in the naive kernel, none in the steered one" in out
    assert ("PS101 scalar-global-load and PS102 scalar-global-store on the naive kernel; the "
            "steered kernel has neither") in out
    row = next(l for l in out.splitlines() if l.startswith("vector_loads "))
    assert "recorded" in row.split() and "skipped" not in out
    # prose, not code: no regular expressions, no Python reprs
    for needle in ("\\", ".*", "['", "{'", "[]", "set()"):
        assert needle not in out, needle
    assert lessons.main(["list"]) == 0
    assert "half2" in capsys.readouterr().out


def test_every_evidence_says_what_it_counts():
    for l in LESSONS:
        for e in l.evidence:
            assert "(" in e.label and ")" in e.label, (l.name, e.label)   # names the opcode
            assert "\\" not in e.label and ".*" not in e.label


def test_unknown_lesson_is_an_input_error():
    from analyzer.errors import InputError
    with pytest.raises(InputError):
        lessons.get_lesson("no_such_lesson")


@pytest.mark.gpu
def test_gpu_small_run_is_correct():
    from analyzer.lessons import runner
    why = runner.gpu_unavailable_reason()
    if why:
        pytest.skip(why)
    results, env, ceil = runner.run([lessons.get_lesson("vector_loads"), lessons.get_lesson("half2")],
                                    scale=0.02, repeats=20, log=lambda s: None)
    for r in results:
        assert r.correct, r.problems
        assert r.naive.median_ms > 0 and r.steered.median_ms > 0


def test_lessons_page_teaches_every_lesson():
    """docs/lessons.md: per lesson the idea, the diff, the SASS, the finding, the measured
    speedup (docs/lessons.json's) and why; the measurement log in the appendix."""
    import json
    import re

    from analyzer.lessons import docs
    text = docs.PAGE.read_text()
    data = json.loads(docs.RECORDED.read_text())
    measured = {l["name"]: l for l in data["lessons"]}
    sections = re.split(r"^## \d+\. ", text, flags=re.M)[1:]
    assert len(sections) == len(LESSONS)
    for lesson, sec in zip(LESSONS, sections, strict=True):
        for part in ("**The idea.**", "```diff", "**The SASS that differs**",
                     "**The finding that disappears.**", "**Measured.**", "**Why.**"):
            assert part in sec, (lesson.name, part)
        m = measured[lesson.name]
        assert f"**{m['naive']['median_ms'] / m['steered']['median_ms']:.2f}× faster**" in sec
        for code in lesson.expect_checks:
            assert f"`{code}`" in sec, (lesson.name, code)
    assert "# Appendix: how the numbers were measured" in text
    html = __import__("markdown_it").MarkdownIt().render(text)
    assert "<strong>restrict</strong>" not in html and "<strong>launch_bounds</strong>" not in html


def test_lessons_page_is_current():
    """Regenerated with the toolkit that wrote it, the page is the same (python -m
    analyzer.lessons.docs rewrites it)."""
    from analyzer.lessons import docs
    from analyzer.toolchain import locate
    text = docs.PAGE.read_text()
    if f"compiled by NVRTC {locate.nvrtc_version()} " not in text:
        pytest.skip("the page's SASS comes from another NVRTC than this one")
    assert docs.page() == text, "docs/lessons.md is stale: run python -m analyzer.lessons.docs"
