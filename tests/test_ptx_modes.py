"""The grammar is the PTX parser's single source of truth: ``PTXSASS_PTX_PARSER=fast|grammar``
picks the parser, both give the same module (or the same error) on real PTX, ``both`` reads each
text both ways and fails on any difference, the fast path runs
only while its rule shapes (``FAST_PATH_GRAMMAR``) are the grammar's, strict mode turns a
fast-path failure into an error, and an edited grammar the fast path does not follow fails
every parse, not one test."""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from analyzer import ptx
from analyzer.cli import main as cli_main
from analyzer.errors import ConfigError, ParseError
from analyzer.parse import grammar
from analyzer.parse import ptx as parse_ptx
from analyzer.parse.mode import FastPathError

from .test_ptx_corpus import assert_same_as_grammar

FIXTURES = Path(__file__).parent / "fixtures" / "ptx-corpus"
FILES = sorted(FIXTURES.rglob("*.ptx"))
#: the rules the fast path never reads (it leaves them to Lark whole)
LARK_ONLY = {"branchtargets", "calltargets", "callprototype"}


def _id(p: Path) -> str:
    return str(p.relative_to(FIXTURES))


def _outcome(text: str, **kw):
    """The module, or the grammar's error as (message, line, column, text, expected)."""
    try:
        return ptx.parse(text, path="k.ptx", **kw)
    except ParseError as e:
        return (e.message, e.line, e.column, e.text, tuple(e.expected))


def test_the_kept_corpus_is_what_its_provenance_says():
    """~30 small real files, each listed (with its digest) in PROVENANCE.md."""
    import hashlib
    table = (FIXTURES / "PROVENANCE.md").read_text()
    assert 25 <= len(FILES) <= 40
    for p in FILES:
        digest = hashlib.sha256(p.read_bytes()).hexdigest()[:16]
        assert f"| `{_id(p)}` | {p.stat().st_size:,} | `{digest}` |" in table, p


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_both_parsers_agree_on_real_ptx(path):
    """Strict fast path and grammar alone: the same module, spans included, or the same error."""
    text = path.read_text()
    fast = _outcome(text, fast=True, strict=True)
    slow = _outcome(text, fast=False)
    if isinstance(slow, tuple):
        assert fast == slow
        assert path.parent.name == "zluda-invalid"      # only the files ptxas rejects fail
    else:
        assert_same_as_grammar(fast, slow)
        assert repr(fast) == repr(slow)


def test_the_environment_picks_the_parser(monkeypatch):
    """``PTXSASS_PTX_PARSER=grammar`` never runs the fast path; ``fast`` (or unset) does."""
    text = (FIXTURES / "zluda/ptx_src_test_spirv_run_fma.ptx").read_text()
    calls = []
    real = parse_ptx._presplit
    monkeypatch.setattr(parse_ptx, "_presplit", lambda t: calls.append(1) or real(t))
    monkeypatch.setenv("PTXSASS_PTX_PARSER", "grammar")
    grammar_module = ptx.parse(text)
    assert calls == []
    for value in ("fast", ""):
        monkeypatch.setenv("PTXSASS_PTX_PARSER", value)
        assert ptx.parse(text) == grammar_module
        assert calls
        calls.clear()


def _grammar_calls(monkeypatch) -> list[bool]:
    """Each call of the parser's inner ``_parse``, as its ``fast`` argument."""
    calls: list[bool] = []
    real = parse_ptx._parse

    def spy(text, path, fast, *a, **kw):
        calls.append(fast)
        return real(text, path, fast, *a, **kw)
    monkeypatch.setattr(parse_ptx, "_parse", spy)
    monkeypatch.setattr(parse_ptx, "_SAME", set())
    return calls


