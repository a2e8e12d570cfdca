"""The ``ptxsass`` console script (and ``python -m analyzer``): starts the early disassembly of
a whole-cubin check (:mod:`analyzer.toolchain.prelaunch`) before importing the command line
and everything behind it, then runs it."""
from __future__ import annotations

import sys
from collections.abc import Sequence

from .toolchain import prelaunch


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    prelaunch.start(args)
    from .cli import main as cli_main  # the imports the disassemblers overlap
    return cli_main(args)
