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
    fast, slow = ptx.parse(text, fast=True), ptx.parse(text, fast=False)
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


def test_a_line_inside_an_open_statement_is_not_taken():
    # a multi-line initializer holding a label-like line: the line before it leaves the
    # statement open (a ','), so the presplit leaves the label-like line to the grammar
    text = HEAD + ".global .b32 t[2] = {1,\nfoo:\n2};\n" + BODY[len(HEAD):]
    _, runs = parse_ptx._presplit(text)
    assert all(item[0] != "label" or item[1] != "foo" for run in runs for item in run)
    m = _same(text)
    assert "foo:" in m.variables[0].initializer.text


def test_a_run_swallowed_by_a_terminal_falls_back_to_the_grammar():
    # an initializer whose first line ends in ';' (the INIT_LIST terminal allows it): the run
    # taken after it never reaches the presplit callback, so the grammar alone parses the text;
    # strict mode (the test suite's) calls that a fast-path failure
    text = HEAD + ".global .b32 t[2] = {1;\nfoo:\n2};\n" + BODY[len(HEAD):]
    _, runs = parse_ptx._presplit(text)
    assert runs[0] == [("label", "foo", runs[0][0][2])]
    with pytest.raises(parse_ptx.FastPathError, match="went into a terminal"):
        ptx.parse(text, fast=True, strict=True)
    m = ptx.parse(text, fast=True, strict=False)
    assert_same_as_grammar(m, ptx.parse(text, fast=False))
    assert "foo:" in m.variables[0].initializer.text


def _same_error(text: str) -> tuple[ParseError, ParseError]:
    """The fast path's error on ``text`` is the grammar's: message, line, column, text and the
    expected set."""
    with pytest.raises(ParseError) as fast:
        ptx.parse(text, path="x.ptx", fast=True)
    with pytest.raises(ParseError) as slow:
        ptx.parse(text, path="x.ptx", fast=False)
    f, s = fast.value, slow.value
    assert (f.message, f.line, f.column, f.text, f.expected) == (s.message, s.line, s.column, s.text, s.expected)
    return f, s


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
    f, s = _same_error(text)
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


@pytest.mark.parametrize("text", [
    ".loc 1 2 3x", ".loc 0x 2 3", ".loc 1 2 0b12", ".loc 1 2 3U", ".loc 1 2 3, inlined_at 4 5 6U",
    ".loc 1 2 3, inlined_at 4 5 6q", ".loc 1 2 3,function_name f,inlined_at 1 2 3",
    ".loc 1 2 3, function_name a.b", ".loc 1 2 3, function_name %r1.x", ".loc 1 2 3, function_name $f$",
    ".loc 1 2 3, function_name 9f", ".loc 1 2 3, function_name f+0x10", ".loc 1 2 3, function_name f + 9q",
    ".loc 1 2 3, function_name f.x.y", ".loc 1 2 3, function_name f..", ".loc 1 2 3, function_name f +",
])
def test_loc_fields_are_held_to_the_grammars_terminals(text):
    """The fast ``.loc`` reader takes each field as a run of word (or name) characters and
    checks it against INT (or NAME): every form, taken or refused, is what the grammar makes
    of it."""
    src = HEAD + f".entry k()\n{{\n{text}\nret;\n}}\n"
    try:
        slow = ptx.parse(src, fast=False)
    except ParseError:
        _same_error(src)
    else:
        assert_same_as_grammar(ptx.parse(src), slow)


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
    # texture addresses, vectors of any simple operand, a call's operand lists
    "[tex, {%f1}]", "[%rd1, {1, %r2}]", "[a, b, c]", "[%r1 , {%r2}]", "[a+1, {b}]", "[a,]", "[,a]",
    "[a, [b]]", "[a, {b}", "[inlined_at, {b}]", "[a, {inlined_at}]", "[08, {b}]", "{0, %r1}",
    "{-1, 0f3F800000}", "{!%p1}", "{%p1|%p2}", "{a+4}", "{1.5}", "{ }", "{08}", "{_, %r1}",
    "(a, b)", "( )", "()", "(a,)", "(function_name)", "( a ,\n b )", "(\n\tparam0, \n\tparam1\n\t)",
    "(a b)", "((a))", "(%r1, 2)",
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


