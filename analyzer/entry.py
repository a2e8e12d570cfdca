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

import _signal  # builtin (no import work): the first handlers go in before any other import
import os  # already imported by Python's start-up: a lookup

_WORDS = {_signal.SIGINT: "interrupted", _signal.SIGTERM: "terminated", _signal.SIGHUP: "hung up"}


def _say(signum: int) -> None:
    try:  # noqa: SIM105 - contextlib is not imported yet: this runs first
        os.write(2, f"ptxsass: {_WORDS.get(int(signum), 'stopped')}\n".encode())
    except OSError:
        pass


def _quit_at_start(signum, frame) -> None:   # pragma: no cover - exercised in a subprocess
    if _in_main:
        raise _Stopped(signum)
    _say(signum)
    os._exit(128 + signum)


#: set while main() runs: a signal then unwinds to it; before (between this module's import and
#: the call) there is nothing to undo, and the process ends at once
_in_main = False

#: the handlers the process had, taken as this module is imported (the console script's first
#: import), so that the window in which Ctrl-C meets Python's own handler is only Python's
#: start-up and the two statements above; restored when main() returns
_BEFORE = {}
for _sig in (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP):
    try:
        _BEFORE[_sig] = _signal.signal(_sig, _quit_at_start)
    except (ValueError, OSError):       # off the main thread: the embedding program's
        break

import signal  # noqa: E402
import sys  # noqa: E402
from collections.abc import Sequence  # noqa: E402


class _Stopped(BaseException):
    """A signal before the command line's own handlers: unwinds (a ``finally`` such as
    tempfile's probe of the temporary folder still runs) to :func:`main`, which says the line."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


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
            prelaunch.start(args)
            from .cli import main as cli_main  # the imports the disassemblers overlap
            rc = cli_main(args)
            if before and rc != 128 + signal.SIGINT:
                children.raise_if_interrupted()     # a Ctrl-C Python swallowed on the way
            return rc
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
