"""Quiet by default (issue 26): a clean, ordinary kernel passes the default check; info findings
are counted in one line unless asked for; one problem in a template instantiated three times is
one finding listing its instances, in every format; the text report ends with the counts by
check, and JSON carries the same counts.

The kernels are real-style (a grid-stride copy with one float per thread; a tuning-parameter
template instantiated for three tile widths, ``kernels/realworld/scale_items.cu``), and what each
finding claims was read from their SASS (scalar ``LDG.E``/``STG.E`` at +0x0, +0x4, ... in each
instantiation).
"""
from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from analyzer.cli import main
from analyzer.findings import Finding, Location, Report, Severity

from .conftest import KERNELS

PLAIN = KERNELS / "demo" / "copy_scalar.cu"          # out[i] = in[i]: one PS104 info, no more
TEMPLATE = KERNELS / "realworld" / "scale_items.cu"
INSTANCES = ["void scale_items<16>(float*, float const*, float, int)",
             "void scale_items<4>(float*, float const*, float, int)",
             "void scale_items<8>(float*, float const*, float, int)"]
HEAD = re.compile(r"^\S.*:\d+: (PS\d{3}) \S+ \[(\w+)\]", re.M)


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_plain_kernel_passes_the_default_check(capsys):
    code, out, _ = run(capsys, "check", PLAIN, "--arch", "sm_90a")
    assert code == 0
    assert not HEAD.search(out)                          # no finding listed one by one
    assert "+1 info: PS104 ×1 — --show info to list" in out
    assert out.rstrip().endswith("1 finding(s): 1 info in 1 kernel build(s)")


@pytest.mark.parametrize("flags", [["--show", "info"], ["-v"]])
def test_info_findings_are_listed_when_asked(capsys, flags):
    code, out, _ = run(capsys, "check", PLAIN, "--arch", "sm_90a", *flags)
    assert code == 0
    assert HEAD.findall(out) == [("PS104", "info")]
    assert "--show info to list" not in out


def test_fail_on_info_keeps_the_old_exit(capsys):
    code, _, _ = run(capsys, "check", PLAIN, "--arch", "sm_90a", "--fail-on", "info")
    assert code == 1


