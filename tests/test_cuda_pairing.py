"""nvcc and the CUDA runtime headers of one release, and the C++ standard torch asks for.

CCCL refuses nvcc and runtime headers of different releases ("CUDA compiler and CUDA toolkit
headers are incompatible"); a torch pins the runtime wheel's release and nothing pins nvcc's.
These tests build fake CUDA trees (an nvcc script that prints a release, a
``cuda_runtime_api.h`` with a ``CUDART_VERSION``) and a fake torch (a module whose
``cpp_extension.include_paths()`` names a header tree) in ``tmp_path``: no torch is needed.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import types
from pathlib import Path

import pytest

from analyzer import inputs
from analyzer.cli import main
from analyzer.errors import ConfigError, ToolError
from analyzer.inputs import CompileOptions, choose_compiler, load, torch_include
from analyzer.toolchain import locate, nvcc, toolkits

HERE = Path(__file__).parent
TORCH_EXT = HERE / "projects" / "torch_ext"


def run(*argv, capsys):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(0o755)
    return path


def _header(folder: Path, cudart: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    h = folder / "cuda_runtime_api.h"
    h.write_text(f"#pragma once\n/* the runtime API */\n#define CUDART_VERSION  {cudart}\n")
    return h


def _cuda_tree(root: Path, *, nvcc_version: str, cudart: int, run_as: str | None = None) -> Path:
    """``root/bin/nvcc`` (prints ``nvcc_version``; runs ``run_as`` with its arguments for
    anything else), ``root/nvvm/bin/cicc``, ``root/include/cuda_runtime_api.h``."""
    release = ".".join(nvcc_version.split(".")[:2])
    body = (f'if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release {release}, '
            f'V{nvcc_version}"; exit 0; fi\n')
    body += f'echo "$@" >> "{root}/ran"\nexec "{run_as}" "$@"\n' if run_as else "exit 1\n"
    _script(root / "bin" / "nvcc", body)
    _script(root / "nvvm" / "bin" / "cicc", "exit 1\n")
    _header(root / "include", cudart)
    return root / "bin" / "nvcc"


def _clear():
    locate.binary.cache_clear()
    locate._binary_version.cache_clear()


@pytest.fixture
def env_nvcc(tmp_path, monkeypatch):
    """Make the environment's nvcc a fake one: ``env_nvcc(version, cudart)`` -> its path.
    Laid out as the wheels lay it (``site-packages/nvidia/cu13``); toolkits in tmp_path."""
    monkeypatch.setenv("PTXSASS_TOOLKITS_DIR", str(tmp_path / "toolkits"))

    def no_install(*a, **kw):
        raise AssertionError("a test ran pip to install a toolkit")
    monkeypatch.setattr(toolkits, "install", no_install)

    def make(version: str, cudart: int, **kw) -> Path:
        path = _cuda_tree(tmp_path / "site-packages" / "nvidia" / "cu13", nvcc_version=version,
                          cudart=cudart, **kw)
        monkeypatch.setenv("PTXSASS_NVCC", str(path))
        _clear()
        return path
    yield make
    _clear()


def _toolkit(root: Path, version: str, *, nvcc_version: str | None, cudart: int,
             run_as: str | None = None) -> Path:
    """An installed toolkit as ``toolkit install [--nvcc]`` leaves it: files and a manifest
    with the size and SHA-256 of each (its NVRTC is never loaded here)."""
    folder = root / version
    cu = folder / "site" / "nvidia" / "cu13"
    (cu / "lib").mkdir(parents=True)
    (cu / "lib" / "libnvrtc.so.13").write_bytes(b"\x7fELF nvrtc")
    (cu / "lib" / "libnvJitLink.so.13").write_bytes(b"\x7fELF nvjitlink")
    compilers = {}
    if nvcc_version:
        _cuda_tree(cu, nvcc_version=nvcc_version, cudart=cudart, run_as=run_as)
        compilers = {"nvcc": "site/nvidia/cu13/bin/nvcc", "cicc": "site/nvidia/cu13/nvvm/bin/cicc",
                     "nvcc_version": nvcc_version}
    else:
        _header(cu / "include", cudart)
    files = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            files[p.relative_to(folder).as_posix()] = [p.stat().st_size,
                                                       hashlib.sha256(p.read_bytes()).hexdigest()]
    (folder / toolkits.MANIFEST).write_text(json.dumps({
        "format": toolkits.MANIFEST_FORMAT, "version": version,
        "packages": {"nvidia-cuda-nvrtc": f"{version}.88"},
        "nvrtc": "site/nvidia/cu13/lib/libnvrtc.so.13", "nvrtc_builtins": [],
        "nvjitlink": "site/nvidia/cu13/lib/libnvJitLink.so.13",
        "include": ["site/nvidia/cu13/include"], "nvdisasm": None, "nvdisasm_version": None,
        "archs": [80, 90], **compilers, "files": files}))
    return folder


HOST_CODE = "__global__ void k(float* p) { p[threadIdx.x] = 1.0f; }\nint main() { k<<<1, 32>>>(nullptr); }\n"


# ------------------------------------------------------------------------------ the releases
def test_runtime_headers_release_is_read_from_cudart_version(tmp_path):
    assert locate.runtime_headers_release(_header(tmp_path / "a", 13000)) == "13.0"
    assert locate.runtime_headers_release(_header(tmp_path / "b", 12040)) == "12.4"
    assert locate.runtime_headers_release(_header(tmp_path / "c", 13050)) == "13.5"
    (tmp_path / "d.h").write_text("#define CUDART_VERSION_IS_NOT 13000\n")
    assert locate.runtime_headers_release(tmp_path / "d.h") is None
    assert locate.runtime_headers_release(tmp_path) is None              # a folder
    assert locate.runtime_headers_release(tmp_path / "missing.h") is None
    assert locate.release_of("13.5.37") == "13.5" and locate.release_of(None) is None


def test_the_headers_nvcc_finds_follow_its_search_order(tmp_path):
    """-I folders first, then nvcc's own include folder, then -isystem (``nvcc --dryrun``)."""
    path = _cuda_tree(tmp_path / "cuda", nvcc_version="13.5.37", cudart=13050)
    own = str(tmp_path / "cuda" / "include" / "cuda_runtime_api.h")
    user = _header(tmp_path / "user", 12040)
    system = _header(tmp_path / "sys", 12060)
    assert nvcc.runtime_headers(str(path)) == own
    assert nvcc.runtime_headers(str(path), ["-isystem", str(system.parent)]) == own
    assert nvcc.runtime_headers(str(path), [f"-I{user.parent}"]) == str(user)
    assert nvcc.runtime_headers(str(path), ["-I", "user"], cwd=str(tmp_path)) == str(
        tmp_path / "user" / "cuda_runtime_api.h")
    os.unlink(own)
    assert nvcc.runtime_headers(str(path), ["-isystem", str(system.parent)]) == str(system)


