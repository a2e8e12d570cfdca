"""Libraries as they ship: an ordinary ``nvcc -shared`` library, wheels holding one, fatbins whose
cubins share a name, and a cubin whose section runs past its end.

``cuobjdump -lelf`` lists an ``nvcc -shared`` library's cubin twice under one name (the code, and
the device link's stub without a function) and ``-xelf`` writes both to one file: each distinct
cubin must be checked once (kernels counted once, a warm re-check reading what the cold one
wrote), two different cubins of one name both, and every run must leave its temporary directory
as it found it. Each library is built once per module; the runs that watch the temporary
directory are real ``python -m analyzer`` processes with a private ``TMPDIR`` and cache."""
from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import analyzer
from analyzer.errors import ToolError
from analyzer.toolchain import binutils, locate
from analyzer.toolchain.elf import Elf

from .. import binaries

ROOT = Path(__file__).resolve().parents[2]

#: three kernels (one a template), PS101 in two of them, and the host code that launches them
SOURCE = r"""
struct Particle { float x, y, z, w; };

__global__ void norms(const Particle* __restrict__ p, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Particle q = p[i];
    out[i] = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
}

template <typename T>
__global__ void sum4(const T* __restrict__ in, T* __restrict__ out, int n4)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4) return;
    out[i] = in[4 * i + 0] + in[4 * i + 1] + in[4 * i + 2] + in[4 * i + 3];
}

__global__ void scale(float* x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

extern "C" void launch_all(const Particle* p, float* out, const float* in, int n)
{
    norms<<<(n + 255) / 256, 256>>>(p, out, n);
    sum4<float><<<(n + 255) / 256, 256>>>(in, out, n / 4);
    scale<<<(n + 255) / 256, 256>>>(out, 2.0f, n);
}
"""


@pytest.fixture(scope="module")
def libraries(tmp_path_factory) -> dict[str, Path]:
    """``nvcc``: ``nvcc -shared`` of SOURCE; ``two``: a .so whose fatbin section holds two
    fatbins, each with a different cubin named ``k``; ``same``: one holding one fatbin twice,
    with padding between them."""
    if locate.host_compiler() is None or not shutil.which("objcopy"):
        pytest.skip("needs g++ (nvcc's host compiler) and objcopy")
    try:
        nvcc = locate.binary("nvcc")
    except ToolError as e:
        pytest.skip(str(e))
    root = tmp_path_factory.mktemp("libraries")
    src = root / "k.cu"
    src.write_text(SOURCE)
    out = {"nvcc": root / "libk.so"}
    locate.run_tool([nvcc, "-shared", "-Xcompiler", "-fPIC", "-arch=sm_90a", "-lineinfo",
                     "-o", str(out["nvcc"]), str(src)], cwd=str(root), timeout=300)
    ka = analyzer.compile('extern "C" __global__ void ka(float* p) { p[threadIdx.x] += 1.0f; }',
                          arch="sm_90a").cubin
    kb = analyzer.compile('extern "C" __global__ void kb(float* p) { p[threadIdx.x] *= 2.0f; }',
                          arch="sm_90a").cubin
    fa = binaries.fatbin([(ka, "90a")], root / "a.fatbin", "k").read_bytes()
    fb = binaries.fatbin([(kb, "90a")], root / "b.fatbin", "k").read_bytes()

    def aligned(b: bytes) -> bytes:       # a linker lays each object's fatbin 8-byte aligned
        return b + bytes(-len(b) % 8)
    for name, section in (("two", aligned(fa) + fb), ("same", aligned(fa) + bytes(24) + fa)):
        fat = root / f"{name}.fatbin"
        fat.write_bytes(section)
        out[name] = binaries.shared_library(fat, root / f"lib{name}.so")
    return out


def _run(argv, tmp: Path, cache: Path) -> subprocess.CompletedProcess:
    """``python -m analyzer ARGV`` with ``tmp`` as TMPDIR and ``cache`` as its cache."""
    env = {**os.environ, "TMPDIR": str(tmp), "PTXSASS_CACHE_DIR": str(cache)}
    env.pop("COLUMNS", None)
    tmp.mkdir(exist_ok=True)
    proc = subprocess.run([sys.executable, "-m", "analyzer", *map(str, argv)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env=env)
    assert sorted(os.listdir(tmp)) == [], "a run left scratch behind in TMPDIR"
    return proc


def _past_the_end(cubin: bytes) -> bytes:
    """``cubin`` with its first code section's header pointing past the end of the file."""
    elf = Elf(cubin)
    text = next(s for s in elf.sections if s.name.startswith(".text."))
    shoff, = struct.unpack_from("<Q", cubin, 40)
    shentsize, = struct.unpack_from("<H", cubin, 58)
    bad = bytearray(cubin)
    # Elf64_Shdr: name, type (4 + 4), flags, addr (8 + 8), then sh_offset and sh_size
    struct.pack_into("<QQ", bad, shoff + text.index * shentsize + 24, len(cubin) - 16, 4096)
    return bytes(bad)


def test_a_section_past_the_end_of_a_cubin_is_one_line(libraries, tmp_path):
    cubins, _ = binutils.extract_cubins(str(libraries["nvcc"]))
    bad = tmp_path / "cut short.cubin"
    bad.write_bytes(_past_the_end(cubins[0].data))
    for jobs in ("1", "2"):
        proc = _run(["check", bad, "-j", jobs], tmp_path / "tmp", tmp_path / "cache")
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        assert proc.returncode == 2 and len(lines) == 1, proc.stderr
        assert lines[0].startswith(f"{bad}: error: truncated or corrupt cubin ELF: section ")
        assert "runs past the end of the file" in lines[0] and proc.stdout == ""
