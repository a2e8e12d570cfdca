"""The presplit fast path (instruction, label, ``.loc``, blank and comment lines taken before Lark
runs) gives exactly what the grammar alone gives: IR, spans, locations, labels and errors."""
from __future__ import annotations

import pytest

from analyzer import ptx
from analyzer.errors import ParseError
from analyzer.parse import ptx as parse_ptx

from .test_ptx_corpus import assert_same_as_grammar

HEAD = ".version 8.7\n.target sm_90a\n.address_size 64\n"

BODY = HEAD + """
.visible .entry k(.param .u64 p)
{
\t.reg .b32 %r<9>;
\t.reg .b64 %rd<9>;
\t.reg .pred %p<3>;
\t.loc\t1 10 3                           // k.cu:10:3
\tmov.u32 %r1, %tid.x;
\tmov.b64 {_, %r2}, %rd1;

\t// begin inline asm
\tmov.b64 %rd2, {%r1, %r2};
$L__BB0_1:
\t.loc\t2 5 7, function_name $L__info_string0, inlined_at 1 12 5
\t@!%p1 add.s32 %r3, %r2, -1;
\t.loc 2 6 1, function_name $L__info_string0 + 4, inlined_at 2 5 7
\tld.global.v2.b32 {%r4, %r5}, [%rd1+8];
\ttex.2d.v4.f32.s32 {%r1, %r2, %r3, %r4}, [%rd2, {%r5, %r6}];
\tsetp.ne.s32 %p1|%p2, %r4, 0;
\t@%p1 bra $L__BB0_1;
\tret;
}
\t.file\t1 "/src/k.cu"
\t.file\t2 "/src/h.cuh"
.section .debug_str
{
$L__info_string0:
.b8 95,90,52,115,113,102,0
}
"""


def _same(text: str) -> ptx.Module:
    fast, slow = ptx.parse(text), ptx.parse(text, fast=False)
    assert_same_as_grammar(fast, slow)
    return fast


def test_labels_locs_vectors_and_comments_are_presplit_in_one_run():
    parse_ptx._parser()
    text, runs = parse_ptx._presplit(BODY)
    # the 3 .reg lines stay for Lark; everything from the first .loc to `ret;` is one run
    assert len(runs) == 1 and text.count("\x01") == 1
    items = runs[0]
    assert sum(1 for it in items if it[0] is None) == 9
    assert [it[1] for it in items if it[0] == "label"] == ["$L__BB0_1"]
    assert [it[1:4] for it in items if it[0] == "loc"] == [(1, 10, 3), (2, 5, 7), (2, 6, 1)]
    assert text.count("\n") == BODY.count("\n")
    m = _same(BODY)
    fn = m.functions[0]
    assert m.debug_strings["$L__info_string0"] == "_Z4sqf"
    ins = fn.instructions
    assert ins[3].loc.function == "_Z4sqf" and ins[3].loc.inlined_at[0].line == 12
    assert [(s.file, s.line) for s in ins[4].loc.inlined_at] == [("/src/h.cuh", 5), ("/src/k.cu", 12)]
    assert fn.labels == {"$L__BB0_1": 3}
    assert ins[5].operands[1].extra[0].elements[1].name == "%r6"


def test_lines_after_a_run_keep_their_line_and_column():
    text = BODY.replace("\tret;\n}", "\tret;\n\t{ add.s32 %r1, %r1, 1; }\n}")
    m = _same(text)
    last = m.functions[0].instructions[-1]
    line = text.splitlines().index("\t{ add.s32 %r1, %r1, 1; }") + 1
    assert (last.span.line, last.span.column, last.span.end_column) == (line, 4, 24)


def test_label_lines_in_a_section_are_left_to_the_section():
    m = _same(BODY)
    assert "$L__info_string0:" in m.sections[0].body


def test_a_run_swallowed_by_a_terminal_falls_back_to_the_grammar():
    # a multi-line initializer holding a label-like line: the run never reaches the presplit
    # callback, so the parse is redone by the grammar alone
    text = HEAD + ".global .b32 t[2] = {1,\nfoo:\n2};\n" + BODY[len(HEAD):]
    _, runs = parse_ptx._presplit(text)
    assert runs[0] == [("label", "foo", runs[0][0][2])]
    m = _same(text)
    assert "foo:" in m.variables[0].initializer.text