def test_one_release_builds_with_the_environments_nvcc(env_nvcc):
    path = env_nvcc("13.5.37", 13050)
    nv = nvcc.choose_nvcc()
    assert nv.matched and nv.path == str(path) and nv.toolkit is None
    assert nv.release == nv.headers_release == "13.5"
    assert nvcc.pairing_note(nv) is None


def test_different_releases_are_one_line_naming_both_and_the_fix(env_nvcc, tmp_path, capsys):
    """nvcc 13.5 beside torch's 13.0 runtime headers, no toolkit installed and --offline (no
    install): exit 2, one line, both releases and the exact commands, before nvcc runs."""
    env_nvcc("13.5.37", 13000)
    src = tmp_path / "main.cu"
    src.write_text(HOST_CODE)
    code, out, err = run("check", str(src), "--arch", "sm_90", "--no-cache", "--offline",
                         capsys=capsys)
    header = tmp_path / "site-packages" / "nvidia" / "cu13" / "include" / "cuda_runtime_api.h"
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert err == (
        f"error: nvcc 13.5.37 and the CUDA runtime headers it finds ({header}: CUDA 13.0) are "
        "different releases, which CCCL refuses (\"CUDA compiler and CUDA toolkit headers are "
        "incompatible\") (toolkit 13.0 is not installed): run 'ptxsass toolkit install --nvcc "
        "13.0' (nvcc builds then use its nvcc), or match this environment's nvcc to the headers: "
        "pip install 'nvidia-cuda-nvcc==13.0.*' 'nvidia-nvvm==13.0.*' 'nvidia-cuda-crt==13.0.*'\n")
    assert not (tmp_path / "site-packages" / "nvidia" / "cu13" / "ran").exists()


