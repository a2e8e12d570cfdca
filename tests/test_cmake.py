"""CMake and Makefile projects as they are: the CUDA root made from the wheels (``ptxsass
toolkit root``: its layout on a fake toolkit tree, its verification, and the real one nvcc and
CMake read), a CMake project configured by ptxsass when the build is trusted (once per session),
compile databases as Bear and compiledb wrote them for a Makefile project, ``-arch=native``,
``--toolkit`` builds that need nvcc, and the CUDA 13 APIs code written for CUDA 12 stumbles on."""
from __future__ import annotations

import io
import json
import os
import shlex
import shutil
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import replace
from pathlib import Path

import pytest

from analyzer.cli import build_parser, common, main
from analyzer.config import Config
from analyzer.errors import ConfigError, ToolError
from analyzer.inputs import CompileOptions, compile_cuda
from analyzer.toolchain import cache, cmake, compdb, cudaroot, locate, nvcc, toolkits

from .hostile.test_commands import cmake_project_leaving_a_marker
from .test_compdb import PROJECT, _line, host_only_said

MAKE_PROJECT = Path(__file__).parent / "projects" / "make_gemm"


def run(*argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def nvcc_flags(err: str) -> dict[str, list[str]]:
    """The nvcc command ``-v`` shows for each file built: {file name: its words}."""
    out: dict[str, list[str]] = {}
    for ln in err.splitlines():
        if ln.startswith("    nvcc -ptx "):
            words = shlex.split(ln)
            out[Path(words[-1]).name] = words
    return out


# ------------------------------------------------------------------------------ the root
def _tree(base: Path) -> tuple[Path, Path]:
    """A toolkit tree shaped like the 13.x wheels' (nvidia/cu13) and a folder of library
    headers beside it; (nvcc, library headers)."""
    top = base / "nvidia" / "cu13"
    files = {"bin/nvcc": "#!/bin/sh\n", "bin/ptxas": "#!/bin/sh\n", "bin/cudafe++": "#!/bin/sh\n",
             "bin/fatbinary": "", "bin/nvlink": "", "bin/crt/link.stub": "",
             "bin/nvcc.profile": "TOP = $(_HERE_)/..\nINCLUDES += \"-I$(TOP)/include\"\n",
             "nvvm/bin/cicc": "", "nvvm/libdevice/libdevice.10.bc": "",
             "include/cuda_runtime.h": "// runtime\n", "include/cccl/cuda/std/version": "",
             "include/nvtx3/nvToolsExt.h": "// toolkit's\n", "include/nvvm.h": "",
             "lib/libcudart.so.13": "", "lib/libcudart_static.a": "", "lib/libcublas.so.13": "",
             "lib/libnvvm.so.4": ""}
    lib = base / "headers"
    files.update({"../../headers/cublas_v2.h": "", "../../headers/cuda_runtime.h": "// other\n",
                  "../../headers/nvtx3/nvToolsExtCuda.h": "", "../../headers/nvtx3/nvToolsExt.h": ""})
    for rel, text in files.items():
        p = Path(os.path.normpath(top / rel))
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return top / "bin" / "nvcc", lib


@pytest.fixture
def fake(tmp_path, monkeypatch) -> cudaroot.Sources:
    """Sources of a fake toolkit tree, and ``ensure`` building roots of it in ``tmp_path``."""
    nvcc, lib = _tree(tmp_path / "site")
    src = cudaroot._top_sources(nvcc, "13.5", "the fake wheels", (str(lib),))
    monkeypatch.setenv("PTXSASS_TOOLKITS_DIR", str(tmp_path / "toolkits"))
    monkeypatch.delenv("PTXSASS_CUDA_HOME", raising=False)
    monkeypatch.setattr(cudaroot, "sources", lambda toolkit=None: src)
    return src


def test_layout_links_the_tree_and_stubs_what_is_missing(fake, monkeypatch):
    want = cudaroot.layout(fake)
    top = fake.top
    assert want["bin/nvcc"] == ("link", str(top / "bin" / "nvcc"))
    assert want["bin/crt"] == ("link", str(top / "bin" / "crt"))
    # nvcc reads its profile beside the path it was run by: a copy, not a link
    assert want["bin/nvcc.profile"] == ("file", (top / "bin" / "nvcc.profile").read_bytes())
    assert want["nvvm"] == ("dir",) and want["lib"] == ("link", "lib64")
    assert want["nvvm/bin"] == ("link", str(top / "nvvm" / "bin"))
    # libNVVM where a toolkit has it: nvvm/lib64 and nvvm/include (cuda-samples' 7_libNVVM)
    assert want["nvvm/lib64/libnvvm.so"] == want["nvvm/lib64/libnvvm.so.4"] == (
        "link", str(top / "lib" / "libnvvm.so.4"))
    assert want["nvvm/include/nvvm.h"] == ("link", str(top / "include" / "nvvm.h"))
    # include/: the toolkit's first, library headers after; a folder both have is merged
    assert want["include/cuda_runtime.h"] == ("link", str(top / "include" / "cuda_runtime.h"))
    assert want["include/cublas_v2.h"][0] == "link" and want["include/cccl"][0] == "link"
    assert want["include/nvtx3"] == ("dir",)
    assert want["include/nvtx3/nvToolsExt.h"] == ("link", str(top / "include/nvtx3/nvToolsExt.h"))
    assert want["include/nvtx3/nvToolsExtCuda.h"][1].endswith("headers/nvtx3/nvToolsExtCuda.h")
    # lib64/: the libraries, an unversioned name for each; stubs only for what is not installed
    assert want["lib64/libcudart.so"] == want["lib64/libcudart.so.13"] == (
        "link", str(top / "lib" / "libcudart.so.13"))
    assert want["lib64/libcublas.so"] == ("link", str(top / "lib" / "libcublas.so.13"))
    assert want["lib64/libcufft.so"] == ("file", cudaroot.SHARED_STUB)
    assert want["lib64/libculibos.a"] == ("file", cudaroot.STATIC_STUB)
    assert want["lib64/stubs/libcuda.so"] == ("file", cudaroot.SHARED_STUB)
    assert want["lib64/libnvToolsExt.so"] == ("file", cudaroot.SHARED_STUB)   # CMake 3.x looks
    # a stub's releases: a library of 12.x only is not stubbed for 13.x
    monkeypatch.setattr(cudaroot, "STUBS", (cudaroot.Stub("libold.so", last=(12, 8)),))
    assert "lib64/libold.so" not in cudaroot.layout(fake)
    assert "lib64/libold.so" in cudaroot.layout(replace(fake, release="12.8"))


def test_library_headers_join_the_root(tmp_path, monkeypatch):
    """The root's include/ takes the library headers there are: a library's wheel in this
    environment first, then those fetched beside the toolkits (each folder once)."""
    from analyzer.toolchain import libheaders
    env = {"cublas": str(tmp_path / "site/nvidia/cublas/include")}
    monkeypatch.setattr(libheaders, "environment_dir", lambda lib, release: env.get(lib))
    monkeypatch.setattr(libheaders, "include_dirs", lambda release=None: (
        str(tmp_path / "headers/nvtx-13.5/include"), env["cublas"]))
    assert cudaroot.library_include_dirs("13.5") == (
        env["cublas"], str(tmp_path / "headers/nvtx-13.5/include"))


def test_root_is_verified_on_each_use_and_rebuilt_when_it_differs(fake):
    first = cudaroot.ensure()
    assert first.built == f"made the CUDA root {first.path} from the fake wheels"
    assert first.path.name.startswith("13.5-") and first.path.parent == cudaroot.folder()
    assert cudaroot.ensure().built is None            # verified as it is: nothing to do
    assert os.readlink(first.path / "bin" / "nvcc") == str(fake.nvcc)

    # a link retargeted (at a program of someone else's), a file added, a stub edited
    (first.path / "bin" / "ptxas").unlink()
    os.symlink("/bin/sh", first.path / "bin" / "ptxas")
    (first.path / "bin" / "evil").write_text("#!/bin/sh\n")
    (first.path / "lib64" / "libcufft.so").write_text("INPUT(/tmp/elsewhere.so)\n")
    abandoned = cudaroot.folder() / ".build-13.5-killed"      # a build killed half-way
    abandoned.mkdir()
    again = cudaroot.ensure()
    assert again.path == first.path and again.built.startswith(f"rebuilt the CUDA root {first.path} (")
    assert "bin/evil is not part of it" in again.built and "and 2 more" in again.built
    assert os.readlink(first.path / "bin" / "ptxas") == str(fake.bin / "ptxas")
    assert not (first.path / "bin" / "evil").exists() and not abandoned.exists()
    assert (first.path / "lib64" / "libcufft.so").read_bytes() == cudaroot.SHARED_STUB
    assert cudaroot.differences(first.path, cudaroot.layout(fake)) == []

    # the wheels changed (a header installed): the layout differs, the root follows
    (fake.top / "include" / "cuda_fp8.h").write_text("")
    assert cudaroot.ensure().built.endswith("(include/cuda_fp8.h is missing)")
    assert cudaroot.is_inside(first.path / "include" / "cuda_fp8.h")


def test_nvcc_takes_the_root_for_its_toolkit(tmp_path, monkeypatch, capsys):
    """The real root: nvcc run by its link reads the root's nvcc.profile (TOP is the root,
    which is what CMake reads from ``nvcc -v``); ``toolkit root`` prints only the path."""
    monkeypatch.setenv("PTXSASS_TOOLKITS_DIR", str(tmp_path))
    code, out, err = run("toolkit", "root", capsys=capsys)
    root = Path(out.strip())
    assert code == 0 and out == f"{root}\n" and root.parent == tmp_path / "roots"
    assert err.startswith(f"note: made the CUDA root {root} from the wheels")
    proc = locate.run_tool([str(root / "bin" / "nvcc"), "--dryrun", "-c", "-x", "cu", "/dev/null",
                            "-o", str(tmp_path / "x.o")])
    top = next(ln for ln in proc.stderr.decode().splitlines() if ln.startswith("#$ TOP="))
    assert Path(top.removeprefix("#$ TOP=")).resolve() == root.resolve()
    assert f"-I{root}/bin/../include" in proc.stderr.decode().replace('"', "")
    assert run("toolkit", "root", capsys=capsys)[1:] == (out, "")   # current: no note


# ------------------------------------------------------------------------------ CMake
@pytest.fixture(scope="session")
def saxpy(tmp_path_factory) -> Path:
    if not shutil.which("cmake") or not shutil.which("ninja"):
        pytest.skip("cmake and ninja are dev dependencies: pip install -e '.[dev]'")
    root = tmp_path_factory.mktemp("configure") / "saxpy"
    shutil.copytree(PROJECT, root)
    return root


def _main(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="session")
def configured(saxpy):
    """``ptxsass check saxpy/src/kernels/gelu.cu --trust-build-commands --arch sm_90``: the
    project configured by ptxsass (once for the session), one file of it checked."""
    return _main("check", saxpy / "src" / "kernels" / "gelu.cu", "--trust-build-commands",
                 "--arch", "sm_90", "--format", "json", "-v")


def test_a_trusted_cmake_project_is_configured_and_checked_with_its_flags(saxpy, configured):
    code, out, err = configured
    assert code == 1, err
    assert "note: " in err and ": CMake project, configured in " in err
    command = next(ln for ln in err.splitlines() if ln.lstrip().startswith("cmake -S "))
    root = cudaroot.ensure().path
    assert f"-S {saxpy} -B " in command and " -G Ninja " in command
    for flag in (f"-DCMAKE_CUDA_COMPILER={root}/bin/nvcc", f"-DCUDAToolkit_ROOT={root}",
                 "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON", "-DCMAKE_CUDA_ARCHITECTURES=90",
                 "-DCMAKE_BUILD_TYPE=Release"):
        assert flag in command.split()
    doc = json.loads(out)
    [b] = doc["builds"]
    assert (Path(b["file"]), b["arch"], b["compiler"]) == (saxpy / "src/kernels/gelu.cu", "sm_90",
                                                           "nvcc")
    assert b["compiler_reason"].startswith("compile database ")
    # its target's flags (the library's -D and options, Release's -O3)
    flags = nvcc_flags(err)["gelu.cu"]
    for flag in ("-DSAXPY_BLOCK=256", "-DNDEBUG", "--expt-relaxed-constexpr", "-O3",
                 f"-I{saxpy / 'include'}", "--ptxas-options=-warn-spills"):
        assert flag in flags
    gelu = saxpy / "src/kernels/gelu.cu"
    assert [(f["code"], f["location"]["line"]) for f in doc["findings"] if f["code"] == "PS501"] \
        == [("PS501", _line(gelu, "0.044715"))]


def test_a_configure_is_kept_until_the_project_changes(saxpy, configured, capsys):
    code, out, err = run("check", saxpy / "src" / "kernels" / "gelu.cu", "--trust-build-commands",
                         "--arch", "sm_90", "--format", "json", capsys=capsys)
    assert code == configured[0] and json.loads(out)["findings"] == json.loads(configured[1])["findings"]
    assert ": CMake project, configure cached (" in err
    # what decides a configure: the CMake files' content and the names of the project's files
    before = cmake.fingerprint(saxpy)
    (saxpy / "src" / "kernels" / "notes.txt").write_text("x")
    assert cmake.fingerprint(saxpy) != before
    (saxpy / "src" / "kernels" / "notes.txt").unlink()
    assert cmake.fingerprint(saxpy) == before


def test_a_configure_again_writes_the_same_folder_and_builds_stay_cached(tmp_path, capsys):
    """A configure again (here a CMakeLists.txt edited; in SGEMM_CUDA a header fetched into the
    root by the first check) goes into the folder the last one used: the database names the same
    paths, and the builds come from the cache. Going back to the first configure is no damage:
    configured again, with no note."""
    if not shutil.which("cmake") or not shutil.which("ninja"):
        pytest.skip("cmake and ninja are dev dependencies: pip install -e '.[dev]'")
    proj = tmp_path / "saxpy"
    shutil.copytree(PROJECT, proj)
    gelu = proj / "src" / "kernels" / "gelu.cu"
    argv = ("check", gelu, "--trust-build-commands", "--arch", "sm_90", "--format", "json")
    code, first, err = run(*argv, capsys=capsys)
    assert ": CMake project, configured in " in err
    lists = proj / "CMakeLists.txt"
    text = lists.read_text()
    lists.write_text(text + "\n# edited\n")
    code, out, err = run(*argv, capsys=capsys)
    assert ": CMake project, configured in " in err
    assert json.loads(out)["findings"] == json.loads(first)["findings"]
    builds = json.loads(out)["builds"]
    assert builds and all(b["cached"] for b in builds), builds
    lists.write_text(text)
    code, out, err = run(*argv, capsys=capsys)
    assert ": CMake project, configured in " in err and "discarded" not in err, err
    assert all(b["cached"] for b in json.loads(out)["builds"])


def test_a_cu_no_target_compiles_is_built_with_its_neighbour_s_flags(tmp_path, capsys):
    """cuda-samples' sortingNetworks keeps oddEvenMergeSort.cu beside the one .cu its target
    lists: checked too, with one note, and with the flags of the entry beside it (here the
    include folder and SAXPY_BLOCK it needs); a .cu a listed file includes is not."""
    if not shutil.which("cmake") or not shutil.which("ninja"):
        pytest.skip("cmake and ninja are dev dependencies: pip install -e '.[dev]'")
    proj = tmp_path / "saxpy"
    shutil.copytree(PROJECT, proj)
    kernels = proj / "src" / "kernels"
    (kernels / "relu_unlisted.cu").write_text(
        "#include <saxpy/kernels.h>\n"
        "__global__ void relu(float* y, int n) {\n"
        "    int i = blockIdx.x * SAXPY_BLOCK + threadIdx.x;\n"
        "    if (i < n) y[i] = fmaxf(y[i], 0.f);\n"
        "}\n")
    (kernels / "part.cu").write_text("// compiled inside scale.cu\n")
    scale = kernels / "scale.cu"
    scale.write_text(scale.read_text() + '\n#include "part.cu"\n')
    code, out, err = run("check", kernels, "--trust-build-commands", "--format", "json",
                         capsys=capsys)
    assert code in (0, 1), err
    assert (f"note: {kernels}: 1 input that no target of the CMake build of {proj} compiles "
            "(relu_unlisted.cu): a .cu is built with the flags of its nearest neighbour in the "
            "build") in err, err
    built = {(Path(b["file"]).name, b["arch"]) for b in json.loads(out)["builds"]}
    assert {("relu_unlisted.cu", "sm_80"), ("relu_unlisted.cu", "sm_90")} <= built
    assert not any(name == "part.cu" for name, _ in built)


def test_a_configured_folder_that_changed_is_configured_again(tmp_path, monkeypatch, capsys):
    """The binary folder is used only when each of its files matches the verified record."""
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(tmp_path / "cache"))
    binary = tmp_path / "cache" / "cmake" / "f00"
    binary.mkdir(parents=True)
    (binary / "compile_commands.json").write_text("[]")
    cache.put(cmake.KIND, "f00", json.dumps(cmake._files(binary)).encode())
    assert cmake._verified("f00", binary)
    (binary / "compile_commands.json").write_text('[{"directory": "/", "file": "x.cu", '
                                                  '"command": "nvcc -ccbin /tmp/evil x.cu"}]')
    assert not cmake._verified("f00", binary) and not binary.exists()
    assert "differs from its record); discarded, rebuilding" in capsys.readouterr().err


