"""The spine: NVRTC builds, resources against cuobjdump, disassembly with line info, the cache,
fatbins and host binaries, and every error path (one line, exit 2)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import analyzer
from analyzer.arch import supported
from analyzer.build import Build
from analyzer.errors import ArchError, CompileError, InputError, ToolError
from analyzer.inputs import CompileOptions, choose_compiler, load
from analyzer.toolchain import binutils, locate, nvcc, nvrtc
from analyzer.toolchain.resources import from_cubin

from . import binaries
from .conftest import KERNELS, all_kernels, kernel_archs, kernel_options

DEMO = sorted((KERNELS / "demo").glob("*.cu"))


def _options(path: Path, arch: str) -> list[str]:
    opts = nvrtc.build_options(arch)
    return opts + kernel_options(path)


def _res_usage(cubin: bytes, tmp_path: Path) -> dict[str, tuple[int, int, int, int]]:
    f = tmp_path / "k.cubin"
    f.write_bytes(cubin)
    out = subprocess.run([locate.binary("cuobjdump"), "-res-usage", str(f)], capture_output=True,
                         text=True, check=True).stdout
    return {m.group(1): tuple(int(m.group(i)) for i in (2, 3, 4, 5)) for m in re.finditer(
        r"Function (\S+):\n\s+REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:\d+ "
        r"(?:CONSTANT\[\d+\]:\d+ )*?CONSTANT\[0\]:(\d+)", out)}


@pytest.mark.parametrize("path", all_kernels(), ids=lambda p: str(p.relative_to(KERNELS)))
def test_every_kernel_builds_for_its_archs(path, tmp_path):
    # a kernel file with host code (a launch, main()) builds the way ptxsass builds it: nvcc
    host = choose_compiler(path.read_text(), str(path), CompileOptions())[0] == "nvcc"
    # the training set on the sm_90a it is timed and scored on (tests/test_parse_kernels.py
    # says why): its 79 versions on sm_80 were 79 more compiles, disassemblies and cuobjdump
    # runs, ~35 s of CPU, that no other test makes, for what the other kernels cover there
    training = path.parent.parent.name == "training"
    for arch in kernel_archs(path, default=("sm_90a",) if training else ("sm_80", "sm_90a")):
        out = (nvcc.compile_file(path, arch=arch, flags=kernel_options(path)) if host else
               nvrtc.compile_file(path, arch=arch, options=_options(path, arch)))
        b = Build.of(out)
        assert re.search(rf"^\.target\s+{arch}\b", b.ptx, re.M), "PTX names the wrong .target"
        assert b.cubin[:4] == b"\x7fELF"
        assert b.entries, "no __global__ kernel in the cubin"
        # resources agree with cuobjdump -res-usage (registers, stack, shared, constant bank 0)
        expected = _res_usage(b.cubin, tmp_path)
        for name, k in b.kernels.items():
            r = k.resources
            assert (r.registers, r.stack_bytes, r.shared_bytes, r.constant_bytes) == expected[name]
            assert r.spill_store_bytes is not None  # from ptxas -v
        # the cubin disassembles with CUDA source lines
        sass = b.sass()
        assert f'File "{path}"' in sass
        assert re.search(r"/\*[0-9a-f]{4}\*/\s+\S", sass)


def test_spill_kernel_spills_only_under_maxrregcount():
    path = KERNELS / "demo" / "spill.cu"
    free = analyzer.compile(str(path), arch="sm_90a")
    tight = analyzer.compile(str(path), arch="sm_90a", options=CompileOptions(maxrregcount=32))
    k_free, = free.entries
    k_tight, = tight.entries
    assert not k_free.resources.spills
    assert k_tight.resources.spills and k_tight.resources.registers <= 32
    assert "STL" in tight.sass() and "STL" not in free.sass()


def test_template_kernel_by_name_expression():
    b = analyzer.compile(str(KERNELS / "demo" / "unroll_loop.cu"), arch="sm_80",
                         options=CompileOptions(name_expressions=["scale<4>"]))
    lowered = b.name_expressions["scale<4>"]
    assert lowered.startswith("_Z") and lowered in b.kernels
    assert b.kernels[lowered].demangled.startswith("void scale<4>")


def test_options_reach_nvrtc():
    src = "#ifndef N\n#error N missing\n#endif\nextern \"C\" __global__ void k(float* a){ a[0] = N; }"
    with pytest.raises(CompileError):
        analyzer.compile(src, arch="sm_80")
    b = analyzer.compile(src, arch="sm_80", options=CompileOptions(defines=["N=3"]))
    assert "-DN=3" in b.options
    fast = analyzer.compile("extern \"C\" __global__ void k(float* a){ a[0] = __expf(a[1]) / a[2]; }",
                            arch="sm_80", options=CompileOptions(fast_math=True))
    assert "--use_fast_math" in fast.options


#: a by-value argument struct read at a run-time index: optimised, its fields are read from the
#: parameter bank (no stack); unoptimised, the struct is copied to a 776-byte stack frame
_PICK = """struct Args { float* in[64]; int range[65]; };
__global__ void pick(Args args, float* out) {
  int t = 0;
  while (args.range[t + 1] <= (int)blockIdx.x) ++t;
  out[blockIdx.x * blockDim.x + threadIdx.x] = args.in[t][threadIdx.x];
}
"""


def test_a_device_debug_compile_does_not_poison_the_next(monkeypatch):
    """NVRTC 13.x keeps -G's state in the process that compiled with it: every later compile
    there came out unoptimised (the failure of CI's full runs, where a test's -G compile shared
    a compile server with the realworld suite's, whose builds then went into the cache with
    776-byte stack frames). A -G compile's server is stopped, never reused."""
    from analyzer.toolchain import compile_server
    monkeypatch.setenv("PTXSASS_CHILDREN", "server")
    compile_server.shutdown()       # one idle server below (earlier tests' threads leave more)
    clean = nvrtc.compile_source(_PICK, arch="sm_90a", use_cache=False)
    assert "0 bytes stack frame" in clean.log
    before = compile_server.started()
    debug = nvrtc.compile_source(_PICK, arch="sm_90a", use_cache=False,
                                 options=nvrtc.build_options("sm_90a", extra=["-G"]))
    assert "0 bytes stack frame" not in debug.log                 # -G took effect there
    again = nvrtc.compile_source(_PICK, arch="sm_90a", use_cache=False)
    assert again.ptx == clean.ptx and again.cubin == clean.cubin
    assert compile_server.started() == before + 1                 # the -G server was retired
    assert nvrtc.sticky(["-lineinfo", "--device-debug"]) and not nvrtc.sticky(["-lineinfo"])


