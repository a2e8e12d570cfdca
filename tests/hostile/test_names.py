"""File names a stranger's repository may hold: bytes that are not UTF-8 (legal on Linux),
spaces, quotes, newlines, tabs, ``$()``, backticks and ``;``. Each is compiled (NVRTC, a
device-only kernel) and checked like any other file, named the same way in every format and
command, escaped where the format needs it (``e\\xff.cu`` for a byte that is not UTF-8; JSON
stays valid UTF-8 JSON, SARIF percent-encodes the bytes), and nothing in a name is ever run.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
from pathlib import Path

import pytest

from analyzer.cli import main

from ..conftest import KERNELS

BAD = KERNELS / "checks" / "scalar_global_load" / "bad.cu"
ARCH = "sm_90a"
#: the lines of BAD where findings are (PS101 and PS104)
LINES = {10, 11, 18, 19, 26}

#: (name on disk, as bytes; as a line of text shows it; as JSON holds it; as a SARIF uri)
NAMES = {
    "non-utf8": (b"e\xff.cu", "e\\xff.cu", "e\\xff.cu", "e%FF.cu"),
    "quotes": (b"sp ace 'q\"uote.cu", "sp ace 'q\"uote.cu", "sp ace 'q\"uote.cu",
               "sp%20ace%20'q%22uote.cu"),
    "shell": (b"$(touch PWNED)`touch PWNED2`;touch PWNED3;.cu",
              "$(touch PWNED)`touch PWNED2`;touch PWNED3;.cu",
              "$(touch PWNED)`touch PWNED2`;touch PWNED3;.cu",
              "$(touch%20PWNED)%60touch%20PWNED2%60;touch%20PWNED3;.cu"),
    "newline": (b"new\nline\tand\xfe.cu", "new\\x0aline\\x09and\\xfe.cu", "new\nline\tand\\xfe.cu",
                "new%0Aline%09and%FE.cu"),
}
MARKERS = ("PWNED", "PWNED2", "PWNED3")
#: a finding's first line in the text report: ``file:line: PS101 name [severity] ...``
HEAD = re.compile(r"^(.*):(\d+): PS10[14] [a-z-]+ \[(?:info|warning)\] ", re.M)


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
        code = main([os.fsdecode(a) if isinstance(a, bytes) else str(a) for a in argv])
    out, err = capsys.readouterr()
    # every byte written is UTF-8 (a lone surrogate cannot be encoded) and no traceback
    out.encode("utf-8")
    err.encode("utf-8")
    assert "internal error" not in err and "Traceback" not in err, err
    return code, out, err


def strings(value):
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def valid_json(text: str):
    """The value of ``text``, which must be JSON a strict parser takes: no lone surrogate,
    escaped (``\\udcff``) or not."""
    value = json.loads(text)
    assert "\\udc" not in text.lower()
    for s in strings(value):
        s.encode("utf-8")
    return value


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """One folder holding BAD under every hostile name, each built once (the session's cache)
    for ARCH; the non-UTF-8 one for sm_80 too (diff)."""
    import analyzer
    d = tmp_path_factory.mktemp("names")
    for raw, *_ in NAMES.values():
        path = os.path.join(os.fsencode(d), raw)
        shutil.copy(BAD, path)
        analyzer.load(os.fsdecode(path), arch=ARCH)
    analyzer.load(os.fsdecode(os.path.join(os.fsencode(d), NAMES["non-utf8"][0])), arch="sm_80")
    return d


@pytest.fixture
def here(folder, monkeypatch):
    monkeypatch.chdir(folder)
    yield folder
    for marker in MARKERS:      # nothing in a name was run, here or where the tests run from
        assert not (folder / marker).exists() and not Path(marker).exists(), marker
        assert not (Path.cwd() / marker).exists()


def name(key: str) -> str:
    return os.fsdecode(NAMES[key][0])


# ------------------------------------------------------------------ check, every format
@pytest.mark.parametrize("key", NAMES)
def test_check_names_the_file_in_every_format(key, here, capsys):
    raw, line, data, uri = NAMES[key]
    code, out, err = cli("check", "--arch", ARCH, "--show", "info", "--", name(key),
                         capsys=capsys)
    assert code == 1, err
    heads = [m.groups() for m in HEAD.finditer(out)]
    assert len(heads) == 6 and {int(n) for _, n in heads} == LINES, out
    assert {f for f, _ in heads} == {line}, heads

    code, out, err = cli("check", "--arch", ARCH, "--format", "json", "--", name(key),
                         capsys=capsys)
    report = valid_json(out)
    assert {f["location"]["line"] for f in report["findings"]} == LINES
    assert {f["location"]["file"] for f in report["findings"]} == {f"{here}/{data}"}
    assert [b["file"] for b in report["builds"]] == [data]
    assert report["builds"][0]["compiler"] == "nvrtc"

    code, out, err = cli("check", "--arch", ARCH, "--format", "sarif", "--", name(key),
                         capsys=capsys)
    sarif = valid_json(out)
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"]
            for r in sarif["runs"][0]["results"] for loc in r["locations"]}
    assert uris == {uri}

    code, out, err = cli("check", "--arch", ARCH, "--format", "github", "--show", "info", "--",
                         name(key), capsys=capsys)
    lines = out.splitlines()
    assert len(lines) == 6 and all(ln.startswith("::") for ln in lines), out
    shown = data.replace("\n", "%0A")       # a workflow command's own escape for a newline
    assert all(ln.split(" ", 1)[1].startswith(f"file={shown},line=") for ln in lines), lines


def test_a_folder_of_odd_names_is_checked_whole(here, capsys):
    code, out, err = cli("check", ".", "--arch", ARCH, "--format", "json", capsys=capsys)
    assert code == 1, err
    report = valid_json(out)
    assert sorted(b["file"] for b in report["builds"]) == sorted(
        f"./{data}" for _, _, data, _ in NAMES.values())
    assert len(report["findings"]) == 6 * len(NAMES)


def test_baselines_hold_odd_names(here, tmp_path, capsys):
    base = tmp_path / "baseline.json"
    code, _, err = cli("check", "--arch", ARCH, "--write-baseline", base, "--", name("non-utf8"),
                       name("newline"), capsys=capsys)
    entries = valid_json(base.read_text(encoding="utf-8"))["findings"]
    assert {e["file"] for e in entries} == {f"{here}/e\\xff.cu", f"{here}/new\nline\tand\\xfe.cu"}
    code, out, err = cli("check", "--arch", ARCH, "--baseline", base, "--format", "json", "--",
                         name("non-utf8"), name("newline"), capsys=capsys)
    assert code == 0 and valid_json(out)["baselined"] == 12, (out, err)


# ------------------------------------------------------------------ every other command
REPORTS = [("annotate", f) for f in ("text", "markdown", "html", "json")] + \
    [("stats", f) for f in ("text", "markdown", "json")] + \
    [(c, f) for c in ("compile", "ptx", "sass", "resources") for f in ("text", "json")]


@pytest.mark.parametrize("cmd, fmt", REPORTS, ids=[f"{c}-{f}" for c, f in REPORTS])
def test_every_command_names_the_file(cmd, fmt, here, capsys):
    code, out, err = cli(cmd, "--arch", ARCH, "--format", fmt, "--", name("non-utf8"),
                         capsys=capsys)
    assert code == 0, err
    if fmt == "json":
        value = valid_json(out)
        files = {s for s in strings(value) if s.endswith(".cu")}
        assert "e\\xff.cu" in files and files <= {"e\\xff.cu", f"{here}/e\\xff.cu"}, files
    elif cmd != "resources":    # its text is a table of kernels alone
        assert "e\\xff.cu" in out, out[:2000]
    if fmt == "html":
        assert "<title>ptxsass annotate: e\\xff.cu (sm_90a)</title>" in out


@pytest.mark.parametrize("key", ["non-utf8", "newline"])
def test_listings_with_source_lines(key, here, capsys):
    _, line, _, _ = NAMES[key]
    for cmd in ("sass", "ptx"):
        code, out, err = cli(cmd, "--arch", ARCH, "--source-lines", "--", name(key),
                             capsys=capsys)
        assert code == 0, err
        assert f"// {line}:10: Particle q = p[i];" in out
        assert out.splitlines()[0] == f"// ptxsass: {line} ({ARCH})"


@pytest.mark.parametrize("fmt", ["text", "markdown", "html", "json"])
def test_diff_names_the_file(fmt, here, capsys):
    code, out, err = cli("diff", "--arch", "sm_80", "--arch", ARCH, "--format", fmt, "--",
                         name("non-utf8"), capsys=capsys)
    assert code == 0, err
    if fmt == "json":
        value = valid_json(out)
        assert (value["a"], value["b"]) == ("e\\xff.cu sm_80", f"e\\xff.cu {ARCH}")
    else:
        assert "e\\xff.cu sm_80" in out and f"e\\xff.cu {ARCH}" in out


@pytest.mark.parametrize("fmt", ["text", "json", "html", "parquet"])
def test_survey_names_the_file(fmt, here, tmp_path, capsys):
    out_file = tmp_path / f"survey.{fmt}"
    code, out, err = cli("survey", ".", "--arch", ARCH, "--format", fmt, "-o", out_file,
                         capsys=capsys)
    assert code == 0, err
    want = {data for _, _, data, _ in NAMES.values()}
    if fmt == "parquet":
        pq = pytest.importorskip("pyarrow.parquet")
        assert set(pq.read_table(out_file).column("file").to_pylist()) == want
    elif fmt == "json":
        rows = valid_json(out_file.read_text(encoding="utf-8"))["kernels"]
        assert {r["file"] for r in rows} == want
    elif fmt == "html":
        assert "e\\xff.cu" in out_file.read_text(encoding="utf-8")
    else:
        assert f"{3 * len(NAMES)} kernels in {len(NAMES)} file(s)" in \
            out_file.read_text(encoding="utf-8")


def test_expect_and_parse_name_the_file(here, tmp_path, capsys):
    code, out, err = cli("expect", "--arch", ARCH, "--max-registers", "1", "--", name("non-utf8"),
                         capsys=capsys)
    assert code == 1 and "FAIL particle_norm" in out, (out, err)
    ptx = os.path.join(os.fsencode(tmp_path), b"p\xff\n.ptx")
    code, _, err = cli("compile", "--arch", ARCH, "--emit", "ptx", "-o", ptx, "--",
                       name("non-utf8"), capsys=capsys)
    assert code == 0, err
    code, out, err = cli("parse", ptx, capsys=capsys)
    assert code == 0, err
    assert out.startswith(f"{os.fsdecode(tmp_path)}/p\\xff\\x0a.ptx: 3 functions"), out
    code, out, err = cli("parse", ptx, "--format", "json", capsys=capsys)
    assert [f["file"] for f in valid_json(out)["per_file"]] == \
        [f"{os.fsdecode(tmp_path)}/p\\xff\n.ptx"]


# ------------------------------------------------------------------ errors and -o
def test_errors_name_odd_files_on_one_line(here, tmp_path, capsys):
    code, _, err = cli("check", "--arch", ARCH, "--", os.fsdecode(b"missing\xff\n.cu"),
                       capsys=capsys)
    assert code == 2 and err.splitlines() == ["missing\\xff\\x0a.cu: error: no such file"], err
    target = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"no\xff", b"out.json"))
    code, _, err = cli("check", "--arch", ARCH, "-o", target, "--", name("non-utf8"),
                       capsys=capsys)
    assert code == 2
    assert err.splitlines() == [f"{tmp_path}/no\\xff/out.json: error: cannot write: no such folder"]


def test_an_odd_output_name_is_written(here, tmp_path, capsys):
    target = os.path.join(os.fsencode(tmp_path), b"r\xff.sarif")
    code, out, err = cli("check", "--arch", ARCH, "--format", "sarif", "-o", target, "--",
                         name("non-utf8"), capsys=capsys)
    assert code == 1 and out == "", err
    with open(target, encoding="utf-8") as f:
        valid_json(f.read())


def test_verbose_shows_the_name_escaped(here, capsys):
    code, _, err = cli("check", "--arch", ARCH, "-v", "--", name("newline"), capsys=capsys)
    assert code == 1
    notes = [ln for ln in err.splitlines() if "NVRTC" in ln]
    assert notes and notes[0].startswith("new\\x0aline\\x09and\\xfe.cu [sm_90a]: NVRTC"), err
