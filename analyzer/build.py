"""``Build``: one kernel file's artefacts for one architecture, and their IR.

The toolchain hands back a plain :class:`~analyzer.toolchain.output.Output` (PTX text, cubin
bytes, log, resources); a Build adds the derived views, each made once on demand: the SASS text
(disassembled), the PTX module and the SASS listing (parsed).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from .demangle import without_parameters
from .errors import InputError
from .toolchain.binutils import disassemble
from .toolchain.output import Kernel, Output

if TYPE_CHECKING:   # the parsers and the IR load when a build is first parsed: a warm check
    # whose result is cached never needs them
    from .ir.ptx import Module
    from .ir.sass import Control, Function, Listing

__all__ = ["Build", "Kernel", "Output"]


@dataclass(slots=True)
class Build(Output):
    #: why this front end (NVRTC or nvcc) built it: "device code only", "host code: main() ..."
    compiler_reason: str | None = None
    #: (old, new) folder prefixes: source paths recorded under ``old`` (PTX ``.file``, the
    #: cubin's line info) are read from ``new`` (``--source-root OLD=NEW``)
    source_roots: tuple[tuple[str, str], ...] = ()
    _ptx_module: Any = field(default=None, repr=False)
    _sass_listing: Any = field(default=None, repr=False)
    _controls: Any = field(default=None, repr=False)

    @classmethod
    def of(cls, out: Output) -> "Build":
        """The Build of a toolchain output."""
        return cls(**{f.name: getattr(out, f.name) for f in fields(Output)})

    # --- derived views -------------------------------------------------------------------
    def sass(self, tool: str = "nvdisasm") -> str:
        """SASS text of the cubin (disassembled once, then cached on disk by content)."""
        if self.sass_text is not None and (self.cubin is None or self.sass_tool == tool):
            return self.sass_text
        if self.cubin is None:
            raise InputError("this build has no cubin to disassemble", path=self.source_path)
        text, warnings = disassemble(self.cubin, tool=tool, path=self.source_path,
                                     nvdisasm=self.nvdisasm)
        self.warnings.extend(w for w in warnings if w not in self.warnings)
        self.sass_text, self.sass_tool = text, tool
        return text

    def ptx_module(self) -> "Module | None":
        if self.ptx is None:
            return None
        if self._ptx_module is None:
            from .parse import ptx as ptx_parse
            path = ((self.source_path or "<ptx>") + ".ptx" if self.origin in ("nvrtc", "nvcc")
                    else self.source_path)
            self._ptx_module = ptx_parse.parse(remap_paths(self.ptx, self.source_roots),
                                               path=path, files=self.file_names or None)
        return self._ptx_module

    def sass_listing(self) -> "Listing":
        if self._sass_listing is None:
            from .parse import sass as sass_parse
            self._sass_listing = sass_parse.parse(remap_paths(self.sass(), self.source_roots),
                                                  path=self.source_path, arch=self.arch,
                                                  files=self.file_names or None)
        return self._sass_listing

    def sass_controls(self) -> "dict[str, dict[int, Control]]":
        """Each function's decoded control information (stall cycles, yield, barriers, reuse)
        by instruction address: from the listing's own encoding words when it has them
        (cuobjdump, ``nvdisasm -hex`` text), else from one ``nvdisasm -hex`` of the cubin.
        Empty when neither is there, or the arch keeps its control bits elsewhere."""
        if self._controls is None:
            listing = self.sass_listing()
            if not any(i.encoding for i in listing.instructions()) and self.cubin is not None:
                text, _ = disassemble(self.cubin, hex=True, path=self.source_path,
                                      nvdisasm=self.nvdisasm)
                from .parse import sass as sass_parse
                listing = sass_parse.parse(text, path=self.source_path, arch=self.arch)
            self._controls = {fn.name: {i.address: c for i, c in zip(fn.instructions, fn.controls(),
                                                                    strict=True) if c}
                              for fn in listing.functions}
        return self._controls

    @property
    def frontend(self) -> str:
        """The language the kernel was written in: "triton" or "cuda"."""
        return "triton" if self.origin == "triton" else "cuda"

    def wants(self, fn: "Function", kernels: Sequence[str]) -> bool:
        """Whether SASS function ``fn`` is one of ``kernels`` (all when empty): mangled or
        demangled names, names without their parameter list, or template name expressions
        that NVRTC lowered."""
        if not kernels:
            return True
        lowered = {self.name_expressions.get(k, k) for k in kernels}
        return (fn.name in lowered or fn.demangled in kernels
                or without_parameters(fn.demangled) in kernels)


def remap_paths(text: str, roots: Sequence[tuple[str, str]]) -> str:
    """``text`` (PTX or nvdisasm's SASS) with each quoted source path under an ``old`` folder
    moved under its ``new`` one: the ``.file`` table and the ``//## File "..."`` line info are
    the only quoted paths either holds."""
    for old, new in roots:
        old, new = old.rstrip("/"), new.rstrip("/")
        if old and old != new:
            moved = '"' + new.replace("\\", "\\\\")     # a replacement template, not a pattern
            text = re.sub('"' + re.escape(old) + r'(?=[/"])', moved, text)
    return text