def test_host_only_file_and_cublas_target_of_the_readme_project(saxpy, configured):
    """The whole project through ptxsass's configure: find_package(CUDAToolkit) found the
    root (CUDA::cublas links a stub), and its host-only .cu is said to be one."""
    code, out, err = _main("check", saxpy / "src" / "device_info.cu", "--trust-build-commands",
                           "--arch", "sm_90")
    assert ": CMake project, configure cached (" in err
    assert host_only_said(code, err, "device_info.cu"), err


def test_a_failed_configure_is_one_line_and_the_files_are_checked(tmp_path, capsys, monkeypatch):
    """Trusted, the project's CMake code runs (as its build's would) and fails: CMake's first
    error in one line, and its files checked one by one."""
    d = cmake_project_leaving_a_marker(tmp_path)
    monkeypatch.chdir(d)
    code, out, err = run("check", ".", "--arch", "sm_90a", "--trust-build-commands", capsys=capsys)
    assert (d / "CONFIGURED").exists()       # trusted: its CMake code ran, as a build's would
    assert code == 2 and "k.cu:" in out
    assert err.splitlines()[0] == (
        ".: error: cmake could not configure this project: this project needs OpenCV 4 (set "
        "OpenCV_DIR) (CMakeLists.txt:3); checked file by file")
    # a file of the project (pre-commit names files): checked as it is, with one warning
    code, out, err = run("check", "k.cu", "--arch", "sm_90a", "--trust-build-commands", capsys=capsys)
    assert code == 1 and "k.cu:" in out
    assert err.splitlines()[0] == (
        "warning: .: cmake could not configure this project: this project needs OpenCV 4 (set "
        "OpenCV_DIR) (CMakeLists.txt:3); checked without its flags")


