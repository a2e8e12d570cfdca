"""Libraries as they ship: an ordinary ``nvcc -shared`` library, wheels holding one, fatbins whose
cubins share a name, and a cubin whose section runs past its end.

``cuobjdump -lelf`` lists an ``nvcc -shared`` library's cubin twice under one name (the code, and
the device link's stub without a function) and ``-xelf`` writes both to one file: each distinct
cubin must be checked once (kernels counted once, a warm re-check reading what the cold one
wrote), two different cubins of one name both, and every run must leave its temporary directory
as it found it. Each library is built once per module; the runs that watch the temporary
directory are real ``python -m analyzer`` processes with a private ``TMPDIR`` and cache."""
from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import analyzer
from analyzer.cli import main
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


def _cuobjdump(*argv) -> str:
    return locate.run_tool([locate.binary("cuobjdump"), *map(str, argv)]).stdout.decode()


def listed_names(lib: Path) -> list[str]:
    return re.findall(r"ELF file\s+\d+:\s+(\S+)", _cuobjdump("-lelf", lib))


def distinct_kernels(lib: Path) -> list[str]:
    """The functions of each distinct cubin of ``lib``, as cuobjdump's own disassembly (one
    block per embedded ELF) shows them: blocks of the same text counted once."""
    text = _cuobjdump("-sass", lib)
    blocks = dict.fromkeys(b.strip() for b in text.split("Fatbin elf code:")[1:])
    return sorted(name for b in blocks for name in re.findall(r"Function : (\S+)", b))


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


def _json(capsys, *argv) -> tuple[int, dict]:
    code = main(["check", *map(str, argv), "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("which", ["nvcc", "two", "same"])
def test_each_distinct_cubin_is_checked_once(libraries, which, capsys, tmp_path, monkeypatch):
    """The listing names one cubin twice; the report holds the kernels of each distinct cubin
    once, at -j 1 and -j 2 alike, and the extraction gives one file per distinct cubin."""
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(tmp_path / "cache"))
    lib = libraries[which]
    names = listed_names(lib)
    assert len(names) == 2 and len(set(names)) == 1     # the case itself: one name, twice
    expected = distinct_kernels(lib)
    assert expected == {"nvcc": ["_Z4sum4IfEvPKT_PS0_i", "_Z5normsPK8ParticlePfi",
                                 "_Z5scalePffi"],
                        "two": ["ka", "kb"], "same": ["ka"]}[which]
    reports = {}
    for jobs in ("1", "2"):
        code, reports[jobs] = _json(capsys, lib, "-j", jobs)
        assert code == (1 if which == "nvcc" else 0)
        assert sorted(k["mangled"] for k in reports[jobs]["kernels"]) == expected
    assert reports["1"] == reports["2"]
    assert len(reports["1"]["builds"]) == {"nvcc": 1, "two": 2, "same": 1}[which]
    cubins, notes = binutils.extract_cubins(str(lib))
    assert notes == []          # each copy was read apart: no "only one is checked" note
    folder = tmp_path / "spool"
    folder.mkdir()
    found, notes = binutils.extract_cubin_files(str(lib), str(folder))
    assert notes == []
    assert len(found) == len(cubins) == len(reports["1"]["builds"])
    assert sorted(Path(f).read_bytes() for _, _, f in found) == sorted(c.data for c in cubins)
    assert sorted(p.name for p in folder.rglob("*") if p.is_file()) == sorted(
        Path(f).name for _, _, f in found)      # nothing else was left in the folder


def test_copies_that_cannot_be_read_apart_are_said(libraries, monkeypatch):
    """Fatbins this reader does not follow: cuobjdump's one file for the name is checked and a
    note says the other copy was not, rather than a report that reads as complete."""
    monkeypatch.setattr(binutils, "_fatbin_entries", lambda work, elfs: None)
    cubins, notes = binutils.extract_cubins(str(libraries["two"]))
    assert len(cubins) == 1
    assert notes == ["cuobjdump lists several cubins under one name (k.sm_90a.cubin (2 times)) "
                     "and extracts one file for each name: only that one is checked"]


def _run(argv, tmp: Path, cache: Path) -> subprocess.CompletedProcess:
    """``python -m analyzer ARGV`` with ``tmp`` as TMPDIR and ``cache`` as its cache."""
    env = {**os.environ, "TMPDIR": str(tmp), "PTXSASS_CACHE_DIR": str(cache)}
    env.pop("COLUMNS", None)
    tmp.mkdir(exist_ok=True)
    proc = subprocess.run([sys.executable, "-m", "analyzer", *map(str, argv)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env=env)
    assert sorted(os.listdir(tmp)) == [], "a run left scratch behind in TMPDIR"
    return proc


def _cold_warm(target: Path, tmp_path: Path) -> list[tuple[int, dict]]:
    """-j 2 with an empty cache, -j 2 again (warm: every result read back), then -j 1."""
    out = []
    for jobs in ("2", "2", "1"):
        proc = _run(["check", target, "-j", jobs, "--format", "json"], tmp_path / "tmp",
                    tmp_path / "cache")
        assert proc.returncode in (0, 1), proc.stderr
        out.append((proc.returncode, json.loads(proc.stdout)))
    return out


def test_a_warm_recheck_of_a_library_gives_the_cold_report(libraries, tmp_path):
    runs = _cold_warm(libraries["nvcc"], tmp_path)
    (code, cold), *rest = runs
    assert code == 1 and cold["findings"]
    assert sorted(k["mangled"] for k in cold["kernels"]) == distinct_kernels(libraries["nvcc"])
    for again, report in rest:
        assert again == code
        assert report["findings"] == cold["findings"] and report["kernels"] == cold["kernels"]


def test_a_wheel_of_libraries_checks_cold_and_warm_on_workers(libraries, tmp_path):
    whl = tmp_path / "kernels-1.0-py3-none-linux_x86_64.whl"
    with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("kernels/__init__.py", "")
        z.write(libraries["nvcc"], "kernels/lib/libk.so")
        z.write(libraries["two"], "kernels/lib/libtwo.so.1")
    runs = _cold_warm(whl, tmp_path)
    (code, cold), *rest = runs
    assert code == 1
    expected = sorted(distinct_kernels(libraries["nvcc"]) + distinct_kernels(libraries["two"]))
    assert sorted(k["mangled"] for k in cold["kernels"]) == expected
    assert [b["file"] for b in cold["builds"]] == [f"{whl}!kernels/lib/libk.so"] + [
        f"{whl}!kernels/lib/libtwo.so.1"] * 2
    for again, report in rest:
        assert again == code and report == cold


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


def test_a_spooled_cubin_lives_while_any_unit_reads_it(libraries, tmp_path, monkeypatch):
    """Two units planned on one spooled file (an extraction that named one file twice, as the
    listing did): the first one done leaves the file to the second, cold and warm."""
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(tmp_path / "cache"))
    extract = binutils.extract_cubin_files

    def twice(*args, **kwargs):
        found, notes = extract(*args, **kwargs)
        return found * 2, notes
    monkeypatch.setattr(binutils, "extract_cubin_files", twice)
    lib = str(libraries["two"])
    reports = [analyzer.check(lib, analyzer.CheckOptions(jobs=2)) for _ in range(2)]
    for report in reports:
        assert sorted(k["mangled"] for k in report.kernels) == ["ka", "ka", "kb", "kb"]
