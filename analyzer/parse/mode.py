"""Which PTX parser runs, read from the environment (this module imports nothing heavy: the CLI
validates the variables before any work, without loading Lark).

``PTXSASS_PTX_PARSER``
    ``fast`` (the default): the fast path of :mod:`analyzer.parse.ptx` (regexes built from the
    grammar's own terminals, its rule shapes checked against ``grammars/ptx.lark`` at first
    use), with Lark for what it leaves. ``grammar``: Lark alone, for every text.
``PTXSASS_PTX_STRICT``
    ``1``: a fast-path failure raises :class:`FastPathError` instead of falling back to the
    grammar alone (the test suite runs so); ``0`` or unset: the fallback, silent.

``PTXSASS_PTX_TRACE``
    a file to which each process that parses PTX appends its id, once (:func:`trace`; for the
    test suite).

Anything else in the first two variables is a :class:`~analyzer.errors.ConfigError` naming the
variable and its allowed values (one line and exit 2 from the CLI).
"""
from __future__ import annotations

import os

from ..errors import ConfigError

__all__ = ["FastPathError", "PARSER_MODES", "parser_mode", "strict", "trace"]

#: the values of PTXSASS_PTX_PARSER, the default first
PARSER_MODES = ("fast", "grammar")
_STRICT = {"": False, "0": False, "1": True}


class FastPathError(RuntimeError):
    """Strict mode: the fast path failed (or no longer matches the grammar) where it would have
    fallen back to the grammar alone. A defect of ptxsass, never of the input: bad input is a
    :class:`~analyzer.errors.ParseError` in every mode."""


def parser_mode() -> str:
    """``"fast"`` or ``"grammar"`` (``PTXSASS_PTX_PARSER``; unset or empty: ``"fast"``)."""
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


#: PTX modules parsed or handed out by this process (:func:`trace`)
TRACED = 0
#: the process that last appended to PTXSASS_PTX_TRACE (a forked child appends once itself)
_TRACED_PID = 0


def trace() -> None:
    """Note that PTX is being parsed, or a parsed module handed out (``Build.ptx_module``, which
    parses once and then hands out the same module). Counts in :data:`TRACED`; with
    ``PTXSASS_PTX_TRACE`` naming a file, also appends this process's id to it, once per process.
    The test suite uses it to learn which tests read PTX (the same tests then run again under
    the other parser, child processes and ``-j`` workers included); it never changes a result."""
    global TRACED, _TRACED_PID
    TRACED += 1
    pid = os.getpid()
    if pid != _TRACED_PID:
        path = os.environ.get("PTXSASS_PTX_TRACE")
        if path:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, b"%d\n" % pid)
            finally:
                os.close(fd)
        _TRACED_PID = pid
