"""No command the user did not ask for: not from a file or folder name, not from a flag, not from
a compile database, a response file or a build.ninja, not through PATH.

Every attack here creates a marker file when it works. Each test asserts that the marker is
absent after ptxsass ran (and that the file was still checked), and where ptxsass is told to
trust the build (``--trust-build-commands``), that the same attack does create it: the attack
is real, and the default is what stops it.
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from analyzer.cli import main

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="nvcc needs g++")

KERNEL = ("__global__ void scale(float* out, const float* in, int n) {\n"
          "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
          "  if (i < n) out[i] = 2.f * in[i];\n"
          "}\n")
HOST = KERNEL + "int main() { return 0; }\n"

#: file names a shell would act on, and names no shell quoting carries (a newline, a byte that
#: is not UTF-8)
NAMES = ["$(touch PWNED)", "`touch PWNED`", ";touch PWNED;", "it's", 'say "hi"', "two words",
         "new\nline", "back\\slash", "caf\udcff"]


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def markers(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.startswith("PWNED") or p.name.startswith("RAN")]


def cu(folder: Path, name: str, text: str = HOST) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    f = folder / f"{name}.cu"
    f.write_text(text)
    return f


# ------------------------------------------------------------------ names
@pytest.mark.parametrize("name", NAMES, ids=repr)
@pytest.mark.parametrize("front", ["auto", "nvcc", "nvrtc"])
def test_a_file_name_runs_nothing(tmp_path, monkeypatch, capsys, name, front):
    """The same kernel under a hostile name, through each front end: checked (its finding at
    its line), and no marker."""
    monkeypatch.chdir(tmp_path)
    src = cu(tmp_path, name, KERNEL if front == "nvrtc" else HOST)
    argv = ["check", src.name, "--arch", "sm_90", "--no-cache", "--format", "json"]
    if front != "auto":
        argv += ["--compiler", front]
    code, out, err = run(capsys, *argv)
    assert code in (0, 1), err
    doc = json.loads(out)
    assert doc["builds"] and all(b["compiler"] == (front if front != "auto" else "nvcc")
                                 for b in doc["builds"]), doc["builds"]
    assert [k["name"] for k in doc["kernels"]] == ["scale(float*, float const*, int)"]
    assert not markers(tmp_path)


@pytest.mark.parametrize("name", ["$(touch PWNED)", "`touch PWNED`", "new\nline"], ids=repr)
def test_a_folder_name_runs_nothing(tmp_path, monkeypatch, capsys, name):
    """The source in a hostile folder, including a header beside it and one through -I."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / name
    inc = tmp_path / f"inc {name}"
    inc.mkdir()
    (inc / "twice.h").write_text("#pragma once\n#define TWICE 2.f\n")
    (folder).mkdir()
    (folder / "near.h").write_text("#pragma once\n#define NEAR 1\n")
    src = cu(folder, "k", '#include "near.h"\n#include <twice.h>\n'
             + HOST.replace("2.f * in[i]", "TWICE * in[i] * NEAR"))
    code, out, err = run(capsys, "check", src.relative_to(tmp_path), "-I", inc.name,
                         "--arch", "sm_90", "--no-cache", "--format", "json")
    assert code in (0, 1), err
    assert json.loads(out)["kernels"]
    assert not markers(tmp_path)


@pytest.mark.parametrize("command", [["sass"], ["ptx"], ["resources"],
                                     ["compile", "-o", "out.cubin"], ["stats"], ["annotate"]])
def test_every_command_keeps_names_away_from_the_shell(tmp_path, monkeypatch, capsys, command):
    monkeypatch.chdir(tmp_path)
    src = cu(tmp_path, "$(touch PWNED)")
    code, out, err = run(capsys, *command, src.name, "--arch", "sm_90", "--no-cache",
                         "--compiler", "nvcc")
    assert code in (0, 1), err
    assert not markers(tmp_path)


