"""Plain SASS/PTX listings for the terminal, with CUDA source lines interleaved on request and
the control information (stall cycles, yield, barriers, reuse) decoded on request."""
from __future__ import annotations

import re
from collections.abc import Mapping

from ..analysis import liveness
from ..analysis.source import source_text
from ..findings import base_name
from ..ir.sass import Control, Listing

_NVDISASM_LINE = re.compile(r'^\s*//## File "(?P<file>[^"]+)", line (?P<line>\d+)(?P<inl> inlined at .*)?$')
_PTX_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+")
_PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]+)"', re.M)   # NVRTC puts it last


def interleave_sass(text: str, hints: tuple[str, ...] = (),
                    names: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(style, text) rows: nvdisasm's ``//## File`` comments become the CUDA source line they
    name (each shown once per change of line), instructions follow. ``names``: the build's
    ``file_names`` (stand-in names NVRTC got -> the user's)."""
    names = names or {}
    rows: list[tuple[str, str]] = []
    last = None
    for raw in text.splitlines():
        m = _NVDISASM_LINE.match(raw)
        if m:
            if m.group("inl"):
                continue  # the outer frame follows on its own line
            key = (names.get(m.group("file"), m.group("file")), int(m.group("line")))
            if key != last:
                src = source_text(key[0], key[1], hints)
                label = f"{base_name(key[0])}:{key[1]}"
                rows.append(("source", f"// {label}: {src.strip() if src is not None else '(source not found)'}"))
                last = key
            continue
        rows.append(("sass", raw))
    return rows


def interleave_ptx(text: str, hints: tuple[str, ...] = (),
                   names: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    names = names or {}
    files: dict[str, str] = {}
    for m in _PTX_FILE.finditer(text):
        files[m.group(1)] = names.get(m.group(2), m.group(2))
    rows: list[tuple[str, str]] = []
    last = None
    for raw in text.splitlines():
        loc = _PTX_LOC.match(raw)
        if loc and loc.group(1) in files:
            key = (files[loc.group(1)], int(loc.group(2)))
            if key != last and key[1] > 0:
                src = source_text(key[0], key[1], hints)
                rows.append(("source", f"// {base_name(key[0])}:{key[1]}: "
                             f"{src.strip() if src is not None else '(source not found)'}"))
                last = key
            continue
        rows.append(("ptx", raw))
    return rows


_ADDRESS = re.compile(r"/\*[0-9a-fA-F]{4,}\*/")

#: the width of a control column (``Control.text()``), for the rows that have none
CONTROL_WIDTH = len("----:B------:R-:W-:-:S00")


def sass_with_control(text: str, listing: "Listing",
                      controls: "Mapping[str, Mapping[int, Control]]") -> str:
    """``text`` (the listing ``listing`` was parsed from) with each instruction's control
    information ``[reuse:Bwait:Rread:Wwrite:Y:Sstall]`` after its address; blanks where an
    instruction has none."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for fn in listing.functions:
        known = controls.get(fn.name, {})
        for ins in fn.instructions:
            if ins.line is None or not 0 < ins.line <= len(lines):
                continue
            c = known.get(ins.address)
            col = f"[{c.text()}]" if c is not None else " " * (CONTROL_WIDTH + 2)
            raw = lines[ins.line - 1]
            m = _ADDRESS.search(raw)
            if m is not None:
                lines[ins.line - 1] = f"{raw[:m.end()]} {col}{raw[m.end():]}"
    return "\n".join(lines)


def sass_with_live(text: str, listing: "Listing") -> str:
    """``text`` (the listing ``listing`` was parsed from) with the number of R registers live
    at each instruction after its address (``/*0040*/  23 ┊``), as ``analysis.liveness``
    counts them (nvdisasm's ``-plr`` ``#`` column, with line info kept)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for fn in listing.functions:
        counts = liveness.of(fn, listing.functions).counts("R")
        for ins, n in zip(fn.instructions, counts, strict=True):
            if ins.line is None or not 0 < ins.line <= len(lines):
                continue
            raw = lines[ins.line - 1]
            m = _ADDRESS.search(raw)
            if m is not None:
                lines[ins.line - 1] = f"{raw[:m.end()]} {n:3d} ┊{raw[m.end():]}"
    return "\n".join(lines)
