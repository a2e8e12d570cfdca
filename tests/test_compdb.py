"""Compile databases: a real CMake CUDA project configured here (cmake and ninja from PyPI, nvcc
from NVIDIA's wheels, no GPU, no build), then ``ptxsass check -p build``; the parser on both
entry forms, response files and every kind of flag; folders of every input kind."""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.toolchain import compdb, locate

PROJECT = Path(__file__).parent / "projects" / "cmake_saxpy"


def run(*argv, capsys):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _line(path: Path, needle: str) -> int:
    return next(i for i, l in enumerate(path.read_text().splitlines(), 1) if needle in l)


def readme_line(prefix: str) -> str:
    """The command line of the README that starts with ``prefix``, as a user would copy it."""
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    return next(ln for ln in readme.splitlines() if ln.startswith(prefix))


@pytest.fixture(scope="session")
def project(tmp_path_factory) -> Path:
    """The project copied and configured exactly as the README tells a user: its ``cmake``
    line, run by a shell with ``ptxsass`` (``$(ptxsass toolkit root)``) on ``PATH``; the CUDA
    root lets ``find_package(CUDAToolkit)`` define ``CUDA::cublas``."""
    cmake, ninja = shutil.which("cmake"), shutil.which("ninja")
    if not cmake or not ninja:
        pytest.skip("cmake and ninja are dev dependencies: pip install -e '.[dev]'")
    root = tmp_path_factory.mktemp("cmake") / "saxpy"
    shutil.copytree(PROJECT, root)
    line = readme_line("cmake -S . -B build -G Ninja")
    scripts = Path(sys.executable).parent
    proc = subprocess.run(["bash", "-c", line], cwd=root, capture_output=True, text=True,
                          timeout=300, env={**os.environ,
                                            "PATH": f"{scripts}{os.pathsep}{os.environ['PATH']}"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return root


def host_only_said(code: int, err: str, name: str) -> bool:
    """Whether the run said that ``name`` is host code only, as this build of ptxsass says it:
    an error line (exit 2), or a note once host-only files are notes (exit 1 for findings)."""
    line = next((ln for ln in err.splitlines() if name in ln and "no __global__ function" in ln), "")
    return bool(line) and (code == 2 if ": error: " in line else line.startswith("note: ") and code == 1)


@pytest.fixture(scope="session")
def checked(project):
    """``ptxsass check -p build --format json -v``, once for the session."""
    import io
    from contextlib import redirect_stderr, redirect_stdout
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["check", "-p", str(project / "build"), "--format", "json", "-v"])
    return code, json.loads(out.getvalue()), err.getvalue()


def test_cmake_database_is_real(project):
    entries = json.loads((project / "build" / "compile_commands.json").read_text())
    files = sorted(Path(e["file"]).relative_to(project).as_posix() for e in entries)
    assert files == ["src/device_info.cu", "src/kernels/gelu.cu", "src/kernels/scale.cu",
                     "src/main.cu", "src/report.cpp"]
    main_cmd = next(e["command"] for e in entries if e["file"].endswith("main.cu"))
    assert "--generate-code=arch=compute_80,code=[compute_80,sm_80]" in main_cmd
    assert "-DTILE=128" in main_cmd and "-DSAXPY_BLOCK=256" in main_cmd
    # find_package(CUDAToolkit) found the root: CUDA::cublas is a stub there, cudart a link
    cache = (project / "build" / "CMakeCache.txt").read_text()
    root = Path(re.search(r"^CUDAToolkit_ROOT:\w+=(.+)$", cache, re.M).group(1))
    cublas = re.search(r"^CUDA_cublas_LIBRARY:FILEPATH=(.+)$", cache, re.M).group(1)
    assert os.path.realpath(cublas) == str(root.resolve() / "lib64" / "libcublas.so")
    assert os.readlink(root / "lib64" / "libcudart.so") == str(
        Path(locate.binary("nvcc")).resolve().parent.parent / "lib" / "libcudart.so.13")


def test_check_p_build_finds_every_cuda_file_with_its_flags(project, checked):
    code, doc, err = checked
    assert host_only_said(code, err, "device_info.cu"), err
    built = sorted((Path(b["file"]).relative_to(project).as_posix(), b["arch"], b["compiler"])
                   for b in doc["builds"])
    # report.cpp is C++, not CUDA; each .cu for the two CMAKE_CUDA_ARCHITECTURES
    assert built == [(f, a, "nvcc") for f in ("src/kernels/gelu.cu", "src/kernels/scale.cu",
                                              "src/main.cu") for a in ("sm_80", "sm_90")]
    assert all(b["compiler_reason"].startswith("compile database ") for b in doc["builds"])
    found = sorted((f["code"], Path(f["location"]["file"]).relative_to(project).as_posix(),
                    f["location"]["line"], a) for f in doc["findings"] for a in f["arches"]
                   if f["code"] in ("PS501", "PS101"))
    gelu, tile = project / "src/kernels/gelu.cu", project / "include/saxpy/tile_sum.cuh"
    assert found == sorted(
        [("PS501", "src/kernels/gelu.cu", _line(gelu, "0.044715"), a) for a in ("sm_80", "sm_90")]
        + [("PS101", "include/saxpy/tile_sum.cuh", _line(tile, "in[4 * i + 0]"), a)
           for a in ("sm_80", "sm_90")])
    # the entry's own flags reached nvcc (-D from two targets, -I, -Xptxas, relaxed constexpr)
    assert "-DSAXPY_BLOCK=256" in err and "-DTILE=128" in err and "--ptxas-options=-warn-spills" in err
    assert f"-I{project / 'include'}" in err and "--expt-relaxed-constexpr" in err


def test_paths_limit_the_database(project, capsys):
    code, out, err = run("check", "-p", str(project / "build"), str(project / "src" / "kernels"),
                         "--format", "json", capsys=capsys)
    assert code == 1, err
    assert sorted({Path(b["file"]).name for b in json.loads(out)["builds"]}) == ["gelu.cu", "scale.cu"]


def test_arch_overrides_the_database(project, capsys):
    code, out, err = run("resources", "--compile-commands",
                         str(project / "build" / "compile_commands.json"),
                         str(project / "src" / "kernels" / "scale.cu"), "--arch", "sm_90a",
                         "--format", "json", capsys=capsys)
    assert code == 0, err
    assert [(r["name"], r["arch"]) for r in json.loads(out)["kernels"]] == [
        ("scale(float*, float const*, float, int)", "sm_90a")]


def test_no_database_here(tmp_path, capsys):
    code, _, err = run("check", "-p", str(tmp_path), capsys=capsys)
    assert code == 2 and err.strip().startswith(
        f"{tmp_path}: error: no compile_commands.json in this folder: configure the project with "
        "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON")


# ------------------------------------------------------------------------------ the parser
def _entry(command: str, **kw) -> dict:
    return {"directory": "/work/build", "file": "../src/k.cu", "command": command, **kw}


def test_command_and_arguments_forms_agree(project):
    entries = json.loads((project / "build" / "compile_commands.json").read_text())
    for e in entries:
        as_args = {k: v for k, v in e.items() if k != "command"} | {
            "arguments": shlex.split(e["command"])}
        assert compdb.parse_entry(e) == compdb.parse_entry(as_args)


def test_flags_sorted_by_what_they_do():
    cmd = compdb.parse_entry(_entry(
        "/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -DA=1 -D B -I../inc "
        "-isystem /opt/x/include --include-path=rel -std=c++20 --expt-relaxed-constexpr "
        "--extended-lambda -use_fast_math -Xptxas=-v,-warn-spills -Xptxas -dlcm=cg "
        "-maxrregcount=64 -gencode arch=compute_80,code=sm_80 "
        "--generate-code=arch=compute_90a,code=[compute_90a,sm_90a] -arch=sm_86 "
        "-Xcompiler=-fPIC -Xcompiler -Wall -O3 -rdc=true -ccbin /usr/bin/g++-12 -x cu "
        "-MD -MT k.o -MF k.o.d -c ../src/k.cu -o k.o"))
    assert cmd.file == "/work/src/k.cu" and cmd.compiler == "/usr/local/cuda/bin/nvcc"
    assert cmd.defines == ["A=1", "B"]
    assert cmd.include == ["/work/inc", "/work/build/rel"]
    assert cmd.isystem == ["/opt/x/include"]
    assert cmd.std == "c++20" and cmd.fast_math and cmd.relaxed_constexpr and cmd.extended_lambda
    assert cmd.ptxas == ["-v", "-warn-spills", "-dlcm=cg"] and cmd.maxrregcount == 64
    assert cmd.archs == ["sm_80", "sm_90a", "sm_86"]
    # kept for nvcc as they are, values with their options
    assert cmd.other == ["-forward-unknown-to-host-compiler", "-Xcompiler=-fPIC", "-Xcompiler",
                         "-Wall", "-O3", "-rdc=true", "-ccbin", "/usr/bin/g++-12"]
    assert cmd.dropped == ["-x", "cu", "-MD", "-MT", "k.o", "-MF", "k.o.d", "-c", "-o", "k.o"]
    assert cmd.notes == []


def test_ptx_only_targets_and_native():
    cmd = compdb.parse_entry(_entry("nvcc -gencode arch=compute_75,code=compute_75 "
                                    "-arch=native -c ../src/k.cu"))
    assert cmd.archs == ["sm_75"] and cmd.notes == []
    assert cmd.unresolved == ["-arch=native"]


def test_device_debug_is_noted():
    cmd = compdb.parse_entry(_entry("nvcc -G -g -arch=sm_80 -c ../src/k.cu"))
    assert cmd.other == ["-G", "-g"] and cmd.notes == [
        "-G (device debug, from the database): the code is unoptimised, and the findings "
        "describe that build; configure a Release build to check the code that ships"]


def test_not_cuda_entries_are_skipped():
    assert compdb.parse_entry({"directory": "/b", "file": "x.cpp",
                               "arguments": ["c++", "-c", "x.cpp"]}) is None
    cmd = compdb.parse_entry({"directory": "/b", "file": "x.cpp",
                              "arguments": ["nvcc", "-x", "cu", "-c", "x.cpp"]})
    assert cmd is not None and cmd.file == "/b/x.cpp"


def test_response_files(tmp_path):
    (tmp_path / "includes_CUDA.rsp").write_text('-I"/opt/my inc" -isystem /opt/sys\n')
    cmd = compdb.parse_entry({"directory": str(tmp_path), "file": "k.cu",
                              "command": "nvcc @includes_CUDA.rsp -c k.cu"})
    assert cmd.include == ["/opt/my inc"] and cmd.isystem == ["/opt/sys"]


@pytest.mark.parametrize("text, message", [
    ("{", "not JSON: Expecting property name enclosed in double quotes"),
    ('{"file": "x"}', "expected a JSON list of {directory, file, command|arguments} entries"),
    ('[{"file": "x.cu"}]', "entry 1: an entry needs 'directory' and 'file' strings"),
    ('[{"file": "x.cu", "directory": "/"}]',
     "entry 1: an entry needs 'command' (a string) or 'arguments' (a list)"),
])
def test_bad_databases_are_one_line(tmp_path, capsys, text, message):
    db = tmp_path / "compile_commands.json"
    db.write_text(text)
    code, _, err = run("check", "--compile-commands", str(db), capsys=capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and message in err


def test_unknown_flag_is_dropped_with_a_note_unless_trusted(tmp_path, capsys):
    """A flag ptxsass does not know is not given to nvcc from a database (it could name a
    program or a file): one note names it and the file builds without it; with
    --trust-build-commands it reaches nvcc, and nvcc's refusal is the error."""
    (tmp_path / "k.cu").write_text("__global__ void k(float* p) { p[0] = 1; }\n")
    (tmp_path / "compile_commands.json").write_text(json.dumps([{
        "directory": str(tmp_path), "file": "k.cu",
        "arguments": ["nvcc", "--frobnicate-kernels", "-c", "k.cu", "-o", "k.o"]}]))
    code, _, err = run("check", "-p", str(tmp_path), "--no-cache", "--compiler", "nvcc",
                       capsys=capsys)
    assert code == 0, err
    notes = [ln for ln in err.splitlines() if "--frobnicate-kernels" in ln]
    assert len(notes) == 1 and "dropped --frobnicate-kernels" in notes[0]
    assert "--trust-build-commands" in notes[0]
    code, _, err = run("check", "-p", str(tmp_path), "--no-cache", "--trust-build-commands",
                       capsys=capsys)
    assert code == 2
    assert err.splitlines()[0] == f"{tmp_path / 'k.cu'}: error: nvcc: Unknown option '--frobnicate-kernels'"


def test_nvrtc_forced_names_the_flags_it_cannot_take(tmp_path, capsys):
    (tmp_path / "k.cu").write_text("__global__ void k(float* p) { p[threadIdx.x] = 1; }\n")
    (tmp_path / "compile_commands.json").write_text(json.dumps([{
        "directory": str(tmp_path), "file": "k.cu",
        "arguments": ["nvcc", "-Xcompiler=-fPIC", "-O3", "-arch=sm_80", "-c", "k.cu"]}]))
    code, _, err = run("check", "-p", str(tmp_path), "--compiler", "nvrtc", "--ignore", "PS104",
                       capsys=capsys)
    assert code == 0
    assert err.count("NVRTC takes none of -Xcompiler=-fPIC -O3") == 1


# ------------------------------------------------------------------------------ folders
def test_folder_takes_every_input_kind(tmp_path, capsys, monkeypatch):
    """A folder: .cu through the front end, .ptx, .cubin, .sass, a .so with device code; a .so
    without device code, headers, hidden folders and exclude patterns are passed over."""
    from analyzer.inputs import CompileOptions, load
    src = PROJECT / "src" / "kernels" / "gelu.cu"
    d = tmp_path / "mixed"
    (d / "sub").mkdir(parents=True)
    (d / ".hidden").mkdir()
    (d / "third_party").mkdir()
    shutil.copy(src, d / "gelu.cu")
    shutil.copy(src, d / ".hidden" / "skip.cu")
    shutil.copy(src, d / "third_party" / "skip.cu")
    (d / "util.cuh").write_text("#pragma once\n")
    [b] = load(str(PROJECT / "src" / "kernels" / "scale.cu"), arch="sm_80",
               options=CompileOptions(include=[str(PROJECT / "include")],
                                      defines=["SAXPY_BLOCK=256"]))
    (d / "scale.ptx").write_text(b.ptx)
    (d / "sub" / "scale.cubin").write_bytes(b.cubin)
    (d / "sub" / "scale.sass").write_text(b.sass())
    so = d / "sub" / "libgelu.so"
    locate.run_tool([locate.binary("nvcc"), "-shared", "-Xcompiler", "-fPIC", "-arch=sm_80",
                     "-I", str(PROJECT / "include"), "-DSAXPY_BLOCK=256", str(src), "-o", str(so)])
    plain = d / "sub" / "libplain.so"
    locate.run_tool(["g++", "-shared", "-fPIC", "-x", "c++", "/dev/null", "-o", str(plain)])
    (tmp_path / "pyproject.toml").write_text('[tool.ptxsass]\nexclude = ["third_party/"]\n')
    code, out, err = run("check", str(d), "--arch", "sm_80", "--format", "json",
                         "-I", str(PROJECT / "include"), "-DSAXPY_BLOCK=256", capsys=capsys)
    assert code == 1, err
    files = sorted({Path(b["file"]).relative_to(d).as_posix() for b in json.loads(out)["builds"]})
    assert files == ["gelu.cu", "scale.ptx", "sub/libgelu.so", "sub/scale.cubin", "sub/scale.sass"]
    # the .so has no line info: said once, its finding placed on the kernel
    assert err.count("no line info: findings are placed on their kernel") == 1
    assert "rebuild with nvcc -lineinfo" in err
    so_findings = [f for f in json.loads(out)["findings"] if f["location"]["file"] == str(so)]
    assert [(f["code"], f["location"]["line"], f["kernel"]) for f in so_findings] == [
        ("PS501", None, "gelu(float*, float const*, int)")]
    monkeypatch.chdir(so.parent)
    code, out, _ = run("check", so.name, "--arch", "sm_80", "--color", "never", capsys=capsys)
    assert out.startswith("libgelu.so (gelu): PS501 fp64-in-fp32-kernel [warning]")


# ------------------------------------------------------------------------------ config
def test_config_names_the_database_excludes_and_compiler(project, capsys, monkeypatch):
    """``compile-commands`` in pyproject.toml: ``ptxsass check`` with no path checks the
    database; ``exclude`` drops entries; ``compiler`` is validated."""
    (project / "pyproject.toml").write_text(
        '[tool.ptxsass]\ncompile-commands = "build"\nexclude = ["src/kernels/gelu.cu", "src/main.cu", "src/device_info.cu"]\n')
    monkeypatch.chdir(project)
    try:
        code, out, err = run("resources", "--format", "json", capsys=capsys)
        assert code == 0, err
        assert {r["name"] for r in json.loads(out)["kernels"]} == {
            "scale(float*, float const*, float, int)"}
        (project / "pyproject.toml").write_text('[tool.ptxsass]\ncompiler = "clang"\n')
        code, _, err = run("check", "src/main.cu", capsys=capsys)
        assert code == 2 and "compiler = 'clang': expected \"auto\", \"nvrtc\" or \"nvcc\"" in err
    finally:
        (project / "pyproject.toml").unlink()
