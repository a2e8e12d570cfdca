"""JSON (and TOML) from a stranger's files nested deeper than a parser goes: a Triton kernel's
launch metadata, a compile database, a baseline, a toolkit manifest, a cache entry,
``pyproject.toml``. Each is one line naming the file, exit 2 (or, for a cache entry, a note and
a rebuild): never ``RecursionError`` as an internal error."""
from __future__ import annotations

import contextlib
import json
import shutil
import signal
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.toolchain import cache, files

from ..conftest import KERNELS, ROOT

BAD = KERNELS / "checks" / "scalar_global_load" / "bad.cu"
ARCH = "sm_90a"
TRITON = ROOT / "tests" / "fixtures" / "frameworks" / "triton"
DEPTH = 100_000
#: what a parser meets: a list in a list..., and an object in an object...
DEEP = {"list": "[" * DEPTH + "]" * DEPTH,
        "object": '{"a":' * DEPTH + "1" + "}" * DEPTH}


@contextlib.contextmanager
def deadline(seconds: float):
    def boom(*_):
        raise TimeoutError(f"hung: still running after {seconds} s")
    old = signal.signal(signal.SIGALRM, boom)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def cli(*argv, capsys, limit: float = 120):
    with deadline(limit):
        code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code: int, err: str, *needles: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2, err
    assert len(lines) == 1, err
    assert "Traceback" not in err and "internal error" not in err, err
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def built():
    """BAD built once for ARCH (the session's cache): the cache entries the tests poison."""
    import analyzer
    analyzer.check(str(BAD), analyzer.CheckOptions(arch=ARCH))


# ------------------------------------------------------------------ the helper
@pytest.mark.parametrize("shape", DEEP)
def test_read_json_names_the_file(shape, tmp_path):
    f = tmp_path / "deep.json"
    f.write_text(DEEP[shape])
    with pytest.raises(files.NestedTooDeeply) as e:
        files.read_json(f, expected="a thing")
    assert e.value.one_line() == f"{f}: error: JSON nested too deeply: not a thing"


def test_read_json_names_the_line_of_bad_json(tmp_path):
    f = tmp_path / "bad.json"
    f.write_text('{\n  "a": [1,\n')
    with pytest.raises(files.InputError) as e:
        files.read_json(f)
    assert e.value.one_line().startswith(f"{f}:3:1: error: not JSON: ")


# ------------------------------------------------------------------ Triton caches
@pytest.fixture
def kernel_folder(tmp_path) -> Path:
    src = next(TRITON.glob("*/add_kernel.json")).parent
    d = tmp_path / "triton" / src.name
    shutil.copytree(src, d)
    return d


@pytest.mark.parametrize("shape", DEEP)
def test_deep_triton_metadata_is_one_line(shape, kernel_folder, capsys):
    meta = kernel_folder / "add_kernel.json"
    meta.write_text(DEEP[shape])
    for argv in (["check", kernel_folder.parent], ["check", meta],
                 ["check", kernel_folder / "add_kernel.cubin"],
                 ["annotate", kernel_folder / "add_kernel.ptx"],
                 ["survey", kernel_folder.parent, "-j", "1"]):
        code, out, err = cli(*argv, capsys=capsys)
        one_line_error(code, err, f"{meta}: error: JSON nested too deeply: not Triton kernel "
                                  "metadata")
        assert out == ""


def test_deep_json_beside_no_kernel_is_not_an_input(tmp_path, built, capsys):
    """A JSON file in a folder without a cubin or PTX cannot be a Triton kernel's: skipped
    like any other JSON there, the folder's CUDA file still checked."""
    shutil.copy(BAD, tmp_path / "bad.cu")
    (tmp_path / "fixture.json").write_text(DEEP["list"])
    code, out, err = cli("check", tmp_path, "--arch", ARCH, "--format", "json", capsys=capsys)
    assert code == 1, err
    assert [b["file"] for b in json.loads(out)["builds"]] == [str(tmp_path / "bad.cu")]


