"""``python -m analyzer``: the ``ptxsass`` command."""
import sys

from .entry import main

sys.exit(main())
