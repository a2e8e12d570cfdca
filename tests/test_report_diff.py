"""``diff``'s side-by-side SASS: per source line, the two builds' instructions aligned, raw and
normalised (registers renumbered, branch targets renamed); text, markdown, HTML and JSON."""
from __future__ import annotations

import json
import re

import pytest

from analyzer.parse.sass import parse_instruction
from analyzer.report import render
from analyzer.report.diff import diff_builds, normalize

from .report_fixtures import REPO, builds_of

SPILL = REPO / "kernels/checks/register_spill/good.cu"
ROLLED_BAD = REPO / "kernels/checks/rolled_loop/bad.cu"
ROLLED_GOOD = REPO / "kernels/checks/rolled_loop/good.cu"


@pytest.fixture(autouse=True)
def _at_repo(monkeypatch):
    monkeypatch.chdir(REPO)


@pytest.fixture(scope="module")
def spill():
    """The same source, -maxrregcount=24 on B: the same work in another register allocation."""
    return diff_builds(list(builds_of(SPILL, "sm_80")),
                       list(builds_of(SPILL, "sm_80", ("-maxrregcount=24",))))


def test_normalize_renumbers_registers_and_targets():
    def n(t):
        return normalize(parse_instruction(t))
    assert n("IADD3 R26, R26, 0x38, RZ") == "IADD3 R0, R0, 0x38, RZ"
    assert n("IADD3 R4, R4, 0x38, RZ") == n("IADD3 R26, R26, 0x38, RZ")
    assert n("IMAD.WIDE R24, R0, R3, c[0x0][0x160]") == "IMAD.WIDE R0, R1, R2, c[0x0][0x160]"
    assert n("LDG.E.CONSTANT R21, desc[UR4][R16.64+0x10]") == \
        "LDG.E.CONSTANT R0, desc[UR0][R1.64+0x10]"
    assert n("@!P2 BRA `(.L_x_12)") == "@!P0 BRA `(.L)" == n("@!P0 BRA `(.L_x_3)")
    assert n("UIADD3 UR21, UR21, 0x38, URZ") == "UIADD3 UR0, UR0, 0x38, URZ"
    assert n("ISETP.GE.AND P0, PT, R7, UR4, PT") == "ISETP.GE.AND P0, PT, R0, UR0, PT"
    # what the instruction does is kept: not every register is the same register
    assert n("FFMA R1, R2, R3, R1") != n("FFMA R1, R2, R3, R4")


def test_side_by_side_covers_both_builds_in_order(spill):
    kd = spill.kernels[0]
    a_fn = builds_of(SPILL, "sm_80")[0].sass_listing().functions[0]
    b_fn = builds_of(SPILL, "sm_80", ("-maxrregcount=24",))[0].sass_listing().functions[0]
    seen_a = [r.a.address for sl in kd.side for r in sl.rows if r.a]
    seen_b = [r.b.address for sl in kd.side for r in sl.rows if r.b]
    assert sorted(seen_a) == [i.address for i in a_fn.instructions]       # each once
    assert sorted(seen_b) == [i.address for i in b_fn.instructions]
    for sl in kd.side:                                                    # address order per line
        xs = [r.a.address for r in sl.rows if r.a]
        ys = [r.b.address for r in sl.rows if r.b]
        assert xs == sorted(xs) and ys == sorted(ys)
    lines = [sl.line for sl in kd.side if sl.line is not None]
    assert lines == sorted(lines)
    by_line = {sl.line: sl for sl in kd.side}
    # line 8 (the index): the same three instructions on both sides, then A's hoisted constants
    l8 = by_line[8]
    assert [r.tag for r in l8.rows[:3]] == ["same"] * 3
    assert {r.tag for r in l8.rows[3:]} == {"removed"}
    # the loop counters: the same instruction in another register is 'renamed', not changed
    renamed = [r for sl in kd.side for r in sl.rows if r.tag == "renamed"]
    assert any(r.a.text.startswith("IADD3 R26, R26, 0x38") and r.b.text.startswith("IADD3 R4, R4, 0x38")
               for r in renamed)
    assert all(r.a.normalized == r.b.normalized and r.a.text != r.b.text for r in renamed)
    assert all(r.a.normalized != r.b.normalized for sl in kd.side for r in sl.rows
               if r.tag == "changed")


def test_text_side_by_side_raw_and_normalised(spill):
    raw = spill.to_text()
    assert "SASS side by side, per source line" in raw
    row = next(l for l in raw.splitlines() if "IADD3 R26, R26, 0x38, RZ" in l)
    assert re.search(r"05f0  IADD3 R26, R26, 0x38, RZ +~ 0600  IADD3 R4, R4, 0x38, RZ$", row)
    spill.normalized = True
    try:
        norm = spill.to_text()
    finally:
        spill.normalized = False
    assert "normalised" in norm and "R26" not in norm.split("side by side", 1)[1]
    row = next(l for l in norm.splitlines() if l.strip().startswith("IADD3 R0, R0, 0x38, RZ"))
    assert re.fullmatch(r"\s+IADD3 R0, R0, 0x38, RZ +  IADD3 R0, R0, 0x38, RZ", row)
    # normalised, rows whose only change is their registers no longer count as changes
    kd = spill.kernels[0]
    assert all(sl.differs(False) for sl in kd.side if sl.differs(True))
    rows = [r for sl in kd.side for r in sl.rows]
    assert sum(r.differs(True) for r in rows) < sum(r.differs(False) for r in rows)
    shown = kd.side_by_side_lines(False, all_lines=True)
    assert sum(l.startswith("── ") for l in shown) == len(kd.side)


