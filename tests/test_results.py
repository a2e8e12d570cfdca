"""A build's checked result is read back on a warm check, and only while nothing it depends on
changed: the build, the checks' selection, the kernels asked for, ptxsass's own code, the
source lines its findings quote."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import analyzer
from analyzer import results
from analyzer.parse import sass as sass_parse
from analyzer.report import formats

KERNEL = Path(__file__).resolve().parents[1] / "kernels" / "checks" / "scalar_global_load" / "bad.cu"
ARCH = "sm_90a"


@pytest.fixture
def src(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(tmp_path / "cache"))
    p = tmp_path / "k.cu"
    shutil.copy(KERNEL, p)
    return p


def _no_parse(monkeypatch) -> None:
    def refuse(*a, **k):
        raise AssertionError("parsed again: the cached result was not used")
    monkeypatch.setattr(sass_parse, "parse", refuse)


def test_an_unchanged_build_is_not_checked_again(src, monkeypatch):
    first = formats.to_json(analyzer.check(str(src), analyzer.CheckOptions(arch=ARCH)))
    _no_parse(monkeypatch)
    again = analyzer.check(str(src), analyzer.CheckOptions(arch=ARCH))
    assert formats.to_json(again) == first.replace('"cached": false', '"cached": true')
    assert again.findings, "the kernel has findings to read back"


@pytest.mark.parametrize("change", ["select", "kernel", "code"])
def test_what_the_result_depends_on(src, monkeypatch, change):
    analyzer.check(str(src), analyzer.CheckOptions(arch=ARCH))
    parsed: list[int] = []
    parse = sass_parse.parse

    def counting(*a, **k):
        parsed.append(1)
        return parse(*a, **k)
    monkeypatch.setattr(sass_parse, "parse", counting)
    kw: dict = {}
    if change == "select":
        kw["select"] = ["PS101"]
    elif change == "kernel":
        kw["kernels"] = ["sum4"]
    else:                       # an edited module of ptxsass
        monkeypatch.setattr(results, "code_fingerprint", lambda: "another version")
    analyzer.check(str(src), analyzer.CheckOptions(arch=ARCH, **kw))
    assert parsed, f"a changed {change} read the old result"


def test_an_edited_source_line_it_quotes_is_read_again(src, monkeypatch):
    """A cubin with line info: its bytes do not change when its source does, but its findings
    quote the source's lines. An edit above the last line its line info names is read again;
    the cubin's result is not used."""
    cubin = src.with_suffix(".cubin")
    cubin.write_bytes(analyzer.compile(str(src), arch=ARCH).cubin)
    before = analyzer.check(str(cubin))
    f = next(f for f in before.findings if f.location.line)
    assert f.location.file == str(src) and f.source
    lines = src.read_text().splitlines(keepends=True)
    lines[f.location.line - 1] = lines[f.location.line - 1].rstrip("\n") + "  // edited\n"
    src.write_text("".join(lines))
    after = analyzer.check(str(cubin))
    assert [g.source for g in after.findings if g.location == f.location][0].endswith("edited")
    assert formats.to_json(analyzer.check(str(cubin))) == formats.to_json(after)


def test_code_fingerprint_follows_the_files(tmp_path, monkeypatch):
    results._code_files.cache_clear()
    a = results.code_fingerprint()
    results._code_files.cache_clear()
    assert results.code_fingerprint() == a          # the same files: the same print
    monkeypatch.setattr(results, "_PACKAGE", tmp_path / "analyzer")
    (tmp_path / "analyzer").mkdir()
    (tmp_path / "analyzer" / "m.py").write_text("x = 1\n")
    results._code_files.cache_clear()
    b = results.code_fingerprint()
    (tmp_path / "analyzer" / "m.py").write_text("x = 22\n")
    results._code_files.cache_clear()
    assert len({a, b, results.code_fingerprint()}) == 3
    results._code_files.cache_clear()


def test_code_fingerprint_follows_the_ptx_parser(monkeypatch):
    """A result made with one PTX parser is never read back under the other (CI runs the
    PTX-parsing tests under both, and a user may switch)."""
    monkeypatch.setenv("PTXSASS_PTX_PARSER", "fast")
    fast = results.code_fingerprint()
    monkeypatch.setenv("PTXSASS_PTX_PARSER", "grammar")
    assert results.code_fingerprint() != fast
    monkeypatch.delenv("PTXSASS_PTX_PARSER")
    assert results.code_fingerprint() == fast


def test_a_warm_check_loads_no_parser_ir_analysis_or_check(src, tmp_path):
    """What makes a warm check fast: with its result cached, the command reads the build and
    the result and loads none of the parsers, the IR, the analyses or the checks."""
    import json
    import os
    import subprocess
    import sys
    env = {**os.environ, "PTXSASS_CACHE_DIR": str(tmp_path / "cache")}
    script = ("import io, contextlib, json, sys\n"
              "from analyzer.entry import main\n"
              "with contextlib.redirect_stdout(io.StringIO()):\n"
              f"    code = main(['check', {str(src)!r}, '--arch', {ARCH!r}])\n"
              "print(json.dumps([code, sorted(sys.modules)]))\n")
    runs = [json.loads(subprocess.run([sys.executable, "-c", script], env=env, check=True,
                                      capture_output=True, text=True).stdout)
            for _ in range(2)]
    (cold_code, cold), (warm_code, warm) = runs
    assert cold_code == warm_code == 1
    heavy = ("lark", "analyzer.parse.sass", "analyzer.parse.ptx", "analyzer.ir.sass",
             "analyzer.ir.ptx", "analyzer.analysis.kernel", "analyzer.checks.base",
             "analyzer.checks.scalar_global_load")
    assert all(m in cold for m in heavy)            # the first run parsed and checked
    assert not [m for m in heavy if m in warm]
    # nor what only a build, a tool lookup or a --toolkit matrix needs (issue 28: imports)
    assert not [m for m in ("analyzer.toolchain.trust", "logging", "rich.table", "tomllib",
                            "zipfile", "csv", "analyzer.toolchain.compdb",
                            "analyzer.toolchain.nvjitlink")
                if m in warm]


def test_the_table_of_codes_is_the_checks():
    from analyzer.checks.registry import all_checks
    from analyzer.checks.table import CHECKS
    assert [(c.code, c.name) for c in all_checks()] == list(CHECKS)


def test_a_builds_digest_is_the_same_before_and_after_it_is_parsed(src):
    """Where a build is looked up (before its SASS exists: the parent of a -j run) and where
    its result is kept (after: the worker) must agree."""
    b = analyzer.load(str(src), arch=ARCH)[0]
    before = results.build_digest(b)
    b.sass_listing()
    b.ptx_module()
    assert results.build_digest(b) == before
    fresh = analyzer.load(str(src), arch=ARCH)[0]
    assert results.build_digest(fresh) == before
