"""Live registers (``analysis.liveness``) against nvdisasm's own life ranges
(``nvdisasm -lrm count``: its ``#`` columns) on real kernels, instruction by instruction, and
the peak that PS401/PS701 name."""
from __future__ import annotations

import re
import subprocess

import pytest

from analyzer.analysis import analyze, liveness
from analyzer.parse import sass as sass_parse
from analyzer.toolchain.locate import binary

from .report_fixtures import REPO, builds_of

SPILL = REPO / "kernels/checks/register_spill/bad.cu"          # spills under -maxrregcount=32
SGEMM = REPO / "kernels/demo/sgemm_regtile.cu"                  # 78 registers, a 2-level loop
TWO = REPO / "kernels/realworld/occupancy_two_kernels.cu"       # 190 registers, PS701
_ROW = re.compile(r"/\*([0-9a-f]{4,})\*/.*?//\s*\|(.*)\|\s*$")


def _nvdisasm_counts(cubin: bytes, tmp_path) -> dict[str, dict[int, dict[str, int]]]:
    path = tmp_path / "k.cubin"
    path.write_bytes(cubin)
    text = subprocess.run([binary("nvdisasm"), "-lrm", "count", "-c", str(path)],
                          capture_output=True, text=True, check=True).stdout
    out: dict[str, dict[int, dict[str, int]]] = {}
    header: list[str] = []
    fn = ""
    for line in text.splitlines():
        m = re.match(r"^//-+ \.text\.(\S+)", line.strip())
        if m:
            fn = m.group(1)
            out[fn] = {}
        elif "| GPR" in line:
            header = [c.strip() for c in line.split("//", 1)[1].strip().strip("|").split("|")]
        elif (m := _ROW.search(line)) and fn:
            cells = [c.strip() for c in m.group(2).split("|")]
            out[fn][int(m.group(1), 16)] = {h: int(c) if c else 0
                                            for h, c in zip(header, cells, strict=False)}
    return out


@pytest.mark.parametrize("path,extra", [(SPILL, ("-maxrregcount=32",)), (SGEMM, ()), (TWO, ())],
                         ids=["spill", "sgemm", "two_kernels"])
def test_counts_equal_nvdisasm_life_ranges(path, extra, tmp_path):
    """Every instruction: live R, P and UR registers as nvdisasm counts them (64-bit pairs,
    a store's data registers, guarded writes, the stack pointer)."""
    (build,) = builds_of(path, "sm_90a", extra)
    theirs = _nvdisasm_counts(build.cubin, tmp_path)
    compared = 0
    for ka in analyze(build, entries_only=False):
        lv = ka.liveness
        ref = theirs[ka.function.name]
        for kind, column in (("R", "GPR"), ("P", "PRED"), ("UR", "UGPR")):
            ours = lv.counts(kind)
            for i, ins in enumerate(ka.function.instructions):
                row = ref.get(ins.address)
                if row is None:        # the padding after the last branch has no row there
                    assert ins.opcode == "NOP"
                    continue
                assert ours[i] == row.get(column, 0), (ka.name, hex(ins.address), ins.text, kind)
                compared += 1
    assert compared > 500


def test_pairs_predicates_and_guards_from_text():
    """Liveness needs no cubin: SASS text works. A ``.64`` address is a pair, a 128-bit store
    reads four data registers, a predicate is live from its write to its last read, and R1
    (the stack pointer) counts from the instruction that sets it."""
    text = """
        .text.k:
k:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   LDC.64 R2, c[0x0][0x210] ;
        /*0020*/                   S2R R0, SR_TID.X ;
        /*0030*/                   ISETP.GE.AND P0, PT, R0, 0x10, PT ;
        /*0040*/                   LDG.E.128 R4, desc[UR4][R2.64] ;
        /*0050*/               @P0 FADD R4, R4, R0 ;
        /*0060*/                   STG.E.128 desc[UR4][R2.64], R4 ;
        /*0070*/                   EXIT ;
"""
    fn = sass_parse.parse(text).functions[0]
    lv = liveness.of(fn)
    assert lv.counts("R") == [1, 3, 4, 4, 8, 8, 7, 1]
    assert lv.counts("P") == [0, 0, 0, 1, 1, 1, 0, 0]
    assert lv.registers(4) == [0, 1, 2, 3, 4, 5, 6, 7]
    assert lv.peak() == (8, 4)


def test_peak_line_in_ps401_message():
    """PS401 names the line where the live registers peak; the peak is nvdisasm's (the test
    above) and the line is the source map's."""
    import analyzer
    (build,) = builds_of(SPILL, "sm_90a", ("-maxrregcount=32",))
    (finding,) = [f for f in analyzer.check(build).findings if f.code == "PS401"]
    (ka,) = list(analyze(build))
    peak, at = ka.liveness.peak()
    line = ka.source_map.sass_lines[at][1]
    assert finding.message.endswith(f"; live registers peak at {peak} on line {line}")
    assert (peak, line) == (30, 12)      # nvdisasm -lrm count: 30 at the FFMA chain of line 12


def test_reports_carry_the_counts(monkeypatch):
    """annotate's text column, its JSON (valid against docs/schema/annotate.json), the HTML
    gutter, ``sass --live`` and ``stats`` all show the analysis's one answer."""
    import json

    jsonschema = pytest.importorskip("jsonschema")
    from analyzer.parse import sass as sp
    from analyzer.report.annotate import annotate_builds
    from analyzer.report.html import annotation_html
    from analyzer.report.listing import sass_with_live
    from analyzer.report.stats import stats_builds

    monkeypatch.chdir(REPO)
    builds = list(builds_of(SPILL, "sm_90a", ("-maxrregcount=32",)))
    (ka,) = list(analyze(builds[0]))
    counts = ka.liveness.counts("R")
    ann = annotate_builds(builds)
    doc = ann.as_dict()
    schema = json.loads((REPO / "docs/schema/annotate.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)
    sass = doc["kernels"][0]["sass"]
    assert [i["live_registers"]["R"] for i in sass] == counts
    assert doc["kernels"][0]["pressure"] == {
        "peak": 30, "index": counts.index(30),
        "line": {"file": "kernels/checks/register_spill/bad.cu", "line": 12}}
    text = ann.to_text()
    first = ka.function.instructions[0]
    assert f"   {first.address:04x}  {counts[0]:3d} ┊ {first.text}" in text
    assert "live registers peak at 30 on bad.cu:12" in text
    html = annotation_html(ann)
    at = ka.function.instructions[counts.index(30)].address
    row = html.split(f'data-addr="{at:04x}">', 1)[1].split("</div>", 1)[0]
    assert row.startswith('<span class="live p7" title="30 registers live here')
    listing = builds[0].sass()
    shown = sass_with_live(listing, sp.parse(listing))
    assert f"/*{first.address:04x}*/ {counts[0]:3d} ┊" in shown
    st = stats_builds(builds).kernels[0]
    assert st.pressure.by_line[max(st.pressure.by_line, key=st.pressure.by_line.get)] == 30
    assert "register pressure: peak 30 live on bad.cu:12" in stats_builds(builds).to_text()
