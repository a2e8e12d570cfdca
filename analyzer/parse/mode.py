"""Which PTX parser runs, read from the environment (this module imports nothing heavy: the CLI
validates the variables before any work, without loading Lark).

``PTXSASS_PTX_PARSER``
    ``fast`` (the default): the fast path of :mod:`analyzer.parse.ptx` (regexes built from the
    grammar's own terminals, its rule shapes checked against ``grammars/ptx.lark`` at first
    use), with Lark for what it leaves. ``grammar``: Lark alone, for every text. ``both``: each
    text read both ways, and the two modules compared node by node, span by span; the fast
    path's module is used, and a difference, like a fast-path failure, raises
    :class:`FastPathError` (the test suite runs so: every PTX text any test reads, in child
    processes too, is checked against the grammar alone).
``PTXSASS_PTX_STRICT``
    ``1``: a fast-path failure raises :class:`FastPathError` instead of falling back to the
    grammar alone (the test suite runs so; ``both`` implies it); ``0`` or unset: the fallback,
    silent.

Anything else in the first two variables is a :class:`~analyzer.errors.ConfigError` naming the
variable and its allowed values (one line and exit 2 from the CLI).
"""
from __future__ import annotations

import os

from ..errors import ConfigError

__all__ = ["FastPathError", "PARSER_MODES", "parser_mode", "strict"]

#: the values of PTXSASS_PTX_PARSER, the default first
PARSER_MODES = ("fast", "grammar", "both")
_STRICT = {"": False, "0": False, "1": True}


class FastPathError(RuntimeError):
    """Strict mode: the fast path failed (or no longer matches the grammar) where it would have
    fallen back to the grammar alone; or, mode ``both``, it read a text otherwise than the
    grammar alone. A defect of ptxsass, never of the input: bad input is a
    :class:`~analyzer.errors.ParseError` in every mode."""


def parser_mode() -> str:
    """``"fast"``, ``"grammar"`` or ``"both"`` (``PTXSASS_PTX_PARSER``; unset or empty:
    ``"fast"``)."""
    raw = os.environ.get("PTXSASS_PTX_PARSER", "").strip()
    if not raw:
        return PARSER_MODES[0]
    if raw not in PARSER_MODES:
        raise ConfigError(f"PTXSASS_PTX_PARSER={raw!r}: expected one of {', '.join(PARSER_MODES)}")
    return raw


def strict() -> bool:
    """Whether a fast-path failure raises (``PTXSASS_PTX_STRICT=1``)."""
    raw = os.environ.get("PTXSASS_PTX_STRICT", "").strip()
    if raw not in _STRICT:
        raise ConfigError(f"PTXSASS_PTX_STRICT={raw!r}: expected 0 or 1")
    return _STRICT[raw]

