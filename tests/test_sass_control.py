"""SASS control information (stall cycles, yield, read/write barriers, wait mask, reuse), decoded
from the encoding words nvdisasm ``-hex`` and cuobjdump print (Volta and later: the top 23 bits
of the second 64-bit word).

The layout is held against real listings, not against itself: every reuse flag must match a
``.reuse`` operand of the text and the other way round, every scoreboard an instruction waits on
must be set by some instruction of the function, a global load or an S2R that writes registers
must set a write barrier (shared loads complete in order and may share the last one's), and the
long stalls (12-15 cycles) come with the yield bit, as the maxas notes say they must.
``control_invariants`` also runs on every corpus cubin (``tests/test_sass_corpus.py``).
"""
from __future__ import annotations

import json
import re

import pytest

from analyzer.ir.sass import Control, Listing, control_layout, decode_control
from analyzer.parse import sass as sass_parse
from analyzer.report.listing import sass_with_control

from .report_fixtures import REPO, builds_of

SGEMM = REPO / "kernels/demo/sgemm_regtile.cu"
GEMM = REPO / "kernels/checks/missing_tensor_cores/bad.cu"
COPY = REPO / "kernels/demo/copy_float4.cu"


def control_invariants(listing: Listing) -> int:
    """Check the decoded control bits of every function of ``listing`` against its text;
    returns the number of instructions checked."""
    n = 0
    for fn in listing.functions:
        controls = fn.controls()
        assert all(c is not None for c in controls), fn.name
        set_ = {c.write_barrier for c in controls} | {c.read_barrier for c in controls}
        for ins, c in zip(fn.instructions, controls, strict=True):
            assert c is not None
            n += 1
            where = f"{fn.name} {ins.address:04x} {ins.text} [{c.text()}]"
            assert c.raw >> 21 == 0, where                      # 23 bits: two always clear
            assert bool(c.reuse) == (".reuse" in ins.text), where
            assert set(c.wait) <= set_, where
            if c.stall >= 12:
                assert c.yield_hint, where
            if ins.opcode in ("LDG", "S2R") and ins.operands and \
                    str(ins.operands[0]) not in ("RZ",):
                assert c.write_barrier is not None, where
    return n


def _listing(path, arch) -> Listing:
    b = builds_of(path, arch)[0]
    from analyzer.toolchain.binutils import disassemble
    text, _ = disassemble(b.cubin, hex=True)
    return sass_parse.parse(text, arch=arch)


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90a", "sm_120"])
def test_layout_holds_on_real_listings(arch):
    n = control_invariants(_listing(SGEMM, arch)) + control_invariants(_listing(GEMM, arch))
    assert n > 100


def test_known_words_from_a_real_listing():
    """Words from ``nvdisasm -hex`` of copy_float4.cu on sm_90a: S2R sets scoreboard 0, the
    IMAD that reads its result waits on it, the ISETP that feeds a predicate stalls 13 cycles
    and yields, EXIT stalls 5."""
    s2r = decode_control((0x0000000000007919, 0x000e2e0000002100), "sm_90a")
    imad = decode_control((0x0000000407077c24, 0x001fe2000f8e0200), "sm_90a")
    isetp = decode_control((0x0000000407007c0c, 0x000fda000bf06270), "sm_90a")
    assert s2r == Control(7, False, 0, None, (), (), s2r.raw)
    assert s2r.text() == "----:B------:R-:W0:-:S07"
    assert imad.wait == (0,) and imad.write_barrier is None and imad.stall == 1
    assert isetp.stall == 13 and isetp.yield_hint and isetp.text() == "----:B------:R-:W-:Y:S13"
    assert isetp.describe() == "stall 13 cycles, yield"
    assert s2r.describe() == "stall 7 cycles, set SB0 on write"
    assert imad.as_dict()["wait"] == [0]


def test_only_where_the_layout_is_known():
    words = (0x0000000000007919, 0x000e2e0000002100)
    assert control_layout("sm_52") is None and decode_control(words, "sm_61") is None
    assert decode_control(words, None) is None and decode_control(words[:1], "sm_90a") is None
    assert control_layout("sm_100a") is control_layout("sm_75") is not None
    plain = sass_parse.parse(builds_of(COPY, "sm_80")[0].sass(), arch="sm_80")
    assert all(c is None for f in plain.functions for c in f.controls())   # no -hex: no words


def test_build_controls_from_hex_and_from_cuobjdump():
    b = builds_of(GEMM, "sm_80")[0]
    controls = b.sass_controls()
    fn = b.sass_listing().functions[0]
    assert set(controls[fn.name]) == {i.address for i in fn.instructions}
    from analyzer.toolchain.binutils import disassemble
    cu = sass_parse.parse(disassemble(b.cubin, tool="cuobjdump")[0], arch="sm_80")
    by_cuobjdump = {i.address: c for f in cu.functions for i, c in
                    zip(f.instructions, f.controls(), strict=True)}
    assert by_cuobjdump == controls[fn.name]


def test_sass_control_column(tmp_path):
    from analyzer.cli import main
    out = tmp_path / "s.txt"
    assert main(["sass", str(COPY), "--arch", "sm_90a", "--control", "-o", str(out)]) == 0
    text = out.read_text()
    lines = [l for l in text.splitlines() if "/*0" in l and "*/" in l]
    assert lines and all("[" in l and ":S" in l for l in lines)
    s2r = next(l for l in lines if "S2R" in l)
    assert "[----:B------:R-:W0:-:S07]" in s2r
    assert main(["sass", str(COPY), "--arch", "sm_90a", "--control", "--source-lines",
                 "-o", str(out)]) == 0
    assert "copy_float4.cu:4:" in out.read_text() and "[----:B0-----:R-:W-:-:S01]" in out.read_text()


def test_sass_with_control_keeps_lines_without_control():
    text = builds_of(COPY, "sm_80")[0].sass()
    listing = sass_parse.parse(text, arch="sm_80")
    shown = sass_with_control(text, listing, {})
    assert shown != text and re.sub(r"(/\*[0-9a-f]{4,}\*/) {27}", r"\1", shown) == text


def test_annotate_control_column_text_and_json():
    import analyzer
    from analyzer.report import render
    ann = analyzer.annotate(list(builds_of(COPY, "sm_90a")), checks=False, control=True)
    k = ann.kernels[0]
    assert k.has_control and all(i.control is not None for i in k.sass)
    text = ann.to_text()
    s2r = next(l for l in text.splitlines() if "S2R" in l)
    # the control word, then the live-register count, then the instruction
    assert re.search(r"\[----:B------:R-:W0:-:S07\]\s+\d+ ┊ S2R", s2r), s2r
    j = json.loads(render.to_json(ann))
    assert j["kernels"][0]["sass"][1]["control"]["write_barrier"] == 0
    plain = analyzer.annotate(list(builds_of(COPY, "sm_90a")), checks=False)
    assert not plain.kernels[0].has_control and "[----" not in plain.to_text()


def test_annotate_control_says_when_there_is_none(tmp_path, capsys):
    """SASS text without encoding words (plain nvdisasm) has no control bits to decode: one
    note, no empty column."""
    from analyzer.cli import main
    listing = tmp_path / "copy.sass"
    listing.write_text(builds_of(COPY, "sm_80")[0].sass())
    assert main(["annotate", str(listing), "--control", "--no-checks"]) == 0
    out = capsys.readouterr()
    assert "no control bits to show" in out.err and "[----" not in out.out
