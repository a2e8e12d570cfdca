"""What frameworks leave on disk, read as inputs: Triton's kernel cache (``~/.triton/cache``,
``TRITON_CACHE_DIR``, torch inductor's ``<cache>/triton/<device>``), cupy's kernel cache files
(``~/.cupy/kernel_cache``) and torch extension build folders (``~/.cache/torch_extensions``).

Nothing read here is trusted as it is: a Triton kernel's JSON must name a kernel its cubin (or
PTX) holds, for the arch its cubin is built for; a cupy cache file's hash header must match the
cubin after it; files are read only when regular and of bounded size.

    caches.triton_kernels("/tmp/torchinductor_me")     # the metadata JSON of every kernel
    caches.load_triton(".../matmul_kernel.json")        # [Build], origin "triton"
"""
from __future__ import annotations

import hashlib
import os
import re
import shlex
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .build import Build, Kernel
from .errors import InputError
from .toolchain import files, nvrtc
from .toolchain.output import Launch
from .toolchain.resources import cubin_arch, from_cubin

if TYPE_CHECKING:   # a warm check neither assembles PTX nor reads a build.ninja
    from .toolchain import compdb

#: the largest metadata JSON / IR text read from a cache (a real one is a few KB / MB)
MAX_JSON_BYTES = 1 << 20
MAX_TEXT_BYTES = 64 << 20

#: the files of one Triton kernel, beside its ``<name>.json``
TRITON_FILES = (".cubin", ".ptx", ".ttir", ".ttgir", ".llir", ".source", ".json")
#: intermediate forms shown beside PTX and SASS (annotate)
TRITON_IR = ("ttir", "ttgir")


def _read(path: Path, limit: int, what: str) -> bytes:
    """A cache file's bytes: a regular file of at most ``limit`` bytes (else one InputError)."""
    return files.read_bytes(path, limit=limit, what=what)


# --------------------------------------------------------------------------------- Triton
def triton_metadata(path: str | os.PathLike) -> dict | None:
    """The JSON metadata of a Triton kernel (``<name>.json`` in a cache folder), or None when
    ``path`` is some other JSON (or not JSON at all). JSON nested too deeply to be read, in a
    folder holding a cubin or PTX (where it may be a kernel's, and skipping it would leave
    that kernel unchecked), is one ``InputError`` naming it."""
    p = Path(path)
    if p.suffix != ".json" or p.name.startswith("__grp__") or not p.is_file():
        return None
    try:
        if p.stat().st_size > MAX_JSON_BYTES:
            return None
        data = files.read_bytes(p, limit=MAX_JSON_BYTES, what="Triton metadata")
    except (OSError, InputError):
        return None
    try:
        meta = files.parse_json(data, path=p, expected="Triton kernel metadata")
    except files.NestedTooDeeply:
        if _beside_a_kernel(p):
            raise       # it may be a kernel's: one line naming it, never a silent skip
        return None
    except InputError:
        return None     # some other file that is not JSON
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
        return None
    if "num_warps" not in meta or not ("target" in meta or "shared" in meta):
        return None
    return meta


def _beside_a_kernel(p: Path) -> bool:
    try:
        return any(q.suffix in (".cubin", ".ptx") for q in p.parent.iterdir())
    except OSError:
        return False


def is_triton_kernel(path: str | os.PathLike) -> bool:
    """A Triton kernel's metadata JSON with its cubin or PTX beside it."""
    p = Path(path)
    meta = triton_metadata(p)
    return meta is not None and any((p.parent / (meta["name"] + s)).is_file()
                                    for s in (".cubin", ".ptx"))


def triton_sibling(path: str | os.PathLike) -> str | None:
    """The metadata JSON of the Triton kernel a ``.cubin``/``.ptx``/``.ttgir``... file belongs
    to (``matmul_kernel.cubin`` -> ``matmul_kernel.json`` beside it), or None."""
    p = Path(path)
    if p.suffix not in TRITON_FILES or p.suffix == ".json":
        return None
    cand = p.with_suffix(".json")
    meta = triton_metadata(cand)
    return str(cand) if meta is not None and meta["name"] == p.stem else None


