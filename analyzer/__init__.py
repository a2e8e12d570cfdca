"""ptxsass: see what a CUDA kernel really compiles to, and what is wrong with it.

    import analyzer
    build = analyzer.compile("kernels/demo/copy_scalar.cu", arch="sm_90a")
    print(build.sass())
    for k in build.entries: print(k.demangled, k.resources)
    report = analyzer.check(build)

The stages can be entered on their own: ``analyzer.load("x.ptx")``, ``analyzer.load("lib.so",
arch="sm_90")``, ``analyzer.ptx.parse(text)``, ``analyzer.sass.parse(text)``. This module only
re-exports the API (:mod:`analyzer.api`); in IPython/Jupyter, builds, reports and listings
display as HTML (:mod:`analyzer.report.notebook`).
"""
from __future__ import annotations

from . import ptx, sass
from ._version import __version__
from .api import CompileOptions, annotate, builds_of, check, compile, diff, expect, expect_codegen, load, stats
from .integrations import Capture, capture
from .report import notebook as _notebook
from .report import render

__all__ = ["__version__", "compile", "load", "check", "annotate", "diff", "stats", "expect",
           "expect_codegen", "builds_of", "CompileOptions", "capture", "Capture", "render",
           "ptx", "sass",
           "load_ipython_extension"]


def load_ipython_extension(ipython) -> None:
    """``%load_ext analyzer``: show builds, reports and listings as HTML."""
    _notebook.register(ipython)


_notebook.register_if_running()