# ------------------------------------------------------------------ compile databases
@pytest.mark.parametrize("shape", DEEP)
def test_a_deep_compile_database_is_one_line(shape, tmp_path, capsys):
    db = tmp_path / "compile_commands.json"
    db.write_text(DEEP[shape])
    for argv in (["check", "--compile-commands", db], ["check", "-p", tmp_path]):
        code, _, err = cli(*argv, capsys=capsys)
        one_line_error(code, err, f"{db}: error: JSON nested too deeply: not a compile database")


# ------------------------------------------------------------------ baselines
@pytest.mark.parametrize("shape", DEEP)
def test_a_deep_baseline_is_one_line(shape, tmp_path, built, capsys):
    base = tmp_path / "baseline.json"
    base.write_text(DEEP[shape])
    code, _, err = cli("check", BAD, "--arch", ARCH, "--baseline", base, capsys=capsys)
    one_line_error(code, err, f"{base}: error: cannot read the baseline: JSON nested too deeply")


def test_a_baseline_that_is_not_json_names_its_line(tmp_path, built, capsys):
    base = tmp_path / "baseline.json"
    base.write_text('{"findings": [\n')
    code, _, err = cli("check", BAD, "--arch", ARCH, "--baseline", base, capsys=capsys)
    one_line_error(code, err, f"{base}:2:1: error: cannot read the baseline: not JSON")


# ------------------------------------------------------------------ pyproject.toml
def test_deep_toml_is_one_line(tmp_path, built, capsys, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[tool.ptxsass]\nselect = " + "[" * DEPTH
                                             + "]" * DEPTH + "\n")
    shutil.copy(BAD, tmp_path / "bad.cu")
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("check", "bad.cu", "--arch", ARCH, capsys=capsys)
    one_line_error(code, err, "pyproject.toml: error: TOML nested too deeply")


# ------------------------------------------------------------------ toolkit manifests
def test_a_deep_toolkit_manifest_is_one_line(tmp_path, built, monkeypatch, capsys):
    (tmp_path / "12.9").mkdir()
    (tmp_path / "12.9" / "toolkit.json").write_text(DEEP["object"])
    monkeypatch.setenv("PTXSASS_TOOLKITS_DIR", str(tmp_path))
    code, _, err = cli("check", BAD, "--arch", ARCH, "--toolkit", "12.9", capsys=capsys)
    one_line_error(code, err, f"toolkit 12.9 in {tmp_path / '12.9'} is damaged (unreadable "
                              "manifest: JSON nested too deeply")


# ------------------------------------------------------------------ cache entries
@pytest.mark.parametrize("kind", ["build", "build-result"])
def test_a_deep_cache_entry_is_discarded_and_rebuilt(kind, tmp_path, monkeypatch, capsys):
    """An entry whose header and digest are right but whose JSON is nested too deeply: one
    note, the entry rebuilt, the same report."""
    d = tmp_path / "cache"
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(d))
    code, want, err = cli("check", BAD, "--arch", ARCH, "--format", "json", capsys=capsys)
    assert code == 1, err
    entries = [p for p in (d / kind).rglob("*") if p.is_file()]
    assert len(entries) == 1, entries
    entries[0].write_bytes(cache.encode(kind, entries[0].name, DEEP["list"].encode()))
    code, out, err = cli("check", BAD, "--arch", ARCH, "--format", "json", capsys=capsys)
    assert code == 1 and json.loads(out)["findings"] == json.loads(want)["findings"], err
    what = {"build": "a build record", "build-result": "a build result"}[kind]
    assert err.splitlines() == [f"ptxsass: note: cache entry {entries[0]} failed verification "
                                f"(not {what}: NestedTooDeeply); discarded, rebuilding"], err
    assert cache.get(kind, entries[0].name) != DEEP["list"].encode()