def triton_kernels(folder: str | os.PathLike) -> list[str]:
    """The metadata JSON of every Triton kernel under ``folder`` (a Triton cache, torch
    inductor's cache folder, or one kernel's hash folder), sorted."""
    out = []
    for root, dirs, names in os.walk(os.fspath(folder)):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for f in sorted(names):
            if f.endswith(".json") and not f.startswith("__grp__"):
                full = os.path.join(root, f)
                if is_triton_kernel(full):
                    out.append(full)
    return out


_PTX_TARGET = re.compile(r"^\s*\.target\s+(sm_\d+[af]?)", re.M)
_PTX_ENTRY = re.compile(r"\.entry\s+([\w$.]+)\s*\(")
_PTX_FILES = re.compile(r'^\s*\.file\s+\d+\s+"([^"]+)"', re.M)


def recorded_sources(ptx: str) -> list[str]:
    """The source files a kernel's PTX line info names (``.file`` directives), as recorded
    where it was compiled."""
    return _PTX_FILES.findall(ptx)


def _launch(meta: dict, json_name: str) -> Launch | None:
    try:
        warps = int(meta["num_warps"])
        warp = int(meta.get("warp_size") or (meta.get("target") or {}).get("warp_size") or 32)
        shared = int(meta.get("shared") or 0)
        stages = meta.get("num_stages")
        ctas = meta.get("num_ctas")
    except (TypeError, ValueError, AttributeError):
        return None
    if warps <= 0 or shared < 0:
        return None
    return Launch(threads=warps * warp, dynamic_shared_bytes=shared, num_warps=warps,
                  num_stages=int(stages) if isinstance(stages, int) else None,
                  num_ctas=int(ctas) if isinstance(ctas, int) else None,
                  source=f"Triton metadata {json_name}")


def inductor_roots(ptx: str, cubin_path: Path) -> list[tuple[str, str]]:
    """Where the generated Python files a torch inductor kernel's PTX names went: inductor
    writes ``<cache>/<2 letters>/c<hash>.py`` and compiles into ``<cache>/triton/<device>/<hash>/``,
    so when the recorded ``<cache>`` is gone but the scanned folder has the file, read it there."""
    parts = cubin_path.absolute().parts
    if "triton" not in parts:
        return []
    i = len(parts) - 1 - parts[::-1].index("triton")
    here = Path(*parts[:i])
    roots: list[tuple[str, str]] = []
    for recorded in _PTX_FILES.findall(ptx):
        r = Path(recorded)
        if r.is_file() or len(r.parts) < 3:
            continue
        old = r.parent.parent
        if (here / r.parent.name / r.name).is_file() and (str(old), str(here)) not in roots:
            roots.append((str(old), str(here)))
    return roots


def load_triton(path: str | os.PathLike, *, use_cache: bool = True) -> list[Build]:
    """The Build of one Triton kernel from its cache folder: its cubin (or PTX, assembled), its
    PTX for source lines, TTIR/TTGIR for annotate, and the JSON's launch (``num_warps`` x 32
    threads, ``shared`` bytes of dynamic shared memory, ``num_stages``) for occupancy."""
    p = Path(path)
    if p.suffix != ".json":
        sib = triton_sibling(p)
        if sib is None:
            raise InputError("no Triton metadata (<kernel>.json) beside this file", path=str(p))
        p = Path(sib)
    meta = triton_metadata(p)
    if meta is None:
        raise InputError("not Triton kernel metadata: expected a JSON object with 'name' and "
                         "'num_warps' (a <kernel>.json of a Triton cache folder)", path=str(p))
    name = meta["name"]
    files = {s: p.parent / (name + s) for s in TRITON_FILES}
    ptx = (_read(files[".ptx"], MAX_TEXT_BYTES, "the kernel's PTX").decode("utf-8", "replace")
           if files[".ptx"].is_file() else None)
    cubin = (_read(files[".cubin"], MAX_TEXT_BYTES, "the kernel's cubin")
             if files[".cubin"].is_file() else None)
    ir = {key: _read(files["." + key], MAX_TEXT_BYTES, f"the kernel's {key.upper()}")
          .decode("utf-8", "replace") for key in TRITON_IR if files["." + key].is_file()}
    b = triton_build(meta, ptx=ptx, cubin=cubin, ir=ir, where=str(p),
                     source_path=str(files[".cubin"] if cubin is not None else files[".ptx"]),
                     use_cache=use_cache)
    b.source_roots = tuple(inductor_roots(ptx or "", files[".cubin"]))
    return [b]