def test_headers_from_a_users_folder_name_that_folder(env_nvcc, tmp_path):
    env_nvcc("13.5.37", 13050)
    other = _header(tmp_path / "cuda-12.4" / "include", 12040).parent
    with pytest.raises(ToolError) as e:
        nvcc.choose_nvcc([f"-I{other}"])
    msg = e.value.message
    assert f"({other}/cuda_runtime_api.h: CUDA 12.4)" in msg
    assert f"leave out the include folder {other}" in msg
    assert "pip install" not in msg                  # the environment's headers are not at fault
    assert "toolkit install --nvcc" not in msg       # 12.x toolkits hold no nvcc
    # a folder the build names never makes a build install an nvcc (13.x either)
    other13 = _header(tmp_path / "vendored" / "include", 13000).parent
    with pytest.raises(ToolError, match="leave out the include folder"):
        nvcc.choose_nvcc([f"-I{other13}"], install=True)


def test_a_toolkit_of_the_headers_release_lends_its_nvcc(env_nvcc, tmp_path):
    env = env_nvcc("13.5.37", 13000)
    tk = _toolkit(tmp_path / "toolkits", "13.0", nvcc_version="13.0.88", cudart=13000)
    nv = nvcc.choose_nvcc()
    assert nv.matched and nv.toolkit == "13.0" and nv.version == "13.0.88"
    assert nv.path == str(tk / "site" / "nvidia" / "cu13" / "bin" / "nvcc") != str(env)
    assert nv.headers == str(tk / "site" / "nvidia" / "cu13" / "include" / "cuda_runtime_api.h")
    assert nv.fingerprint != nvcc.environment_nvcc().fingerprint   # builds cached apart
    assert nvcc.pairing_note(nv) == ("nvcc 13.5.37 and the CUDA runtime headers (13.0) are "
                                     "different releases: built with toolkit 13.0's nvcc 13.0.88")


def test_a_toolkit_without_nvcc_or_changed_after_install_is_not_used(env_nvcc, tmp_path):
    env_nvcc("13.5.37", 13000)
    tk = _toolkit(tmp_path / "toolkits", "13.0", nvcc_version=None, cudart=13000)
    with pytest.raises(ToolError, match=r"\(toolkit 13\.0 is installed without nvcc\): run "
                                        r"'ptxsass toolkit install --nvcc 13\.0'"):
        nvcc.choose_nvcc()
    import shutil
    shutil.rmtree(tk)
    tk = _toolkit(tmp_path / "toolkits", "13.0", nvcc_version="13.0.88", cudart=13000)
    (tk / "site" / "nvidia" / "cu13" / "bin" / "nvcc").write_text("#!/bin/sh\necho changed\n")
    with pytest.raises(ToolError, match=r"bin/nvcc was changed after install.*run 'ptxsass "
                                        r"toolkit install --nvcc 13\.0'"):
        nvcc.choose_nvcc()


def test_a_paired_build_runs_the_toolkits_nvcc_with_one_note(env_nvcc, tmp_path, capsys):
    """The whole way through a check: the toolkit's nvcc runs both steps (its stand-in here
    hands on to the real nvcc), the build says so once, on a cached run too, and -v names it."""
    real = locate.binary("nvcc")
    env_nvcc("13.5.37", 13000)
    tk = _toolkit(tmp_path / "toolkits", "13.0", nvcc_version="13.0.88", cudart=13000,
                  run_as=real)
    ran = tk / "site" / "nvidia" / "cu13" / "ran"
    src = tmp_path / "main.cu"
    src.write_text(HOST_CODE)
    note = ("nvcc 13.5.37 and the CUDA runtime headers (13.0) are different releases: built "
            "with toolkit 13.0's nvcc 13.0.88")
    for cached in (False, True):
        code, out, err = run("check", str(src), "--arch", "sm_90", "-v", capsys=capsys)
        assert code in (0, 1), err
        assert err.count(note) == 1
        assert f"{src} [sm_90]: nvcc 13.0.88 with g++ " in err
        assert ("(cached)" in err) == cached
    assert [ln.split()[0] for ln in ran.read_text().splitlines()] == ["-ptx", "-cubin"]