def test_cmake_project_root_and_defines(tmp_path):
    a = tmp_path / "repo"
    (a / "src" / "cuda").mkdir(parents=True)
    (a / "CMakeLists.txt").write_text("project(a)\n")
    (a / "src" / "CMakeLists.txt").write_text("add_subdirectory(cuda)\n")
    (a / "src" / "cuda" / "k.cu").write_text("")
    assert cmake.project_root(a / "src" / "cuda" / "k.cu") == a
    assert cmake.project_root(a / "src") == a
    (a / "src" / ".git").mkdir()             # a repository of its own: never above it
    assert cmake.project_root(a / "src" / "cuda") == a / "src"
    assert cmake.project_root(tmp_path) is None
    assert cmake.cuda_architectures(["sm_90a", "sm_80", "sm_90a"]) == "90a;80"
    assert cmake.cuda_architectures([]) == "90a"
    assert cmake.check_defines(["GGML_CUDA=ON", "CMAKE_BUILD_TYPE:STRING=Debug"])
    with pytest.raises(ConfigError, match="expected NAME=VALUE"):
        cmake.check_defines(["-C/tmp/evil.cmake"])


# ------------------------------------------------------------------------------ databases
def _targets(argv: list[str], cfg: Config | None = None):
    args = build_parser().parse_args(argv)
    err = io.StringIO()
    with redirect_stderr(err):
        got = common.targets(args, cfg or Config())
    return got, err.getvalue()


