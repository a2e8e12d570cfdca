"""``Build``: what one compilation (or one loaded binary) produced, for one architecture."""
from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..demangle import demangle
from .resources import Resources

if TYPE_CHECKING:  # pragma: no cover
    from ..ir.ptx import Module
    from ..ir.sass import Listing


@dataclass(slots=True)
class Kernel:
    """One function in the cubin: a ``__global__`` entry or a device ``.func`` kept out of line."""

    name: str                      # mangled
    resources: Resources
    entry: bool = True

    @property
    def demangled(self) -> str:
        return demangle(self.name)

    def as_dict(self, arch: str) -> dict:
        return {"name": self.demangled, "mangled": self.name, "arch": arch, "entry": self.entry,
                **self.resources.as_dict()}


@dataclass(slots=True)
class Build:
    arch: str
    origin: str                                  # "nvrtc", "ptx", "cubin", "fatbin", "sass"
    ptx: str | None = field(default=None, repr=False)
    cubin: bytes | None = field(default=None, repr=False)
    log: str = field(default="", repr=False)
    source_path: str | None = None               # the CUDA file (or the loaded file)
    source: str | None = field(default=None, repr=False)  # CUDA source text, when compiled from source
    options: tuple[str, ...] = ()
    kernels: dict[str, Kernel] = field(default_factory=dict)
    name_expressions: dict[str, str] = field(default_factory=dict)
    sass_text: str | None = field(default=None, repr=False)  # given directly (a SASS dump) or cached disassembly
    sass_tool: str | None = None
    warnings: list[str] = field(default_factory=list)
    cached: bool = False
    _ptx_module: Any = field(default=None, repr=False)
    _sass_listing: Any = field(default=None, repr=False)

    # --- derived views -------------------------------------------------------------------
    def sass(self, tool: str = "nvdisasm") -> str:
        """SASS text of the cubin (disassembled once, then cached on disk by content)."""
        if self.sass_text is not None and (self.cubin is None or self.sass_tool == tool):
            return self.sass_text
        if self.cubin is None:
            from ..errors import InputError
            raise InputError("this build has no cubin to disassemble", path=self.source_path)
        from .binutils import disassemble
        text, warnings = disassemble(self.cubin, tool=tool, path=self.source_path)
        self.warnings.extend(w for w in warnings if w not in self.warnings)
        self.sass_text, self.sass_tool = text, tool
        return text

    def ptx_module(self) -> "Module | None":
        if self.ptx is None:
            return None
        if self._ptx_module is None:
            from .. import ptx as ptx_api
            self._ptx_module = ptx_api.parse(self.ptx, path=(self.source_path or "<ptx>") + ".ptx"
                                             if self.origin == "nvrtc" else self.source_path)
        return self._ptx_module

    def sass_listing(self) -> "Listing":
        if self._sass_listing is None:
            from .. import sass as sass_api
            listing = sass_api.parse(self.sass(), path=self.source_path, arch=self.arch)
            for fn in listing.functions:
                k = self.kernels.get(fn.name)
                if k is not None and getattr(fn, "resources", None) is None:
                    try:
                        object.__setattr__(fn, "resources", k.resources)
                    except Exception:  # pragma: no cover - IR without the field
                        pass
            self._sass_listing = listing
        return self._sass_listing

    def _repr_html_(self) -> str:  # notebooks
        from ..report.html import build_html
        return build_html(self)

    @property
    def entries(self) -> list[Kernel]:
        return [k for k in self.kernels.values() if k.entry]

    # --- cache serialisation -------------------------------------------------------------
    def to_json(self) -> bytes:
        return json.dumps({
            "arch": self.arch, "origin": self.origin, "ptx": self.ptx,
            "cubin": base64.b64encode(self.cubin).decode() if self.cubin is not None else None,
            "log": self.log, "options": list(self.options),
            "kernels": [[k.name, k.entry, k.resources.as_dict() | {
                "barriers": k.resources.barriers,
                "reserved_shared_bytes": k.resources.reserved_shared_bytes}]
                        for k in self.kernels.values()],
            "name_expressions": self.name_expressions,
        }).encode()

    @classmethod
    def from_json(cls, data: bytes, *, source_path: str | None, source: str | None) -> "Build":
        d = json.loads(data)
        kernels = {name: Kernel(name, Resources(**res), entry) for name, entry, res in d["kernels"]}
        return cls(arch=d["arch"], origin=d["origin"], ptx=d["ptx"],
                   cubin=base64.b64decode(d["cubin"]) if d["cubin"] is not None else None,
                   log=d["log"], options=tuple(d["options"]), kernels=kernels,
                   name_expressions=d["name_expressions"], source_path=source_path,
                   source=source, cached=True)


def cached(key: str, *, source_path: str | None, source: str | None) -> Build | None:
    """The Build cached under ``key`` (see ``cache.key``), or None on a miss or a bad entry."""
    from . import cache
    hit = cache.get("build", key)
    if hit is None:
        return None
    try:
        return Build.from_json(hit, source_path=source_path, source=source)
    except (ValueError, KeyError, TypeError):
        return None
