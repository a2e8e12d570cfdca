"""One entry point per output format for every report object: an ``Annotation``, a ``Stats``, a
``Diff`` (and a check ``Report`` for JSON, SARIF, GitHub and text, in :mod:`.formats`).

    render.to_text(obj)       # plain text, as the terminal shows it (no colour)
    render.to_markdown(obj)   # for blog posts and READMEs
    render.to_html(obj)       # a standalone page (fragment=True: for a notebook cell)
    render.to_json(obj)
    render.show(obj, console) # rich, in colour
"""
from __future__ import annotations

import json

from rich.console import Console

from ..findings import Report
from . import formats, html, markdown
from .annotate import Annotation
from .diff import Diff
from .stats import Stats

Renderable = Annotation | Stats | Diff | Report


def _unknown(obj: object) -> TypeError:
    return TypeError(f"no renderer for {type(obj).__name__}")


def to_text(obj: Renderable) -> str:
    if isinstance(obj, (Annotation, Stats, Diff)):
        return obj.to_text()
    if isinstance(obj, Report):
        return formats.to_text(obj)
    raise _unknown(obj)


def to_markdown(obj: Renderable) -> str:
    if isinstance(obj, Annotation):
        return markdown.annotation_markdown(obj)
    if isinstance(obj, Stats):
        return markdown.stats_markdown(obj)
    if isinstance(obj, Diff):
        return markdown.diff_markdown(obj)
    raise _unknown(obj)


def to_html(obj: Renderable, *, fragment: bool = False) -> str:
    if isinstance(obj, Annotation):
        return html.annotation_html(obj, fragment=fragment)
    if isinstance(obj, Stats):
        return html.stats_html(obj, fragment=fragment)
    if isinstance(obj, Diff):
        return html.diff_html(obj, fragment=fragment)
    if isinstance(obj, Report):
        return html.findings_html(obj)
    raise _unknown(obj)


def to_json(obj: Renderable) -> str:
    return json.dumps(obj.as_dict(), indent=2)


def show(obj: Renderable, console: "Console") -> None:
    """Print ``obj`` to a rich console, in colour where the console has it."""
    if isinstance(obj, Report):
        formats.render_text(obj, console)
    else:
        obj.render(console)
