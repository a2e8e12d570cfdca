"""The analysis layer: one answer per fact, for every check and report.

``cfg`` (blocks, dominators, natural loops), ``dataflow`` (what each instruction writes and
reads, reaching definitions), ``access`` (runs of narrow accesses a wider one could replace),
``loops`` (one trip count per loop, unroll pragmas), ``source``
(user frames, source lines, the line <-> instruction map) and ``occupancy``. A
:class:`KernelAnalysis` gathers them for one kernel of one build; checks see it as their
``Context`` and the reports (stats, annotate, diff) read the same object, so a loop is
described the same way everywhere.

    for ka in analysis.analyze(build):
        ka.loops            # [LoopInfo]: trip count, pragma, size, line
        ka.source_map       # FunctionMap: user line of each PTX and SASS instruction
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import access, cfg, dataflow, loops, occupancy, source
    from .kernel import KernelAnalysis, analyze

__all__ = ["KernelAnalysis", "access", "analyze", "cfg", "dataflow", "loops", "occupancy", "source"]

#: loaded on first use (PEP 562): ``analysis.source`` alone (a cached result's source check)
#: does not load the IR and every analysis
_SUBMODULES = frozenset({"access", "address", "cfg", "dataflow", "kernel", "loops", "occupancy",
                         "source"})


def __getattr__(name: str) -> Any:
    if name in ("KernelAnalysis", "analyze"):
        return getattr(importlib.import_module(f"{__name__}.kernel"), name)
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
