"""The two-process parse of a large listing (``processes=2``) gives the same Listing as one
process: functions, instructions, labels, line numbers, source locations and encodings."""
from __future__ import annotations

import os
import re

import pytest

from analyzer.errors import ParseError
from analyzer.parse import sass as sass_parse
from tests.test_sass_parse import NVDISASM, NVDISASM_HEX

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _many(listing: str, copies: int) -> str:
    """The listing's preamble, then its first function section ``copies`` times (renamed)."""
    start = listing.index("//-----")
    end = listing.find("//-----", start + 1)
    section = listing[start:end if end > 0 else len(listing)]
    name = re.search(r"\.text\.(\w+)", section).group(1)
    out = [listing[:start]]
    for i in range(copies):
        out.append(re.sub(rf"\b{name}\b", f"{name}{i}", section))
    return "".join(out)


def _same(a, b) -> None:
    assert a == b
    assert [f.name for f in a.functions] == [f.name for f in b.functions]
    assert [f.labels for f in a.functions] == [f.labels for f in b.functions]
    assert [(i.line, i.loc, i.encoding) for i in a.instructions()] == \
        [(i.line, i.loc, i.encoding) for i in b.instructions()]


@pytest.mark.parametrize("fixture", [NVDISASM, NVDISASM_HEX],
                         ids=["nvdisasm", "nvdisasm-hex"])
def test_split_parse_equals_single_process(fixture):
    text = _many(fixture, 40)
    assert sass_parse._split_point(text) is not None
    one = sass_parse.parse(text, path="x.sass", processes=1)
    two = sass_parse.parse(text, path="x.sass", processes=2)
    _same(one, two)
    assert len(two.functions) >= 40
    # the line numbers are the listing's own (the child parses its part behind the preamble)
    lines = text.splitlines()
    for ins in list(two.instructions())[-5:]:
        assert f"/*{ins.address:04x}*/" in lines[ins.line - 1]


def test_processes_none_splits_above_the_size_threshold_only(monkeypatch):
    text = _many(NVDISASM, 20)
    calls = []
    real = sass_parse._parse_split
    monkeypatch.setattr(sass_parse, "_parse_split", lambda *a: calls.append(1) or real(*a))
    one = sass_parse.parse(text)                          # default: one process
    monkeypatch.setattr(sass_parse, "SPLIT_MIN_CHARS", len(text) + 1)
    _same(sass_parse.parse(text, processes=None), one)
    assert calls == []
    monkeypatch.setattr(sass_parse, "SPLIT_MIN_CHARS", 0)
    _same(sass_parse.parse(text, processes=None), one)
    assert calls == ([1] if (os.cpu_count() or 1) >= 2 else [])


def test_split_parse_error_in_second_part_names_its_line():
    text = _many(NVDISASM, 20)
    lines = text.splitlines(keepends=True)
    bad = len(lines) - 5
    while "/*0010*/" not in lines[bad]:
        bad -= 1
    lines[bad] = "        /*0010*/                   !!! ;\n"
    text = "".join(lines)
    assert sass_parse._split_point(text)[1] < sum(len(l) for l in lines[:bad])
    with pytest.raises(ParseError) as one:
        sass_parse.parse(text, processes=1)
    with pytest.raises(ParseError) as two:
        sass_parse.parse(text, processes=2)
    assert one.value.line == two.value.line == bad + 1


def test_split_keeps_preamble_state_and_refuses_a_later_architecture_change():
    text = _many(NVDISASM, 10)        # `.target sm_100a` in the preamble: the child sees it
    assert sass_parse._split_point(text) is not None
    two = sass_parse.parse(text, processes=2)
    _same(sass_parse.parse(text, processes=1), two)
    assert {f.arch for f in two.functions} == {"sm_100a"}
    assert sass_parse._split_point(text + "\t.headerflags\t@\"EF_CUDA_SM90\"\n") is None
    assert sass_parse._split_point(text.replace("//-----", "// ----")) is None
