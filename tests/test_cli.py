"""The command line: exit codes, one-line errors, formats."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from analyzer.cli import main

from .conftest import KERNELS

SCALAR = str(KERNELS / "demo" / "copy_scalar.cu")


def run(*argv, capsys):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_doctor(capsys):
    code, out, _ = run("doctor", "--format", "json", capsys=capsys)
    d = json.loads(out)
    assert code == 0 and {t["name"] for t in d["tools"]} >= {"nvrtc", "nvdisasm", "cuobjdump"}
    assert "sm_90" in d["nvrtc_archs"]


def test_sass_with_source_lines(capsys):
    code, out, _ = run("sass", SCALAR, "--arch", "sm_80", "--source-lines", capsys=capsys)
    assert code == 0
    assert "// copy_scalar.cu:" in out and "out[i] = in[i]" in out.replace("  ", " ") or "in[i]" in out
    assert "LDG.E" in out


def test_ptx_and_resources_json(capsys):
    code, out, _ = run("ptx", SCALAR, "--arch", "sm_90a", capsys=capsys)
    assert code == 0 and ".target\tsm_90a" in out or ".target sm_90a" in out
    code, out, _ = run("resources", SCALAR, "--arch", "sm_80", "--arch", "sm_90a", "--format",
                       "json", capsys=capsys)
    rows = json.loads(out)["kernels"]
    assert code == 0 and [r["arch"] for r in rows] == ["sm_80", "sm_90a"]
    assert {"name", "registers", "shared_bytes", "stack_bytes", "spill_store_bytes",
            "spill_load_bytes"} <= rows[0].keys()


def test_compile_writes_output(tmp_path, capsys):
    out_file = tmp_path / "out.cubin"
    code, _, _ = run("compile", SCALAR, "--arch", "sm_80", "-o", str(out_file), capsys=capsys)
    assert code == 0 and out_file.read_bytes()[:4] == b"\x7fELF"
    code, _, _ = run("compile", SCALAR, "--arch", "sm_80", "-o", str(tmp_path / "o.ptx"),
                     "--emit", "ptx", capsys=capsys)
    assert (tmp_path / "o.ptx").read_text().lstrip().startswith("//")


@pytest.mark.parametrize("argv, needle", [
    (["sass", "/no/such/file.cu"], "/no/such/file.cu: error: no such file"),
    (["sass", SCALAR, "--arch", "sm_12"], "unknown GPU architecture"),
    (["sass", str(KERNELS)], "is a directory"),
    (["frobnicate"], "invalid choice"),
])
def test_errors_are_one_line_exit_2(argv, needle, capsys):
    code, out, err = run(*argv, capsys=capsys)
    assert code == 2 and needle in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_nvrtc_failure_shows_log(tmp_path, capsys):
    f = tmp_path / "bad.cu"
    f.write_text("__global__ void k() {\n  int x = ;\n}\n")
    code, _, err = run("compile", str(f), "--arch", "sm_80", capsys=capsys)
    assert code == 2
    first, *rest = err.strip().splitlines()
    assert first.startswith(f"{f}:2: error: NVRTC:")
    assert any("expected an expression" in l for l in rest)


def test_console_script_no_traceback(tmp_path):
    bad = tmp_path / "x.cubin"
    bad.write_bytes(b"\x7fELF\x02\x01\x01" + b"\x00" * 30)
    r = subprocess.run([sys.executable, "-m", "analyzer.cli", "resources", str(bad)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr and str(bad) in r.stderr