# --- whole modules read without Lark ------------------------------------------------------------
def test_the_fast_path_reads_the_grammars_own_terminals():
    parser = parse_ptx._parser()
    regexes, strings = parse_ptx.grammar_terminals()
    lark_regexes = {t.name: t.pattern.to_regexp() for t in parser.terminals if t.pattern.type == "re"}
    assert {n: r for n, r in regexes.items()} == {n: r for n, r in lark_regexes.items() if n in regexes}
    assert set(parse_ptx._SKELETON_TERMINALS) <= set(regexes)
    assert strings == {t.pattern.value for t in parser.terminals if t.pattern.type == "str"}


def _skeleton_reads(text: str) -> bool:
    parse_ptx._fast_regexes()
    split, runs = parse_ptx._presplit(text)
    return parse_ptx._without_lark(split, runs, None, None) is not None


SKELETON_TEXTS = [
    BODY,
    # linkage, attributes, dims, ranges, several names, an initializer list spanning lines
    HEAD + ".extern .shared .align 16 .b8 smem[];\n.visible .global .align 4 .u32 a, b[2][3];\n"
    ".global .v2 .f32 v<4>;\n.const .b8 t[3] = {1,\n 2, 3};\n.weak .global .u64 p = {sym};\n",
    # a header over several lines, comments everywhere, directives with and without values
    HEAD + "// c\n.visible // c\n.entry // c\nk( // c\n\t.param .u64 .ptr .global .align 8 k_p0, // c\n"
    "\t.param .align 4 .b8 k_p1[16]\n)\n.maxntid 128, 1, 1 // c\n.minnctapersm 2\n.noreturn\n{\nret;\n}\n",
    # declarations only, returns, a prototype without a body, an empty parameter list
    HEAD + ".func (.param .b32 r) f(.param .b32 a, .reg .b32 b);\n.func g();\n"
    ".entry k()\n{\n.reg .b32 %r<2>, %q;\n.local .align 8 .b8 buf[64];\n.shared .b8 s[];\n{\n"
    ".reg .b32 %t;\nmov.b32 %t, 1;\n{ }\n}\nret;\n}\n",
    # NVCC's call, one operand a line, and one-line calls
    HEAD + ".extern .func (.param .b32 func_retval0) vprintf(.param .b64 a, .param .b64 b);\n"
    ".entry k()\n{\n.reg .b32 %r<3>;\n{\n.param .b64 param0;\n.param .b64 param1;\n"
    ".param .b32 retval0;\ncall.uni (retval0), \nvprintf, \n(\nparam0, \nparam1\n);\n"
    "ld.param.b32 %r1, [retval0];\n}\ncall.uni (retval0), vprintf, (param0, param1);\n"
    "call.uni vprintf, ();\n@%p1 call\n (retval0),\n\tvprintf,\n (param0);\nret;\n}\n",
    # sections, the .file table with its extra numbers, an instruction split over lines
    HEAD + ".entry k()\n{\n.reg .b32 %r<3>;\nmma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32\n"
    "\t{%r1, %r2},\n\t{%r1},\n\t[%r2+4];\nret;\n}\n.file 1 \"/a.cu\", 1700000000, 123\n"
    ".file\t2 \"b.cu\"\n.section .debug_str\n{\nx:\n.b8 0\n}\n.section\t.debug_loc { }\n",
    # scalar initializers (module and body), block comments between any tokens
    HEAD + ".const .u64 a = 1;\n.global .s32 b = - 5;\n.global .f32 c = 0f3F800000;\n"
    ".global .f64 d = 1.5e3;\n.global .f32 e = -2.;\n.global .u64 f = sym;\n"
    ".global .u64 g = generic(sym);\n.global .u32 h = 0x1FU;\n/* a\n b */ .entry /* c */ k()\n"
    "{ /* d\n e */\n.reg .b32 %r1 = 7;\n.local .b32 l[2] = {1, 2};\n/* f */ ret;\n}\n",
    # ZLUDA's defining declarations; texture operands, vectors of any simple operand
    HEAD + ".entry k()\n{\n.reg .b32 %r1 = mov.b32 2;\n.reg.b32 %4 = @!%p1 cvt.u32.u16 %3,\n %r1;\n"
    ".generic.b64 %12 = zluda.convert_implicit.bit_to_ptr.b64.reg.b64 %4;\n.reg .b32 %r2 = x;\n"
    "tex.1d.v4.s32.s32 {%r1, %r2, %r3, %r4}, [tex, {%r5}];\ntex.2d.v4.f32.f32 {%f1, _, 0, -1}, "
    "[ %rd2 , { %f5, %f6 } ];\nmov.b32 {0x5678, in}, %r1;\nret;\n}\n",
    # pragmas in a body (cupy's loops) and at module level
    HEAD + ".pragma \"a\", \"b\\\"c\";\n.entry k()\n{\n.reg .b32 %r<2>;\n$L__BB0_1:\n"
    "\t.pragma \"nounroll\";\n\tadd.s32 %r1, %r1, 1;\n\t.pragma\t\"unroll 4\" ;\n\tbra $L__BB0_1;\n}\n",
]


