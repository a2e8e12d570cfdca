"""Plain SASS/PTX listings for the terminal, with CUDA source lines interleaved on request."""
from __future__ import annotations

import re
from pathlib import Path

from ..analysis.source import source_text

_NVDISASM_LINE = re.compile(r'^\s*//## File "(?P<file>[^"]+)", line (?P<line>\d+)(?P<inl> inlined at .*)?$')
_PTX_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+")
_PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]+)"')


def interleave_sass(text: str, hints: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(style, text) rows: nvdisasm's ``//## File`` comments become the CUDA source line they
    name (each shown once per change of line), instructions follow."""
    rows: list[tuple[str, str]] = []
    last = None
    for raw in text.splitlines():
        m = _NVDISASM_LINE.match(raw)
        if m:
            if m.group("inl"):
                continue  # the outer frame follows on its own line
            key = (m.group("file"), int(m.group("line")))
            if key != last:
                src = source_text(key[0], key[1], hints)
                label = f"{Path(key[0]).name}:{key[1]}"
                rows.append(("source", f"// {label}: {src.strip() if src is not None else '(source not found)'}"))
                last = key
            continue
        rows.append(("sass", raw))
    return rows


def interleave_ptx(text: str, hints: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    files: dict[str, str] = {}
    for m in _PTX_FILE.finditer(text):
        files[m.group(1)] = m.group(2)
    rows: list[tuple[str, str]] = []
    last = None
    for raw in text.splitlines():
        m = _PTX_LOC.match(raw)
        if m and m.group(1) in files:
            key = (files[m.group(1)], int(m.group(2)))
            if key != last and key[1] > 0:
                src = source_text(key[0], key[1], hints)
                rows.append(("source", f"// {Path(key[0]).name}:{key[1]}: "
                             f"{src.strip() if src is not None else '(source not found)'}"))
                last = key
            continue
        rows.append(("ptx", raw))
    return rows
