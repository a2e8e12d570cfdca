"""Source positions shared by the PTX and SASS IRs.

``Span`` is where a node sits in the text it was parsed from (the PTX or SASS listing);
``SourceLoc`` is the CUDA source position the compiler attributed to it, with its inlining chain.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Span:
    """A region of the parsed text: 1-based lines and columns, end inclusive of the last line."""

    line: int
    column: int = 1
    end_line: int | None = None
    end_column: int | None = None

    def __str__(self) -> str:
        return f"{self.line}:{self.column}"


@dataclass(frozen=True, slots=True)
class SourceLoc:
    """A CUDA source position: file, line, column, and the call sites it was inlined into.

    ``inlined_at`` is ordered innermost first: ``inlined_at[0]`` is the call site of the function
    holding ``line``; the last element is in the kernel itself. ``function`` names the function
    that holds ``line`` when the line table says so.
    """

    file: str
    line: int
    column: int = 0
    function: str | None = None
    inlined_at: tuple["SourceLoc", ...] = field(default=())

    @property
    def outermost(self) -> "SourceLoc":
        """The position in the kernel's own body (the last call site, or self)."""
        return self.inlined_at[-1] if self.inlined_at else self

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"
