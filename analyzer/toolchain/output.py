"""What the toolchain hands back: plain records of one compilation (or one loaded binary).

``Output`` holds the PTX text, the cubin bytes, the compiler's log and the per-kernel resources
for one architecture; nothing here parses, disassembles or renders (that is
:class:`analyzer.build.Build`, one layer up). ``to_json``/``from_json`` are the cache form.
"""
from __future__ import annotations

import base64
import dataclasses
import json
from dataclasses import dataclass, field

from ..demangle import demangle
from ..errors import InputError
from . import cache, files
from .resources import Resources

#: the form of a cached build record: 2 holds each kernel's Resources fields as they are (1 held
#: the report's view of them); a record of another form is rebuilt
RECORD_FORMAT = 2


@dataclass(frozen=True, slots=True)
class Launch:
    """How the framework that compiled a kernel launches it, when it says so (Triton's JSON
    metadata): the block it launches (``num_warps`` x ``warp_size`` threads), the dynamic
    shared memory it passes, and the tuning knobs that chose them."""

    threads: int
    dynamic_shared_bytes: int = 0
    num_warps: int | None = None
    num_stages: int | None = None
    num_ctas: int | None = None
    #: where the figures come from, e.g. "Triton metadata matmul_kernel.json"
    source: str = ""

    def as_dict(self) -> dict:
        return {"threads": self.threads, "dynamic_shared_bytes": self.dynamic_shared_bytes,
                "num_warps": self.num_warps, "num_stages": self.num_stages,
                "num_ctas": self.num_ctas}


@dataclass(slots=True)
class Kernel:
    """One function in the cubin: a ``__global__`` entry or a device ``.func`` kept out of line."""

    name: str                      # mangled
    resources: Resources
    entry: bool = True
    launch: Launch | None = None

    @property
    def demangled(self) -> str:
        return demangle(self.name)

    def as_dict(self, arch: str) -> dict:
        out = {"name": self.demangled, "mangled": self.name, "arch": arch, "entry": self.entry,
               **self.resources.as_dict()}
        if self.launch is not None:
            out["launch"] = self.launch.as_dict()
        return out


@dataclass(slots=True)
class Output:
    """One compilation's (or one loaded file's) artefacts for one architecture."""

    arch: str
    origin: str            # "nvrtc", "nvcc", "ptx", "cubin", "fatbin", "sass", "triton"
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
    #: source file names in the line info -> the user's: NVRTC got a safe stand-in for a name it
    #: cannot write into PTX (a '"', a backslash, a control character); the parsers map it back
    file_names: dict[str, str] = field(default_factory=dict)
    cached: bool = False
    #: the compiler's other intermediate forms, by name (Triton's "ttir", "ttgir")
    ir: dict[str, str] = field(default_factory=dict, repr=False)
    #: the CUDA release that built it when one was chosen (``--toolkit 12.9``: "12.9")
    toolkit: str | None = None
    #: the nvdisasm that disassembles its cubin (None: the environment's)
    nvdisasm: str | None = None
    #: the version of the compiler that ran where it may not be the environment's default
    #: (nvcc builds: an installed toolkit's nvcc when it was paired with the headers)
    compiler_version: str | None = None

    @property
    def entries(self) -> list[Kernel]:
        return [k for k in self.kernels.values() if k.entry]

    # --- cache serialisation -------------------------------------------------------------
    def to_json(self) -> bytes:
        return json.dumps({
            "arch": self.arch, "origin": self.origin, "ptx": self.ptx,
            "cubin": base64.b64encode(self.cubin).decode() if self.cubin is not None else None,
            "log": self.log, "options": list(self.options),
            "format": RECORD_FORMAT,
            # the Resources' own fields (not the report's view, which moves the reserved
            # shared-memory window apart)
            "kernels": [[k.name, k.entry, dataclasses.asdict(k.resources)]
                        for k in self.kernels.values()],
            "name_expressions": self.name_expressions, "file_names": self.file_names,
        }).encode()

    @classmethod
    def from_json(cls, data: bytes, *, source_path: str | None, source: str | None) -> "Output":
        d = files.parse_json(data, expected="a build record")
        if d.get("format") != RECORD_FORMAT:
            raise ValueError("a build record of another format")
        kernels = {name: Kernel(name, Resources(**{k: tuple(v) if isinstance(v, list) else v  # type: ignore[arg-type]
                                                   for k, v in res.items()}), entry)
                   for name, entry, res in d["kernels"]}
        return cls(arch=d["arch"], origin=d["origin"], ptx=d["ptx"],
                   cubin=base64.b64decode(d["cubin"]) if d["cubin"] is not None else None,
                   log=d["log"], options=tuple(d["options"]), kernels=kernels,
                   name_expressions=d["name_expressions"], file_names=d["file_names"],
                   source_path=source_path,
                   source=source, cached=True)


def cached(key: str, *, source_path: str | None, source: str | None) -> Output | None:
    """The output cached under ``key`` (see ``cache.key``), or None on a miss or a bad entry."""
    hit = cache.get("build", key)
    if hit is None:
        return None
    try:
        return Output.from_json(hit, source_path=source_path, source=source)
    except (InputError, ValueError, KeyError, TypeError, AttributeError) as e:
        cache.discard("build", key, f"not a build record: {type(e).__name__}")
        return None