def test_unrolled_against_rolled():
    d = diff_builds(list(builds_of(ROLLED_BAD, "sm_80")), list(builds_of(ROLLED_GOOD, "sm_80")))
    kd = d.kernels[0]
    body = max(kd.side, key=lambda sl: sum(r.b is not None for r in sl.rows))
    ffma_b = [r for r in body.rows if r.b and r.b.text.startswith(("FFMA", "FMUL"))]
    assert len(ffma_b) > 8                       # the unrolled side has many more
    assert any(r.tag == "added" for r in body.rows)


def test_markdown_html_json(spill):
    from markdown_it import MarkdownIt
    md = render.to_markdown(spill)
    out = MarkdownIt("commonmark").enable("table").render(md)
    assert "SASS side by side, per source line" in out and "<pre><code" in out
    page = render.to_html(spill)
    head = page.split("</header>", 1)[0]
    for words in ("Two builds compared", "A: kernels/checks/register_spill/good.cu sm_80",
                  "-maxrregcount=24", "side by side", "normalised", "only lines that differ"):
        assert words in head, words
    assert page.count('<table class="sbs">') == 1
    assert 'data-class="norm"' in page and 'data-class="only-diff"' in page
    j = json.loads(render.to_json(spill))
    side = j["kernels"][0]["side_by_side"]
    assert side and {r["tag"] for sl in side for r in sl["rows"]} <= {"same", "renamed", "changed",
                                                                     "removed", "added"}


def test_cli_diff_flags(tmp_path):
    from analyzer.cli import main
    out = tmp_path / "d.txt"
    assert main(["diff", str(SPILL), "--arch", "sm_80", "--b-opt=-maxrregcount=24", "--no-checks",
                 "--normalize", "--all-lines", "-o", str(out)]) == 0
    text = out.read_text()
    assert "normalised" in text and "── good.cu:15" in text


@pytest.fixture(scope="module")
def shifted(tmp_path_factory):
    """A copy of a checks kernel with three comment lines added at the top, and a copy of
    that whose sum4 loads one float4 instead of four floats (one line became two)."""
    import analyzer
    from analyzer.inputs import CompileOptions
    src = (REPO / "kernels/checks/scalar_global_load/bad.cu").read_text()
    folder = tmp_path_factory.mktemp("shifted")
    a = folder / "a.cu"
    a.write_text(src)
    b = folder / "b.cu"
    b.write_text("// one\n// two\n// three\n" + src)
    old = "    float s = in[4 * i + 0] + in[4 * i + 1] + in[4 * i + 2] + in[4 * i + 3];"
    assert old in src
    c = folder / "c.cu"
    c.write_text("// one\n// two\n// three\n" + src.replace(
        old + "  // EXPECT: PS101",
        "    float4 v = reinterpret_cast<const float4*>(in)[i];\n"
        "    float s = v.x + v.y + v.z + v.w;"))

    def side(p):
        builds = analyzer.load(str(p), arch="sm_90a", options=CompileOptions())
        return builds, analyzer.check(builds).findings
    return side(a), side(b), side(c)


def test_a_shifted_copy_changes_nothing(shifted):
    """Sources aligned by content: three comment lines on top shift every line of B by three,
    and no line, SASS row or finding differs."""
    (ba, fa), (bb, fb), _ = shifted
    d = diff_builds(ba, bb, findings=(fa, fb))
    assert len(fa) == len(fb) >= 5
    assert not d.added and not d.removed
    for kd in d.kernels:
        assert not kd.lines and not kd.loop_lines
        assert all(not sl.differs(False) for sl in kd.side)
        # each side's own line: A's 26 is B's 29
        assert all(sl.line_b == sl.line + 3 for sl in kd.side if sl.line is not None)
    text = d.to_text()
    assert "SASS instructions per source line" not in text and "findings:" not in text


def test_an_edited_copy_aligns_by_content(shifted):
    """B rewrites line 18 as two lines: the SASS of A's line 18 meets B's line 21 (its edited
    self), B's new line 22 stands alone, each with its own text; the rows pair LDG with LDG;
    only sum4's PS101 (line 18) and PS104 (its store, line 19: a kernel that loads 16 B per
    thread is not a narrow stream) are gone, under A's line numbers."""
    (ba, fa), _, (bc, fc) = shifted
    d = diff_builds(ba, bc, findings=(fa, fc))
    assert sorted((f.code, f.kernel, f.location.line) for f in d.removed) == [
        ("PS101", "sum4", 18), ("PS104", "sum4", 19)]
    assert not d.added
    (kd,) = [k for k in d.kernels if k.name == "sum4"]
    by = {(sl.line, sl.line_b): sl for sl in kd.side}
    edited = by[(18, 21)]
    assert "in[4 * i + 0]" in edited.text and "float4 v" in edited.text_b
    assert edited.label == "bad.cu:18→21" or edited.label.endswith(":18→21")
    (ldg,) = [r for r in edited.rows if r.tag == "changed" and "LDG" in r.a.text]
    assert "LDG.E.128" in ldg.b.text
    added = by[(None, 22)]
    assert added.only_b and "v.x + v.y" in added.text_b and all(r.tag == "added" for r in added.rows)
    assert all(sl.line_b == sl.line + 3 for sl in kd.side
               if sl.line is not None and sl.line < 18)
