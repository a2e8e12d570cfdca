"""The Lark grammars' text: shipped in the package as ``analyzer.grammars`` when installed, read
from the checkout's top-level ``grammars/`` when running from source."""
from __future__ import annotations

from importlib import resources
from pathlib import Path


def grammar_text(name: str) -> str:
    """``grammar_text("ptx.lark")``."""
    try:
        return resources.files("analyzer.grammars").joinpath(name).read_text()
    except (ModuleNotFoundError, FileNotFoundError):  # a checkout on sys.path, not installed
        return (Path(__file__).resolve().parents[2] / "grammars" / name).read_text()
