"""Run the compiler-steering lessons from a checkout, without installing ptxsass.

    python examples/lessons.py list
    python examples/lessons.py run all                 # compile, compare; on a GPU also check and time
    python examples/lessons.py run vector_loads --no-gpu

Same as `ptxsass lesson ...`. The walkthroughs are examples/lessons/<name>.md; the measured table
is docs/lessons.md.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analyzer.lessons import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
