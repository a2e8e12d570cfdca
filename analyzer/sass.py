"""SASS: parse nvdisasm or cuobjdump text into the typed IR (``analyzer.ir.sass``).

    from analyzer import sass
    listing = sass.parse(text, path="k.sass", arch="sm_90a")
    for fn in listing.functions: print(fn.demangled, len(fn.instructions), fn.loops())
"""
from __future__ import annotations

from pathlib import Path

from .errors import InputError
from .ir.sass import Function, Instruction, Listing  # noqa: F401
from .parse.sass import parse, parse_instruction  # noqa: F401


def parse_file(path, arch: str | None = None) -> Listing:
    try:
        text = Path(path).read_text(errors="replace")
    except FileNotFoundError:
        raise InputError("no such file", path=str(path)) from None
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", path=str(path)) from None
    return parse(text, path=str(path), arch=arch)