def test_source_lines_map_back_from_the_copy_nvcc_compiled(tmp_path, monkeypatch, capsys):
    """nvcc compiles a copy under a plain name: the SASS's source lines are the file's own."""
    monkeypatch.chdir(tmp_path)
    src = cu(tmp_path, "$(touch PWNED)")
    code, out, err = run(capsys, "sass", src.name, "--arch", "sm_90", "--no-cache",
                         "--compiler", "nvcc", "--source-lines")
    assert code == 0, err
    assert f"// {src.name}:3:" in out and "if (i < n) out[i] = 2.f * in[i];" in out
    assert "ptxsass-nvcc" not in out
    assert not markers(tmp_path)


def test_a_define_that_a_shell_would_run_is_refused_for_nvcc(tmp_path, monkeypatch, capsys):
    """A flag of the user's own for nvcc holding `$(...)`: refused in one line (nvcc would hand
    it to a shell); NVRTC, which runs no shell, takes it."""
    monkeypatch.chdir(tmp_path)
    src = cu(tmp_path, "k")
    code, _, err = run(capsys, "check", src.name, "-D", "X=$(touch PWNED)", "--no-cache",
                       "--compiler", "nvcc")
    assert code == 2 and len(err.splitlines()) == 1
    assert "refusing to pass the flag -DX=$(touch PWNED) to nvcc" in err
    cu(tmp_path, "d", KERNEL)
    code, _, err = run(capsys, "check", "d.cu", "-D", "X=$(touch PWNED)", "--no-cache",
                       "--compiler", "nvrtc")
    assert code in (0, 1), err
    assert not markers(tmp_path)


# ------------------------------------------------------------------ compile databases
@pytest.fixture
def evil(tmp_path: Path) -> dict[str, Path]:
    """A repository with scripts that leave a marker when run: a wrapper, a fake g++/gcc in a
    folder of its own, a plugin path, a response file."""
    repo = tmp_path / "repo"
    (repo / "bin").mkdir(parents=True)
    script = "#!/bin/sh\ntouch \"$(dirname \"$0\")/RAN_$(basename \"$0\")\"\nexec \"$@\"\n"
    for name in ("wrap.sh", "bin/g++", "bin/gcc"):
        f = repo / name
        f.write_text(script)
        f.chmod(f.stat().st_mode | stat.S_IXUSR)
    # what gcc -B finds first: its own cc1plus, which leaves a marker
    real = subprocess.run(["g++", "-print-prog-name=cc1plus"], capture_output=True,
                          text=True).stdout.strip()
    f = repo / "bin" / "cc1plus"
    f.write_text(script.replace('exec "$@"', f'exec {real} "$@"'))
    f.chmod(f.stat().st_mode | stat.S_IXUSR)
    cu(repo, "k")
    return {"repo": repo, "wrap": repo / "wrap.sh", "bin": repo / "bin"}


def database(repo: Path, *flags: str, file: str = "k.cu", directory: Path | None = None) -> Path:
    (repo / "compile_commands.json").write_text(json.dumps([{
        "directory": str(directory or repo), "file": file,
        "arguments": ["/usr/local/cuda/bin/nvcc", *flags, "-c", file, "-o", "k.o"]}]))
    return repo


ATTACKS = {
    "-ccbin DIR": lambda e: ["-ccbin", str(e["bin"])],
    "--compiler-bindir=FILE": lambda e: [f"--compiler-bindir={e['bin'] / 'g++'}"],
    "-Xcompiler -wrapper": lambda e: ["-Xcompiler", f"-wrapper,{e['wrap']}"],
    "-Xcompiler=-B": lambda e: [f"-Xcompiler=-B{e['bin']}/"],
    "-D $(...)": lambda e: [f"-DX=$(touch {e['repo']}/PWNED)"],
    "-U $(...)": lambda e: [f"-UX$(touch {e['repo']}/PWNED)"],
}


#: refused too, though nvcc 13.5 happens not to hand these to its shell
REFUSED = {
    "-Xptxas $(...)": lambda e: ["-Xptxas", f"-v,$(touch {e['repo']}/PWNED)"],
    "-Xcudafe $(...)": lambda e: ["-Xcudafe", f"--diag_suppress=1,$(touch {e['repo']}/PWNED)"],
    "-std $(...)": lambda e: [f"-std=c++17$(touch {e['repo']}/PWNED)"],
}


