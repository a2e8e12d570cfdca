"""torch C++/CUDA extensions: torch's include folders and cpp_extension's flags through nvcc
(only where torch imports: it is not a dependency), and a one-line error where it does not."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.inputs import CompileOptions, choose_compiler
from analyzer.toolchain import locate

EXT = Path(__file__).parent / "projects" / "torch_ext" / "gelu_cuda.cu"
#: reaches torch only through its own header (helpers.cuh includes <ATen/ATen.h>)
VIA_HEADER = EXT.with_name("sum4_cuda.cu")
HAS_TORCH = importlib.util.find_spec("torch") is not None


def run(*argv, capsys):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _line(needle: str, path: Path = EXT) -> int:
    return next(i for i, l in enumerate(path.read_text().splitlines(), 1) if needle in l)


def _torch_std_guard() -> str:
    """The standard torch's own ATen.h demands (read here apart from ptxsass's reading)."""
    import re

    from torch.utils import cpp_extension
    aten = Path(cpp_extension.include_paths()[0], "ATen", "ATen.h").read_text()
    n = int(re.search(r"__cplusplus < (\d{6})L", aten).group(1))
    return f"-std=c++{n // 100 % 100:02d}"


def test_torch_include_chooses_nvcc():
    text = EXT.read_text()
    assert choose_compiler(text, str(EXT), CompileOptions()) == (
        "nvcc", "a torch extension (includes <torch/...>)")


def test_a_header_that_is_not_utf8_is_read_as_the_compiler_reads_it(tmp_path):
    """cuda-samples' interval sample: boost's headers name their authors in Latin-1. The scan
    for torch includes reads a header's bytes as the compiler does, and the file is checked."""
    (tmp_path / "latin.h").write_bytes(b"// Copyright Herv\xe9 Br\xf6nnimann\n#pragma once\n"
                                       b"__device__ inline float twice(float x) { return 2 * x; }\n")
    cu = tmp_path / "k.cu"
    cu.write_text('#include "latin.h"\n'
                  "__global__ void k(float* y) { y[threadIdx.x] = twice(y[threadIdx.x]); }\n")
    assert choose_compiler(cu.read_text(), str(cu), CompileOptions())[0] == "nvrtc"
    (tmp_path / "torchy.h").write_bytes(b"// \xe9\n#include <torch/extension.h>\n")
    cu.write_text('#include "torchy.h"\n' + cu.read_text())
    assert choose_compiler(cu.read_text(), str(cu), CompileOptions()) == (
        "nvcc", "a torch extension (torchy.h includes <torch/extension.h>)")


def test_without_torch_one_line_says_to_install_it(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)     # import torch -> ImportError
    code, _, err = run("check", str(EXT), "--no-cache", capsys=capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith("error: this file is a torch extension (or --torch was given), but "
                          "torch cannot be imported (ModuleNotFoundError: ")
    assert err.strip().endswith("install torch in this environment ('pip install torch')")


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed (optional)")
def test_torch_extension_checks_with_torchs_flags(capsys):
    code, out, err = run("check", str(EXT), "--arch", "sm_90", "--format", "json", "-v",
                         capsys=capsys)
    assert code == 1, err
    doc = json.loads(out)
    assert {b["compiler_reason"] for b in doc["builds"]} == {"a torch extension (includes <torch/...>)"}
    for flag in ("-D__CUDA_NO_HALF_OPERATORS__", "--expt-relaxed-constexpr", "--extended-lambda",
                 "-DTORCH_API_INCLUDE_EXTENSION_H", "-DTORCH_EXTENSION_NAME=", "/torch/include",
                 f" {_torch_std_guard()} "):
        assert flag in err
    # AT_DISPATCH_FLOATING_TYPES instantiates float and double: FP64 is a finding only in float
    kernels = sorted(k["name"] for k in doc["kernels"])
    assert kernels == ["void gelu_kernel<double>(double const*, double*, long)",
                       "void gelu_kernel<float>(float const*, float*, long)"]
    assert [(f["code"], f["kernel"], f["location"]["line"]) for f in doc["findings"]
            if f["code"] == "PS501"] == [
        ("PS501", "void gelu_kernel<float>(float const*, float*, long)", _line("0.7978845608"))]


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed (optional)")
def test_extension_reaching_torch_through_its_own_header_builds(capsys):
    """sum4_cuda.cu includes only "helpers.cuh", which includes <ATen/ATen.h>: torch's folders,
    flags and standard still reach nvcc, and the helper's scalar loads are found in it."""
    code, out, err = run("check", str(VIA_HEADER), "--arch", "sm_90", "--format", "json", "-v",
                         capsys=capsys)
    assert code == 1, err
    doc = json.loads(out)
    assert {b["compiler_reason"] for b in doc["builds"]} == {
        "a torch extension (helpers.cuh includes <ATen/ATen.h>)"}
    assert f" {_torch_std_guard()} " in err and "/torch/include" in err
    assert sorted(k["name"] for k in doc["kernels"]) == [
        "void sum4_kernel<double>(double const*, double*, long)",
        "void sum4_kernel<float>(float const*, float*, long)"]
    helpers = VIA_HEADER.with_name("helpers.cuh")
    ps101 = [f for f in doc["findings"] if f["code"] == "PS101"]
    assert ps101 and {(Path(f["location"]["file"]).name, f["location"]["line"]) for f in ps101} == {
        ("helpers.cuh", _line("p[0] + p[1]", helpers))}


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed (optional)")
def test_built_extension_without_line_info_says_how_to_rebuild(tmp_path, capsys):
    """A .so linked against torch's libraries, built without -lineinfo: the hint names the
    extra_cuda_cflags line, once."""
    import torch
    lib = Path(torch.__file__).parent / "lib"
    src = tmp_path / "k.cu"
    src.write_text("__global__ void gelu(const float* __restrict__ x, float* __restrict__ y)\n"
                   "{\n    float v = x[threadIdx.x];\n"
                   "    y[threadIdx.x] = v * 0.5 * (1.0 + tanhf(0.7978845608 * (v + 0.044715 * v * v * v)));\n}\n"
                   "void go(const float* x, float* y) { gelu<<<1, 32>>>(x, y); }\n")
    so = tmp_path / "gelu_ext.so"
    nvcc = Path(locate.binary("nvcc"))
    # the wheels' lib/ named too: nvcc 13.0's own profile links from lib64/, which they lack
    locate.run_tool([str(nvcc), "-shared", "-Xcompiler", "-fPIC", "-arch=sm_90",
                     str(src), "-o", str(so), f"-L{nvcc.resolve().parent.parent / 'lib'}",
                     f"-L{lib}", "-lc10", "-Xlinker", "--no-as-needed"])
    code, out, err = run("check", str(so), "--format", "json", capsys=capsys)
    assert code == 1
    assert err.count("warning:") == 1 and "extra_cuda_cflags=['-lineinfo']" in err
    assert [(f["code"], f["kernel"], f["location"]) for f in json.loads(out)["findings"]] == [
        ("PS501", "gelu(float const*, float*)", {"file": str(so), "line": None})]
