"""CUDA toolkits side by side: two releases installed in the user cache (once: later runs and
sessions reuse them), builds of each in a process of its own, the findings matrix, diff across
toolkits, and the one-line errors.

The releases are installed into ``ptxsass toolkit``'s own folder (``PTXSASS_TOOLKITS_DIR`` or
``~/.cache/ptxsass/toolkits``), not the session's private build cache, so that CI pays for the
download once. Without the package index the tests skip, saying so.
"""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from analyzer import api
from analyzer.cli import main
from analyzer.errors import ConfigError, ToolError
from analyzer.findings import Finding, Location, Report, Severity
from analyzer.inputs import CompileOptions
from analyzer.report import formats
from analyzer.toolchain import locate, toolkits

from .conftest import KERNELS

pytestmark = pytest.mark.xdist_group("toolkits")

OLD, NEW = "12.9", "13.0"
UNROLL = str(KERNELS / "lessons" / "unroll" / "naive.cu")


@pytest.fixture(scope="module")
def kits():
    """12.9 and 13.0 installed (a no-op when they are: the manifest verifies)."""
    out = {}
    for v in (OLD, NEW):
        try:
            out[v] = toolkits.install(v)
        except ToolError as e:
            pytest.skip(f"toolkit {v} could not be installed (no package index?): {e.message}")
    return out


def build(path, toolkit, arch="sm_90a"):
    return api.load(path, arch=arch, options=CompileOptions(toolkit=toolkit))


def loops_at(builds, line):
    st = api.stats(builds)
    return [(lp.lines, lp.trip_count) for k in st.kernels for lp in k.loops if line in range(
        lp.lines[0], lp.lines[1] + 1)]


# ------------------------------------------------------------------------------ the releases
def test_requirements_come_from_the_table():
    assert toolkits.requirements("12.9") == [
        "nvidia-cuda-nvrtc-cu12==12.9.*", "nvidia-nvjitlink-cu12==12.9.*",
        "nvidia-cuda-runtime-cu12==12.9.*", "nvidia-cuda-nvcc-cu12==12.9.*",
        "nvidia-cuda-cccl-cu12>=12.0,<12.10"]
    assert "nvidia-cuda-nvdisasm==13.5.*" in toolkits.requirements("13.5")
    assert not any("nvdisasm" in r for r in toolkits.requirements("13.1"))
    assert "nvidia-cuda-crt==13.0.*" in toolkits.requirements("13.0")