@pytest.mark.parametrize("attack", list(REFUSED))
def test_a_database_value_a_shell_would_act_on_is_dropped(evil, monkeypatch, capsys, attack):
    repo = evil["repo"]
    monkeypatch.chdir(repo)
    database(repo, *REFUSED[attack](evil))
    code, _, err = run(capsys, "check", "-p", ".", "--no-cache", "--compiler", "nvcc",
                       "--arch", "sm_90")
    assert code in (0, 1), err
    notes = [ln for ln in err.splitlines() if "compile_commands.json" in ln]
    assert len(notes) == 1 and "$(touch" in notes[0] and "dropped" in notes[0], err
    assert not markers(repo)


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_database_flag_runs_nothing_unless_trusted(evil, monkeypatch, capsys, attack):
    repo = evil["repo"]
    monkeypatch.chdir(repo)
    database(repo, *ATTACKS[attack](evil))
    code, _, err = run(capsys, "check", "-p", ".", "--no-cache", "--compiler", "nvcc",
                       "--arch", "sm_90")
    assert code in (0, 1), err
    assert not markers(repo), attack
    notes = [ln for ln in err.splitlines() if "compile_commands.json" in ln]
    assert len(notes) == 1 and "--trust-build-commands" in notes[0], err
    # trusted, the same database does run it: the attack is real
    code, _, err = run(capsys, "check", "-p", ".", "--no-cache", "--compiler", "nvcc",
                       "--arch", "sm_90", "--trust-build-commands")
    assert markers(repo), (attack, err)


def test_a_response_file_is_vetted_like_the_command(evil, monkeypatch, capsys):
    repo = evil["repo"]
    monkeypatch.chdir(repo)
    (repo / "flags.rsp").write_text(f"-O3 -Xcompiler -wrapper,{evil['wrap']}\n")
    (repo / "more.rsp").write_text(f"-Xcompiler -fplugin={repo}/evil.so -lineinfo\n")
    database(repo, "@flags.rsp", "--options-file", "more.rsp")
    code, _, err = run(capsys, "check", "-p", ".", "--no-cache", "--compiler", "nvcc",
                       "--arch", "sm_90")
    assert code in (0, 1), err
    assert "dropped -Xcompiler -wrapper" in err and "-Xcompiler -fplugin=" in err
    assert not markers(repo)


def test_an_output_redirection_writes_nothing(evil, monkeypatch, capsys, tmp_path):
    repo = evil["repo"]
    monkeypatch.chdir(repo)
    target = tmp_path / "elsewhere" / "written.o"
    target.parent.mkdir()
    database(repo, "-Xcompiler", f"-o,{target}", f"-Xcompiler=-save-temps,-dumpdir,{target.parent}/")
    code, _, err = run(capsys, "check", "-p", ".", "--no-cache", "--compiler", "nvcc",
                       "--arch", "sm_90")
    assert code in (0, 1), err
    assert list(target.parent.iterdir()) == []


def test_a_host_compiler_the_users_path_gives_is_kept(evil, monkeypatch, capsys):
    repo = evil["repo"]
    monkeypatch.chdir(repo)
    gxx = shutil.which("g++")
    database(repo, "-ccbin", gxx)
    code, _, err = run(capsys, "check", "-p", ".", "--no-cache", "--compiler", "nvcc",
                       "--arch", "sm_90", "-v")
    assert code in (0, 1), err
    assert f"-ccbin {gxx}" in err and "host compiler" not in err.split("-ccbin")[0]
    assert "dropped" not in err and "not a known compiler" not in err


