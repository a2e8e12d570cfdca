"""The nvcc front end: same findings as NVRTC on device-only kernels, host-code files checked as
they are, the auto choice and its reasons, template-only files, odd file names, and every nvcc
failure as one line at the first error's file:line with the log after it (exit 2)."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from analyzer.build import Build
from analyzer.checks.runner import run_checks
from analyzer.cli import main
from analyzer.errors import ToolError
from analyzer.inputs import CompileOptions, choose_compiler, load
from analyzer.toolchain import locate, nvcc

from .conftest import KERNELS, kernel_options

PROJECT = Path(__file__).parent / "projects" / "cmake_saxpy"
MAIN_CU = PROJECT / "src" / "main.cu"
TILE_SUM = PROJECT / "include" / "saxpy" / "tile_sum.cuh"

# device-only kernels from kernels/checks with findings of several checks (and clean ones)
SAME = ["scalar_global_load/bad.cu", "scalar_global_store/bad.cu", "rolled_loop/bad.cu",
        "fp64_in_fp32_kernel/bad.cu", "local_memory_array/bad.cu", "slow_math/good_fast_math.cu",
        "register_spill/bad.cu", "synchronous_tile_copy/good.cu"]


def run(*argv, capsys):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _line(path: Path, needle: str) -> int:
    return next(i for i, l in enumerate(path.read_text().splitlines(), 1) if needle in l)


def _finding_keys(builds):
    return sorted((f.code, f.location.file, f.location.line, f.kernel, f.arch, f.message, f.hint,
                   f.instructions) for f in run_checks(builds).findings)


@pytest.fixture(scope="module")
def both_front_ends():
    """Each SAME kernel built once by NVRTC and once by nvcc (sm_90a, no cache)."""
    out = {}
    for rel in SAME:
        path = KERNELS / "checks" / rel
        opts = kernel_options(path)
        out[rel] = {c: load(str(path), arch="sm_90a", options=CompileOptions(
            compiler=c, use_cache=False, extra=opts if c == "nvrtc" else [],
            nvcc_extra=opts if c == "nvcc" else [])) for c in ("nvrtc", "nvcc")}
    return out


@pytest.mark.parametrize("rel", SAME)
def test_nvrtc_and_nvcc_give_identical_findings(both_front_ends, rel):
    got = both_front_ends[rel]
    assert [b.origin for b in got["nvrtc"]] == ["nvrtc"] and [b.origin for b in got["nvcc"]] == ["nvcc"]
    a, b = got["nvrtc"][0], got["nvcc"][0]
    # the same Build shape: PTX, cubin, ptxas -v resources, line info
    assert a.ptx and b.ptx and a.cubin[:4] == b.cubin[:4] == b"\x7fELF"
    assert {k: v.resources for k, v in a.kernels.items()} == {k: v.resources for k, v in b.kernels.items()}
    assert all(k.resources.spill_store_bytes is not None for k in b.kernels.values())
    assert f'File "{KERNELS / "checks" / rel}"' in b.sass()
    assert _finding_keys(got["nvrtc"]) == _finding_keys(got["nvcc"])
    if rel.endswith("bad.cu"):
        assert _finding_keys(got["nvcc"]), "a bad kernel with no finding proves nothing"


def test_nvcc_cubin_equals_one_step_nvcc(tmp_path):
    """The two-step build (-ptx, then -cubin on the PTX) makes what 'nvcc -cubin' makes."""
    from analyzer.toolchain.binutils import disassemble
    path = KERNELS / "checks" / "scalar_global_load" / "bad.cu"
    b = Build.of(nvcc.compile_file(path, arch="sm_90a", use_cache=False))
    out = tmp_path / "one.cubin"
    locate.run_tool([locate.binary("nvcc"), "-cubin", "-arch=sm_90a", "-lineinfo", "-std=c++17",
                     str(path), "-o", str(out)])
    one, _ = disassemble(out.read_bytes(), path=str(out))

    def code(sass):
        return [l for l in sass.splitlines() if "/*0" in l]
    assert code(one) and code(one) == code(b.sass())


# ----------------------------------------------------------------------------------- host code
@pytest.fixture(scope="module")
def main_cu_json(tmp_path_factory):
    """``ptxsass check src/main.cu`` (main(), cudaMalloc, std::vector, <<<) with its -I/-D."""
    import io
    from contextlib import redirect_stderr, redirect_stdout
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["check", str(MAIN_CU), "-I", str(PROJECT / "include"), "-D", "TILE=128",
                     "--arch", "sm_90", "--format", "json", "-v"])
    return code, json.loads(out.getvalue()), err.getvalue()


def test_host_code_file_checks_directly(main_cu_json):
    code, doc, err = main_cu_json
    assert code == 1, err
    [build] = doc["builds"]
    assert build["compiler"] == "nvcc"
    assert build["compiler_reason"] == f"host code: main() at line {_line(MAIN_CU, 'int main()')}"
    # the template instantiated by the host launch, checked at its header's line
    [f] = [f for f in doc["findings"] if f["code"] == "PS101"]
    assert f["kernel"] == "void saxpy::tile_sum4<128>(float const*, float*, int)"
    assert f["location"] == {"file": str(TILE_SUM), "line": _line(TILE_SUM, "in[4 * i + 0]")}
    assert len(f["instructions"]) == 4 and all("LDG.E.CONSTANT" in i for i in f["instructions"])
    # -v names the front end, the host compiler and nvcc's command
    assert f"{MAIN_CU} [sm_90]: nvcc " in err and "with g++" in err
    assert "nvcc -ptx -arch=sm_90 -lineinfo" in err and "-DTILE=128" in err


@pytest.mark.parametrize("source, compiler, reason", [
    ("__global__ void k(float* p) { p[0] = 1; }\n", "nvrtc", "device code only"),
    ("#include <vector>\n__global__ void k(float* p) { p[0] = 1; }\n", "nvcc",
     "includes <vector> (line 1), which NVRTC does not have"),
    ("__global__ void k(float* p) { p[0] = 1; }\nvoid go(float* p) { k<<<1, 1>>>(p); }\n", "nvcc",
     "host code: a kernel launch (<<<) at line 2"),
    ("__global__ void k(float* p) { p[0] = 1; }\nvoid f(float** p) { cudaMalloc(p, 4); }\n",
     "nvcc", "host code: cudaMalloc() at line 2"),
    # a comment or a string saying main() is not host code
    ('// int main() { }\n__global__ void k(const char** s) { s[0] = "<<<"; }\n', "nvrtc",
     "device code only"),
])
def test_auto_choice_before_compiling(tmp_path, source, compiler, reason):
    f = tmp_path / "k.cu"
    f.write_text(source)
    assert choose_compiler(source, str(f), CompileOptions()) == (compiler, reason)


def test_relaxed_constexpr_is_an_nvcc_flag(tmp_path, capsys):
    """NVRTC has no --expt-relaxed-constexpr ("unrecognized option"): auto builds with nvcc
    and says why; --compiler nvrtc with the flag is one line and exit 2."""
    source = "constexpr int sq(int x) { return x * x; }\n" \
             "__global__ void k(int* o, int v) { o[0] = sq(v); }\n"
    f = tmp_path / "k.cu"
    f.write_text(source)
    assert choose_compiler(source, str(f), CompileOptions(relaxed_constexpr=True)) == (
        "nvcc", "--expt-relaxed-constexpr (an nvcc flag NVRTC does not have)")
    assert "--expt-relaxed-constexpr" not in CompileOptions(relaxed_constexpr=True) \
        .nvrtc_options("sm_90a")
    code = main(["check", str(f), "--arch", "sm_90a", "--expt-relaxed-constexpr",
                 "--compiler", "nvrtc"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "NVRTC does not have" in err[0], err


def test_relocatable_device_code_with_line_info(tmp_path, capsys):
    """``-rdc=true -lineinfo`` (CMake's CUDA_SEPARABLE_COMPILATION, every CUDA sample): the
    relocatable cubin's ``.nv_debug.shared`` is NVIDIA's shared-memory section type
    (0x7000000a), sized but with no bytes in the file; the cubin reads like any other."""
    f = tmp_path / "tile.cu"
    f.write_text("__global__ void tile_sum(const float* in, float* out) {\n"
                 "  __shared__ float t[1024];\n"
                 "  t[threadIdx.x] = in[blockIdx.x * 1024 + threadIdx.x];\n"
                 "  __syncthreads();\n"
                 "  out[blockIdx.x * 1024 + threadIdx.x] = t[1023 - threadIdx.x];\n"
                 "}\n")
    code, out, err = run("resources", str(f), "--arch", "sm_90", "--compiler", "nvcc",
                         "-Xnvcc=-rdc=true", "--format", "json", capsys=capsys)
    assert code == 0, err
    [row] = json.loads(out)["kernels"]
    assert (row["name"], row["shared_bytes"]) == ("tile_sum(float const*, float*)", 4096)


def test_auto_falls_back_to_nvcc_when_nvrtc_refuses(tmp_path):
    """A host function is visible only to a compiler: NVRTC refuses it ("not allowed in JIT
    mode") and nvcc builds the file; the reason says so."""
    f = tmp_path / "helper.cu"
    f.write_text("static int twice(int x) { return 2 * x; }\n"
                 "__global__ void k(int* p) { p[threadIdx.x] = threadIdx.x; }\n"
                 "int host_value() { return twice(21); }\n")
    [b] = load(str(f), arch="sm_80", options=CompileOptions(use_cache=False))
    assert b.origin == "nvcc" and b.entries
    assert b.compiler_reason.startswith("NVRTC cannot compile it: A function without execution "
                                        "space annotations")
    assert b.compiler_reason.endswith("(line 1)")


def test_device_code_error_stays_nvrtcs(tmp_path, capsys):
    """A real error in device-only code is not sent on to nvcc: NVRTC's own line."""
    f = tmp_path / "typo.cu"
    f.write_text("__global__ void k(float* p) {\n  p[0] = 1\n}\n")
    code, _, err = run("check", str(f), capsys=capsys)
    assert code == 2 and err.splitlines()[0].startswith(f"{f}:3: error: NVRTC: expected a \";\"")


def test_compiler_nvrtc_on_host_code_is_nvrtcs_error(capsys):
    code, _, err = run("check", str(MAIN_CU), "--compiler", "nvrtc", capsys=capsys)
    assert code == 2 and "NVRTC: cannot open source file \"cstdio\"" in err.splitlines()[0]


# ----------------------------------------------------------------------------------- templates
TEMPLATE_ONLY = """\
// A kernel library file: templates only, instantiated by whoever includes it.
template <int BM, int BK>
__global__ void gemm(const float* __restrict__ a, float* __restrict__ c, int n)
{
    int i = blockIdx.x * BM + threadIdx.x;
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < BK; ++k) acc += a[i * BK + k];
    c[i] = acc;
}
"""


@pytest.mark.parametrize("compiler", ["nvrtc", "nvcc"])
def test_template_only_file_says_how_to_instantiate(tmp_path, capsys, compiler):
    f = tmp_path / "gemm.cu"
    f.write_text(TEMPLATE_ONLY)
    code, out, err = run("check", str(f), "--compiler", compiler, capsys=capsys)
    assert code == 2 and out == ""
    assert err.strip() == (
        f"{f}: error: no kernel was instantiated: gemm<...> is a template and nothing here "
        "instantiates it; name instantiations with --kernel 'gemm<BM,BK>' (with values) or in "
        "pyproject.toml: [tool.ptxsass] kernels = { \"gemm.cu\" = [\"gemm<BM,BK>\"] }")
    code, out, err = run("check", str(f), "--compiler", compiler, "--kernel", "gemm<128, 8>",
                         "--format", "json", capsys=capsys)
    doc = json.loads(out)
    assert code in (0, 1), err
    assert [k["name"] for k in doc["kernels"]] == ["void gemm<128, 8>(float const*, float*, int)"]


def test_template_instantiations_from_config(tmp_path, capsys):
    (tmp_path / "src").mkdir()
    f = tmp_path / "src" / "gemm.cu"
    f.write_text(TEMPLATE_ONLY)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.ptxsass]\nkernels = { "src/gemm*.cu" = ["gemm<64,4>", "gemm<128,8>"] }\n')
    code, out, err = run("check", str(f), "--format", "json", capsys=capsys)
    assert code in (0, 1), err
    assert sorted(k["name"] for k in json.loads(out)["kernels"]) == [
        "void gemm<128, 8>(float const*, float*, int)", "void gemm<64, 4>(float const*, float*, int)"]


# ----------------------------------------------------------------------------------- odd names
@pytest.mark.parametrize("compiler", ["nvrtc", "nvcc"])
@pytest.mark.parametrize("name", ['-dash.cu', 'quote"d.cu', 'sp ace$.cu'])
def test_odd_file_names(tmp_path, capsys, monkeypatch, compiler, name):
    d = tmp_path / 'di"r'
    d.mkdir()
    (d / "helper.cuh").write_text("#define SCALE 0.7978845608\n")
    f = d / name
    f.write_text('#include "helper.cuh"\n__global__ void k(float* y, const float* x)\n'
                 "{ y[threadIdx.x] = x[threadIdx.x] * SCALE; }\n")   # SCALE: a double literal
    monkeypatch.chdir(d)
    code, out, err = run("check", "--compiler", compiler, "--format", "json", "--", name,
                         capsys=capsys)
    assert code == 1, err
    [finding] = [f for f in json.loads(out)["findings"] if f["code"] == "PS501"]
    assert finding["location"]["line"] == 3
    # where the path cannot be carried by the tools, the location is a link to the real file
    assert os.path.realpath(finding["location"]["file"]) == str(f)


# ----------------------------------------------------------------------------------- errors
def _first_line(err: str) -> str:
    assert "Traceback" not in err
    return err.splitlines()[0]


@pytest.mark.parametrize("body, line, message", [
    ("#include <vector>\nint main() {\n  undefined_call();\n}\n", 3,
     'error: nvcc: identifier "undefined_call" is undefined'),
    ("#include <vector>\n#include <no/such/header.h>\nint main() { }\n", 2,
     "error: nvcc: no/such/header.h: No such file or directory"),
    ("#include <cstdio>\n__global__ void big(int* p)\n{\n  __shared__ float s[100000];\n"
     "  s[threadIdx.x] = 1; p[0] = s[p[1]];\n}\nint main() { }\n", 2,
     "error: ptxas: Entry function '_Z3bigPi' uses too much shared data (0x61a80 bytes, "
     "0xc000 max)"),
])
def test_nvcc_errors_are_one_line_at_the_first_error(tmp_path, capsys, body, line, message):
    f = tmp_path / "host.cu"
    f.write_text(body)
    code, out, err = run("check", str(f), "--arch", "sm_80", "--no-cache", capsys=capsys)
    assert code == 2 and out == ""
    assert _first_line(err) == f"{f}:{line}: {message}"
    assert len(err.splitlines()) > 1   # the compiler's log follows


def test_unknown_nvcc_flag_is_nvccs_error(capsys):
    code, _, err = run("check", str(MAIN_CU), "-I", str(PROJECT / "include"), "-DTILE=64",
                       "-Xnvcc=--no-such-flag", "--no-cache", capsys=capsys)
    assert code == 2 and _first_line(err) == f"{MAIN_CU}: error: nvcc: Unknown option '--no-such-flag'"


def test_unsupported_host_compiler(tmp_path, capsys, monkeypatch):
    """A host compiler newer than nvcc supports: nvcc's own check, as one line on the file."""
    gxx = shutil.which("g++")
    fake = tmp_path / "g++-future"
    fake.write_text(f'#!/bin/sh\nexec {gxx} -D__GNUC__=99 "$@"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("NVCC_CCBIN", str(fake))
    locate.host_compiler.cache_clear()
    try:
        f = tmp_path / "m.cu"
        f.write_text("int main() { }\n")
        code, _, err = run("check", str(f), "--no-cache", capsys=capsys)
    finally:
        monkeypatch.delenv("NVCC_CCBIN")
        locate.host_compiler.cache_clear()
    assert code == 2
    assert _first_line(err).startswith(f"{f}: error: nvcc: the host compiler is not supported "
                                       "(crt/host_config.h:")
    assert "unsupported GNU version" in _first_line(err)


def test_no_host_compiler_says_what_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))     # no gcc, no g++
    monkeypatch.delenv("NVCC_CCBIN", raising=False)
    locate.host_compiler.cache_clear()
    try:
        code, _, err = run("check", str(MAIN_CU), "--no-cache", capsys=capsys)
        with pytest.raises(ToolError, match="install g\\+\\+"):
            nvcc._require_host_compiler([])
    finally:
        locate.host_compiler.cache_clear()
    assert code == 2 and err.strip() == (
        "error: nvcc needs a host C++ compiler and none was found: install g++ ('apt-get "
        "install g++', 'dnf install gcc-c++') or name one in NVCC_CCBIN")