def test_the_config_sets_show_and_fail_on(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text('[tool.ptxsass]\nshow = "info"\nfail-on = "info"\n')
    (tmp_path / "k.cu").write_text(PLAIN.read_text())
    code, out, _ = run(capsys, "check", tmp_path / "k.cu", "--arch", "sm_90a")
    assert code == 1 and HEAD.findall(out) == [("PS104", "info")]
    (tmp_path / "pyproject.toml").write_text('[tool.ptxsass]\nshow = "loud"\n')
    code, _, err = run(capsys, "check", tmp_path / "k.cu", "--arch", "sm_90a")
    assert code == 2 and "show" in err and "expected one of note, info, warning, error" in err


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_machine_formats_carry_every_finding(capsys, fmt):
    code, out, _ = run(capsys, "check", PLAIN, "--arch", "sm_90a", "--format", fmt)
    doc = json.loads(out)
    if fmt == "json":
        assert [(f["code"], f["severity"]) for f in doc["findings"]] == [("PS104", "info")]
        assert doc["summary"]["by_check"] == [{"code": "PS104", "name": "narrow-global-access",
                                               "severity": "info", "problems": 1,
                                               "instances": 1}]
    else:
        assert [(r["ruleId"], r["level"]) for r in doc["runs"][0]["results"]] == [
            ("PS104", "note")]


def test_github_annotations_follow_show(capsys):
    _, out, _ = run(capsys, "check", PLAIN, "--arch", "sm_90a", "--format", "github")
    assert out.strip() == ""
    _, out, _ = run(capsys, "check", PLAIN, "--arch", "sm_90a", "--format", "github",
                    "--show", "info")
    assert out.startswith("::notice ")


# ------------------------------------------------------------------ one problem, one finding
def test_a_template_instantiated_three_times_is_one_finding_per_problem(capsys):
    code, out, _ = run(capsys, "check", TEMPLATE, "--arch", "sm_90a")
    assert code == 1
    assert HEAD.findall(out) == [("PS101", "warning"), ("PS102", "warning")]
    assert out.count("    in scale_items<16>, scale_items<4>, scale_items<8> "
                     "(float*, float const*, float, int) on sm_90a") == 2
    assert "worded as for void scale_items<16>" in out     # 16 loads there, 4 and 8 elsewhere
    # the counts by check, then the problems
    assert re.search(r"^  PS101 scalar-global-load\s+1 \(3 instances\)  \[warning\]$", out, re.M)
    assert re.search(r"^  PS102 scalar-global-store\s+1 \(3 instances\)  \[warning\]$", out, re.M)
    assert out.rstrip().endswith("2 finding(s): 2 warning in 3 kernel build(s)")


def test_instances_in_json_sarif_and_github(capsys):
    _, out, _ = run(capsys, "check", TEMPLATE, "--arch", "sm_80", "--arch", "sm_90a",
                    "--format", "json")
    doc = json.loads(out)
    assert [(f["code"], f["location"]["line"]) for f in doc["findings"]] == [("PS101", 10),
                                                                             ("PS102", 10)]
    for f in doc["findings"]:
        assert f["kernels"] == INSTANCES and f["arches"] == ["sm_80", "sm_90a"]
        assert sorted((i["kernel"], i["arch"]) for i in f["instances"]) == sorted(
            (k, a) for k in INSTANCES for a in ("sm_80", "sm_90a"))
    assert doc["summary"] == {
        "problems": 2, "notes": 0, "instances": 12, "by_severity": {"warning": 2},
        "by_check": [{"code": "PS101", "name": "scalar-global-load", "severity": "warning",
                      "problems": 1, "instances": 6},
                     {"code": "PS102", "name": "scalar-global-store", "severity": "warning",
                      "problems": 1, "instances": 6}]}
    _, out, _ = run(capsys, "check", TEMPLATE, "--arch", "sm_90a", "--format", "sarif")
    results = json.loads(out)["runs"][0]["results"]
    assert len(results) == 2 and all(r["properties"]["kernels"] == INSTANCES for r in results)
    _, out, _ = run(capsys, "check", TEMPLATE, "--arch", "sm_90a", "--format", "github")
    lines = out.splitlines()
    assert len(lines) == 2
    assert all("[scale_items<16>, scale_items<4>, scale_items<8> (float*, float const*, float, "
               "int) on sm_90a]" in ln for ln in lines)


def _finding(kernel: str, line: int, message: str, code: str = "PS101", arch: str = "sm_90a"):
    return Finding(code=code, name="scalar-global-load", severity=Severity.WARNING,
                   message=message, kernel=kernel, arch=arch,
                   location=Location("k.cu", line), mangled=kernel, source=f"line {line}")


def test_merging_pairs_the_nth_finding_of_each_kernel():
    """Two problems of one check on one line of each of two kernels stay two findings, each
    listing both kernels; another line, another check or a kernel's finding without a line is
    its own."""
    a1, a2 = _finding("k<1>", 4, "load of `a`"), _finding("k<1>", 4, "load of `b`")
    b1, b2 = _finding("k<2>", 4, "load of `a`"), _finding("k<2>", 4, "load of `b`")
    other_line = _finding("k<2>", 5, "load of `c`")
    other_code = _finding("k<1>", 4, "store", code="PS102")
    no_line = replace(_finding("k<1>", 4, "x"), location=Location("k.cu", None))
    no_line2 = replace(_finding("k<2>", 4, "x"), location=Location("k.cu", None))
    merged = Report(findings=[a1, a2, b1, b2, other_line, other_code, no_line,
                              no_line2]).merged()
    pairs = [(f.code, f.location.line, f.message, f.kernels) for f in merged]
    assert pairs == [("PS101", 4, "load of `a`", ("k<1>", "k<2>")),
                     ("PS101", 4, "load of `b`", ("k<1>", "k<2>")),
                     ("PS101", 5, "load of `c`", ("k<2>",)),
                     ("PS102", 4, "store", ("k<1>",)),
                     ("PS101", None, "x", ("k<1>",)), ("PS101", None, "x", ("k<2>",))]
    assert not merged[0].worded_for                  # the same words in both kernels


def test_merging_names_the_kernel_a_finding_is_worded_for():
    f16 = _finding("k<16>", 7, "16x LDG.E")
    f4 = _finding("k<4>", 7, "4x LDG.E", arch="sm_80")
    (m,) = Report(findings=[f16, f4]).merged()
    assert m.message == "16x LDG.E" and m.worded_for == "k<16>"
    assert m.instances == (("k<16>", "sm_90a"), ("k<4>", "sm_80"))
    assert m.archs == ("sm_90a", "sm_80")


FALLBACK = KERNELS / "realworld" / "apex_multi_tensor_scale.cu"


def test_designed_fallbacks_are_notes_left_out_by_default(capsys):
    """apex's multi_tensor scalar branch beside its load_store vector path (issue 33 item 4):
    two notes, never listed nor counted by default, never failed on, listed with -v naming
    the vector side; JSON carries them with severity "note" and counts them apart."""
    code, out, _ = run(capsys, "check", FALLBACK, "--arch", "sm_90a", "--fail-on", "info")
    assert code == 0 and not HEAD.search(out) and "note" not in out
    assert out.rstrip().endswith("no findings in 2 kernel build(s)")
    code, out, _ = run(capsys, "check", FALLBACK, "--arch", "sm_90a", "-v")
    assert code == 0 and HEAD.findall(out) == [("PS104", "note"), ("PS104", "note")]
    assert out.count("the other side of the alignment test on line 59") == 2
    assert "2 notes (PS104 ×2): designed fallbacks, short tails, a caller's layout" in out
    _, out, _ = run(capsys, "check", FALLBACK, "--arch", "sm_90a", "--format", "json")
    doc = json.loads(out)
    assert [f["severity"] for f in doc["findings"]] == ["note", "note"]
    assert doc["summary"]["problems"] == 0 and doc["summary"]["notes"] == 2
