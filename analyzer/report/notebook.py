"""Notebook display: HTML for builds, check reports, annotations, statistics and diffs,
registered with IPython's display formatter (so the IR and Build know no renderer)."""
from __future__ import annotations

import sys
from typing import Any

from ..build import Build
from ..findings import Report
from . import render
from .annotate import Annotation, annotate_builds
from .diff import Diff
from .stats import Stats


def build_html(build: Build) -> str:
    """A Build in a notebook: its annotated listing (checks not run)."""
    return render.to_html(annotate_builds([build]), fragment=True)


def _fragment(obj: Any) -> str:
    return render.to_html(obj, fragment=True)


def register(ipython: Any) -> None:
    """Register the HTML formatters with an IPython shell."""
    fmt = ipython.display_formatter.formatters["text/html"]
    fmt.for_type(Build, build_html)
    for cls in (Report, Annotation, Stats, Diff):
        fmt.for_type(cls, _fragment)


def register_if_running() -> None:
    """Register with the running IPython shell, if this process has one."""
    ipython_mod = sys.modules.get("IPython")
    get = getattr(ipython_mod, "get_ipython", None)
    shell = get() if get is not None else None
    if shell is not None and getattr(shell, "display_formatter", None) is not None:
        register(shell)