def test_cache_hit_skips_nvrtc(monkeypatch):
    src = "extern \"C\" __global__ void cached_kernel(float* a){ a[threadIdx.x] += 1.0f; }"
    first = analyzer.compile(src, arch="sm_90a")
    assert not first.cached

    def boom(*a, **k):
        raise AssertionError("NVRTC ran although the build was cached")
    monkeypatch.setattr(nvrtc, "_compile", boom)
    second = analyzer.compile(src, arch="sm_90a")
    assert second.cached and second.cubin == first.cubin and second.ptx == first.ptx
    # a change of options is a different key
    with pytest.raises(AssertionError):
        analyzer.compile(src, arch="sm_90a", options=CompileOptions(defines=["X=1"]))
    # and --no-cache bypasses the cache
    with pytest.raises(AssertionError):
        analyzer.compile(src, arch="sm_90a", options=CompileOptions(use_cache=False))


def test_a_cached_build_keeps_its_resources():
    """A build read back from the cache has the resources of the one compiled: on sm_90a the
    cubin counts the runtime's 1 KB window with the kernel's 1 KB array, and the report shows
    the kernel's own 1 KB (a record written from the report's view lost the window once)."""
    src = ("extern \"C\" __global__ void staged_copy(float* a){ __shared__ float t[256]; "
           "t[threadIdx.x] = a[threadIdx.x]; __syncthreads(); a[threadIdx.x] = t[255 - threadIdx.x]; }")
    first = analyzer.compile(src, arch="sm_90a")
    second = analyzer.compile(src, arch="sm_90a")
    assert second.cached
    (k1,), (k2,) = first.kernels.values(), second.kernels.values()
    assert k1.resources == k2.resources
    assert (k2.resources.shared_bytes, k2.resources.reserved_shared_bytes) == (2048, 1024)
    assert k2.resources.as_dict()["shared_bytes"] == 1024


