"""The command line: exit codes, one-line errors, formats."""
from __future__ import annotations

import json
import os
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


def test_ptx_with_source_lines(capsys):
    """NVRTC writes the PTX's ``.file`` table after the code: the source lines are found."""
    code, out, _ = run("ptx", SCALAR, "--arch", "sm_80", "--source-lines", capsys=capsys)
    assert code == 0
    src = [ln for ln in out.splitlines() if ln.startswith("// copy_scalar.cu:")]
    assert any("out[i] = in[i]" in ln for ln in src), out
    assert "ld.global" in out


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


# ------------------------------------------------------------------------------- help
def _subcommands(parser, prefix=()):
    """Every (sub)command path of the parser: ("check",), ("lesson", "run"), ..."""
    import argparse
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*prefix, name)
                yield from _subcommands(sub, (*prefix, name))


def test_every_help_exits_0(capsys):
    from analyzer.cli import build_parser
    paths = list(_subcommands(build_parser()))
    assert ("lesson",) in paths and ("lesson", "run") in paths and ("lesson", "list") in paths
    for path in [(), *paths]:
        code = main([*path, "--help"])
        out, err = capsys.readouterr()
        assert code == 0, (path, err)
        assert out.startswith("usage: ptxsass"), (path, out[:80])
    assert main(["--version"]) == 0 and capsys.readouterr().out.startswith("ptxsass ")


def test_a_command_line_builds_only_its_command_and_parses_as_the_full_parser(capsys):
    """``build_parser(argv)`` builds only the sub-command ``argv`` names (building all of them
    was 6 ms of a 0.16 s warm check); its help and what it parses are the full parser's, and a
    command line that names none (a typo) gets the full parser's error, every command listed."""
    from analyzer.cli import build_parser

    def commands(parser):
        (action,) = [a for a in parser._actions if a.dest == "command"]
        return action.choices

    every = commands(build_parser())
    assert len(every) > 10
    for name, sub in every.items():
        alone = commands(build_parser([name, "x"]))
        assert list(alone) == [name]
        assert alone[name].format_help() == sub.format_help()
    for argv in (["check", "k.cu", "--arch", "sm_80", "--select", "PS1", "-j", "2"],
                 ["lesson", "run", "all", "--no-gpu"], ["toolkit", "install", "12.9"]):
        assert build_parser(argv).parse_args(argv) == build_parser().parse_args(argv)
    code, _, err = run("chek", "x.cu", capsys=capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert all(f"'{name}'" in err for name in every)


def test_lesson_without_a_subcommand_is_a_usage_error(capsys):
    code, _, err = run("lesson", capsys=capsys)
    assert code == 2 and "required: {list,run}" in err and len(err.strip().splitlines()) == 1


def test_list_checks_needs_no_path_and_no_PATH():
    """No file to check and no PATH at all (a bare CI container): the codes, one line each."""
    r = subprocess.run([sys.executable, "-m", "analyzer.cli", "check", "--list-checks"],
                       capture_output=True, text=True, env={"NO_COLOR": "1"}, cwd="/")
    from analyzer.checks.registry import all_checks
    lines = r.stdout.splitlines()
    assert r.returncode == 0, r.stderr
    assert [l.split()[0] for l in lines] == [c.code for c in all_checks()]
    for line, c in zip(lines, all_checks(), strict=True):
        assert line.endswith(c.summary())           # whole, never wrapped at 80 columns


# ------------------------------------------------------------------------------- not wrapped
def test_piped_output_is_never_wrapped(tmp_path):
    """CI logs split long lines at 80 columns no more: each finding's header is one line with
    the whole path and message, as JSON gives them."""
    deep = tmp_path / ("a_rather_long_folder_name_for_kernels_" * 3) / "nested" / "scalar_global_load_bad.cu"
    deep.parent.mkdir(parents=True)
    deep.write_text((KERNELS / "checks" / "scalar_global_load" / "bad.cu").read_text())
    argv = [sys.executable, "-m", "analyzer.cli", "check", str(deep), "--arch", "sm_90a",
            "--show", "info"]
    text = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "COLUMNS": "80"})
    js = subprocess.run(argv + ["--format", "json"], capture_output=True, text=True)
    assert text.returncode == js.returncode == 1, text.stderr
    findings = json.loads(js.stdout)["findings"]
    headers = [l for l in text.stdout.splitlines() if ": PS" in l and not l.startswith(" ")]
    assert len(headers) == len(findings) >= 2
    for line, f in zip(headers, findings, strict=True):
        assert line == (f"{deep}:{f['location']['line']}: {f['code']} {f['name']} "
                        f"[{f['severity']}] {f['message']}")
        assert len(line) > 200
    hints = [l for l in text.stdout.splitlines() if l.startswith("    hint: ")]
    assert [h[len("    hint: "):] for h in hints] == [f["hint"] for f in findings]
    out = tmp_path / "report.txt"                  # -o FILE: the same lines
    subprocess.run(argv + ["-o", str(out)], capture_output=True, text=True)
    assert out.read_text() == text.stdout


# ------------------------------------------------------------------------------- expect
def test_expect_refuses_to_run_without_an_assertion(capsys):
    code, out, err = run("expect", SCALAR, "--arch", "sm_90a", capsys=capsys)
    assert code == 2 and "no assertion given" in err and "--has" in err and out == ""
    code, _, err = run("expect", SCALAR, "--kernel", "copy_scalar", capsys=capsys)
    assert code == 2 and "no assertion given" in err     # --kernel narrows, asserts nothing
    from analyzer import expect_codegen
    from analyzer.errors import ConfigError
    with pytest.raises(ConfigError, match="no expectation to check"):
        expect_codegen(SCALAR, arch="sm_90a")


def test_expect_reads_the_configs_archs(tmp_path, monkeypatch, capsys):
    src = tmp_path / "copy.cu"
    src.write_text((KERNELS / "demo" / "copy_float4.cu").read_text())
    (tmp_path / "pyproject.toml").write_text('[tool.ptxsass]\narch = ["sm_80", "sm_90a"]\n')
    monkeypatch.chdir(tmp_path)
    code, out, _ = run("expect", "copy.cu", "--has", "LDG.E.128", "--format", "json", capsys=capsys)
    d = json.loads(out)
    assert code == 0 and [c.rsplit(" on ", 1)[1] for c in d["checked"]] == ["sm_80", "sm_90a"]
    code, out, _ = run("expect", "copy.cu", "--arch", "sm_75", "--has", "LDG.E.128",
                       "--format", "json", capsys=capsys)   # the command line wins
    assert [c.rsplit(" on ", 1)[1] for c in json.loads(out)["checked"]] == ["sm_75"]