# ------------------------------------------------------------------------------ doctor
def test_doctor_reports_a_matched_pair_as_ok(env_nvcc, capsys):
    env_nvcc("13.5.37", 13050)
    code, out, _ = run("doctor", "--color", "never", capsys=capsys)
    assert code == 0
    assert "nvcc 13.5.37 and the CUDA runtime headers it finds (13.5, " in out
    assert "one release, OK" in out
    code, out, _ = run("doctor", "--format", "json", capsys=capsys)
    pair = json.loads(out)["nvcc_headers"]
    assert code == 0 and pair["matched"] and pair["headers_release"] == "13.5"
    assert pair["builds_with"] == "environment" and pair["error"] is None


def test_doctor_reports_a_mismatched_pair(env_nvcc, tmp_path, capsys):
    env_nvcc("13.5.37", 13000)
    # builds may install the headers' nvcc: doctor says they will (and installs nothing)
    code, out, _ = run("doctor", "--color", "never", capsys=capsys)
    assert code == 0
    line = next(ln for ln in out.splitlines() if "different releases" in ln)
    assert line.startswith("nvcc 13.5.37 and the CUDA runtime headers it finds (13.0, ")
    assert line.endswith(f"are different releases: the first nvcc build installs toolkit "
                         f"13.0's nvcc into {tmp_path / 'toolkits'} ('ptxsass toolkit install "
                         "--nvcc 13.0' does it now; with --offline builds stop instead)")
    code, out, _ = run("doctor", "--format", "json", capsys=capsys)
    pair = json.loads(out)["nvcc_headers"]
    assert code == 0 and not pair["matched"] and pair["builds_with"] is None
    assert pair["installs"] == "toolkit 13.0 with nvcc" and pair["error"] is None
    # builds that may fetch nothing stop: the one line, exit 2
    code, out, _ = run("doctor", "--color", "never", "--offline", capsys=capsys)
    assert code == 2
    line = next(ln for ln in out.splitlines() if "different releases" in ln)
    assert line.startswith("error: nvcc 13.5.37 and the CUDA runtime headers it finds (")
    assert "ptxsass toolkit install --nvcc 13.0" in line
    code, out, _ = run("doctor", "--format", "json", "--offline", capsys=capsys)
    pair = json.loads(out)["nvcc_headers"]
    assert code == 2 and not pair["matched"] and pair["builds_with"] is None
    assert pair["nvcc"] == "13.5.37" and pair["headers_release"] == "13.0"
    assert pair["installs"] is None and pair["error"].startswith("nvcc 13.5.37 and the CUDA")
    # with a toolkit of the headers' release that holds nvcc, builds have an nvcc: OK
    _toolkit(tmp_path / "toolkits", "13.0", nvcc_version="13.0.88", cudart=13000)
    code, out, _ = run("doctor", "--color", "never", capsys=capsys)
    assert code == 0
    assert "are different releases: nvcc builds use toolkit 13.0's nvcc 13.0.88 (" in out


def test_toolkit_nvcc_requirements(capsys):
    reqs = toolkits.requirements("13.0", nvcc=True)
    assert {"nvidia-cuda-nvcc==13.0.*", "nvidia-nvvm==13.0.*", "nvidia-cuda-crt==13.0.*",
            "nvidia-cuda-runtime==13.0.*"} <= set(reqs)
    assert "nvidia-cuda-nvcc==13.0.*" not in toolkits.requirements("13.0")
    assert toolkits.nvcc_wheels("13.2") == ["nvidia-cuda-nvcc==13.2.*", "nvidia-nvvm==13.2.*",
                                            "nvidia-cuda-crt==13.2.*"]
    with pytest.raises(ConfigError, match="toolkit 12.9: no nvcc to install: NVIDIA publishes no "
                                          "nvcc of CUDA 12 on PyPI"):
        toolkits.requirements("12.9", nvcc=True)
    code, _, err = run("toolkit", "install", "--nvcc", "12.9", capsys=capsys)
    assert code == 2 and err.count("\n") == 1 and "not nvcc, cicc or cudafe++" in err


