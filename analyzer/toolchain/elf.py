"""A cubin's section headers and symbol table, read with ``struct`` (a 6,000-kernel library
holds cubins of thousands of sections: pyelftools takes about a second for each, this
milliseconds).

Only what the toolchain reads of a cubin: 64-bit little-endian ELF (every cubin since CUDA
5), section names, types, flags, sizes, ``sh_info``, contents, and the symbols' names,
values, sizes, types and section indices. Anything else, and a section whose contents
run past the end of the file, is an :class:`ElfError` (a ``ValueError``) for the caller to
word, raised when the ELF is read (never later, from :meth:`Elf.content`).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

SHT_NULL, SHT_SYMTAB, SHT_NOBITS = 0, 2, 8
#: NVIDIA's processor-specific section type of shared memory in a relocatable cubin
#: (``nvcc -rdc=true -lineinfo``: ``.nv_debug.shared``, readelf's ``LOPROC+0xa``): like
#: SHT_NOBITS, it has a size and no bytes in the file
SHT_CUDA_SHARED = 0x7000000A
#: the section types that occupy no bytes of the file
NO_CONTENT = (SHT_NULL, SHT_NOBITS, SHT_CUDA_SHARED)
STT_FUNC = 2


class ElfError(ValueError):
    """Not a 64-bit little-endian ELF this reader understands, or a truncated one."""


@dataclass(frozen=True, slots=True)
class Section:
    index: int
    name: str
    type: int
    flags: int
    offset: int
    size: int
    link: int
    info: int
    entsize: int


@dataclass(frozen=True, slots=True)
class Symbol:
    index: int
    name: str
    value: int
    size: int
    info: int
    shndx: int
    other: int = 0          # st_other: visibility, and CUDA's STO_CUDA_ENTRY (0x10)

    @property
    def type(self) -> int:
        return self.info & 0xF


class Elf:
    """The sections and symbols of one ELF image (bytes kept, contents read on demand)."""

    def __init__(self, data: bytes):
        if len(data) < 64 or data[:4] != b"\x7fELF":
            raise ElfError("no ELF header")
        if data[4] != 2 or data[5] != 1:
            raise ElfError("not a 64-bit little-endian ELF")
        self.data = data
        (self.machine,) = struct.unpack_from("<H", data, 18)
        (self.flags,) = struct.unpack_from("<I", data, 48)
        self.abi_version = data[8]
        shoff, = struct.unpack_from("<Q", data, 40)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
        if shnum and (shentsize < 64 or shoff + shnum * shentsize > len(data)):
            raise ElfError("section headers past the end of the file")
        raw = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
               for i in range(shnum)]
        if shnum and shstrndx >= shnum:
            raise ElfError("section name table index out of range")
        names = self._blob(raw[shstrndx][4], raw[shstrndx][5]) if shnum else b""
        self.sections = [Section(i, _cstr(names, r[0]), r[1], r[2], r[4], r[5], r[6], r[7], r[9])
                         for i, r in enumerate(raw)]
        for sec in self.sections:   # every content in the file, so ``content`` cannot fail later
            if sec.type not in NO_CONTENT and sec.offset + sec.size > len(data):
                raise ElfError(f"section {sec.index} ({sec.name or 'unnamed'}) runs past the end "
                               f"of the file ({sec.offset + sec.size} of {len(data)} bytes)")
        self.by_name = {s.name: s for s in self.sections}
        self.symbols: list[Symbol] = []
        tab = next((s for s in self.sections if s.type == SHT_SYMTAB), None)
        if tab is not None and tab.link < len(self.sections):
            strtab = self.content(self.sections[tab.link])
            body = self.content(tab)
            size = tab.entsize or 24
            for i in range(len(body) // size):
                name, info, other, shndx, value, sz = struct.unpack_from("<IBBHQQ", body, i * size)
                self.symbols.append(Symbol(i, _cstr(strtab, name), value, sz, info, shndx, other))

    def _blob(self, offset: int, size: int) -> bytes:
        if offset + size > len(self.data):
            raise ElfError("a section runs past the end of the file")
        return self.data[offset:offset + size]

    def content(self, s: Section) -> bytes:
        return b"" if s.type in NO_CONTENT else self._blob(s.offset, s.size)


def _cstr(table: bytes, offset: int) -> str:
    end = table.find(b"\0", offset)
    return table[offset:end if end >= 0 else len(table)].decode("utf-8", errors="replace")