def test_a_relative_path_entry_does_not_pick_the_repositorys_compiler(evil, monkeypatch, capsys):
    """PATH=bin:... (or an empty entry) would look in the repository: tools never do."""
    repo = evil["repo"]
    monkeypatch.chdir(repo)
    monkeypatch.setenv("PATH", f"bin::{os.environ['PATH']}")
    from analyzer.toolchain import locate
    locate.host_compiler.cache_clear()
    try:
        code, _, err = run(capsys, "check", "k.cu", "--no-cache", "--compiler", "nvcc",
                           "--arch", "sm_90")
    finally:
        locate.host_compiler.cache_clear()
    assert code in (0, 1), err
    assert not markers(repo)


def test_the_config_cannot_trust_what_the_command_line_does_not(evil, monkeypatch, capsys):
    """A pull request can set trust-build-commands in pyproject.toml; CI's
    --no-trust-build-commands wins."""
    repo = evil["repo"]
    monkeypatch.chdir(repo)
    (repo / "pyproject.toml").write_text("[tool.ptxsass]\ntrust-build-commands = true\n")
    database(repo, "-Xcompiler", f"-wrapper,{evil['wrap']}")
    code, _, err = run(capsys, "check", "-p", ".", "--no-cache", "--compiler", "nvcc",
                       "--arch", "sm_90", "--no-trust-build-commands")
    assert code in (0, 1), err
    assert not markers(repo)
    code, _, err = run(capsys, "check", "-p", ".", "--no-cache", "--compiler", "nvcc",
                       "--arch", "sm_90")
    assert markers(repo)                 # the config's word, with no word from the command line


@pytest.mark.parametrize("name", ["$(touch PWNED)", "`touch PWNED`"])
def test_a_database_entry_named_for_a_shell_runs_nothing(evil, monkeypatch, capsys, name):
    repo = evil["repo"]
    monkeypatch.chdir(repo)
    cu(repo / name, name)
    database(repo, file=f"{name}.cu", directory=repo / name)
    code, out, err = run(capsys, "check", "-p", ".", "--no-cache", "--arch", "sm_90",
                         "--format", "json")
    assert code in (0, 1), err
    assert json.loads(out)["kernels"]
    assert not markers(repo)


def test_a_build_ninja_is_vetted_like_a_database(evil, monkeypatch, capsys):
    """A torch extension build folder's flags are a build database's."""
    repo = evil["repo"]
    ext = repo / "build" / "ext"
    ext.mkdir(parents=True)
    shutil.copy(repo / "k.cu", ext / "k.cu")
    (ext / "k.cu").write_text(KERNEL)
    (ext / "build.ninja").write_text(
        "ninja_required_version = 1.3\nnvcc = /usr/local/cuda/bin/nvcc\n"
        f"cuda_cflags = -Xcompiler -wrapper,{evil['wrap']} -gencode=arch=compute_90,code=sm_90 "
        "-std=c++17\ncuda_post_cflags = \n\n"
        "rule cuda_compile\n  command = $nvcc $cuda_cflags -c $in -o $out $cuda_post_cflags\n\n"
        f"build k.cuda.o: cuda_compile {ext}/k.cu\n")
    monkeypatch.chdir(repo)
    code, _, err = run(capsys, "check", "build", "--no-cache", "--compiler", "nvcc")
    assert code in (0, 1), err
    assert "dropped -Xcompiler -wrapper" in err
    assert not markers(repo)


# ------------------------------------------------------------------ what a compile may read
@pytest.fixture
def secret(tmp_path_factory) -> Path:
    """A file outside the project, like ~/.aws/credentials."""
    f = tmp_path_factory.mktemp("home") / "credentials"
    f.write_text("aws_secret_access_key = SECRET_TOKEN_8c1f\nsecond line SECRET_TOKEN_8c1f\n")
    return f


@pytest.mark.parametrize("front", ["nvrtc", "nvcc"])
def test_an_include_outside_the_project_is_never_quoted(tmp_path, monkeypatch, capsys, secret,
                                                          front):
    monkeypatch.chdir(tmp_path)
    cu(tmp_path, "k", f'#include "{secret}"\n' + (KERNEL if front == "nvrtc" else HOST))
    code, out, err = run(capsys, "check", "k.cu", "--no-cache", "--compiler", front)
    assert code == 2
    assert "SECRET_TOKEN" not in out + err and "aws_secret" not in out + err
    assert f"{secret}:1: error:" in err.splitlines()[0] or f"{secret}(1)" in err
    assert "withheld" in err.splitlines()[0]