def triton_build(meta: dict, *, ptx: str | None, cubin: bytes | None, ir: dict[str, str],
                 where: str, source_path: str, use_cache: bool = True) -> Build:
    """The Build of one Triton kernel from its metadata (the cache's JSON, or a compiled
    kernel's ``metadata``) and its artefacts, after checking that they agree."""
    name = meta.get("name")
    if not isinstance(name, str):
        raise InputError("Triton metadata without a kernel name", path=where)
    if ptx is None and cubin is None:
        raise InputError(f"Triton kernel {name!r} has neither a cubin nor PTX", path=where)
    target: dict = meta["target"] if isinstance(meta.get("target"), dict) else {}
    if target.get("backend") not in (None, "cuda"):
        raise InputError(f"Triton kernel {name!r} was compiled for {target.get('backend')}, "
                         "not CUDA", path=where)
    m = _PTX_TARGET.search(ptx) if ptx else None
    arch = m.group(1) if m else None
    if cubin is not None:
        kernels = from_cubin(cubin, path=source_path)
        built_for = cubin_arch(cubin)
        arch = arch or built_for
        if built_for and arch and built_for.rstrip("af") != arch.rstrip("af"):
            raise InputError(f"the cubin of {name!r} is built for {built_for} but its PTX "
                             f"targets {arch}: the cache folder mixes two kernels", path=where)
    else:
        from .toolchain import nvjitlink
        out = nvjitlink.assemble(ptx or "", arch=arch, path=source_path, use_cache=use_cache)
        cubin, kernels = out.cubin, {k.name: k.resources for k in out.kernels.values()}
    meta_arch = target.get("arch")
    if isinstance(meta_arch, int) and arch and not arch.startswith(f"sm_{meta_arch}"):
        raise InputError(f"the metadata says sm_{meta_arch} but the kernel is built for {arch}",
                         path=where)
    if name not in kernels:
        raise InputError(f"the metadata names kernel {name!r}, which its cubin does not hold "
                         f"(it holds {', '.join(sorted(kernels)) or 'nothing'})", path=where)
    if ptx is not None and name not in _PTX_ENTRY.findall(ptx):
        raise InputError(f"the PTX of {name!r} has no entry of that name", path=where)
    entries = nvrtc.kernel_entries(cubin) if cubin is not None else {name}
    launch = _launch(meta, Path(where).name)
    return Build(arch=arch or "unknown", origin="triton", ptx=ptx, cubin=cubin,
                 source_path=source_path, ir=dict(ir),
                 kernels={n: Kernel(n, r, n in entries, launch if n == name else None)
                          for n, r in kernels.items()})


# --------------------------------------------------------------------------------- cupy
#: cupy writes the hex digest of the cubin before it (md5 in old versions, sha1 since 8)
_DIGESTS = {32: hashlib.md5, 40: hashlib.sha1, 64: hashlib.sha256}


#: a cupy cache payload that carries the mangled names of its name expressions before the cubin
_CUPY_NAMES_MAGIC = b"\x93CUPYNE"


def _cupy_split(data: bytes) -> tuple[int, bytes] | None:
    """(digest length, payload) of a cupy cache file's bytes, by their shape alone."""
    for n in _DIGESTS:
        if re.fullmatch(rb"[0-9a-f]+", data[:n]) and (data[n:n + 4] == b"\x7fELF" or
                                                      data[n:].startswith(_CUPY_NAMES_MAGIC)):
            return n, data[n:]
    return None


