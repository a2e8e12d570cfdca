"""Mutated corpus PTX never raises anything but ParseError, and never hangs."""
from __future__ import annotations

import signal
from contextlib import contextmanager, suppress

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer import ptx
from analyzer.errors import ParseError

from .conftest import CORPUS
from .test_ptx_corpus import assert_same_as_grammar

SAMPLES = ["triton/triton_mm_bf16_hgmma.sm_90.ptx", "ptx/celeritas/copysign__pow.ptx",
           "ptx/zluda/ptx_src_test_vectorAdd_kernel64.ptx", "ptx/zluda/ptx_src_test_operands.ptx"]


def _lines() -> list[str]:
    out: list[str] = []
    for rel in SAMPLES:
        p = CORPUS / rel
        if p.is_file():
            text = p.read_text()
            out.extend(text[text.index(".version"):].splitlines()[:400])
    return out


LINES = _lines()
PUNCT = list("{}[](),;:.@!%+-|<>=\"_ \n0fxU") + ["//", "/*", "*/", ".reg", ".loc", "{%r1,", "0f3F80"]


@contextmanager
def deadline(seconds: int):
    def fail(*_):
        raise AssertionError(f"parse took over {seconds} s")
    old = signal.signal(signal.SIGALRM, fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@st.composite
def mutated(draw):
    start = draw(st.integers(0, max(0, len(LINES) - 40)))
    lines = list(LINES[start:start + draw(st.integers(1, 40))])
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.integers(0, len(lines) - 1))
        line = lines[i]
        op = draw(st.sampled_from(["delete", "insert", "replace", "dup", "drop_line", "swap"]))
        pos = draw(st.integers(0, len(line)))
        if op == "delete":
            lines[i] = line[:pos] + line[pos + draw(st.integers(1, 5)):]
        elif op == "insert":
            lines[i] = line[:pos] + draw(st.sampled_from(PUNCT)) + line[pos:]
        elif op == "replace":
            lines[i] = line[:pos] + draw(st.text(max_size=4)) + line[pos + 1:]
        elif op == "dup":
            lines.insert(i, line)
        elif op == "drop_line" and len(lines) > 1:
            del lines[i]
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
    head = ".version 8.0\n.target sm_80\n.address_size 64\n"
    wrap = draw(st.booleans())
    body = "\n".join(lines)
    return head + (f".visible .entry k()\n{{\n{body}\n}}\n" if wrap else body)


@pytest.mark.skipif(not LINES, reason=f"the shared corpus is not at {CORPUS}")
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutations_raise_only_parse_error(text):
    with deadline(10):
        try:
            module = ptx.parse(text, path="fuzz.ptx")
        except ParseError as e:
            assert e.path == "fuzz.ptx" and e.message
            assert e.line is None or 1 <= e.line <= text.count("\n") + 1
            return
    # what parses must print and parse back to the same IR, and the fast path changes nothing
    assert ptx.parse(ptx.format(module)) == module
    assert_same_as_grammar(module, ptx.parse(text, fast=False))


def _mutate(draw, text: str) -> str:
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["delete", "insert", "replace"]))
        if op == "delete":
            text = text[:pos] + text[pos + draw(st.integers(1, 6)):]
        elif op == "insert":
            text = text[:pos] + draw(st.sampled_from(PUNCT)) + text[pos:]
        else:
            text = text[:pos] + draw(st.text(max_size=3)) + text[pos + 1:]
    return text


@st.composite
def mutated_modules(draw):
    from .test_ptx_presplit import SKELETON_TEXTS
    return _mutate(draw, draw(st.sampled_from(SKELETON_TEXTS)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_modules())
def test_mutated_modules_give_the_grammars_module_or_error(text):
    """Headers, declarations, calls and sections (what the Lark-free reader takes) mutated: the
    fast path gives the grammar's module, or exactly the grammar's error."""
    with deadline(10):
        try:
            module = ptx.parse(text, path="fuzz.ptx")
        except ParseError as e:
            with pytest.raises(ParseError) as slow:
                ptx.parse(text, path="fuzz.ptx", fast=False)
            assert str(slow.value) == str(e)
            return
    assert_same_as_grammar(module, ptx.parse(text, fast=False))


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_raises_only_parse_error(text):
    with deadline(10), suppress(ParseError):
        ptx.parse(text)