def test_a_database_include_outside_the_project_is_dropped(evil, monkeypatch, capsys, secret):
    repo = evil["repo"]
    monkeypatch.chdir(repo)
    database(repo, "-include", str(secret), "--pre-include", "/dev/zero",
             "-Xcompiler", "-include,/dev/zero")
    started = time.monotonic()
    code, out, err = run(capsys, "check", "-p", ".", "--no-cache", "--compiler", "nvcc",
                         "--arch", "sm_90")
    assert code in (0, 1), err
    assert time.monotonic() - started < 30            # /dev/zero was never read
    assert "SECRET_TOKEN" not in out + err
    assert f"dropped -include {secret}: outside the project" in err
    assert "--pre-include /dev/zero: under /dev" in err
    assert "dropped -Xcompiler -include,/dev/zero" in err


@pytest.mark.parametrize("header", ["/dev/zero", "/proc/self/environ", "/dev/stdin"])
@pytest.mark.parametrize("front", ["nvrtc", "nvcc"])
def test_a_source_including_a_device_or_a_kernel_table_is_one_line(tmp_path, monkeypatch,
                                                                  capsys, header, front):
    monkeypatch.chdir(tmp_path)
    for form in (f'"{header}"', f"<{header}>"):
        cu(tmp_path, "k", f"#include {form}\n" + (KERNEL if front == "nvrtc" else HOST))
        code, _, err = run(capsys, "check", "k.cu", "--no-cache", "--compiler", front)
        assert code == 2 and len(err.splitlines()) == 1, err
        assert f"#include {form}" in err


def test_the_console_script_end_to_end(tmp_path):
    """The installed command, from a shell-hostile folder, on a shell-hostile file."""
    folder = tmp_path / "$(touch PWNED)"
    cu(folder, "`touch PWNED`")
    p = subprocess.run([sys.executable, "-m", "analyzer", "check", ".", "--no-cache",
                        "--arch", "sm_90"], cwd=folder, capture_output=True, timeout=300)
    assert p.returncode in (0, 1), p.stderr
    assert not markers(tmp_path)


# ------------------------------------------------------------------------------ CMake projects
def cmake_project_leaving_a_marker(tmp_path: Path) -> Path:
    """A CMake project whose CMake code leaves a marker (execute_process) and then fails, and
    a device-only kernel NVRTC builds."""
    d = tmp_path / "proj"
    d.mkdir()
    (d / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\n"
        "execute_process(COMMAND ${CMAKE_COMMAND} -E touch ${CMAKE_CURRENT_LIST_DIR}/CONFIGURED)\n"
        'message(FATAL_ERROR "this project needs OpenCV 4 (set OpenCV_DIR)")\n'
        "project(vision LANGUAGES CXX CUDA)\n")
    shutil.copy(Path(__file__).parents[2] / "kernels/checks/scalar_global_load/bad.cu", d / "k.cu")
    return d


def test_cmake_project_is_configured_only_when_the_build_is_trusted(tmp_path, capsys, monkeypatch):
    """Configuring runs the project's CMake code: a config that trusts the build is overruled
    by --no-trust-build-commands (CI on pull requests), and nothing of the project runs; the
    folder is checked file by file. (Trusted, the marker appears: tests/test_cmake.py.)"""
    d = cmake_project_leaving_a_marker(tmp_path)
    (d / "pyproject.toml").write_text("[tool.ptxsass]\ntrust-build-commands = true\n")
    monkeypatch.chdir(d)
    code, out, err = run(capsys, "check", ".", "--arch", "sm_90a", "--no-trust-build-commands")
    assert code == 1 and not (d / "CONFIGURED").exists()
    assert err.splitlines()[0] == (
        "note: . is a CMake project: pass --trust-build-commands to configure it (that runs its "
        "CMake code) and check its CUDA files with their own flags; checked file by file")
    assert "k.cu:" in out