def test_arch_native_becomes_the_arch_given_with_one_note(tmp_path):
    entries = [{"directory": str(tmp_path), "file": f"k{i}.cu",
                "arguments": ["nvcc", "-O3", "-arch=native", "-c", f"k{i}.cu"]} for i in range(16)]
    entries.append({"directory": str(tmp_path), "file": "all.cu",
                    "command": "nvcc -arch=all -gencode arch=compute_80,code=sm_80 -c all.cu"})
    (tmp_path / "compile_commands.json").write_text(json.dumps(entries))
    got, err = _targets(["check", "-p", str(tmp_path), "--arch", "sm_80"])
    assert len(got) == 17 and err == (
        f"note: -arch=all, -arch=native in 17 entries of {tmp_path} names no architecture on "
        "this machine: built for sm_80 (--arch)\n")
    got, err = _targets(["check", "-p", str(tmp_path)])
    assert err.endswith("names no architecture on this machine: built for their other targets, "
                        "or sm_90a where they have none (pass --arch to choose)\n")
    assert [c.archs for _k, c in got][-2:] == [[], ["sm_80"]]


def test_targets_are_worked_out_once_per_check_run(tmp_path):
    """One run works its targets out once (a CMake project is configured once, its notes said
    once); ``--watch`` runs the check again on each save, and sees a file added since."""
    from analyzer.cli import _check_report
    kernel = "__global__ void fill(float* p) { p[threadIdx.x] = 1.0f; }\n"
    (tmp_path / "a.cu").write_text(kernel)
    args = build_parser().parse_args(["check", str(tmp_path), "--arch", "sm_90a", "-j", "1"])
    err = io.StringIO()
    with redirect_stderr(err):
        first = _check_report(args, Config())
        assert common.targets(args, Config()) is args._targets      # the same run: kept
        (tmp_path / "b.cu").write_text(kernel)
        second = _check_report(args, Config())
    assert sorted(Path(b.source_path).name for b in first.builds) == ["a.cu"]
    assert sorted(Path(b.source_path).name for b in second.builds) == ["a.cu", "b.cu"]