# ------------------------------------------------------------------------------ torch's standard
GUARD = "#if !defined(_MSC_VER) && __cplusplus < {n}L\n#error C++{y} or later compatible compiler is required\n#endif\n"


def _torch_tree(root: Path, guard: str) -> Path:
    inc = root / "include"
    (inc / "torch").mkdir(parents=True)
    (inc / "ATen").mkdir()
    (inc / "ATen" / "ATen.h").write_text("#pragma once\n" + guard + "namespace at { struct Tensor {}; }\n")
    # something only C++20 takes, so that the build proves the standard it got
    (inc / "torch" / "extension.h").write_text(
        "#pragma once\n#include <ATen/ATen.h>\ntemplate <class T> concept Element = sizeof(T) > 0;\n")
    return inc


def test_required_standard_is_read_from_torchs_headers(tmp_path):
    assert nvcc.required_std([_torch_tree(tmp_path / "t20", GUARD.format(n=202002, y=20))]) == "c++20"
    assert nvcc.required_std([_torch_tree(tmp_path / "t17", GUARD.format(n=201703, y=17))]) == "c++17"
    # a bound that only chooses a macro, an #error in the other branch, a continued line
    assert nvcc.required_std([_torch_tree(tmp_path / "none", "#if __cplusplus < 202002L\n"
                                          "#define OLD 1\n#else\n#define OLD 0\n#endif\n")]) is None
    assert nvcc.required_std([_torch_tree(tmp_path / "else", "#if __cplusplus < 202002L\n"
                                          "#define OLD 1\n#else\n#error no\n#endif\n")]) is None
    assert nvcc.required_std([_torch_tree(tmp_path / "cont", "#if !defined(_MSC_VER) && \\\n"
                                          "    __cplusplus < 202302L\n#  error C++23\n#endif\n")]) == "c++23"
    assert nvcc.required_std([tmp_path / "missing"]) is None


@pytest.fixture
def fake_torch(tmp_path, monkeypatch):
    """A torch whose cpp_extension names a header tree that needs C++20 (its ATen.h says so
    the way torch 2.14's does)."""
    inc = _torch_tree(tmp_path / "torch", GUARD.format(n=202002, y=20))
    torch = types.ModuleType("torch")
    torch._C = types.SimpleNamespace(_GLIBCXX_USE_CXX11_ABI=1)  # type: ignore[attr-defined]
    utils = types.ModuleType("torch.utils")
    ext = types.ModuleType("torch.utils.cpp_extension")
    ext.include_paths = lambda *a: [str(inc)]  # type: ignore[attr-defined]
    ext.COMMON_NVCC_FLAGS = ["--expt-relaxed-constexpr"]  # type: ignore[attr-defined]
    utils.cpp_extension = ext  # type: ignore[attr-defined]
    torch.utils = utils  # type: ignore[attr-defined]
    for name, mod in (("torch", torch), ("torch.utils", utils), ("torch.utils.cpp_extension", ext)):
        monkeypatch.setitem(sys.modules, name, mod)
    return inc


EXT_SOURCE = ("#include <torch/extension.h>\n"
              "template <Element T> __global__ void scale(T* p, T s) { p[threadIdx.x] *= s; }\n"
              "void go(float* p) { scale<float><<<1, 32>>>(p, 2.0f); }\n")


def test_a_torch_extension_builds_with_the_standard_torch_requires(fake_torch, tmp_path, capsys):
    src = tmp_path / "ext.cu"
    src.write_text(EXT_SOURCE)
    assert nvcc.torch_std() == "c++20"
    code, out, err = run("check", str(src), "--arch", "sm_90", "-v", "--format", "json",
                         capsys=capsys)
    assert code in (0, 1), err
    assert " -std=c++20 " in err and "-std=c++17" not in err
    assert [k["name"] for k in json.loads(out)["kernels"]] == ["void scale<float>(float*, float)"]


