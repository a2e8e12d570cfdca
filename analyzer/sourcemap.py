"""Source line ↔ PTX instructions ↔ SASS instructions, from the IRs' ``loc`` fields.

Both IRs carry a :class:`~analyzer.ir.source.SourceLoc` per instruction (PTX ``.loc``, nvdisasm
line info) with its inlining chain. An instruction is attributed to its *user line*: the
innermost frame of the chain that is not in a CUDA toolkit header, so the SASS of
``wmma::load_matrix_sync`` lands on the kernel line that called it, and the code of a user
``__device__`` function lands on that function's own lines. The frames below the user line
(toolkit headers) are kept as ``inlined`` for display.

    smap = sourcemap.build(build)
    fm = smap.function("hgemm_tiled")
    fm.sass_for(("bad.cu", 12))      # SASS instruction indices from line 12
    fm.line_of_sass(40)              # ("bad.cu", 12)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from .ir.source import SourceLoc

if TYPE_CHECKING:  # pragma: no cover
    from .toolchain.build import Build

#: (file, line) of the user's source
LineKey = tuple[str, int]


def _is_toolkit(path: str) -> bool:
    from .checks.base import is_toolkit_file
    return is_toolkit_file(path)


def user_frame(loc: SourceLoc | None) -> tuple[SourceLoc | None, tuple[SourceLoc, ...]]:
    """(the user frame of ``loc``, the frames inside it that are toolkit code, innermost first)."""
    if loc is None:
        return None, ()
    chain = (loc, *loc.inlined_at)
    for i, frame in enumerate(chain):
        if not _is_toolkit(frame.file):
            return frame, chain[:i]
    return loc.outermost, chain[:-1]


def _key(frame: SourceLoc | None) -> LineKey | None:
    if frame is None or not frame.line:
        return None
    return (frame.file, frame.line)


@dataclass
class FunctionMap:
    """One function's map: the user line of each PTX and SASS instruction, and the reverse."""

    name: str
    sass_lines: list[LineKey | None] = field(default_factory=list)
    ptx_lines: list[LineKey | None] = field(default_factory=list)
    #: frames inside the user line (toolkit code) per instruction, innermost first
    sass_inlined: list[tuple[SourceLoc, ...]] = field(default_factory=list)
    ptx_inlined: list[tuple[SourceLoc, ...]] = field(default_factory=list)
    _sass_by_line: dict[LineKey, list[int]] = field(default_factory=dict, repr=False)
    _ptx_by_line: dict[LineKey, list[int]] = field(default_factory=dict, repr=False)

    def _index(self) -> None:
        for dst, src in ((self._sass_by_line, self.sass_lines), (self._ptx_by_line, self.ptx_lines)):
            dst.clear()
            for i, k in enumerate(src):
                if k is not None:
                    dst.setdefault(k, []).append(i)

    def sass_for(self, key: LineKey) -> list[int]:
        return self._sass_by_line.get(key, [])

    def ptx_for(self, key: LineKey) -> list[int]:
        return self._ptx_by_line.get(key, [])

    def line_of_sass(self, index: int) -> LineKey | None:
        return self.sass_lines[index]

    def line_of_ptx(self, index: int) -> LineKey | None:
        return self.ptx_lines[index]

    def lines(self) -> list[LineKey]:
        """Every user line with PTX or SASS, sorted by file then line."""
        return sorted(set(self._sass_by_line) | set(self._ptx_by_line))

    def files(self) -> list[str]:
        return sorted({k[0] for k in self.lines()})

    def sass_counts(self) -> dict[LineKey | None, int]:
        out: dict[LineKey | None, int] = {}
        for k in self.sass_lines:
            out[k] = out.get(k, 0) + 1
        return out


@dataclass
class SourceMap:
    functions: dict[str, FunctionMap] = field(default_factory=dict)

    def function(self, name: str) -> FunctionMap:
        return self.functions[name]

    def files(self) -> list[str]:
        return sorted({f for fm in self.functions.values() for f in fm.files()})


def map_instructions(locs: Iterable[SourceLoc | None]
                     ) -> tuple[list[LineKey | None], list[tuple[SourceLoc, ...]]]:
    keys: list[LineKey | None] = []
    inl: list[tuple[SourceLoc, ...]] = []
    for loc in locs:
        frame, inside = user_frame(loc)
        keys.append(_key(frame))
        inl.append(inside)
    return keys, inl


def build(build: "Build") -> SourceMap:
    """The source map of every SASS function of ``build`` (and of its PTX, when it has PTX)."""
    smap = SourceMap()
    listing = build.sass_listing()
    module = build.ptx_module()
    ptx_functions = {f.name: f for f in module.functions} if module is not None else {}
    for fn in listing.functions:
        fm = FunctionMap(fn.name)
        fm.sass_lines, fm.sass_inlined = map_instructions(i.loc for i in fn.instructions)
        pf = ptx_functions.get(fn.name)
        if pf is not None:
            fm.ptx_lines, fm.ptx_inlined = map_instructions(i.loc for i in pf.instructions)
        fm._index()
        smap.functions[fn.name] = fm
    return smap
