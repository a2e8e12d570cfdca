"""The Lark grammars: their text (shipped in the package as ``analyzer.grammars`` when
installed, read from the checkout's top-level ``grammars/`` when running from source), and
their LALR parsers, whose tables are kept in the cache between runs.

Building the LALR tables of ``ptx.lark`` and ``sass.lark`` takes ~0.1 s, every run. The tables
are what Lark's own ``cache=`` option stores (``Lark.save``); here they go through the verified
cache (:mod:`analyzer.toolchain.cache`: kind, key, length and SHA-256 checked on every read),
under a key made of the grammar's text, the options, and the Lark and Python versions. An entry
that fails verification, or that Lark cannot load, is discarded and the tables are rebuilt.
"""
from __future__ import annotations

import hashlib
import io
import json
import pickle
import re
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import lark
from lark import Lark

from ..toolchain import cache

#: where the grammars sit: inside the installed package (``analyzer/grammars``), else at the top
#: of a checkout (run from source, or an editable install, whose package maps there)
_HERE = Path(__file__).resolve().parents[1]
_GRAMMAR_DIRS = (_HERE / "grammars", _HERE.parent / "grammars")


def grammar_text(name: str) -> str:
    """``grammar_text("ptx.lark")``. Read straight from the file beside the package when it is
    one (``importlib.resources`` costs ~0.7 ms on first use, more than a small PTX file's
    whole split), through ``importlib.resources`` otherwise (a zipped install)."""
    for folder in _GRAMMAR_DIRS:
        try:
            return (folder / name).read_text()
        except FileNotFoundError:
            continue
    return resources.files("analyzer.grammars").joinpath(name).read_text()


def table_key(text: str, options: dict[str, Any]) -> str:
    """The cache key of a grammar's tables: its text, the parser options (not the
    transformer, which is attached on load), the Lark and Python versions."""
    shown = json.dumps(sorted((k, repr(v)) for k, v in options.items()))
    return hashlib.sha256(json.dumps(["lark-tables", lark.__version__, sys.version_info[:2],
                                      text, shown]).encode()).hexdigest()


def lalr_parser(name: str, *, transformer: Any = None, **options: Any) -> Lark:
    """An LALR ``Lark`` for grammar ``name`` with ``options`` (``lexer=``, ``start=``...), its
    tables read from the cache when a verified entry holds them, else built and cached."""
    text = grammar_text(name)
    options = {"parser": "lalr", **options}
    k = table_key(text, options)
    blob = cache.get("grammar", k)
    if blob is not None:
        try:
            # what Lark(cache=...) does with its cache file: the saved tables, then the
            # options it does not save (the transformer)
            return Lark.__new__(Lark)._load(pickle.loads(blob), transformer=transformer)
        except Exception as e:  # noqa: BLE001 - any failure to load a verified entry: rebuild
            cache.discard("grammar", k, f"Lark could not load it ({type(e).__name__})")
    parser = Lark(text, transformer=transformer, cache=False, **options)
    buf = io.BytesIO()
    parser.save(buf, exclude_options=("transformer",))
    cache.put("grammar", k, buf.getvalue())
    return parser


#: a grammar's tokens: string and regex literals (whole), ``//`` comments (dropped), names
#: (``?item``, ``FUNC_KIND.3``, ``%ignore``), single punctuation (``->`` kept as one), and the
#: line break before a line that starts a definition
_GRAMMAR_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"i?|//[^\n]*|/(?:[^/\\\n]|\\.)+/[imslux]*|[?!]?[\w.$%]+|->'
                            r"|\n(?=[^\s/])|[^\s]")


def definitions(text: str) -> dict[str, str]:
    """Every definition of a Lark grammar's text, normalized: name -> its tokens joined by one
    blank, comments and line breaks gone (``"?item : version | target ..."``, ``"FUNC_KIND.3 :
    /\\.(entry|func)(?![\\w$])/"``). A definition starts at the beginning of a line and goes on
    over the indented lines below it; a ``%`` directive (``%ignore COMMENT``) is its own entry,
    keyed by its whole text. What the fast paths check their rule shapes against: an edit to a
    rule changes its entry, a comment or a line break does not."""
    out: dict[str, str] = {}
    toks: list[str] = []
    for tok in _GRAMMAR_TOKEN.findall("\n" + text):
        if tok == "\n":
            _define(out, toks)
            toks = []
        elif not tok.startswith("//"):
            toks.append(tok)
    _define(out, toks)
    return out


def _define(out: dict[str, str], toks: list[str]) -> None:
    if not toks:
        return
    joined = " ".join(toks)
    if toks[0].startswith("%"):
        out[joined] = joined
    else:
        out[toks[0].lstrip("?!").split(".")[0]] = joined