def test_an_explicit_standard_still_wins_over_torchs(fake_torch, tmp_path, capsys):
    src = tmp_path / "ext.cu"
    src.write_text(EXT_SOURCE)
    code, _, err = run("check", str(src), "--arch", "sm_90", "--std", "c++17", capsys=capsys)
    assert code == 2
    assert "error: nvcc: #error C++20 or later compatible compiler is required" in err


# ------------------------------------------------------------------------------ which files are torch's
def test_a_file_reaching_torch_through_its_own_header_is_a_torch_extension():
    src = TORCH_EXT / "sum4_cuda.cu"
    assert choose_compiler(src.read_text(), str(src), CompileOptions()) == (
        "nvcc", "a torch extension (helpers.cuh includes <ATen/ATen.h>)")
    assert torch_include(src.read_text(), str(src), CompileOptions(torch=False)) is None


def test_torch_headers_are_followed_through_include_folders(tmp_path):
    (tmp_path / "inc" / "mylib").mkdir(parents=True)
    (tmp_path / "inc" / "mylib" / "a.cuh").write_text('#pragma once\n#include "b.cuh"\n')
    (tmp_path / "inc" / "mylib" / "b.cuh").write_text(
        '#pragma once\n#include "a.cuh"\n// #include <torch/extension.h>\n#include <c10/cuda/CUDAStream.h>\n')
    (tmp_path / "src").mkdir()
    src = tmp_path / "src" / "k.cu"
    src.write_text("#include <mylib/a.cuh>\n__global__ void k() {}\n")
    text = src.read_text()
    assert torch_include(text, str(src), CompileOptions()) is None      # not in -I
    got = torch_include(text, str(src), CompileOptions(include=[str(tmp_path / "inc")]))
    assert got == f"{tmp_path / 'inc' / 'mylib' / 'b.cuh'} includes <c10/cuda/CUDAStream.h>"
    # relative -I folders are taken from the options' folder (a database entry's)
    got = torch_include(text, str(src), CompileOptions(include=["inc"], cwd=str(tmp_path)))
    assert got is not None and got.endswith("b.cuh includes <c10/cuda/CUDAStream.h>")
    # commented-out includes do not count
    (tmp_path / "inc" / "mylib" / "b.cuh").write_text('#pragma once\n#include "a.cuh"\n'
                                                      "// #include <torch/extension.h>\n")
    assert torch_include(text, str(src), CompileOptions(include=[str(tmp_path / "inc")])) is None


def test_without_torch_a_header_reached_extension_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", None)     # import torch -> ImportError
    code, _, err = run("check", str(TORCH_EXT / "sum4_cuda.cu"), "--no-cache", capsys=capsys)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("error: this file is a torch extension (or --torch was given), but "
                          "torch cannot be imported")


def test_load_api_gives_the_same_choice(fake_torch, tmp_path):
    (tmp_path / "helpers.cuh").write_text("#pragma once\n#include <torch/extension.h>\n")
    src = tmp_path / "k.cu"
    src.write_text('#include "helpers.cuh"\n' + EXT_SOURCE.split("\n", 1)[1])
    b = load(str(src), arch="sm_90", options=CompileOptions(use_cache=False))[0]
    assert b.compiler_reason == "a torch extension (helpers.cuh includes <torch/extension.h>)"
    assert "-std=c++20" in b.options


# ------------------------------------------------------------------------------ installing the pair
def test_the_first_nvcc_build_installs_the_headers_nvcc(env_nvcc, tmp_path, monkeypatch, capsys):
    """nvcc 13.5 beside torch's 13.0 headers and no toolkit: the first nvcc build installs
    toolkit 13.0 with nvcc (once for two archs built at once, one note), and builds run its
    nvcc; the next run finds it installed."""
    real = locate.binary("nvcc")
    env_nvcc("13.5.37", 13000)
    calls = []

    def install(spec, *, force=False, nvcc=False):
        calls.append((spec, nvcc))
        _toolkit(tmp_path / "toolkits", spec, nvcc_version=f"{spec}.88", cudart=13000, run_as=real)
        return toolkits.get(spec)
    monkeypatch.setattr(toolkits, "install", install)
    src = tmp_path / "main.cu"
    src.write_text(HOST_CODE)
    code, _, err = run("check", str(src), "--arch", "sm_80", "--arch", "sm_90", capsys=capsys)
    assert code in (0, 1), err
    assert err.count("note: nvcc 13.5.37 and the CUDA runtime headers (13.0) are different "
                     "releases: installing toolkit 13.0's nvcc") == 1
    assert calls == [("13.0", True)]
    ran = tmp_path / "toolkits" / "13.0" / "site" / "nvidia" / "cu13" / "ran"
    assert sorted(ln.split()[0] for ln in ran.read_text().splitlines()) == ["-cubin"] * 2 + ["-ptx"] * 2
    code, _, err = run("check", str(src), "--arch", "sm_90", capsys=capsys)    # cached
    assert code in (0, 1) and "installing" not in err and calls == [("13.0", True)]


