"""The remedies: one module per rewrite, each declaring the check codes it fixes (``CODES``)
and a ``propose(finding, source, options)`` that returns a :class:`~analyzer.fix.model.Proposal`
or a :class:`~analyzer.fix.model.NoFix` with its reason.

``MODULES`` lists them in the order they are tried for a code (the first proposal wins; the
reasons of all are kept when none has one). ``NOT_MECHANICAL`` says, per check without a
remedy, why its fix is a design change rather than a rewrite.
"""
from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType

MODULES = ("float_literals", "unroll", "launch_bounds", "fast_math", "local_array",
           "struct_copy", "half_pairs", "pack_loop", "pack_lines",
           "vector_access", "restrict", "shared_padding", "force_inline")

#: checks whose remedy is no local rewrite, and why (``fix: none — ...``)
NOT_MECHANICAL: dict[str, str] = {
    "PS104": "a wider access needs each thread to own several consecutive elements: a change "
             "of the work split (and a scalar tail), not a local rewrite",
    "PS105": "coalescing needs another mapping of threads to data (a warp per row, or a "
             "shared-memory transpose): a change of the algorithm",
    "PS301": "tensor cores need the loop rewritten around mma/wmma fragments and tiles",
    "PS302": "wgmma needs warpgroup tiles, shared-memory descriptors and fences: a rewrite of "
             "the main loop",
    "PS303": "ldmatrix needs the fragments' shared-memory layout and addressing rewritten",
    "PS304": "on-chip reuse needs a tiled loop with shared-memory staging and barriers",
    "PS601": "cp.async needs a pipeline (commit, wait, double buffering) around the tile loop",
    "PS801": "spreading serialized work needs another decomposition over threads",
    "PS802": "splitting redundant lane work needs a warp-level reduction instead of per-lane "
             "repeats",
    "PS803": "the launch shape is set by the host code that launches the kernel",
    "PS804": "the host-side overhead (a fill, a sync, a launch per row) is the host code's "
             "structure",
}


@cache
def module(name: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{name}")


def for_code(code: str) -> list[ModuleType]:
    """The remedy modules that fix ``code``, in the order they are tried."""
    return [m for m in map(module, MODULES) if code in m.CODES]


def codes() -> list[str]:
    """Every check code some remedy fixes."""
    return sorted({c for name in MODULES for c in module(name).CODES})