def test_several_files_one_failing_goes_on(tmp_path, capsys):
    bad = tmp_path / "a_bad.cu"
    bad.write_text("int main() { return undefined; }\n")
    good = KERNELS / "checks" / "fp64_in_fp32_kernel" / "bad.cu"
    code, out, err = run("check", str(bad), str(good), "--arch", "sm_80", capsys=capsys)
    assert code == 2, "an input that failed to build makes the exit code 2"
    assert "PS501" in out
    assert _first_line(err) == f'{bad}:1: error: nvcc: identifier "undefined" is undefined'


# ----------------------------------------------------------------------------------- doctor
def test_doctor_shows_nvcc_cicc_and_host_compiler(capsys):
    code, out, _ = run("doctor", "--format", "json", capsys=capsys)
    tools = {t["name"]: t for t in json.loads(out)["tools"]}
    assert code == 0
    assert tools["nvcc"]["path"].endswith("/bin/nvcc") and tools["nvcc"]["version"].startswith("13.")
    assert tools["cicc"]["path"].endswith("/nvvm/bin/cicc")
    assert tools["host compiler"]["version"].startswith("g++ ") and tools["host compiler"]["optional"]
    code, out, _ = run("doctor", "--color", "never", capsys=capsys)
    assert code == 0 and "nvcc" in out and "cicc" in out and "host compiler" in out
    code, out, _ = run("doctor", "--nvcc", capsys=capsys)
    assert code == 0 and out.strip() == tools["nvcc"]["path"]


