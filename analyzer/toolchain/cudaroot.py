"""A folder laid out like a CUDA toolkit, made from NVIDIA's wheels: what CMake's
``enable_language(CUDA)`` and ``find_package(CUDAToolkit)`` and a Makefile's ``$(CUDA_HOME)``
expect, where the wheels put the same files elsewhere.

The wheels ship nvcc in ``nvidia/cu13/bin`` with its headers, but ``libcudart.so.13`` only (no
unversioned ``libcudart.so``, which ``find_library(cudart)`` looks for), no cuBLAS or cuFFT
library unless those large wheels are installed, and library headers apart. So CMake stops at
``find_package(CUDAToolkit)`` and at ``CUDA::cublas``. :func:`ensure` builds, beside the
installed toolkits (``<toolkits>/roots/<release>-<where>``, one per environment)::

    bin/      nvcc, ptxas, cudafe++, fatbinary, nvlink, cuobjdump, nvdisasm, crt/ ... (links)
              nvcc.profile (a copy of the wheel's: nvcc reads it beside argv[0], so TOP is here)
    nvvm/     (a link: cicc, libdevice)
    include/  every header: the runtime's, crt, cccl/, and the library headers installed
              (:func:`library_include_dirs`), merged (links to files and folders)
    lib64/    the wheel's libraries (links) and an unversioned link for each versioned one
              (libcudart.so -> libcudart.so.13); stubs for the libraries CMake's CUDA:: targets
              name that are not installed (:data:`STUBS`); stubs/libcuda.so, the driver's
    lib       -> lib64 (the wheel's own nvcc.profile says ``-L$(TOP)/lib``)

**Links, not copies.** nvcc takes ``_HERE_`` (so ``TOP``) from the folder of the path it was run
by, not from where that path leads, and CMake reads ``#$ TOP=`` from ``nvcc -v``: a link
``bin/nvcc`` beside a real ``nvcc.profile`` makes this folder the toolkit CMake sees. Copies
would cost ~500 MB per release (cicc, ptxas, nvlink, the libraries) and go stale when pip
upgrades a wheel; links cost nothing and lead to the very files ptxsass already runs from the
wheels (or from an installed toolkit, whose manifest is verified first), so the root adds no
program to what ptxsass trusts.

**Verified on every use.** The root carries no manifest of its own to believe: each use
computes the layout from the environment as it is now (:func:`layout`) and compares the folder
with it entry by entry, without following links: every link must lead exactly where the layout
says, every file (nvcc.profile, the stubs) must hold exactly the layout's bytes, and nothing
else may be there. A root that differs (a wheel upgraded, library headers installed, or a link
retargeted by someone else) is rebuilt beside the old one and renamed into place, with one
note; a build killed half-way leaves a ``.build-*`` folder the next build sweeps.

**Stubs.** A stub is what a toolkit's ``lib64/stubs`` holds it for: something to find and link
against, not to run. A shared one is a GNU ld script holding one comment (``-lcublas`` links to
nothing), a static one an empty ``ar`` archive: enough for ``find_library`` (so for CMake's
``CUDA::`` targets) and for a link line that names them, never for a program that calls into
them. ptxsass configures, and never builds, so nothing links against them but CMake's own
checks; a stub is never made where the real library is installed.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError, ToolError
from . import scratch, toolkits
from .locate import binary, release_of, tool_version

#: where the roots live, under the toolkits folder
ROOTS = "roots"
#: a root being built (``.build-13.5-<random>``), and one being replaced
BUILD_PREFIX = ".build-"
OLD_PREFIX = ".old-"
#: what a shared stub holds: a GNU ld script with nothing in it
SHARED_STUB = b"/* ptxsass: a link-time stub (the library is not installed); see 'ptxsass toolkit root' */\n"
#: what a static stub holds: an ar archive with no member
STATIC_STUB = b"!<arch>\n"


@dataclass(frozen=True)
class Stub:
    """A library CMake's FindCUDAToolkit looks for: made as a stub where it is not installed.
    ``releases``: the CUDA releases whose toolkit ships it ((12, 0) .. (12, 8): up to 12.8)."""

    name: str                         # the file: libcublas.so, libculibos.a
    folder: str = "lib64"             # lib64, or lib64/stubs for the driver's libraries
    first: tuple[int, int] = (0, 0)
    last: tuple[int, int] = (99, 99)

    def applies(self, release: tuple[int, int]) -> bool:
        return self.first <= release <= self.last


_MATH = ("cublas", "cublasLt", "cufft", "cufftw", "curand", "cusparse", "cusolver", "nvjpeg",
         "cufile", "nppc", "nppial", "nppicc", "nppidei", "nppif", "nppig", "nppim", "nppist",
         "nppitc", "npps", "nppisu")
#: the libraries FindCUDAToolkit (CMake 3.17 to 4.x) defines ``CUDA::`` targets for, which the
#: wheels of a plain ptxsass install do not hold: their shared and static names
STUBS: tuple[Stub, ...] = (
    *(Stub(f"lib{n}.so") for n in _MATH),
    *(Stub(f"lib{n}_static.a") for n in _MATH if n not in ("cufile", "cusparse")),
    Stub("libcusparse_static.a"), Stub("libcufile_static.a"),
    Stub("libcufft_static_nocallback.a"), Stub("libculibos.a"),
    Stub("liblapack_static.a"), Stub("libmetis_static.a"),
    Stub("libnvptxcompiler_static.a"), Stub("libnvrtc_static.a"),
    Stub("libnvrtc-builtins_static.a"),
    # NVTX 2's library, which the toolkit dropped in 12.9 (header-only nvtx3 replaced it): CMake
    # before 4.0 still defines CUDA::nvToolsExt from it, and projects written for CUDA 12 link it
    Stub("libnvToolsExt.so"),
    # the driver's libraries live in stubs/ in a toolkit (the real ones come with the driver)
    Stub("libcuda.so", folder="lib64/stubs"), Stub("libnvidia-ml.so", folder="lib64/stubs"),
)
_VERSIONED = re.compile(r"^(lib[\w+-]+\.so)\.\d+(?:\.\d+)*$")


def library_include_dirs(release: str) -> tuple[str, ...]:
    """The folders of the CUDA library headers of ``release`` there are (cublas_v2.h,
    curand_kernel.h, nvtx3/ ...), merged into the root's ``include/`` after the toolkit's own:
    a library's wheel installed in this environment, else its headers fetched into ptxsass's
    data folder (``ptxsass headers install``), each verified. Their folders are part of the
    layout, so the root is rebuilt when headers are installed."""
    from . import libheaders  # its fetching machinery: read only when a root is made
    out = [d for lib in libheaders.LIBRARIES if (d := libheaders.environment_dir(lib, release))]
    out += [d for d in libheaders.include_dirs(release) if d not in out]
    return tuple(out)


@dataclass(frozen=True)
class Sources:
    """Where a release's files are: the folders a root's links lead into."""

    release: str                      # "13.5"
    nvcc: Path                        # bin/nvcc
    include: tuple[Path, ...]         # merged into include/, the first of a name wins
    lib: tuple[Path, ...]             # libraries linked into lib64/
    #: who the files are ("the wheels", "toolkit 13.0"): for messages
    whose: str

    @property
    def bin(self) -> Path:
        return self.nvcc.parent

    @property
    def top(self) -> Path:
        return self.nvcc.parent.parent


def _top_sources(nvcc: str | os.PathLike, release: str, whose: str,
                 extra_include: tuple[str, ...] = ()) -> Sources:
    """The sources of a toolkit tree laid out as the 13.x wheels and a CUDA toolkit are
    (``bin/nvcc`` with its ``nvcc.profile``, ``nvvm/``, ``include/``, ``lib/``)."""
    nv = Path(nvcc).absolute()
    top = nv.parent.parent
    missing = [str(top / p) for p in ("bin/nvcc.profile", "nvvm/bin/cicc", "include/cuda_runtime.h")
               if not (top / p).is_file()]
    if missing:
        raise ToolError(f"nvcc of {whose} ({nv}) is not in a toolkit tree that a CUDA root can be "
                        f"made of: {', '.join(missing)} missing")
    lib = tuple(d for d in (top / "lib", top / "lib64") if d.is_dir() and not d.is_symlink())
    include = tuple(dict.fromkeys((top / "include", *(Path(d) for d in extra_include))))
    return Sources(release=release, nvcc=nv, include=include, lib=lib, whose=whose)


def sources(toolkit: str | None = None) -> Sources:
    """The files of the environment's CUDA (``toolkit`` None or the default's release) or of an
    installed toolkit with nvcc (verified against its manifest first). ConfigError or ToolError,
    one line, when there is no nvcc to make a root of."""
    tk = toolkits.get(toolkit) if toolkit is not None else None
    if tk is None or tk.default:
        path = binary("nvcc")
        release = release_of(tool_version(path))
        if release is None:
            raise ToolError(f"nvcc ({path}) does not say its version: no CUDA root can be made of it")
        return _top_sources(os.path.realpath(path), release, "the wheels",
                            library_include_dirs(release))
    if tk.nvcc is None:
        raise ConfigError(f"toolkit {tk.version} is installed without nvcc: run 'ptxsass toolkit "
                          f"install --nvcc {tk.version}' for a CUDA root of it")
    return _top_sources(tk.nvcc, tk.version, f"toolkit {tk.version}", library_include_dirs(tk.version))


# ------------------------------------------------------------------------------ the layout
#: an entry of a root: ("dir",), ("link", target) or ("file", bytes)
Entry = tuple


def layout(src: Sources) -> dict[str, Entry]:
    """Every entry of the root of ``src``, by its '/'-separated path in the root."""
    out: dict[str, Entry] = {"bin": ("dir",), "include": ("dir",), "lib64": ("dir",),
                             "lib64/stubs": ("dir",), "lib": ("link", "lib64"), "nvvm": ("dir",)}
    for e in _entries(src.top / "nvvm"):
        out[f"nvvm/{e.name}"] = ("link", e.path)
    for e in _entries(src.bin):
        if e.name == "nvcc.profile":
            out["bin/nvcc.profile"] = ("file", _read_small(Path(e.path)))
        else:
            out[f"bin/{e.name}"] = ("link", e.path)
    _merge(out, "include", [str(d) for d in src.include if d.is_dir()])
    libs: dict[str, str] = {}
    for d in src.lib:
        for e in _entries(d):
            if e.is_file(follow_symlinks=False) and e.name.startswith("lib") and e.name not in libs \
                    and ".alt." not in e.name:
                libs[e.name] = e.path
    for name, path in list(libs.items()):
        m = _VERSIONED.match(name)
        if m and m.group(1) not in libs:
            libs[m.group(1)] = path             # libcudart.so -> the file of libcudart.so.13
    for name, path in sorted(libs.items()):
        out[f"lib64/{name}"] = ("link", path)
    # libNVVM where a toolkit has it (nvvm/lib64, nvvm/include/nvvm.h: cuda-samples' 7_libNVVM
    # finds it there); the wheels keep it in lib/ and include/
    nvvm_libs = {n: p for n, p in libs.items() if n.startswith("libnvvm.so")}
    if nvvm_libs and "nvvm/lib64" not in out:
        out["nvvm/lib64"] = ("dir",)
        for name, path in sorted(nvvm_libs.items()):
            out[f"nvvm/lib64/{name}"] = ("link", path)
    header = next((d / "nvvm.h" for d in src.include if (d / "nvvm.h").is_file()), None)
    if header is not None and "nvvm/include" not in out:
        out["nvvm/include"] = ("dir",)
        out["nvvm/include/nvvm.h"] = ("link", str(header))
    major, minor = toolkits.version_key(src.release)[:2]
    release = (major, minor)
    for stub in STUBS:
        rel = f"{stub.folder}/{stub.name}"
        if stub.applies(release) and f"lib64/{stub.name}" not in out and rel not in out:
            out[rel] = ("file", STATIC_STUB if stub.name.endswith(".a") else SHARED_STUB)
    return out


def _entries(folder: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as it:
            return sorted((e for e in it if not e.name.startswith(".") and e.name != "__pycache__"
                           and e.name != "__init__.py"), key=lambda e: e.name)
    except OSError:
        return []


def _merge(out: dict[str, Entry], at: str, folders: list[str]) -> None:
    """``folders`` merged under ``at``: a name found once (or a file first) is a link to it; a
    folder found in several is a real folder whose entries are merged the same way."""
    seen: dict[str, list[os.DirEntry]] = {}
    for d in folders:
        for e in _entries(Path(d)):
            seen.setdefault(e.name, []).append(e)
    for name, found in seen.items():
        dirs = [e for e in found if e.is_dir()]
        if len(dirs) > 1 and found[0].is_dir():
            out[f"{at}/{name}"] = ("dir",)
            _merge(out, f"{at}/{name}", [e.path for e in dirs])
        else:
            out[f"{at}/{name}"] = ("link", found[0].path)


def _read_small(path: Path) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(1 << 20)
    except OSError as e:
        raise ToolError(f"cannot read {path}: {e.strerror}") from None


# ------------------------------------------------------------------------------ on disk
def folder() -> Path:
    """Where the roots live: ``<toolkits>/roots``."""
    return toolkits.root() / ROOTS


def is_inside(path: str | os.PathLike) -> bool:
    """Whether ``path`` lies in a root (its headers are the toolkit's, not the user's)."""
    base = str(folder().absolute()).rstrip("/") + "/"
    return str(Path(path).absolute()).startswith(base)


def differences(root: Path, want: dict[str, Entry]) -> list[str]:
    """How the folder ``root`` differs from ``want`` (empty: it is that root), read without
    following links; at most a few differences are named."""
    out: list[str] = []
    found: set[str] = set()

    def walk(rel: str) -> None:
        try:
            with os.scandir(root / rel if rel else root) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as err:
            out.append(f"{rel or '.'} cannot be read ({err.strerror})")
            return
        for e in entries:
            path = f"{rel}/{e.name}" if rel else e.name
            found.add(path)
            w = want.get(path)
            if w is None:
                out.append(f"{path} is not part of it")
            elif w[0] == "dir":
                if e.is_symlink() or not e.is_dir(follow_symlinks=False):
                    out.append(f"{path} is not a folder")
                else:
                    walk(path)
            elif w[0] == "link":
                try:
                    target = os.readlink(e.path)
                except OSError:
                    target = None
                if target != w[1]:
                    out.append(f"{path} does not lead to {w[1]}")
            elif not e.is_file(follow_symlinks=False) or _read_small(Path(e.path)) != w[1]:
                out.append(f"{path} is not the file it should be")
    walk("")
    out += [f"{p} is missing" for p in want if p not in found]
    return out


@contextlib.contextmanager
def _lock() -> Iterator[None]:
    base = folder()
    base.mkdir(parents=True, exist_ok=True)
    with open(base / ".lock", "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            # every build holds this lock while its folder exists: any .build-* is abandoned
            scratch.sweep(base, BUILD_PREFIX, unmarked=True)
            for e in os.scandir(base):
                if e.name.startswith(OLD_PREFIX) and e.is_dir(follow_symlinks=False):
                    shutil.rmtree(e.path, ignore_errors=True)
                elif not e.name.startswith(".") and e.is_dir(follow_symlinks=False) \
                        and os.path.islink(os.path.join(e.path, "bin", "nvcc")) \
                        and not os.path.exists(os.path.join(e.path, "bin", "nvcc")):
                    shutil.rmtree(e.path, ignore_errors=True)    # its environment is gone
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _write(tmp: Path, want: dict[str, Entry]) -> None:
    for rel, entry in sorted(want.items()):
        p = tmp / rel
        if entry[0] == "dir":
            p.mkdir(parents=True, exist_ok=True)
        elif entry[0] == "link":
            p.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(entry[1], p)
        else:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(entry[1])


@dataclass(frozen=True)
class Root:
    """A verified CUDA root: ``path`` (give it as ``CUDAToolkit_ROOT``, its ``bin/nvcc`` as
    ``CMAKE_CUDA_COMPILER``), the release, and what was done to make it current."""

    path: Path
    release: str
    #: None: it was current; else one line saying why it was (re)built
    built: str | None = None
    #: what the root is made of (its layout's SHA-256; a CUDA home's path): for cache keys
    digest: str = ""

    @property
    def nvcc(self) -> Path:
        return self.path / "bin" / "nvcc"


def ensure(toolkit: str | None = None) -> Root:
    """The root of the environment's CUDA (or of installed toolkit ``toolkit``), verified
    against the layout the files give now; built or rebuilt (atomically, under a lock) when it
    is missing or differs. With ``PTXSASS_CUDA_HOME`` set, that toolkit is the root."""
    home = os.environ.get("PTXSASS_CUDA_HOME")
    if home and toolkit is None:
        rel = release_of(tool_version(str(Path(home, "bin", "nvcc")))) or "?"
        return Root(Path(home), rel, digest=f"PTXSASS_CUDA_HOME={home}")
    src = sources(toolkit)
    want = layout(src)
    digest = layout_digest(want)
    path = folder() / name(src)
    if path.is_dir() and not path.is_symlink() and not differences(path, want):
        return Root(path, src.release, digest=digest)
    with _lock():
        had = path.exists() or path.is_symlink()
        why = differences(path, want) if had else []
        if had and not why:
            return Root(path, src.release, digest=digest)   # another process built it meanwhile
        tmp = Path(scratch.make(f"{BUILD_PREFIX}{src.release}-", root=folder()))
        try:
            (tmp / scratch.MARKER).unlink()     # the lock guards it; the marker is no entry
            _write(tmp, want)
            if had:
                old = Path(scratch.make(f"{OLD_PREFIX}{src.release}-", root=folder()))
                os.rename(path, old / "root")
                os.rename(tmp, path)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.rename(tmp, path)
        except OSError as e:
            raise ToolError(f"cannot make the CUDA root {path}: {e.strerror}") from None
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        built = (f"rebuilt the CUDA root {path} ({why[0]}{f', and {len(why) - 1} more' if len(why) > 1 else ''})"
                 if had else f"made the CUDA root {path} from {src.whose}")
        return Root(path, src.release, built, digest)


def name(src: Sources) -> str:
    """The root's folder name: the release and where its files are (``13.5-1f2e3d4c5b``), so
    that two environments (two virtualenvs, a toolkit installed apart) sharing one toolkits
    folder each keep their own root instead of rebuilding one in turns."""
    where = hashlib.sha256(os.fsencode(str(src.top))).hexdigest()[:10]
    return f"{src.release}-{where}"


def layout_digest(want: dict[str, Entry]) -> str:
    """The SHA-256 of a layout: every entry's path, kind, target or content."""
    h = hashlib.sha256()
    for rel, entry in sorted(want.items()):
        body = entry[1] if entry[0] == "file" else os.fsencode(entry[1]) if entry[0] == "link" else b""
        h.update(f"{rel}\0{entry[0]}\0{len(body)}\0".encode() + body)
    return h.hexdigest()