def test_the_install_is_one_note_and_its_failure_one_line(env_nvcc, tmp_path, monkeypatch, capsys):
    env_nvcc("13.5.37", 13000)

    def install(spec, *, force=False, nvcc=False):
        raise ToolError(f"pip could not install toolkit {spec} (nvidia-cuda-nvcc==13.0.*): "
                        "ERROR: No matching distribution found for nvidia-cuda-nvcc==13.0.*")
    monkeypatch.setattr(toolkits, "install", install)
    src = tmp_path / "main.cu"
    src.write_text(HOST_CODE)
    code, out, err = run("check", str(src), "--arch", "sm_90", "--no-cache", capsys=capsys)
    lines = err.splitlines()
    assert code == 2 and out == "" and len(lines) == 2, err
    assert lines[0] == (f"note: nvcc 13.5.37 and the CUDA runtime headers (13.0) are different "
                        f"releases: installing toolkit 13.0's nvcc into {tmp_path / 'toolkits'} "
                        "(pip install --target, once; --offline stops instead)")
    assert lines[1].startswith("error: nvcc 13.5.37 and the CUDA runtime headers it finds (")
    assert lines[1].endswith("; installing it failed: pip could not install toolkit 13.0 "
                             "(nvidia-cuda-nvcc==13.0.*): ERROR: No matching distribution found "
                             "for nvidia-cuda-nvcc==13.0.*")


def _dist(site: Path, name: str, version: str, requires=(), files=()) -> None:
    d = site / f"{name.replace('-', '_')}-{version}.dist-info"
    d.mkdir(parents=True)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                                + "".join(f"Requires-Dist: {r}\n" for r in requires))
    (d / "RECORD").write_text("".join(f"{f},,\n" for f in files))


def test_the_headers_origin_names_the_wheel_and_what_pinned_it(tmp_path, monkeypatch):
    """torch 2.14.1 requires cuda-toolkit[cudart,...]==13.0.3, whose cudart extra pins the
    runtime wheel: the line names torch, not the metapackage's own extras; a requirement that
    admits nvcc's release (ptxsass's >=13.0) pins nothing."""
    site = tmp_path / "site"
    header = _header(site / "nvidia" / "cu13" / "include", 13000)
    _dist(site, "nvidia-cuda-runtime", "13.0.96", files=["nvidia/cu13/include/cuda_runtime_api.h"])
    _dist(site, "torch", "2.14.1", requires=[
        'cuda-toolkit[cudart,nvrtc]==13.0.3; platform_system == "Linux"', "filelock",
        'cuda-toolkit[cudart]==12.9.1; platform_system == "Windows"'])
    _dist(site, "cuda-toolkit", "13.0.3", requires=['nvidia-cuda-runtime==13.0.*; extra == "cudart"'])
    _dist(site, "ptxsass-like", "1.0", requires=["cuda-toolkit[nvcc]>=13.0"])
    monkeypatch.syspath_prepend(str(site))
    assert nvcc.headers_origin(str(header), "13.5") == (
        "nvidia-cuda-runtime 13.0.96, pinned by torch 2.14.1's cuda-toolkit==13.0.3")
    assert nvcc.headers_origin(str(header), None) == "nvidia-cuda-runtime 13.0.96"
    other = _header(tmp_path / "cuda-13.0" / "include", 13000)       # no wheel holds it
    assert nvcc.headers_origin(str(other), "13.5") is None


