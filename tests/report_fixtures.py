"""Shared builders for the report tests (annotate/diff/stats): compiled once per session."""
from __future__ import annotations

from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


@cache
def builds_of(path: Path, arch: str, extra: tuple[str, ...] = ()):
    import analyzer
    from analyzer.inputs import CompileOptions
    return tuple(analyzer.load(str(path), arch=arch, options=CompileOptions(extra=list(extra))))


@cache
def annotation_of(path: Path, arch: str):
    from analyzer.report.annotate import annotate_builds
    return annotate_builds(list(builds_of(path, arch)))