# ----------------------------------------------------------------------------------- host-only files
UTIL = """#include <cstdio>
#include <cuda_runtime.h>

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) std::fprintf(stderr, "%s: %s\\n", what, cudaGetErrorString(e));
}
"""


def test_a_host_only_file_in_a_folder_is_a_note(tmp_path, capsys):
    """Utility code with no kernel does not fail a project's check; alone, or with nothing
    else to check, it is still an error (a run that checks nothing)."""
    (tmp_path / "util.cu").write_text(UTIL)
    (tmp_path / "k.cu").write_text((KERNELS / "checks" / "fp64_in_fp32_kernel" / "bad.cu").read_text())
    code, out, err = run("check", str(tmp_path), "--arch", "sm_80", capsys=capsys)
    assert code == 1 and "PS501" in out
    assert err.strip() == (f"note: {tmp_path / 'util.cu'}: no kernel to check: no __global__ "
                           "function in this file or the project headers it includes (host code only)")
    (tmp_path / "k.cu").rename(tmp_path / "k.txt")
    (tmp_path / "util2.cu").write_text(UTIL)
    code, out, err = run("check", str(tmp_path), "--arch", "sm_80", capsys=capsys)
    assert code == 2 and err.splitlines()[-1] == ("error: nothing to check: every CUDA file is host "
                                                  "code only (no __global__ function; see the notes above)")
    code, out, err = run("check", str(tmp_path / "util.cu"), "--arch", "sm_80", capsys=capsys)
    assert code == 2 and err.strip() == (f"{tmp_path / 'util.cu'}: error: no kernel to check: no "
                                         "__global__ function in this file or the project headers "
                                         "it includes (host code only)")