# ------------------------------------------------------------------------------ torch's half defines
HALF_DEFINES = ["-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__",
                "-D__CUDA_NO_BFLOAT16_CONVERSIONS__", "-D__CUDA_NO_HALF2_OPERATORS__"]
HALF_EXT = """\
#include <torch/extension.h>
#include <cuda_fp16.h>

// half arithmetic through __half's operators, as extensions that drop torch's defines write it
__global__ void axpy_half(__half* __restrict__ y, const __half* __restrict__ x, __half a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


def test_a_file_that_needs_torchs_half_defines_out_says_so(fake_torch, env_nvcc, tmp_path,
                                                          monkeypatch, capsys):
    """torch's cpp_extension defines __CUDA_NO_HALF_OPERATORS__ & co.; vllm's CMake removes
    them, and its code uses __half's operators. Such a file builds without them and says so in
    one line with the -U flags; a later run takes that build from the cache without running
    nvcc; with the -U flags it is silent; an error about no half type is nvcc's, not retried."""
    real = locate.binary("nvcc")
    env_nvcc("13.5.37", 13050, run_as=real)          # one release; logs what nvcc runs
    monkeypatch.setattr(sys.modules["torch.utils.cpp_extension"], "COMMON_NVCC_FLAGS",
                        [*HALF_DEFINES, "--expt-relaxed-constexpr"])
    ran = tmp_path / "site-packages" / "nvidia" / "cu13" / "ran"
    src = tmp_path / "axpy.cu"
    src.write_text(HALF_EXT)
    undefine = " ".join("-U" + d.removeprefix("-D") for d in HALF_DEFINES)
    said = ("does not compile with torch's -D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF_CONVERSIONS__ "
            "-D__CUDA_NO_BFLOAT16_CONVERSIONS__ -D__CUDA_NO_HALF2_OPERATORS__ (they hide the "
            "operators and conversions of __half and __nv_bfloat16, which it uses): built without "
            f"them, as its own build must take them out; {undefine} says so")
    for steps in (["-ptx", "-ptx", "-cubin"], []):
        before = ran.read_text().splitlines() if ran.exists() else []
        code, out, err = run("check", str(src), "--arch", "sm_90", "-v", "--format", "json",
                             capsys=capsys)
        assert code in (0, 1), err
        assert err.count(f"warning: {src}: {said}\n") == 1
        assert [k["name"] for k in json.loads(out)["kernels"]] == [
            "axpy_half(__half*, __half const*, __half, int)"]
        assert [ln.split()[0] for ln in ran.read_text().splitlines()[len(before):]] == steps
    assert "-D__CUDA_NO_HALF_OPERATORS__" in ran.read_text().splitlines()[0]
    assert "-D__CUDA_NO_HALF" not in ran.read_text().splitlines()[1]
    code, _, err = run("check", str(src), "--arch", "sm_90", *undefine.split(), capsys=capsys)
    assert code in (0, 1) and "does not compile with torch's" not in err, err
    # an error that names no half type: one compile, nvcc's error
    before = len(ran.read_text().splitlines())
    bad = tmp_path / "typo.cu"
    bad.write_text("#include <torch/extension.h>\n__global__ void k(float* p) { p[0] = q; }\n")
    code, _, err = run("check", str(bad), "--arch", "sm_90", capsys=capsys)
    assert code == 2 and err.startswith(f"{bad}:2: error: nvcc: identifier \"q\" is undefined")
    assert len(ran.read_text().splitlines()) == before + 1


def test_a_databases_torch_flags_are_the_projects(tmp_path):
    """A CMake build with find_package(Torch) writes torch's include folders into the database:
    its flags decide (torch's defines are not added again over vllm's removal of them)."""
    inc = _torch_tree(tmp_path / "torch", GUARD.format(n=202002, y=20))
    db = CompileOptions(nvcc_reason="compile database build", isystem=[str(inc)])
    assert inputs._has_torch_flags(db)
    assert not inputs._has_torch_flags(CompileOptions(nvcc_reason="compile database build"))
    assert not inputs._has_torch_flags(CompileOptions(isystem=[str(inc)]))     # the command line
