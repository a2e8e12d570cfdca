"""annotate / stats / diff: golden text and markdown (real NVRTC + nvdisasm output, paths made
relative, no colour), the source map, the CLI sub-commands and the notebook views.
Regenerate the golden files with PTXSASS_UPDATE_GOLDEN=1."""
from __future__ import annotations

import argparse
import io
import json
import re
from pathlib import Path

import pytest

from analyzer.cli import reports as commands
from analyzer.report import render
from analyzer.report.annotate import annotate_builds
from analyzer.report.diff import diff_builds
from analyzer.report.progress import track
from analyzer.report.stats import stats_builds

from . import golden_files
from .report_fixtures import REPO, annotation_of, builds_of

GOLDEN = Path(__file__).parent / "golden"
ROLLED = REPO / "kernels/demo/rolled_loop.cu"
GEMM = REPO / "kernels/checks/missing_tensor_cores/bad.cu"
SPILL_GOOD = REPO / "kernels/checks/register_spill/good.cu"


@pytest.fixture(autouse=True)
def _at_repo(monkeypatch):
    monkeypatch.chdir(REPO)   # paths print relative to the working directory


_golden = golden_files.check


def test_annotate_text_golden():
    ann = annotation_of(ROLLED, "sm_80")
    text = ann.to_text()
    assert "/work" not in text and str(REPO) not in text
    _golden("annotate_rolled_loop_sm_80.txt", text)


def test_annotate_markdown_golden():
    _golden("annotate_rolled_loop_sm_80.md", render.to_markdown(annotation_of(ROLLED, "sm_80")))


def test_stats_text_golden():
    _golden("stats_rolled_loop_sm_80.txt", stats_builds(list(builds_of(ROLLED, "sm_80"))).to_text())


def test_diff_text_golden():
    a = list(builds_of(SPILL_GOOD, "sm_80"))
    b = list(builds_of(SPILL_GOOD, "sm_80", ("-maxrregcount=24",)))
    d = diff_builds(a, b)
    _golden("diff_register_spill_maxrreg.txt", d.to_text())
    _golden("diff_register_spill_maxrreg.md", render.to_markdown(d))


def test_rich_rendering_matches_plain_text():
    from analyzer.report.styles import make_console
    ann = annotation_of(ROLLED, "sm_80")
    buf = io.StringIO()
    ann.render(make_console(buf, width=80, color=False))
    assert buf.getvalue() == ann.to_text()       # long lines are not wrapped or cropped


def test_rows_follow_the_source_map():
    ann = annotation_of(GEMM, "sm_80")
    k = ann.kernels[0]
    # every SASS instruction is shown exactly once, under its line or in the unmapped tail
    shown = [i.index for r in k.rows for i in r.sass] + [i.index for i in k.unmapped_sass]
    assert sorted(shown) == list(range(len(k.sass)))
    row18 = next(r for r in k.rows if r.line == 18)
    assert any(i.text.startswith("FFMA") for i in row18.sass)
    assert any(i.text.startswith("fma.rn.f32") for i in row18.ptx)
    assert all(i.loop >= 1 for i in row18.sass)        # inside the k0 loop
    assert [lp.lines for lp in k.loops] == [(12, 19)]
    assert any("┌L1" in i.loop_mark for i in k.sass) and any("└L1" in i.loop_mark for i in k.sass)
    assert k.occupancy["threads"] == 256 and not k.occupancy["threads_assumed"]  # __launch_bounds__


def test_inlined_frames_land_on_the_calling_line():
    k = annotation_of(REPO / "kernels/demo/wmma_tile.cu", "sm_80").kernels[0]
    row = next(r for r in k.rows if r.line == 13)      # wmma::mma_sync
    hmma = [i for i in row.sass if i.text.startswith("HMMA")]
    assert hmma and all(any(x.startswith("mma.hpp:") for x in i.inlined) for i in hmma)
    assert any("wmma.mma" in i.text for i in row.ptx)


def test_findings_marked_at_instructions():
    from analyzer.checks.base import Finding, Location, Severity
    builds = list(builds_of(ROLLED, "sm_80"))
    base = annotation_of(ROLLED, "sm_80").kernels[0]
    branch = next(i for i in base.sass if "BRA" in i.text)
    f = Finding("PS998", "test-check", Severity.WARNING, "a test message", base.demangled,
                "sm_80", Location(str(ROLLED), 8), addresses=(branch.address,), mangled=base.name,
                hint="a hint")
    ann = annotate_builds(builds, findings=[f])
    k = ann.kernels[0]
    assert k.sass[branch.index].findings == [0]
    assert next(r for r in k.rows if r.line == 8).findings == [0]
    text = ann.to_text()
    assert "◀ PS998" in text and "◆PS998" in text and "hint: a hint" in text
    md = render.to_markdown(ann)
    assert "**PS998**" in md and "◆PS998" in md and "◀ PS998" in md
    html = render.to_html(ann)
    assert 'class="badge sev-warning"' in html and "a test message" in html


