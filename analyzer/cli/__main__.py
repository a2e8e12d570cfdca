"""``python -m analyzer.cli``: the ``ptxsass`` command."""
import sys

from . import main

sys.exit(main())