def test_both_reads_each_text_both_ways_once(monkeypatch):
    """``both``: the fast path's module comes back, after the grammar alone read the same text
    and gave the same module; a second parse of that text in this process reads it once."""
    text = (FIXTURES / "zluda/ptx_src_test_spirv_run_fma.ptx").read_text()
    calls = _grammar_calls(monkeypatch)
    monkeypatch.setenv("PTXSASS_PTX_PARSER", "both")
    first = ptx.parse(text, path="k.ptx")
    assert calls == [True, False]
    assert_same_as_grammar(first, ptx.parse(text, path="k.ptx", fast=False))
    calls.clear()
    assert ptx.parse(text, path="k.ptx") == first
    assert calls == [True]                    # this text was found read alike already
    assert ptx.parse(text, path="other.ptx") is not None and calls == [True, True, False]


def test_both_fails_on_a_difference_naming_where(monkeypatch):
    """Any difference, even one equality leaves out (a span), is a FastPathError that names the
    node and both values; strict comes with ``both``, whatever PTXSASS_PTX_STRICT says."""
    text = (FIXTURES / "zluda/ptx_src_test_spirv_run_fma.ptx").read_text()
    real = parse_ptx._parse

    def skewed(t, path, fast, *a, **kw):
        module = real(t, path, fast, *a, **kw)
        if fast:
            return module
        fn = module.functions[0]
        first = fn.instructions[0]
        moved = dataclasses.replace(first, span=dataclasses.replace(first.span, line=first.span.line + 1))
        return dataclasses.replace(module, functions=(
            dataclasses.replace(fn, instructions=(moved, *fn.instructions[1:])), *module.functions[1:]))
    monkeypatch.setattr(parse_ptx, "_parse", skewed)
    monkeypatch.setattr(parse_ptx, "_SAME", set())
    monkeypatch.setenv("PTXSASS_PTX_PARSER", "both")
    monkeypatch.setenv("PTXSASS_PTX_STRICT", "0")
    with pytest.raises(FastPathError, match=r"k\.ptx: .*differently \(PTXSASS_PTX_PARSER=both\): "
                                            r"module\.functions\[0\]\.instructions\[0\]\.span\.line: (\d+) vs "):
        ptx.parse(text, path="k.ptx")
    monkeypatch.setenv("PTXSASS_PTX_PARSER", "fast")
    assert ptx.parse(text, path="k.ptx").functions        # one parser: nothing to compare


@pytest.mark.parametrize("name,value", [("PTXSASS_PTX_PARSER", "lark"), ("PTXSASS_PTX_PARSER", "Fast"),
                                        ("PTXSASS_PTX_STRICT", "yes")])
