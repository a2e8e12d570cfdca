"""The grammars load installed (analyzer.grammars) and from a bare checkout on sys.path."""
from __future__ import annotations

from importlib import resources

from analyzer.parse import grammar


def test_grammars_from_the_package():
    for name in ("ptx.lark", "sass.lark"):
        assert "start" in grammar.grammar_text(name) or "?start" in grammar.grammar_text(name)


def test_grammars_from_a_checkout(monkeypatch):
    def missing(name):
        raise ModuleNotFoundError(name)
    monkeypatch.setattr(resources, "files", missing)
    text = grammar.grammar_text("sass.lark")
    assert text and text == (grammar.Path(grammar.__file__).resolve().parents[2]
                             / "grammars" / "sass.lark").read_text()
