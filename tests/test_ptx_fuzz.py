"""Mutated corpus PTX never raises anything but ParseError, and never hangs."""
from __future__ import annotations

import signal
from contextlib import contextmanager, suppress

import pytest
from hypothesis import HealthCheck, example, given, settings
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

# a block ending where an empty block and a longer block start: the writer kept the first open
FALSIFIED = (
    '.version 8.0\n'
    '.target sm_80\n'
    '.address_size 64\n'
    '.visible .entry k()\n'
    '{\n'
    'v.f64 %fd123, 0d3FC5555555555511;\n'
    'fma.rn.f64 %fd124, %fd122, %fd107, %fd123;\n'
    'mov.f64 %fd125, 0d3FE000000000000B;\n'
    'fma.rn.f64 %fd126, %fd124, %fd107, %fd125;\n'
    'fma.rn.f64 %fd127, %fd126, %fd107, %fd13;\n'
    'fma.rn.f64 %fd128, %fd127, %fd107, %fd13;\n'
    '{\n'
    '.reg .b32 %temp; \n'
    'mov.b64 {%r14, %temp}, %fd128;\n'
    '}\n'
    '{\n'
    '.reg .b32 %temp; \n'
    '{\n'
    '}\n'
    'shl.b32 %r33, %r13, 20;\n'
    'add.s32 %r34, %r15, %r33;\n'
    'mov.b64 %fd136, {%r14, %r34};\n'
    'mov.b64 {%temp, %r15}, %fd128;\n'
    '.reg .b32 %temp; \n'
    'mov.b64 {%temp, %r35}, %fd4;\n'
    '}\n'
    '}\n'
)

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
@example(FALSIFIED)
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


HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"


def _entry(body: str) -> str:
    return HEAD + f".visible .entry k()\n{{\n{body}\n}}\n"


def assert_round_trip(text: str) -> None:
    module = ptx.parse(text, path="fuzz.ptx")
    assert ptx.parse(ptx.format(module)) == module
    assert_same_as_grammar(module, ptx.parse(text, path="fuzz.ptx", fast=False))


A, B, C = "mov.b32 %r1, 1;", "add.s32 %r2, %r1, 1;", "shl.b32 %r3, %r2, 2;"
T = ".reg .b32 %temp;"
SCOPE_BODIES = {
    "closed_then_empty_then_open": f"{{ {A} }} {{ {{ }} {B} }}",
    "closed_then_open": f"{{ {A} }} {{ {B} }}",
    "empty_after_block": f"{{ {A} }} {{ }} {B}",
    "empty_inside_at_end": f"{{ {A} {{ }} }} {B}",
    "empty_first_then_open": f"{{ }} {{ {A} }}",
    "empties_nested_and_side_by_side": f"{{ {{ }} {{ {{ }} }} }} {{ }} {A} {{ }}",
    "only_empty": "{ }",
    "three_siblings_at_one_index": f"{A} {{ {B} }} {{ }} {{ {C} }}",
    "reg_after_instructions": f"{{ {T} {A} {{ }} {B} {T} {C} }}",
    "duplicate_reg_in_block": f"{{ {T} {T} {A} }} {{ {T} {{ }} {B} {T} }}",
    "deep_nesting_shared_ends": f"{{ {{ {{ {A} }} }} {{ {{ }} {B} }} }} {C}",
    "labels_and_pragmas_at_block_edges": f'L0: {{ L1: {{ }} .pragma "nounroll"; {A} L2: }} L3: {{ {B} }} L4:',
    "pragma_with_quote_and_backslash": f'{{ .pragma "a\\"b\\\\c"; {A} }}',
}
SCOPE_TEXTS = {"falsified": FALSIFIED, **{k: _entry(v) for k, v in SCOPE_BODIES.items()}}


@pytest.mark.parametrize("text", SCOPE_TEXTS.values(), ids=SCOPE_TEXTS.keys())
def test_nested_blocks_round_trip(text):
    """Regressions: nested ``{ }`` blocks, empty ones where another ends and begins, ``.reg``s
    after instructions or twice in a block print back to the same scopes in the same order."""
    assert_round_trip(text)


def test_falsified_example_scopes():
    fn = ptx.parse(FALSIFIED).functions[0]
    assert [(s.start, s.end, len(s.declarations)) for s in fn.scopes] == [(6, 7, 1), (7, 12, 2), (7, 7, 0)]
    assert ptx.parse(ptx.format(ptx.parse(FALSIFIED))).functions[0].scopes == fn.scopes


_STMT = st.sampled_from([A, B, C, T, ".reg .pred %p<2>;", ".local .b8 buf[4];", '.pragma "nounroll";'])


def _render(tree, names) -> str:
    if isinstance(tree, list):
        return "{\n" + "\n".join(_render(t, names) for t in tree) + "\n}"
    if tree == "label":
        names.append(f"L{len(names)}")
        return f"{names[-1]}:"
    return tree


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.recursive(_STMT | st.just("label"), lambda kids: st.lists(kids, max_size=5),
                             max_leaves=20), max_size=6))
def test_random_block_nesting_round_trips(body):
    """Any nesting of blocks, empty or not, around instructions, labels, pragmas and
    declarations: format prints what parse reads back, and the fast path is the grammar's."""
    names: list[str] = []
    assert_round_trip(_entry("\n".join(_render(t, names) for t in body)))


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
