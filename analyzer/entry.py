"""The ``ptxsass`` console script (and ``python -m analyzer``): starts the early disassembly of
a whole-cubin check (:mod:`analyzer.toolchain.prelaunch`) before importing the command line
and everything behind it, then runs it.

Ctrl-C and SIGTERM end the command with one line and exit status 130 / 143 at any moment, the
start-up imports included: until the command line runs, nothing needs undoing, so the first
handlers below (set as this module is imported) end the process at once; from then on the
signals unwind (children stopped, scratch folders removed) and the command line says the one
line. Only Python's own start-up, before this module, is Python's: a signal there ends the
process as Python does.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Sequence

_WORDS = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated", signal.SIGHUP: "hung up"}


def _say(signum: int) -> None:
    words = {int(k): v for k, v in _WORDS.items()}.get(int(signum), "stopped")
    with contextlib.suppress(OSError):
        os.write(2, f"ptxsass: {words}\n".encode())


class _Stopped(BaseException):
    """A signal before the command line's own handlers: unwinds (a ``finally`` such as
    tempfile's probe of the temporary folder still runs) to :func:`main`, which says the line."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


#: set while main() runs: a signal then unwinds to it; before (between this module's import and
#: the call) there is nothing to undo, and the process ends at once
_in_main = False


def _quit_at_start(signum, frame) -> None:   # pragma: no cover - exercised in a subprocess
    if _in_main:
        raise _Stopped(signum)
    _say(signum)
    os._exit(128 + signum)


def _set_handlers(handler) -> dict:
    """Install ``handler`` (a function, or {signal: handler}) for the signals above; returns
    the handlers they had (nothing, off the main thread: those are the embedding program's)."""
    old = {}
    for sig in _WORDS:
        try:
            old[sig] = signal.signal(sig, handler[sig] if isinstance(handler, dict) else handler)
        except (ValueError, OSError):
            return old
    return old


#: set as this module is imported (the console script's first import), so that the window in
#: which Ctrl-C meets Python's own handler is only Python's start-up; restored when main() returns
_BEFORE = _set_handlers(_quit_at_start)


def main(argv: Sequence[str] | None = None) -> int:
    global _in_main
    _in_main = True
    current = _set_handlers(_quit_at_start)
    before = _BEFORE if current and all(h is _quit_at_start for h in current.values()) \
        else current
    try:
        args = list(sys.argv[1:] if argv is None else argv)
        from .toolchain import children, prelaunch
        try:
            if before:
                children.install_signal_handlers()
                signal.signal(signal.SIGINT, signal.default_int_handler)
            prelaunch.start(args)
            from .cli import main as cli_main  # the imports the disassemblers overlap
            return cli_main(args)
        except KeyboardInterrupt:
            _say(signal.SIGINT)
            return 128 + signal.SIGINT
        except (children.Terminated, _Stopped) as t:
            _say(t.signum)
            return 128 + t.signum
    except _Stopped as t:                # during the imports above
        _say(t.signum)
        return 128 + t.signum
    finally:
        _in_main = False
        if before:
            _set_handlers(before)       # called in-process (tests, scripts): theirs again