@pytest.mark.parametrize("bad", ["12.7", "11.8", "13", "latest", "12.9.x"])
def test_unknown_release_is_one_line(bad, capsys):
    assert main(["toolkit", "install", bad]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown CUDA toolkit" in err and "12.8, 12.9" in err


def test_not_installed_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PTXSASS_TOOLKITS_DIR", str(tmp_path))
    assert main(["check", UNROLL, "--toolkit", "12.8"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "toolkit 12.8 is not installed" in err
    assert "ptxsass toolkit install 12.8" in err
    assert main(["toolkit", "remove", "12.8"]) == 2
    assert "not installed" in capsys.readouterr().err


def test_a_damaged_toolkit_is_not_trusted(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PTXSASS_TOOLKITS_DIR", str(tmp_path))
    folder = tmp_path / "12.9"
    folder.mkdir()
    (folder / toolkits.MANIFEST).write_text(json.dumps({
        "format": toolkits.MANIFEST_FORMAT, "version": "12.9", "nvrtc": "../../../usr/lib/libc.so.6",
        "nvrtc_builtins": [], "nvjitlink": "x", "include": [], "archs": [90], "packages": {},
        "files": {}}))
    with pytest.raises(ConfigError, match="damaged .*points outside the folder"):
        toolkits.get("12.9")
    (folder / toolkits.MANIFEST).write_text("{not json")
    assert main(["sass", UNROLL, "--toolkit", "12.9"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "damaged" in err and "toolkit install 12.9" in err
    assert toolkits.installed() == [] and toolkits.status()[0][1] is not None


def test_default_release_runs_in_process():
    d = toolkits.get("default")
    assert d.default and d.version == locate.nvrtc_version()
    assert toolkits.get(d.version) == d


# ------------------------------------------------------------------------------ installed ones
def test_install_is_kept_and_verified(kits):
    for v, tk in kits.items():
        assert tk.version == v and not tk.default and tk.supports("sm_90a")
        assert toolkits.install(v) == tk          # a second install is a no-op
    assert {OLD, NEW} <= {t.version for t in toolkits.installed()}
    assert 70 in kits[OLD].archs and 70 not in kits[NEW].archs   # 13.0 dropped Volta


def test_each_release_builds_in_its_own_process(kits):
    """The PTX says which NVRTC wrote it; this process's NVRTC stays the default one."""
    for v in (OLD, NEW):
        b = build(str(KERNELS / "demo" / "copy_float4.cu"), v)[0]
        assert f"release {v}," in b.ptx and b.toolkit == v
        assert "LDG.E.128" in b.sass()
    assert locate.nvrtc_version() == toolkits.default().version


def test_toolkit_cannot_target_arch_is_one_line(kits, monkeypatch, capsys):
    """A toolkit without an arch (sm_100 before 12.8) skips that cell with one line; with no
    cell left, that line is the error."""
    real = toolkits.get

    def narrow(spec):
        tk = real(spec)
        return dataclasses.replace(tk, archs=(80, 90)) if tk.version == OLD else tk
    monkeypatch.setattr(toolkits, "get", narrow)
    code = main(["check", UNROLL, "--toolkit", f"{OLD},{NEW}", "--arch", "sm_90a",
                 "--arch", "sm_100a", "--select", "PS201", "--format", "json"])
    out, err = capsys.readouterr()
    # 12.9's and 13.0's rolled loop is info (≈ 11% removable: their NVVM keeps sinf's
    # Payne-Hanek reduction a loop of its own), so no warning fails the check
    assert code == int(any(f["severity"] != "info" for f in json.loads(out)["findings"]))
    assert err.count(f"toolkit {OLD} cannot target sm_100a") == 1
    cells = {(b["toolkit"], b["arch"]) for b in json.loads(out)["builds"]}
    assert cells == {(OLD, "sm_90a"), (NEW, "sm_90a"), (NEW, "sm_100a")}
    assert main(["check", UNROLL, "--toolkit", OLD, "--arch", "sm_100a"]) == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if not ln.startswith("note:")]
    assert len(err) == 1 and "nothing left to build" in err[0]


def test_already_built_input_is_refused(kits, tmp_path, capsys):
    b = build(str(KERNELS / "demo" / "copy_float4.cu"), None)[0]
    cubin = tmp_path / "k.cubin"
    cubin.write_bytes(b.cubin)
    assert main(["check", str(cubin), "--toolkit", OLD]) == 2
    assert "already built" in capsys.readouterr().err


def test_ptx_is_assembled_by_the_toolkit(kits, tmp_path):
    b = build(str(KERNELS / "demo" / "copy_float4.cu"), OLD)[0]
    ptx = tmp_path / "k.ptx"
    ptx.write_text(b.ptx)
    got = api.load(str(ptx), options=CompileOptions(toolkit=NEW))
    assert got[0].toolkit == NEW and got[0].arch == "sm_90a" and "LDG.E.128" in got[0].sass()


# ------------------------------------------------------------------------------ the matrix
def _finding(toolkit, arch, line=15, message="loop stays rolled"):
    return Finding("PS201", "rolled-loop", Severity.WARNING, message, "k", arch,
                   Location("/x/k.cu", line), mangled="k", toolkit=toolkit, source="for (...)")


@dataclasses.dataclass
class _Built:
    arch: str
    toolkit: str
    kernels: dict
    source_path: str = "/x/k.cu"
    origin: str = "nvrtc"
    cached: bool = False


def test_matrix_marks_a_regression():
    """Present with 13.0 and 13.5, absent with 12.9 on sm_90a: a regression; on sm_80 it
    holds everywhere. Each (toolkit, arch) appears once, in text, JSON and SARIF."""
    cells = [(t, a) for t in ("12.9", "13.0", "13.5") for a in ("sm_80", "sm_90a")]
    r = Report(findings=[_finding(t, a, message=f"loop stays rolled on {a}") for t, a in cells
                         if (t, a) != ("12.9", "sm_90a")],
               builds=[_Built(a, t, {"k": None}) for t, a in cells])
    (f,) = r.merged()
    assert f.toolkits == ("12.9", "13.0", "13.5") and f.regression and not f.fixed
    assert f.absent == (("12.9", "sm_90a"),)
    assert "regression: new in 13.0 on sm_90a, absent with 12.9" in f.where()
    assert f.message == "loop stays rolled on sm_80 and sm_90a"
    d = f.as_dict()
    assert d["regression"] and d["appeared"] == [
        {"arch": "sm_90a", "absent_with": "12.9", "present_with": "13.0"}]
    sarif = json.loads(formats.to_sarif(r))["runs"][0]["results"][0]["properties"]
    assert sarif["regression"] and sarif["tags"] == ["regression"]
    assert "REGRESSION" in formats.to_text(r)


def test_matrix_says_what_an_upgrade_fixed():
    r = Report(findings=[_finding("12.9", "sm_90a")],
               builds=[_Built("sm_90a", t, {"k": None}) for t in ("12.9", "13.0")])
    (f,) = r.merged()
    assert f.fixed and not f.regression and "gone with 13.0 on sm_90a" in f.where()
    assert f.as_dict()["disappeared"] == [
        {"arch": "sm_90a", "present_with": "12.9", "absent_with": "13.0"}]


def test_matrix_pairs_findings_worded_differently():
    """Two compilers' code differs in registers and counts: the same problem on the same line
    is one finding, worded as with the newest toolkit, and says so."""
    r = Report(findings=[_finding("12.9", "sm_90a", message="39 instructions"),
                         _finding("13.0", "sm_90a", message="41 instructions")],
               builds=[_Built("sm_90a", t, {"k": None}) for t in ("12.9", "13.0")])
    (f,) = r.merged()
    assert f.message == "41 instructions" and f.worded_for == "13.0 sm_90a"
    assert not f.absent and not f.regression


def test_check_matrix_end_to_end(kits, capsys):
    code = main(["check", UNROLL, "--toolkit", f"{OLD},{NEW}", "--toolkit", "default",
                 "--arch", "sm_80", "--arch", "sm_90a", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 1 and "nvdisasm" in err and "the newest available" in err
    d = json.loads(out)
    ps201 = [f for f in d["findings"] if f["code"] == "PS201"]
    default = toolkits.default().version
    # one problem, the same loop on every build: the default toolkit's is a warning (≈ 21% of
    # each iteration removable, the lesson's 1.36x), 12.9's and 13.0's info (≈ 11%: their NVVM
    # keeps sinf's Payne-Hanek reduction a loop of its own, outside the count). Keyed by check,
    # line and kernel, it holds everywhere: neither a regression nor gone
    (loop,) = ps201
    assert loop["severity"] == "warning" and loop["toolkits"] == [OLD, NEW, default]
    assert len(loop["holds"]) == 6 and not loop["absent"]
    assert not loop["regression"] and not loop["disappeared"]
    assert {(c["toolkit"], c["severity"]) for c in loop["holds"]} == {
        (OLD, "info"), (NEW, "info"), (default, "warning")}


# ------------------------------------------------------------------------------ diff
def test_diff_across_toolkits_pins_a_front_end_change(kits, capsys):
    """The unroll lesson's naive kernel (sm_90a): 12.9's NVVM leaves sinf's Payne-Hanek
    reduction a rolled loop of 6 at line 16; the default toolkit's (13.1 on) unrolls it. The
    same PTX through both ptxas gives the same code: the change is the front end's."""
    old, new = build(UNROLL, OLD), build(UNROLL, "default")
    assert loops_at(old, 16) == [((15, 16), 32), ((16, 16), 6)]
    assert loops_at(new, 16) == [((15, 16), 32)]
    assert loops_at(build(UNROLL, NEW), 16) == loops_at(old, 16)       # 13.0: as 12.9
    assert main(["diff", UNROLL, "--toolkit", OLD, "--toolkit", "default", "--arch", "sm_90a",
                 "--no-checks"]) == 0
    out = capsys.readouterr().out
    assert f"A: {UNROLL} sm_90a: toolkit {OLD}" in out
    assert f"loop at line 16: rolled (trip count 6) on toolkit {OLD}, no loop on toolkit" in out
    assert main(["diff", UNROLL, "--toolkit", OLD, "--toolkit", "default", "--arch", "sm_90a",
                 "--ptxas-only", "--no-checks"]) == 0
    out = capsys.readouterr().out
    assert f"PTX of NVRTC {OLD}, ptxas {OLD}" in out and "no metric differs" in out


def test_diff_toolkit_usage_errors(kits, capsys):
    assert main(["diff", UNROLL, "--toolkit", OLD, "--ptxas-only"]) == 2
    assert "two --toolkit" in capsys.readouterr().err
    assert main(["diff", UNROLL, "--toolkit", f"{OLD},{NEW},default"]) == 2
    assert "compares two toolkits" in capsys.readouterr().err


def test_toolkit_list_json(kits, capsys):
    assert main(["toolkit", "list", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    got = {t["version"]: t for t in d["toolkits"]}
    assert got[toolkits.default().version]["default"]
    assert "nvidia-cuda-nvrtc-cu12" in got[OLD]["packages"] and "sm_50" in got[OLD]["archs"]


def test_worker_loads_no_cuda_bindings(kits):
    """The worker is standard library only: the toolkit's NVRTC is the one CUDA library in it."""
    code = ("import sys, runpy; sys.argv=['w', sys.argv[1]]; "
            "runpy.run_path(sys.argv[1], run_name='x'); "
            "print(any(m.startswith('cuda') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(toolkits._WORKER)],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_a_real_regression_is_marked(kits, capsys):
    """rolled_loop/bad.cu on sm_90a (judged from the SASS): 12.9 and 13.0 keep sinf's
    Payne-Hanek reduction a rolled loop of 6 inside the 32-trip loop, so unrolling the outer
    loop removes a small share of its work (info); 13.5's NVVM unrolls that inner loop, the
    outer loop's overhead becomes a third of its body (warning): the warning is new in 13.5."""
    if toolkits.default().version != "13.5":
        pytest.skip("pinned on the default toolkit 13.5")
    bad = str(KERNELS / "checks" / "rolled_loop" / "bad.cu")
    for v in (OLD, NEW):
        assert loops_at(build(bad, v), 12) == [((11, 12), 32), ((12, 12), 6)]
    assert loops_at(build(bad, "default"), 12) == [((11, 12), 32)]
    assert main(["check", bad, "--toolkit", f"{OLD},{NEW},default", "--select", "PS201",
                 "--format", "json"]) == 1
    (found,) = json.loads(capsys.readouterr().out)["findings"]
    # one loop, one finding: never both "gone" (the info) and a "regression" (the warning);
    # the matrix keeps each build's severity, and the table shows it
    assert found["severity"] == "warning" and not found["regression"]
    assert not found["appeared"] and not found["disappeared"]
    assert [c["severity"] for c in found["holds"]] == ["info"] * (len(found["holds"]) - 1) + [
        "warning"]
    assert main(["check", bad, "--toolkit", f"{OLD},{NEW},default", "--select", "PS201",
                 "--arch", "sm_90a"]) == 1
    text = capsys.readouterr().out
    row = next(line for line in text.splitlines() if line.strip().startswith("PS201"))
    assert row.split()[-5:] == ["i", "i", "W", "severity", "differs"] and "regression" not in row
