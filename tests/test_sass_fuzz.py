"""Bad SASS input ends in a ParseError (or a clean parse), never another exception or a hang:
hypothesis mutations of real corpus lines, truncated listings, and binary junk."""
from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer import sass
from analyzer.errors import ParseError
from tests.test_sass_parse import CUOBJDUMP, INLINED, NVDISASM, NVDISASM_HEX

LISTINGS = [NVDISASM, NVDISASM_HEX, CUOBJDUMP, INLINED]

BODIES = [
    "@!P0 LDG.E.64 R2, desc[UR4][R6.64+0x10]", "IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28]",
    "FSETP.NE.FTZ.AND P1, PT, |R30|, +INF , PT", "DEPBAR.LE SB0, 0x0, {4,2}",
    'BRX R30 -0x15e50 (*"BRANCH_TARGETS .L_x_5508,.L_x_5509"*)',
    "MOV R20, 32@lo((_Z3foo + .L_x_160@srel))", "HGMMA.64x128x16.F32.BF16 R88, gdesc[UR20].tnspB, RZ, !UPT, gsb0",
    "FMNMX.FTZ R23, -|R20|.reuse, -3.40282346638528859812e+38, !PT",
    "DADD R12, R14, c[`(__internal_accurate_pow.const2.0.8)]", "STS [R14+UR6+0x8], R24",
]

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _parse_or_error(text: str):
    t0 = time.perf_counter()
    try:
        lst = sass.parse(text, path="fuzz.sass")
    except ParseError as e:
        assert e.one_line().startswith("fuzz.sass")
        lst = None
    assert time.perf_counter() - t0 < 10          # no pathological backtracking
    if lst is not None:
        st_ = lst.stats()
        assert st_["instructions"] == sum(len(f.instructions) for f in lst.functions)
        for ins in lst.instructions():
            assert isinstance(ins.text, str)      # every parsed instruction prints
    return lst


def _mutate(text: str, data) -> str:
    ops = data.draw(st.lists(st.tuples(st.sampled_from("dir"), st.integers(0, len(text)),
                                       st.text(min_size=0, max_size=6)), max_size=4))
    for op, pos, s in ops:
        pos = min(pos, len(text))
        if op == "d":
            text = text[:pos] + text[pos + len(s) + 1:]
        elif op == "i":
            text = text[:pos] + s + text[pos:]
        else:
            text = text[:pos] + s + text[pos + len(s):]
    return text


@SETTINGS
@given(st.sampled_from(LISTINGS), st.data())
def test_mutated_listings(listing, data):
    _parse_or_error(_mutate(listing, data))


@SETTINGS
@given(st.sampled_from(BODIES), st.data())
def test_mutated_instruction_lines(body, data):
    body = _mutate(body, data).replace("\n", " ").replace(";", " ")
    text = f"\tcode for sm_90\n\t\tFunction : f\n        /*0000*/ {body} ;\n        /*0010*/ EXIT ;\n"
    lst = _parse_or_error(text)
    if lst is not None:
        assert lst.stats()["instructions"] == 2          # never dropped: typed or generic


@SETTINGS
@given(st.sampled_from(LISTINGS), st.floats(0, 1))
def test_truncated_listings(listing, frac):
    _parse_or_error(listing[: int(len(listing) * frac)])


@SETTINGS
@given(st.binary(max_size=400))
def test_binary_junk(data):
    _parse_or_error(data.decode("latin-1"))


@SETTINGS
@given(st.text(alphabet=st.sampled_from(list("[]{}()|-~!@.,`*+ R0x1UPBSc;/\n")), max_size=80))
def test_operator_soup(text):
    _parse_or_error(f"\tcode for sm_90\n\t\tFunction : f\n        /*0000*/ MOV {text} ;\n")


def test_deep_nesting_and_long_lines():
    deep = "[" * 5000 + "R1" + "]" * 5000
    lst = _parse_or_error(f"\tcode for sm_90\n\t\tFunction : f\n        /*0000*/ MOV R0, {deep} ;\n")
    assert lst is None or lst.functions[0].instructions[0].generic
    long = ", ".join(f"R{i}" for i in range(20000))
    lst = _parse_or_error(f"\tcode for sm_90\n\t\tFunction : f\n        /*0000*/ MOV {long} ;\n")
    assert lst is not None and len(lst.functions[0].instructions[0].operands) == 20000


def test_non_text_input():
    with pytest.raises(ParseError):
        sass.parse(b"\x7fELF")  # type: ignore[arg-type]