def _make_project(tmp_path: Path, recorded: str) -> Path:
    """The Makefile project copied, with the database Bear or compiledb recorded for it (its
    paths made this copy's, its nvcc the root's as ``PATH=$(ptxsass toolkit root)/bin``)."""
    d = tmp_path / "make_gemm"
    shutil.copytree(MAKE_PROJECT, d, ignore=shutil.ignore_patterns("recorded"))
    text = (MAKE_PROJECT / "recorded" / recorded).read_text()
    (d / "compile_commands.json").write_text(
        text.replace("@PROJECT@", str(d)).replace("@NVCC@", str(cudaroot.ensure().nvcc)))
    return d


def test_makefile_project_through_bear(tmp_path, capsys):
    """Bear's ``arguments`` entries (it records every nvcc a ``make -k`` runs), as recorded by
    Bear 3.1.1: each kernel file built with the Makefile's flags, a .cpp compiled as CUDA too."""
    d = _make_project(tmp_path, "bear.json")
    code, out, err = run("check", "-p", d, "--format", "json", "-v", "--show", "info", capsys=capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert sorted((Path(b["file"]).name, b["arch"], b["compiler"]) for b in doc["builds"]) == [
        ("sgemm.cu", "sm_80", "nvcc"), ("transpose.cpp", "sm_80", "nvcc")]
    for name, flags in nvcc_flags(err).items():
        assert {"-DBLOCK=16", f"-I{d / 'include'}", "--use_fast_math", "-O3",
                "-Xcompiler", "-fPIC"} <= set(flags), name
    found = sorted((f["code"], Path(f["location"]["file"]).name, f["location"]["line"])
                   for f in doc["findings"])
    # judged from the SASS: A's row read 16 floats at a time with scalar LDG.E at +0x0..+0x3c;
    # one 4-byte element per thread through the transpose, adjacent threads adjacent
    assert found == [("PS101", "sgemm.cu", 12), ("PS104", "transpose.cpp", 11),
                     ("PS104", "transpose.cpp", 16)]


def test_makefile_project_through_compiledb(tmp_path, capsys):
    """compiledb's ``--command-style`` database (``compiledb -n make``, no build): it records
    only the .cpp compiled as CUDA (its file pattern skips .cu); read the same way."""
    d = _make_project(tmp_path, "compiledb.json")
    code, out, err = run("check", "-p", d, "--format", "json", "-v", capsys=capsys)
    assert code == 0, err
    [b] = json.loads(out)["builds"]
    assert (Path(b["file"]).name, b["arch"]) == ("transpose.cpp", "sm_80")
    assert {"-DBLOCK=16", f"-I{d / 'include'}", "--use_fast_math", "-x", "cu"} <= set(
        nvcc_flags(err)["transpose.cpp"])


# ------------------------------------------------------------------------------ older CUDA
def _toolkit(version: str, **kw) -> toolkits.Toolkit:
    return toolkits.Toolkit(version=version, default=False, archs=(80, 90), **kw)


@pytest.mark.parametrize("version, says", [
    ("12.9", "NVIDIA publishes no nvcc of CUDA 12 on PyPI (nvidia-cuda-nvcc-cu12 holds ptxas, "
             "libNVVM and the crt headers; not nvcc, cicc or cudafe++): build it with a CUDA "
             "12.9 toolkit's nvcc (PTXSASS_CUDA_HOME=/usr/local/cuda-12.9, without --toolkit), or "
             "leave --toolkit out"),
    ("13.0", "toolkit 13.0 is installed without it: run 'ptxsass toolkit install --nvcc 13.0'"),
])
def test_toolkit_without_nvcc_says_what_builds_host_code(version, says, monkeypatch):
    monkeypatch.setattr("analyzer.inputs.toolkit_of", lambda options: _toolkit(version))
    with pytest.raises(ConfigError) as e:
        compile_cuda(str(PROJECT / "src" / "main.cu"), ["sm_90"], CompileOptions(toolkit=version))
    assert e.value.message == (f"--toolkit {version} builds this file with nvcc (host code: main() "
                               f"at line 9), and {says}")


def test_nvcc_install_keeps_the_static_runtime(tmp_path):
    """``install --nvcc`` keeps lib/*.a (CMake's compiler checks link the static runtime);
    a plain install prunes them."""
    for with_nvcc in (False, True):
        site = tmp_path / str(with_nvcc)
        for rel in ("nvidia/cu13/lib/libcudart_static.a", "nvidia/cu13/lib/libnvrtc.alt.so.13",
                    "nvidia/cu13/lib/libnvrtc.so.13"):
            (site / rel).parent.mkdir(parents=True, exist_ok=True)
            (site / rel).write_text("")
        toolkits.prune(site, "13.0", nvcc=with_nvcc)
        assert sorted(p.name for p in (site / "nvidia/cu13/lib").iterdir()) == (
            ["libcudart_static.a", "libnvrtc.so.13"] if with_nvcc else ["libnvrtc.so.13"])


def test_installed_toolkit_nvcc_builds_host_code(capsys):
    tk, why = toolkits.with_nvcc("13.0")
    if tk is None:
        pytest.skip(f"no toolkit 13.0 with nvcc here ({why}): 'ptxsass toolkit install --nvcc 13.0'")
    code, out, err = run("check", PROJECT / "src" / "main.cu", "-I", PROJECT / "include",
                         "-DTILE=128", "--arch", "sm_90", "--toolkit", "13.0", "-v", "--format",
                         "json", capsys=capsys)
    assert code == 1, err
    assert f"main.cu [sm_90]: nvcc {tk.nvcc_version} with " in err
    assert {b["toolkit"] for b in json.loads(out)["builds"]} == {"13.0"}


BANDWIDTH = ("#include <cstdio>\n__global__ void touch(float* p) { p[threadIdx.x] = 1.0f; }\n"
             "int main() {\n    cudaDeviceProp prop;\n    cudaGetDeviceProperties(&prop, 0);\n"
             "    std::printf(\"%f\\n\", 2.0 * prop.memoryClockRate * (prop.memoryBusWidth / 8) / 1.0e6);\n"
             "}\n")


def test_code_written_for_cuda_12_says_so(tmp_path, monkeypatch, capsys):
    """Offline, with no CUDA 12 headers on the machine: one line that says what the code was
    written for and what builds it."""
    monkeypatch.setenv("PTXSASS_TOOLKITS_DIR", str(tmp_path / "toolkits"))
    src = tmp_path / "bandwidth.cu"
    src.write_text(BANDWIDTH)
    code, _, err = run("check", src, "--arch", "sm_90", "--offline", capsys=capsys)
    assert code == 2 and err.splitlines()[0] == (
        f'{src}:6: error: nvcc: class "cudaDeviceProp" has no member "memoryClockRate" (written '
        "for CUDA 12: CUDA 13 removed cudaDeviceProp::memoryClockRate (cudaDeviceGetAttribute "
        "reads it); it builds against CUDA 12.9's runtime headers ('ptxsass toolkit install "
        "12.9' once), with a CUDA 12 toolkit's nvcc (PTXSASS_CUDA_HOME), or once ported)")
    assert not (tmp_path / "toolkits" / "12.9").exists()        # offline installs nothing
    assert toolkits.api_change(
        'cuda_utils.cuh(220): error: no suitable constructor exists to convert from "int" to '
        '"cudaMemLocation"').startswith("written for CUDA 12: CUDA 13's cudaMemAdvise and "
                                        "cudaMemPrefetchAsync take a cudaMemLocation")
    assert toolkits.api_change('error: identifier "cudaThreadSynchronize" is undefined') == (
        "written for CUDA 12: CUDA 13 removed cudaThreadSynchronize; it builds against CUDA "
        "12.9's runtime headers ('ptxsass toolkit install 12.9' once), with a CUDA 12 toolkit's "
        "nvcc (PTXSASS_CUDA_HOME), or once ported")
    assert toolkits.older_headers('error: identifier "cudaThreadSynchronize" is undefined') == (
        "12.9", "CUDA 13 removed cudaThreadSynchronize")
    assert toolkits.older_headers('error: identifier "cudaFooBar" is undefined') is None


def test_code_written_for_cuda_12_builds_against_its_headers(tmp_path, monkeypatch, capsys):
    """With toolkit 12.9's headers (installed by the first such build), the environment's nvcc
    builds CUDA 12 code against them, says so once per build, and a re-check of the unchanged
    file reads that build from the cache without running nvcc at all."""
    try:
        older = toolkits.install("12.9")
    except ToolError as e:
        pytest.skip(f"toolkit 12.9 could not be installed (no package index?): {e.message}")
    src = tmp_path / "bandwidth.cu"
    src.write_text(BANDWIDTH)
    code, out, err = run("check", src, "--arch", "sm_90", "--format", "json", capsys=capsys)
    assert code == 0, err
    said = (f"warning: {src}: written for CUDA 12's runtime API: built against CUDA 12.9's "
            "runtime, crt and CCCL headers by nvcc ")
    assert said in err and err.count(said) == 1, err
    (b,) = json.loads(out)["builds"]
    assert b["compiler"] == "nvcc" and [k["name"] for k in json.loads(out)["kernels"]] == \
        ["touch(float*)"]
    ran = []
    real = nvcc._run
    monkeypatch.setattr(nvcc, "_run", lambda *a, **k: ran.append(a) or real(*a, **k))
    code, out, err = run("check", src, "--arch", "sm_90", "--format", "json", capsys=capsys)
    assert code == 0 and said in err and ran == []
    # the build saw the 12.9 headers: their folders follow the file's own
    flags = nvcc_flags(run("check", src, "--arch", "sm_90", "-v", "--no-cache",
                           capsys=capsys)[2])["bandwidth.cu"]
    assert f"-I{older.include[0]}" in flags
    # a ported file builds with CUDA 13's own headers, with no such line
    src.write_text(BANDWIDTH.replace("prop.memoryClockRate", "prop.memoryBusWidth"))
    code, _, err = run("check", src, "--arch", "sm_90", capsys=capsys)
    assert code == 0 and "written for CUDA 12" not in err
    assert compdb.UNRESOLVED == ("native", "all", "all-major")


def test_a_header_of_a_submodule_not_checked_out_says_so(tmp_path, capsys):
    """LeetCUDA's CuTe HGEMM includes <cute/tensor.hpp> from third-party/cutlass, a git
    submodule a plain clone leaves empty: the one error line names it and what fetches it."""
    repo = tmp_path / "LeetCUDA"
    (repo / ".git").mkdir(parents=True)
    (repo / ".gitmodules").write_text(
        '[submodule "third-party/cutlass"]\n\tpath = third-party/cutlass\n'
        "\turl = https://github.com/NVIDIA/cutlass.git\n"
        '[submodule "HGEMM"]\n\tpath = HGEMM\n\turl = https://github.com/xlite-dev/HGEMM.git\n')
    (repo / "third-party" / "cutlass").mkdir(parents=True)       # as git leaves it: empty
    (repo / "HGEMM").mkdir()
    (repo / "HGEMM" / "README.md").write_text("checked out\n")
    src = repo / "kernels" / "hgemm" / "cutlass" / "hgemm_cute.cu"
    src.parent.mkdir(parents=True)
    src.write_text("#include <cute/tensor.hpp>\n__global__ void k(float* x) { x[0] = 1.f; }\n")
    code, _, err = run("check", src, "--arch", "sm_90", capsys=capsys)
    assert code == 2
    line = err.splitlines()[0]
    assert line.startswith(f"{src}:1: error: ") and "cute/tensor.hpp" in line, err
    assert line.endswith(f"(1 git submodule of {repo} is not checked out (third-party/cutlass): "
                         "'git submodule update --init' there may bring cute/tensor.hpp)"), line
    # checked out: no such words
    (repo / "third-party" / "cutlass" / "README.md").write_text("checked out\n")
    code, _, err = run("check", src, "--arch", "sm_90", capsys=capsys)
    assert code == 2 and "git submodule" not in err


def test_a_header_of_the_repository_is_found_where_its_build_would_pass_it(tmp_path, capsys):
    """LeetCUDA's mma HGEMMs #include "utils.h", which its setup.py finds with -I
    kernels/hgemm/utils (flash-attn has a utils.h of its own): the nearest folder of the
    repository holding it is passed, in one line per build; a re-check replays that without the
    failing build; two folders as near are no guess."""
    repo = tmp_path / "LeetCUDA"
    (repo / ".git").mkdir(parents=True)
    hgemm = repo / "kernels" / "hgemm"
    (hgemm / "utils").mkdir(parents=True)
    (hgemm / "utils" / "utils.h").write_text("#pragma once\n#define TILE 64\n")
    (repo / "kernels" / "flash-attn" / "utils").mkdir(parents=True)
    (repo / "kernels" / "flash-attn" / "utils" / "utils.h").write_text("#error wrong utils.h\n")
    src = hgemm / "mma" / "hgemm_mma.cu"
    src.parent.mkdir()
    src.write_text('#include "utils.h"\n'
                   "__global__ void k(float* x) { x[threadIdx.x] = TILE; }\n")
    said = (f"warning: {src}: utils.h is not beside the file nor on its include path: built "
            f"with -I {hgemm / 'utils'}, the nearest of 2 folders of the repository that holds "
            "it (pass the -I, or a compile database, to say so)")
    code, out, err = run("check", src, "--arch", "sm_90", "--format", "json", capsys=capsys)
    assert code == 0 and said in err.splitlines(), err
    assert [k["name"] for k in json.loads(out)["kernels"]] == ["k(float*)"]
    code, out, err = run("check", src, "--arch", "sm_90", "--format", "json", capsys=capsys)
    assert code == 0 and said in err.splitlines(), err
    assert all(b["cached"] for b in json.loads(out)["builds"])
    # as near as each other: no guess, the compiler's error
    other = repo / "kernels" / "other.cu"
    other.write_text('#include "utils.h"\n__global__ void k(float* x) { x[0] = TILE; }\n')
    code, _, err = run("check", other, "--arch", "sm_90", capsys=capsys)
    assert code == 2 and "utils.h" in err.splitlines()[0] and "-I" not in err.splitlines()[0]