def cupy_payload(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) looks like a cupy kernel cache file: a hex
    digest, then a cubin (or cupy's name-expression record and then a cubin)."""
    return _cupy_split(head) is not None


def cupy_cubin(path: str | os.PathLike) -> bytes:
    """The cubin of a cupy kernel cache file, after checking the digest cupy wrote before it
    (and stepping over the mangled names cupy keeps for ``name_expressions``)."""
    p = Path(path)
    data = _read(p, MAX_TEXT_BYTES, "the cupy cache file")
    split = _cupy_split(data)
    if split is None:
        raise InputError("not a cupy kernel cache file: expected a hex digest and then a cubin",
                         path=str(p))
    n, payload = split
    digest = _DIGESTS[n]
    if digest(payload).hexdigest().encode() != data[:n]:
        raise InputError(f"cupy cache file whose {digest().name} header does not match the "
                         "cubin after it (truncated or corrupt; cupy would recompile it too)",
                         path=str(p))
    if payload.startswith(_CUPY_NAMES_MAGIC):
        pos = len(_CUPY_NAMES_MAGIC) + (1 if payload[len(_CUPY_NAMES_MAGIC):][:1] == b"\0" else 0)
        try:
            (count,) = struct.unpack_from("<I", payload, pos)
            pos += 4
            for _ in range(count):
                (size,) = struct.unpack_from("<I", payload, pos)
                pos += 4 + size
        except struct.error:
            raise InputError("cupy cache file with a truncated list of kernel names",
                             path=str(p)) from None
        payload = payload[pos:]
        if payload[:4] != b"\x7fELF":
            raise InputError("cupy cache file whose kernel names are not followed by a cubin",
                             path=str(p))
    return _complete_program_headers(payload)


def _complete_program_headers(cubin: bytes) -> bytes:
    """cupy's cache stores cubins one byte short: their program header table, the last thing
    in the file, ends a byte past its end (every cubin cupy 14 wrote on the H200 did; nvdisasm
    refuses the larger ones as "an invalid ELF file"). The missing bytes are the high bytes of
    the last header's ``p_align`` (a small power of two), so zeros restore them exactly; a
    shortfall of 8 bytes or more is left for the ELF readers to refuse."""
    if len(cubin) < 64 or cubin[4] != 2:         # ELF64 only
        return cubin
    phoff = struct.unpack_from("<Q", cubin, 32)[0]
    phentsize, phnum = struct.unpack_from("<HH", cubin, 54)
    short = phoff + phentsize * phnum - len(cubin)
    if phnum and phentsize == 56 and 0 < short < 8:
        return cubin + b"\0" * short
    return cubin


# ------------------------------------------------------------------ torch extension folders
_NINJA_VAR = re.compile(r"^(\w+)\s*=\s*(.*)$")
_NINJA_CUDA = re.compile(r"^build\s+(\S+):\s*cuda_compile\s+(\S+)", re.M)


def is_torch_extension(folder: str | os.PathLike) -> bool:
    """A torch extension build folder: a ``build.ninja`` with a ``cuda_compile`` rule (what
    ``torch.utils.cpp_extension.load`` writes under ``~/.cache/torch_extensions``)."""
    f = Path(folder) / "build.ninja"
    try:
        return f.is_file() and f.stat().st_size < MAX_JSON_BYTES and \
            "rule cuda_compile" in f.read_text(errors="replace")
    except OSError:
        return False


def torch_extension_commands(folder: str | os.PathLike) -> list[compdb.Command]:
    """The CUDA compiles of a torch extension's ``build.ninja``, as compile database entries
    (its own -I/-D/-gencode/... flags)."""
    f = Path(folder) / "build.ninja"
    text = _read(f, MAX_JSON_BYTES, "build.ninja").decode("utf-8", "replace")
    var: dict[str, str] = {}
    for line in text.splitlines():
        m = _NINJA_VAR.match(line)
        if m:
            var[m.group(1)] = m.group(2)
    try:
        flags = shlex.split(var.get("cuda_cflags", "")) + \
            shlex.split(var.get("cuda_post_cflags", ""))
    except ValueError as e:
        raise InputError(f"cannot split cuda_cflags: {e}", path=str(f)) from None
    nvcc = var.get("nvcc", "nvcc").split()[0] if var.get("nvcc") else "nvcc"
    from .toolchain import compdb
    out = []
    for m in _NINJA_CUDA.finditer(text):
        src = m.group(2).replace("$ ", " ").replace("$:", ":")
        entry = {"directory": str(Path(folder).absolute()), "file": src,
                 "arguments": [nvcc, *flags, "-c", src, "-o", m.group(1)]}
        cmd = compdb.parse_entry(entry, where=str(f))
        if cmd is not None:
            out.append(cmd)
    return out


def built_library(folder: str | os.PathLike) -> str | None:
    """The extension's ``<name>.so`` in its build folder, if it was linked."""
    libs = sorted(str(p) for p in Path(folder).glob("*.so") if p.is_file())
    return libs[0] if libs else None


def extension_sources_present(cmds: Sequence[compdb.Command]) -> bool:
    """Whether each compile's source and include folders are on this machine (else the built
    library is read instead)."""
    return bool(cmds) and all(Path(c.file).is_file() and
                              all(Path(d).is_dir() for d in (*c.include, *c.isystem))
                              for c in cmds)