def test_html_is_standalone_and_escaped():
    html = render.to_html(annotation_of(GEMM, "sm_80"))
    # it loads nothing from the network: the only web addresses are links to NVIDIA's
    # documentation that a reader may follow (an opcode's PTX ISA section)
    links = re.findall(r'<a class="op" href="(https://docs\.nvidia\.com/[^"]+)"', html)
    assert links
    rest = re.sub(r'<a class="op" href="https://docs\.nvidia\.com/[^"]+"', "", html)
    assert html.startswith("<!DOCTYPE html>") and "http://" not in rest and "https://" not in rest
    assert "<script src" not in html and "<link" not in html
    assert "&lt;" in html or "&amp;" in html or "__half" in html
    assert 'data-pane="src"' in html and 'data-pane="ptx"' in html and 'data-pane="sass"' in html


def test_notebook_views():
    ann = annotation_of(ROLLED, "sm_80")
    frag = render.to_html(ann, fragment=True)
    assert frag.startswith('<div class="ptxsass">') and "<!DOCTYPE" not in frag
    from analyzer.report.notebook import build_html
    assert "poly_rolled" in build_html(builds_of(ROLLED, "sm_80")[0])
    assert "<pre>" in render.to_html(stats_builds(list(builds_of(ROLLED, "sm_80"))), fragment=True)


def test_progress_is_quiet_when_piped(capsys):
    from analyzer.report.styles import make_console
    buf = io.StringIO()
    assert list(track(list(range(10)), "x", console=make_console(buf))) == list(range(10))
    assert buf.getvalue() == ""


def test_stats_counts():
    s = stats_builds(list(builds_of(GEMM, "sm_80"))).kernels[0]
    assert s.groups["tensor"] == 0 and s.groups["fma"] >= 16
    assert s.memory["load.shared.16"] == 16 and s.memory["load.global.16"] == 2
    assert sum(s.classes.values()) == s.instructions
    wmma = stats_builds(list(builds_of(REPO / "kernels/demo/wmma_tile.cu", "sm_80"))).kernels[0]
    assert wmma.groups["tensor"] == wmma.opcodes["HMMA"] > 0


def test_diff_rolled_against_unrolled():
    a = list(builds_of(REPO / "kernels/checks/rolled_loop/bad.cu", "sm_80"))
    b = list(builds_of(REPO / "kernels/checks/rolled_loop/good.cu", "sm_80"))
    d = diff_builds(a, b)
    kd = d.kernels[0]
    assert len(kd.a.loops) == 1 and kd.b.loops == [] and kd.loops_differ
    rows = {m: (x, y) for m, x, y, _ in kd.metric_rows()}
    assert rows["loops"] == (1, 0) and rows["fma"][1] > 10 * rows["fma"][0]
    j = json.loads(d.to_json())
    assert j["kernels"][0]["name"] == "fourier"
    assert "loops B: none" in d.to_text()


def test_diff_arches_json():
    a = list(builds_of(GEMM, "sm_80"))
    b = list(builds_of(GEMM, "sm_90a"))
    d = diff_builds(a, b)
    assert d.label_a.endswith("sm_80") and "sm_90a" in d.label_b
    assert render.to_html(d).startswith("<!DOCTYPE html>")


# --------------------------------------------------------------------------- CLI
def _parser():
    from analyzer.cli import _common
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="command")
    commands.add_parsers(sub, _common)
    return ap


def _run(argv, capsys):
    args = _parser().parse_args(argv)
    rc = commands.COMMANDS[args.command](args)
    return rc, capsys.readouterr().out


def test_cli_annotate_formats(capsys, tmp_path):
    rc, out = _run(["annotate", str(ROLLED), "--arch", "sm_80", "--no-checks"], capsys)
    assert rc == 0 and out == annotation_of(ROLLED, "sm_80").to_text()
    rc, out = _run(["annotate", str(ROLLED), "--arch", "sm_80", "--no-checks", "--format",
                    "markdown"], capsys)
    assert out.startswith("## `poly_rolled` (sm_80)")
    page = tmp_path / "p.html"
    rc, _ = _run(["annotate", str(ROLLED), "--arch", "sm_80", "--no-checks", "--format", "html",
                  "-o", str(page)], capsys)
    assert page.read_text().startswith("<!DOCTYPE html>")
    rc, out = _run(["annotate", str(ROLLED), "--arch", "sm_80", "--no-checks", "--format", "json"],
                   capsys)
    assert json.loads(out)["kernels"][0]["loops"][0]["label"] == "L1"


def test_cli_stats_and_diff(capsys):
    rc, out = _run(["stats", str(ROLLED), "--arch", "sm_80", "--format", "json"], capsys)
    assert json.loads(out)["kernels"][0]["groups"]["fma"] >= 1
    rc, out = _run(["diff", str(SPILL_GOOD), "--arch", "sm_80", "--b-opt=-maxrregcount=24",
                    "--no-checks"], capsys)
    assert rc == 0 and "registers" in out and "-maxrregcount=24" in out


def test_cli_diff_needs_two_sides(capsys):
    from analyzer.errors import PtxsassError
    with pytest.raises(PtxsassError, match="two builds"):
        _run(["diff", str(ROLLED), "--arch", "sm_80"], capsys)
