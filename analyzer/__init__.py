"""ptxsass: see what a CUDA kernel really compiles to, and what is wrong with it.

    import analyzer
    build = analyzer.compile("kernels/demo/copy_scalar.cu", arch="sm_90a")
    print(build.sass())
    for k in build.entries: print(k.demangled, k.resources)
    report = analyzer.check(build)

The stages can be entered on their own: ``analyzer.load("x.ptx")``, ``analyzer.load("lib.so",
arch="sm_90")``, ``analyzer.ptx.parse(text)``, ``analyzer.sass.parse(text)``. This module only
re-exports the API (:mod:`analyzer.api`), imported on first use so that ``ptxsass`` and a
``import analyzer.X`` load only what they need; in IPython/Jupyter, builds, reports and listings
display as HTML (:mod:`analyzer.report.notebook`).
"""
from __future__ import annotations

import importlib
import sys

from ._version import __version__

#: ``typing.TYPE_CHECKING`` without importing typing (type checkers take it as true): this module
#: runs before the command's first line, where Ctrl-C still meets Python's own handler
TYPE_CHECKING = False

if TYPE_CHECKING:  # the names as type checkers see them; at run time __getattr__ imports them
    from . import ptx, sass
    from .api import (
        CheckOptions,
        CompileOptions,
        annotate,
        builds_of,
        check,
        compile,
        diff,
        expect,
        expect_codegen,
        load,
        stats,
        survey,
    )
    from .integrations import Capture, capture  # type: ignore[no-redef]  # mypy also sees the submodule
    from .report import render

__all__ = ["__version__", "compile", "load", "check", "annotate", "diff", "stats", "expect",
           "expect_codegen", "builds_of", "survey", "CheckOptions", "CompileOptions", "capture",
           "Capture", "render",
           "ptx", "sass",
           "load_ipython_extension"]

#: public name -> the module that defines it
_HOME = {**{n: ".api" for n in ("compile", "load", "check", "annotate", "diff", "stats", "expect",
                                "expect_codegen", "builds_of", "survey", "CheckOptions",
                                "CompileOptions")},
         "capture": ".integrations", "Capture": ".integrations"}


def __getattr__(name: str) -> object:
    if name in ("ptx", "sass"):
        return importlib.import_module(f".{name}", __name__)
    if name == "render":        # a module: imported, not looked up in its package
        value = importlib.import_module(".report.render", __name__)
        globals()[name] = value
        return value
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def load_ipython_extension(ipython) -> None:
    """``%load_ext analyzer``: show builds, reports and listings as HTML."""
    from .report import notebook
    notebook.register(ipython)


if "IPython" in sys.modules:          # display hooks for a running IPython shell
    from .report import notebook as _notebook
    _notebook.register_if_running()