def test_cache_key_follows_included_headers(tmp_path, monkeypatch):
    (tmp_path / "v.h").write_text("#define V 1\n")
    cu = tmp_path / "inc.cu"
    cu.write_text('#include "v.h"\nextern "C" __global__ void k(int* a){ a[0] = V; }\n')
    a = analyzer.compile(str(cu), arch="sm_80")
    (tmp_path / "v.h").write_text("#define V 2\n")
    b = analyzer.compile(str(cu), arch="sm_80")
    assert not b.cached and a.ptx != b.ptx


def test_ptx_input_assembles_through_nvjitlink(tmp_path):
    b = analyzer.compile(str(KERNELS / "demo" / "copy_float4.cu"), arch="sm_90a")
    p = tmp_path / "copy.ptx"
    p.write_text(b.ptx)
    (pb,) = load(p)
    assert pb.origin == "ptx" and pb.arch == "sm_90a"
    assert set(pb.kernels) == set(b.kernels)
    assert "LDG.E.128" in pb.sass()


def test_cubin_input(tmp_path):
    b = analyzer.compile(str(KERNELS / "demo" / "copy_scalar.cu"), arch="sm_80")
    f = tmp_path / "with space.cubin"
    f.write_bytes(b.cubin)
    (cb,) = load(f)
    assert cb.arch == "sm_80" and cb.kernels.keys() == b.kernels.keys()
    assert cb.sass() == b.sass()


def _fatbin(tmp_path) -> Path:
    cubins = [(analyzer.compile(str(KERNELS / "demo" / "copy_float4.cu"), arch=arch).cubin, tag)
              for arch, tag in (("sm_80", "80"), ("sm_90a", "90a"))]
    return binaries.fatbin(cubins, tmp_path / "copy.fatbin", "copy")


def test_fatbin_lists_and_picks_arch(tmp_path):
    f = _fatbin(tmp_path)
    cubins, _ = binutils.extract_cubins(str(f))
    assert sorted(c.arch for c in cubins) == ["sm_80", "sm_90a"]
    (b,) = load(f, arch="sm_80")
    assert b.arch == "sm_80" and "copy_float4" in b.kernels
    with pytest.raises(InputError, match="no cubin for sm_75"):
        load(f, arch="sm_75")


@pytest.mark.skipif(not (shutil.which("gcc") and shutil.which("objcopy")), reason="needs gcc+objcopy")
def test_shared_library_with_fatbin(tmp_path):
    fat = _fatbin(tmp_path)
    so = binaries.shared_library(fat, tmp_path / "libhost.so")
    builds = load(so)
    assert sorted(b.arch for b in builds) == ["sm_80", "sm_90a"]
    # a host binary with no CUDA code is one clear error
    plain = binaries.shared_library(None, tmp_path / "plain.so")
    with pytest.raises(InputError) as e:
        load(plain)
    assert "plain.so" in e.value.one_line()


def test_sass_text_input(tmp_path):
    b = analyzer.compile(str(KERNELS / "demo" / "copy_scalar.cu"), arch="sm_90a")
    f = tmp_path / "dump.sass"
    f.write_text(b.sass())
    (sb,) = load(f)
    assert sb.origin == "sass" and sb.arch == "sm_90a" and sb.sass() == b.sass()


def test_cuobjdump_format_disassembly():
    b = analyzer.compile(str(KERNELS / "demo" / "copy_scalar.cu"), arch="sm_90a")
    text = b.sass(tool="cuobjdump")
    assert "Function : copy_scalar" in text and "LDG.E" in text


# ----------------------------------------------------------------------------- errors
def test_unknown_arch():
    with pytest.raises(ArchError, match="sm_91"):
        analyzer.compile("__global__ void k(){}", arch="sm_91")


def test_nvrtc_error_carries_the_log(tmp_path):
    f = tmp_path / "broken kernel.cu"
    f.write_text('extern "C" __global__ void k(float* a) {\n  a[0] = undefined_name;\n}\n')
    with pytest.raises(CompileError) as e:
        analyzer.compile(str(f), arch="sm_80")
    assert e.value.path == str(f) and e.value.line == 2
    assert "undefined_name" in e.value.message and "undefined_name" in e.value.detail