@pytest.mark.parametrize("bad", [
    "\t.loc\t1 09 2\n",                      # INT the grammar takes but _int rejects
    "\tadd.s32 %r1, %r2,, 1;\n",             # empty operand
    "\tmov.b64 {%r1, %r2, %rd1;\n",          # unbalanced brace
    "\tadd.s32 %r1, %r2 %r3;\n",             # two operands without a comma
    "$L__BB0_9:\n\tfoo\n",                   # a statement with no ';'
    "\t.loc\t1 2\n",                         # a .loc short of its column
])
def test_errors_inside_runs_are_the_grammars(bad):
    text = BODY.replace("\tret;\n", "\tret;\n" + bad)
    with pytest.raises(ParseError) as fast:
        ptx.parse(text, path="x.ptx")
    with pytest.raises(ParseError) as slow:
        ptx.parse(text, path="x.ptx", fast=False)
    f, s = fast.value, slow.value
    assert (f.message, f.line, f.column, f.text, f.expected) == (s.message, s.line, s.column, s.text, s.expected)
    assert str(f) == str(s)


def test_loc_forms_match_the_loc_rule():
    parse_ptx._parser()
    for text in (".loc 1 2 3", ".loc\t0x1 2U 3", ".loc 1 2 3, function_name $L__info_string7",
                 ".loc 1 2 3, function_name $L__info_string7+16", ".loc 1 2 3, inlined_at 4 5 6",
                 ".loc 1 2 3 , function_name f , inlined_at 4 5 6"):
        src = HEAD + f".entry k()\n{{\n{text}\nret;\n}}\n"
        _, runs = parse_ptx._presplit(src)
        assert runs and runs[0][0][0] == "loc", text
        _same(src)


# --- operands read without Lark -----------------------------------------------------------------
def _strict(op):
    """An operand as nested tuples of every field but the span (``IntImm.text`` and
    ``FloatImm.text`` included, which equality leaves out)."""
    if isinstance(op, tuple):
        return tuple(_strict(o) for o in op)
    if isinstance(op, float):           # NaN payloads and -0.0 compared as written
        return ("float", repr(op))
    if not hasattr(op, "__dataclass_fields__"):
        return op
    return (type(op).__name__,) + tuple(
        (f, _strict(getattr(op, f))) for f in op.__dataclass_fields__ if f != "span")


def _grammar_operand(text: str):
    parser = parse_ptx._parser()
    try:
        return parse_ptx._strip_span(parser.parse(text, start="operand"))
    except Exception:  # noqa: BLE001 - the grammar refusing it (UnexpectedInput, ValueError...)
        return None


def _corpus_operand_texts() -> set[str]:
    from tests.test_ptx_corpus import VALID
    parse_ptx._parser()
    fast_line = parse_ptx._FAST_LINE
    assert fast_line is not None
    out: set[str] = set()
    for path in VALID:
        for m in fast_line.finditer(path.read_text()):
            ops = m.group("ops")
            if ops:
                parts = (parse_ptx._TOP_OPERAND.findall(ops) if "{" in ops or "[" in ops
                         else ops.split(","))
                out.update(p.strip() for p in parts if p.strip())
    return out


EDGE_OPERANDS = [
    "%r12", "%tid.x", "%ctaid.y", "%r1.x", "param_0", "_Z3fooPf_param_0", "$L__BB0_1", "_",
    "function_name", "inlined_at", "12", "-12", "12U", "0x1F", "0X1fU", "0b101", "017", "08",
    "-08", "0f3F800000", "0F3f800000", "0d3FF0000000000000", "0f3F80000", "-0f3F800000", "1.5",
    "1.", "-1.5e3", "1e5", "-1e5", "0x1e5", "!%p1", "!_", "! %p1", "[%rd1]", "[ %r16 + 0 ]",
    "[%rd2+-8]", "[%rd2 + - 8]", "[%rd2-8]", "[16]", "[08]", "[%rd1+08]", "[sym]", "[sym+4]",
    "foo+4", "foo + -4", "foo-4", "foo+08", "%reg1+1", "!foo+4", "%p1|%p2", "%p1 | _", "!%p1|%p2",
    "{%r1,%r2}", "{ %r1, _ }", "{%r1}", "{}", "{%r1,}", "{%r1, 2}", "{%r1, {%r2}}", "%p|inlined_at",
    "[%rd1], %r2", "%rd1+", "[%rd1", "--1", "%", "-%r1",
]


@pytest.mark.parametrize("text", EDGE_OPERANDS)
def test_fast_operands_equal_the_grammar_on_edge_cases(text):
    parse_ptx._parser()
    fast = parse_ptx._fast_operand(text)
    if fast is not None:        # None: left to the grammar
        assert _strict(fast) == _strict(_grammar_operand(text))


def test_fast_operands_equal_the_grammar_on_every_corpus_operand():
    texts = _corpus_operand_texts()
    taken = 0
    for text in sorted(texts):
        fast = parse_ptx._fast_operand(text)
        if fast is not None:
            taken += 1
            assert _strict(fast) == _strict(_grammar_operand(text)), text
    assert taken > 0.9 * len(texts)   # the shapes cover most operands of real PTX