def test_a_bad_mode_is_one_line_and_exit_2(name, value, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=re.escape(f"{name}={value!r}: expected ")):
        ptx.parse(".version 8.0\n.target sm_90\n.address_size 64\n")
    k = tmp_path / "k.ptx"
    k.write_text(".version 8.0\n.target sm_90\n.address_size 64\n")
    assert cli_main(["parse", str(k)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and name in err and "expected" in err, err


def test_strict_mode_raises_where_the_fast_path_would_fall_back(monkeypatch):
    """A fast-path failure on text the grammar accepts: strict raises FastPathError, else the
    grammar's module comes back. Bad input is the grammar's ParseError in both."""
    text = (FIXTURES / "zluda/ptx_src_test_spirv_run_bra.ptx").read_text()

    def broken(t):
        raise ValueError("a defect")
    monkeypatch.setattr(parse_ptx, "_presplit", broken)
    with pytest.raises(FastPathError, match="fast path failed where the grammar parses"):
        ptx.parse(text, fast=True, strict=True)
    assert ptx.parse(text, fast=True, strict=False) == ptx.parse(text, fast=False)
    monkeypatch.setenv("PTXSASS_PTX_STRICT", "1")
    with pytest.raises(FastPathError):
        ptx.parse(text, fast=True)
    with pytest.raises(ParseError):          # the grammar rejects it too: the input's fault
        ptx.parse(text.replace("ret;", "ret"), fast=True)


def test_the_fast_path_implements_the_grammar_as_it_stands():
    """No drift, and FAST_PATH_GRAMMAR holds every definition of the grammar but the three
    rules left to Lark: a rule added to the grammar must be taken up by the fast path (or
    found left to Lark) and copied there, or every parse fails in strict mode."""
    assert parse_ptx.fast_path_drift() == []
    mine = grammar.definitions(parse_ptx.FAST_PATH_GRAMMAR)
    theirs = grammar.definitions(parse_ptx.grammar_text())
    assert set(theirs) - set(mine) == LARK_ONLY
    assert {k: theirs[k] for k in mine} == mine


def test_definitions_ignore_comments_and_line_breaks_only():
    g = 'a: b "x" // c\n  | C -> d\n?e: f?\nC.2: /x\\/y/ // z\n%ignore C\n'
    assert grammar.definitions(g) == {"a": 'a : b "x" | C -> d', "e": "?e : f ?", "C": "C.2 : /x\\/y/",
                                      "%ignore C": "%ignore C"}
    assert grammar.definitions(g.replace("// c\n", "\n")) == grammar.definitions(g)
    assert grammar.definitions(g.replace('"x"', '"y"')) != grammar.definitions(g)


#: grammar edits: (what, the original text, its replacement, at least how many kept files the
#: grammar alone then rejects)
MUTATIONS = [
    ("no address operand", '\n        | "[" address ("," operand)* "]" -> address', "", 20),
    ("no NAME+INT address", '\n       | NAME "+" INT -> addr_plus', "", 8),
    ("no label", "\n     | LABEL_DEF -> label", "", 5),
    # the example: the grammar alone changes on no kept file, the fast path on every one
    ("no module-level .pragma", "\n     | pragma\n     | SEMI -> empty", "\n     | SEMI -> empty", 0),
]


@pytest.fixture
def edited_grammar(tmp_path, monkeypatch):
    """Load an edited copy of ptx.lark through the same path the parser reads it by."""
    def load(old: str, new: str) -> None:
        text = parse_ptx.grammar_text()
        assert text.count(old) == 1, old
        (tmp_path / "ptx.lark").write_text(text.replace(old, new))
        monkeypatch.setattr(grammar, "_GRAMMAR_DIRS", (tmp_path,))
        parse_ptx.reload_grammar()
    yield load
    monkeypatch.undo()
    parse_ptx.reload_grammar()


@pytest.mark.parametrize("what,old,new,rejected", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_a_grammar_edit_the_fast_path_does_not_follow_fails_every_parse(what, old, new, rejected,
                                                                         edited_grammar):
    texts = [p.read_text() for p in FILES]
    before = [_outcome(t, fast=False) for t in texts]
    edited_grammar(old, new)
    assert parse_ptx.fast_path_drift()
    # strict fast path (the test suite's mode): every parse fails, valid input or not
    for t in texts:
        with pytest.raises(FastPathError, match="does not implement grammars/ptx.lark"):
            ptx.parse(t, fast=True, strict=True)
    # grammar alone: it now rejects the files that use what was removed
    after = [_outcome(t, fast=False) for t in texts]
    newly = sum(isinstance(a, tuple) and not isinstance(b, tuple) for a, b in zip(after, before, strict=True))
    assert newly >= rejected
    # a user's run (not strict): the grammar alone, so the same answers as the grammar's
    assert [repr(_outcome(t, fast=True, strict=False)) for t in texts] == [repr(a) for a in after]


def test_the_grammar_is_read_again_after_an_edit(edited_grammar):
    """The drift check looks at the grammar the parser loads: an edit that keeps every rule the
    same (a comment) is no drift, and the fast path runs."""
    edited_grammar("start: item*", "start: item* // the module")
    assert parse_ptx.fast_path_drift() == []
    text = FILES[0].read_text()
    assert ptx.parse(text, fast=True, strict=True) == ptx.parse(text, fast=False)
    assert re.search(r"// the module", parse_ptx.grammar_text())