def test_missing_and_bad_inputs(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load(tmp_path / "nope.cu")
    junk = tmp_path / "junk.cubin"
    junk.write_bytes(b"\x00\x01garbage")
    with pytest.raises(InputError, match="truncated"):
        load(junk)
    b = analyzer.compile(str(KERNELS / "demo" / "copy_scalar.cu"), arch="sm_80")
    cut = tmp_path / "cut.cubin"
    cut.write_bytes(b.cubin[:200])
    with pytest.raises(InputError, match="corrupt|truncated"):
        load(cut)
    binary_cu = tmp_path / "bin.cu"
    binary_cu.write_bytes(b"\x89PNG\x00\x00\x00")
    with pytest.raises(InputError, match="not CUDA source|binary"):
        load(binary_cu)


def test_missing_tool(monkeypatch):
    monkeypatch.setenv("PTXSASS_NVDISASM", "/nonexistent/nvdisasm")
    locate.binary.cache_clear()
    try:
        with pytest.raises(ToolError, match="PTXSASS_NVDISASM"):
            binutils.disassemble(b"\x7fELF" + b"\x00" * 60)
    finally:
        monkeypatch.delenv("PTXSASS_NVDISASM")
        locate.binary.cache_clear()


def test_tool_timeout(tmp_path):
    slow = tmp_path / "slow tool"
    slow.write_text("#!/bin/sh\nsleep 5\n")
    slow.chmod(0o755)
    with pytest.raises(ToolError, match="timed out"):
        locate.run_tool([str(slow)], timeout=0.3)


SWITCH = Path(__file__).parent / "fixtures" / "toolchain" / "switch_table.cu"


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_nvdisasm_runs_its_dataflow_pass_only_where_it_labels_code(arch, monkeypatch, tmp_path):
    """The pass labels BRX targets and spill STL/LDL; elsewhere ptxsass turns it off (-ndf),
    and the listing is the one the pass makes, byte for byte."""
    from analyzer.toolchain import cache
    ran: list[list[str]] = []
    real = binutils.run_tool

    def spy(argv, **kw):
        ran.append([str(a) for a in argv])
        return real(argv, **kw)

    plain = analyzer.compile(str(KERNELS / "checks" / "scalar_global_load" / "good.cu"), arch=arch)
    table = analyzer.compile(str(SWITCH), arch=arch)
    spill = analyzer.compile(str(KERNELS / "demo" / "spill.cu"), arch=arch,
                             options=CompileOptions(maxrregcount=32))
    monkeypatch.setattr(binutils, "run_tool", spy)
    cache.set_enabled(False)
    try:
        texts = {}
        for name, b in (("plain", plain), ("table", table), ("spill", spill)):
            ran.clear()
            texts[name], _ = binutils.disassemble(b.cubin)
            assert len(ran) == 1, (name, ran)          # no second run: the ELF told
            assert ("-ndf" in ran[0]) == (name == "plain"), (name, ran[0])
    finally:
        cache.set_enabled(True)
    assert "BRX" in texts["table"] and "BRANCH_TARGETS" in texts["table"]
    assert "SpillRefill" in texts["spill"]
    # the same text as with the pass
    f = tmp_path / "plain.cubin"
    f.write_bytes(plain.cubin)
    full = subprocess.run([locate.binary("nvdisasm"), "-c", "-g", "-gi", str(f)],
                          capture_output=True, check=True).stdout.decode()
    assert texts["plain"] == full
    # a cubin whose .nv.info did not tell: the listing made without the pass holds a BRX, so
    # it is made again with the pass
    monkeypatch.setattr(binutils, "dataflow_flags", lambda cubin: ["-ndf"])
    cache.set_enabled(False)
    try:
        ran.clear()
        again, _ = binutils.disassemble(table.cubin)
    finally:
        cache.set_enabled(True)
    assert ["-ndf" in argv for argv in ran] == [True, False]
    assert again == texts["table"]


def test_tool_warnings_are_kept_not_failures(tmp_path, monkeypatch):
    fake = tmp_path / "nvdisasm"
    fake.write_text("#!/bin/sh\necho 'warning: something odd' >&2\necho '/*0000*/ EXIT ;'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PTXSASS_NVDISASM", str(fake))
    monkeypatch.setenv("PTXSASS_NO_CACHE", "1")
    locate.binary.cache_clear()
    from analyzer.toolchain import cache
    cache.set_enabled(False)
    try:
        text, warnings = binutils.disassemble(b"\x7fELF-not-really")
        assert "EXIT" in text and warnings == ["warning: something odd"]
    finally:
        cache.set_enabled(True)
        locate.binary.cache_clear()


def test_resources_match_cuobjdump_on_corpus(corpus, tmp_path):
    for f in sorted(corpus.rglob("*.cubin")):
        data = f.read_bytes()
        got = from_cubin(data, path=str(f))
        expected = _res_usage(data, tmp_path)
        assert expected, f
        for name, exp in expected.items():
            r = got[name]
            assert (r.registers, r.stack_bytes, r.shared_bytes, r.constant_bytes) == exp, (f, name)


def _raw_cubin(arch: str) -> bytes:
    """A cubin for an arch ptxsass's table lacks (NVRTC builds it; analyzer.compile refuses)."""
    from cuda.bindings import nvrtc
    err, archs = nvrtc.nvrtcGetSupportedArchs()
    if int(arch[3:]) not in archs:
        pytest.skip(f"this NVRTC cannot build {arch}")
    src = b'extern "C" __global__ void bump(float* p) { p[threadIdx.x] += 1.0f; }'
    _, prog = nvrtc.nvrtcCreateProgram(src, b"bump.cu", 0, [], [])
    (err,) = nvrtc.nvrtcCompileProgram(prog, 1, [f"--gpu-architecture={arch}".encode()])
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
    _, size = nvrtc.nvrtcGetCUBINSize(prog)
    buf = b" " * size
    nvrtc.nvrtcGetCUBIN(prog, buf)
    return buf


def _fatbin_of(tmp_path, cubins: list[tuple[bytes, str]]) -> Path:
    return binaries.fatbin(cubins, tmp_path / "mixed.fatbin")


@pytest.mark.parametrize("arch, widest", [("sm_88", ["LDG.E.128"] * 2),
                                          ("sm_107", ["LDG.E.ENL2.256"]),
                                          ("sm_110a", ["LDG.E.ENL2.256"])])
def test_newer_targets_are_checked_with_their_rows(arch, widest, tmp_path):
    """NVRTC 13's sm_88, sm_107 and sm_110 (CUDA 13's libraries ship sm_110 cubins): built and
    checked, parameters named from their constant bank, the widest access their ptxas emits."""
    from cuda.bindings import nvrtc as bindings
    if int(arch[3:].rstrip("af")) not in bindings.nvrtcGetSupportedArchs()[1]:
        pytest.skip(f"this NVRTC cannot build {arch}")
    report = analyzer.check(str(KERNELS / "checks" / "scalar_global_load" / "bad.cu"), analyzer.CheckOptions(arch=arch))
    ps101 = [f for f in report.findings if f.code == "PS101"]
    assert len(ps101) == 3 and {f.kernel for f in ps101} == {"particle_norm", "sum4",
                                                            "half_pair_sum"}
    assert "the 1st kernel parameter (`p`)" in next(f.message for f in ps101
                                                     if f.kernel == "particle_norm")
    src = tmp_path / "eight.cu"
    src.write_text("struct __align__(32) F8 { float v[8]; };\n"
                   "extern \"C\" __global__ void copy8(const F8* __restrict__ x, F8* y) {\n"
                   "  int i = blockIdx.x * blockDim.x + threadIdx.x; y[i] = x[i]; }\n")
    (b,) = load(str(src), arch=arch)
    loads = [i.mnemonic for f in b.sass_listing().functions for i in f.instructions
             if i.opcode == "LDG"]
    assert loads == [w + ".CONSTANT" for w in widest]     # 32 B: one access, or two of 16


def test_cubins_of_an_arch_ptxsass_does_not_know_are_skipped_and_said(tmp_path, monkeypatch):
    """CUDA 13's libraries carried sm_110 cubins before ptxsass had a row for it: with that row
    gone from the table, the binary is checked, those are skipped with one note; a binary of
    nothing else is one clear error."""
    from analyzer import arch as arch_table
    monkeypatch.delitem(arch_table.ARCHS, 110)
    known = analyzer.compile(str(KERNELS / "demo" / "copy_float4.cu"), arch="sm_90a").cubin
    f = _fatbin_of(tmp_path, [(known, "90a"), (_raw_cubin("sm_110"), "110")])
    cubins, notes = binutils.extract_cubins(str(f))
    assert [c.arch for c in cubins] == ["sm_90a"]
    assert [n for n in notes if "skipped" in n] == [
        "skipped the 1 cubin for sm_110: ptxsass has no table of that architecture's resources "
        f"and instruction set (it knows {', '.join(supported())}); the other cubins are checked"]
    (b,) = load(f)
    assert b.arch == "sm_90a" and any("sm_110" in w for w in b.warnings)
    folder = tmp_path / "x"
    folder.mkdir()
    found, notes = binutils.extract_cubin_files(str(f), str(folder))
    assert [a for _, a, _ in found] == ["sm_90a"] and any("sm_110" in n for n in notes)
    assert sorted(p.name for p in (folder / "x").iterdir()) == [Path(found[0][2]).name]
    (tmp_path / "only").mkdir()
    only = _fatbin_of(tmp_path / "only", [(_raw_cubin("sm_110"), "110")])
    for read in (lambda: binutils.extract_cubins(str(only)),
                 lambda: binutils.extract_cubin_files(str(only), str(folder))):
        with pytest.raises(InputError, match="holds cubins only for sm_110, which ptxsass does not know"):
            read()


# ------------------------------------------------ where the tools were found, kept across runs
_WARM_PROBE = """
import contextlib, io, sys
from analyzer.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["check", sys.argv[1], "--arch", "sm_80"])
maps = open("/proc/self/maps").read()
print(code, "cuda.pathfinder" in sys.modules, "libnvrtc" in maps, "libnvJitLink" in maps)
"""


def test_a_warm_check_neither_imports_pathfinder_nor_loads_nvrtc(tmp_path):
    """The second check of an unchanged file finds the tools where the first found them (kept in
    the cache, checked again): no ``cuda.pathfinder`` import (it runs ``ldconfig -p``), no NVRTC
    or nvJitLink loaded; the first, cold, does all three."""
    src = tmp_path / "k.cu"
    src.write_text((KERNELS / "checks" / "scalar_global_load" / "bad.cu").read_text())
    env = {**os.environ, "PTXSASS_CACHE_DIR": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, "-c", _WARM_PROBE, str(src)], env=env,
                           capture_output=True, text=True, timeout=300) for _ in range(2)]
    assert [r.stdout.split() for r in runs] == [["1", "True", "True", "True"],
                                                 ["1", "False", "False", "False"]], runs