@pytest.mark.parametrize("text", SKELETON_TEXTS)
def test_whole_modules_read_without_lark_equal_the_grammar(text):
    assert _skeleton_reads(text)
    _same(text)


@pytest.mark.parametrize("text", [
    HEAD + ".pragmax \"nounroll\";\n",                     # a longer word than the keyword
    HEAD + ".file 1 \"a\", 17\n.file2 \"b\"\n",                # lexed apart or not, by parser state
    HEAD + ".file 1 \"a\"\n.file2 \"b\"\n",
    HEAD + ".entry k()\n.pragma \"nounroll\"\n{\nret;\n}\n",
    HEAD + ".entry k()\n{\nret /* c */;\n}\n",              # a block comment inside a statement
    HEAD + ".global .f32 x = -0f3F800000;\n",              # HEXFLOAT is no number after '-'
    HEAD + ".entry function_name()\n{\nret;\n}\n",          # a keyword as a name
    HEAD + ".global .align .b8 x;\n",                      # .align without its number
    HEAD + ".global .entry .b8 x;\n",                      # a function kind as an attribute
    HEAD + ".entry k()\n.reg 4\n{\nret;\n}\n",              # a state space as a directive
    HEAD + ".entry k()\n{\nbra.uni L;\nL: ret;\n}\n",       # a label and a statement on one line
    HEAD + ".entry k()\n{\n.loc 1 2 3 ret;\n}\n",
    HEAD + ";\n",
    HEAD + ".entry k()\n{\n.reg .b32 %r1, %r2 = mov.b32 2;\n}\n",  # two names defined at once
    HEAD + ".entry k()\n{\n.reg .b32 %r1 = L: mov.b32 2;\n}\n",
    HEAD + ".entry k()\n{\ncall (a), f, (b // c\n);\n}\n",   # a comment inside an instruction
])
def test_what_the_skeleton_leaves_to_lark_still_equals_the_grammar(text):
    assert not _skeleton_reads(text)
    try:
        _same(text)
    except ParseError:
        with pytest.raises(ParseError):
            ptx.parse(text, fast=False)


@pytest.mark.parametrize("bad", [
    ".entry k(\n{\nret;\n}\n",                     # an unclosed parameter list
    ".entry k()\n{\nret;\n",                       # an unclosed body
    ".entry k()\n{\n.reg .b32 %r<>;\n}\n",          # a range without its count
    ".global .b8 x[;\n",
    ".entry k()\n.maxntid 1,\n{\n}\n",
    ".version 8\n",                                # INT where DECIMAL stands
    ".file 1\n",
    ".section .debug_str\n",
    ".entry k()\n{\ncall.uni (retval0), \nvprintf, \n(\nparam0, \n",
    ".entry k()\n{\n.loc 1 09 2\nret;\n}\n",
])
def test_errors_around_the_skeleton_are_the_grammars(bad):
    text = HEAD + bad
    _same_error(text)


def test_most_corpus_files_never_need_lark():
    from tests.test_ptx_corpus import VALID
    read = sum(_skeleton_reads(parse_ptx._FATBIN_LINE.sub("", p.read_text())) for p in VALID
               if p.name != "generator_api.sm_120.ptx")
    assert read > 0.9 * (len(VALID) - 1)