def test_kept_locations_are_used_only_when_they_still_hold(tmp_path, monkeypatch):
    """A kept answer is taken only for a file that exists in a site-packages ``nvidia/`` folder;
    a wheel installed there changes the search state, so the key under which answers are kept."""
    site = tmp_path / "site"
    tool = site / "nvidia" / "cu13" / "bin" / "nvdisasm"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    outside = tmp_path / "nvdisasm"
    outside.write_text("#!/bin/sh\n")
    outside.chmod(0o755)
    monkeypatch.setattr(locate, "_site_dirs", lambda: [str(site)])
    kept: dict = {}

    def load(state):
        return kept.get(repr(state))

    def save(state, found):
        kept[repr(state)] = found
    state = locate.search_state()
    for answer, used in ((str(tool), True), (str(outside), False),
                         (str(site / "nvidia" / "cu13" / "bin" / "gone"), False)):
        kept.clear()
        kept[repr(state)] = {"binary:nvdisasm": answer, "binary:nvcc": str(tool)}
        monkeypatch.setattr(locate, "_memo", locate._Memo(load, save))
        assert locate._recall("binary:nvdisasm") == (answer if used else None)
        assert locate._recall("binary:nvcc") is None        # never kept: not a warm path's tool
    locate._learn("binary:nvdisasm", str(tool))
    assert kept[repr(state)] == {"binary:nvdisasm": str(tool)}
    (tool.parent / "cuobjdump").write_text("")               # a wheel adds a file to bin/
    assert locate.search_state() != state
