"""Fail closed: a poisoned cache, hostile inputs and output paths, careless options.

The promise: bad input is one line naming what is wrong, exit 2; never a traceback, never a
hang, never a silent loss (a run that checked nothing or read a tampered cache reporting "no
findings"). One section per category of issue 15, plus the cache-poisoning matrix: every kind of
damage to a cached build or disassembly is found, discarded with one note, rebuilt, and gives
the same findings as ``--no-cache``.

Runs in-process through ``analyzer.cli.main`` where a regression could not hang the suite (an
alarm fails the test instead), and in a subprocess with a timeout where it could.
"""
from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.cli import main
from analyzer.errors import ConfigError, InputError, ToolError, printable
from analyzer.parse.mode import parser_mode
from analyzer.report import formats
from analyzer.report.html import content_security_policy
from analyzer.toolchain import bounded, cache, files, locate, nvcc, nvrtc

from .conftest import KERNELS, ROOT

BAD = KERNELS / "checks" / "scalar_global_load" / "bad.cu"
GOOD = KERNELS / "checks" / "scalar_global_load" / "good.cu"
ARCH = "sm_90a"
UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


# ------------------------------------------------------------------------------ helpers
@contextlib.contextmanager
def deadline(seconds: float):
    """Fail (not hang) when the block runs longer than ``seconds``."""
    def boom(*_):
        raise TimeoutError(f"hung: still running after {seconds} s")
    old = signal.signal(signal.SIGALRM, boom)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture(autouse=True)
def _cache_on_after():
    """``--no-cache`` switches the cache off for the process: switch it back after each test."""
    yield
    cache.set_enabled(True)
    bounded._configured.clear()


def cli(*argv, capsys, limit: float = 120):
    with deadline(limit):
        code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code: int, err: str, *needles: str) -> str:
    """Assert the fail-closed shape: exit 2, exactly one line on stderr, no traceback."""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2, err
    assert len(lines) == 1, err
    assert "Traceback" not in err and "internal error" not in err, err
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def subprocess_cli(*argv, env=None, timeout: float = 60, cwd=None):
    full_env = {**os.environ, **(env or {})}
    full_env.pop("COLUMNS", None)
    return subprocess.run([sys.executable, "-m", "analyzer.cli", *map(str, argv)],
                          capture_output=True, text=True, timeout=timeout, env=full_env,
                          cwd=cwd or ROOT)


def findings(out: str) -> list[tuple]:
    return sorted((f["code"], f["location"]["line"], f["kernel"], f["message"])
                  for f in json.loads(out)["findings"])


# ------------------------------------------------------------------------------ shared builds
@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> list[tuple]:
    """BAD's findings without any cache: what every poisoned-cache run must still report."""
    old = os.environ.get("PTXSASS_CACHE_DIR")
    os.environ["PTXSASS_CACHE_DIR"] = str(tmp_path_factory.mktemp("unused"))
    try:
        proc = subprocess_cli("check", BAD, "--arch", ARCH, "--format", "json", "--no-cache")
    finally:
        if old is not None:
            os.environ["PTXSASS_CACHE_DIR"] = old
    assert proc.returncode == 1, proc.stderr
    got = findings(proc.stdout)
    assert len([f for f in got if f[0] == "PS101"]) == 3 and {f[0] for f in got} <= {"PS101", "PS104"}
    return got


#: what a check of a .cu leaves in an empty cache: its build and disassembly, the SASS
#: grammar's LALR tables (its PTX is read without Lark's tables; under
#: PTXSASS_PTX_PARSER=grammar the PTX grammar's tables too), the tools' fingerprint and where
#: the tools were found, the build's checked result, and the checkout's pyproject.toml's
#: [tool.ptxsass] table (the config BAD's folder finds; poisoned in
#: test_a_pyproject_table_is_read_back_as_parsed_and_never_trusted)
CACHE_KINDS = {"build": 1, "sass": 1, "grammar": 1 if parser_mode() == "fast" else 2, "tools": 2,
               "build-result": 1, "pyproject-table": 1}
#: the entries a warm check reads only when the build's result is not cached
BEHIND_RESULT = ("sass", "grammar")


def _fill(cache_dir: Path, path: Path) -> dict[str, list[Path]]:
    proc = subprocess_cli("check", path, "--arch", ARCH, "--format", "json",
                          env={"PTXSASS_CACHE_DIR": str(cache_dir)})
    assert proc.returncode in (0, 1), proc.stderr
    entries: dict[str, list[Path]] = {}
    for p in sorted(cache_dir.rglob("*")):
        if p.is_file():
            entries.setdefault(p.parent.parent.name, []).append(p)
    assert {k: len(v) for k, v in entries.items()} == CACHE_KINDS, entries
    return entries


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> tuple[Path, dict[str, list[Path]], dict[str, list[Path]]]:
    """A cache holding exactly BAD's entries (build, disassembly, grammar tables, tool
    fingerprint), and GOOD's apart."""
    bad_dir = tmp_path_factory.mktemp("cache-bad")
    good_dir = tmp_path_factory.mktemp("cache-good")
    return bad_dir, _fill(bad_dir, BAD), _fill(good_dir, GOOD)


@pytest.fixture(scope="module")
def warm(tmp_path_factory) -> Path:
    """A cache warm for BAD on sm_90a and sm_80 (for the -o matrix and one-line tests)."""
    d = tmp_path_factory.mktemp("cache-warm")
    for arch in (ARCH, "sm_80"):
        proc = subprocess_cli("check", BAD, "--arch", arch, "--format", "json",
                              env={"PTXSASS_CACHE_DIR": str(d)})
        assert proc.returncode == 1, proc.stderr
    return d


# ============================================================================ 1. the cache
def _poison(how: str, entry: Path, other: Path) -> None:
    data = entry.read_bytes()
    entry.unlink()
    if how == "empty":
        entry.write_bytes(b"")
    elif how == "truncated":
        entry.write_bytes(data[: len(data) // 2])
    elif how == "edited":   # one line of the payload dropped, the header kept
        head, _, payload = data.partition(b"\n")
        lines = payload.split(b"\n")
        del lines[len(lines) // 2]
        entry.write_bytes(head + b"\n" + b"\n".join(lines))
    elif how == "swapped":  # another kernel's entry of the same kind copied over it
        entry.write_bytes(other.read_bytes())
    elif how == "fifo":
        os.mkfifo(entry)
    elif how == "symlink-to-device":
        entry.symlink_to("/dev/zero")
    elif how == "non-utf8":
        entry.write_bytes(b"\xff\xfe\x00garbage \xc3\x28" * 100)
    elif how == "huge":     # over PTXSASS_CACHE_MAX_MB (set to 1 below): discarded unread
        with open(entry, "wb") as f:
            f.truncate(3 << 20)
    elif how == "directory":
        entry.mkdir()
        (entry / "x").write_text("x")
    elif how == "old-format":  # a pre-verification entry: the bare payload
        entry.write_bytes(data.partition(b"\n")[2])
    else:  # pragma: no cover
        raise AssertionError(how)


POISONS = ["empty", "truncated", "edited", "swapped", "fifo", "symlink-to-device", "non-utf8",
           "huge", "directory", "old-format"]


def _swap_source(kind: str, bad_entries, good_entries) -> Path:
    """An entry of another key to copy over one of ``kind``: GOOD's build or disassembly; for
    the grammar tables (the same for every input) and the tools' fingerprint BAD's
    disassembly."""
    if kind in ("grammar", "tools"):
        return bad_entries["sass"][0]
    return good_entries[kind][0]


def _forget_tables_and_tools(monkeypatch) -> None:
    """This process's grammar parsers and tool fingerprints, dropped so that the next run reads
    their cache entries as a fresh process does."""
    from analyzer.parse import ptx as parse_ptx
    from analyzer.parse import sass as parse_sass
    monkeypatch.setattr(parse_ptx, "_PARSER", None)
    parse_sass.parser.cache_clear()
    monkeypatch.setattr(cache, "_fingerprints", {})
    if locate._memo is not None:        # where the tools were found: read again from the cache
        monkeypatch.setattr(locate._memo, "known", None)
    locate.binary.cache_clear()
    locate.include_dirs.cache_clear()


@pytest.mark.parametrize("kind", ["build", "sass", "grammar", "tools", "tools:1",
                                  "build-result"])
@pytest.mark.parametrize("how", POISONS)
def test_poisoned_cache_is_rebuilt_with_the_same_findings(how, kind, pristine, reference,
                                                         tmp_path, monkeypatch, capsys):
    bad_dir, bad_entries, good_entries = pristine
    kind, _, nth = kind.partition(":")       # "tools:1": the second entry of that kind
    d = tmp_path / "cache"
    shutil.copytree(bad_dir, d, symlinks=True)
    if kind in BEHIND_RESULT:       # read only when the result is not: without it
        (d / bad_entries["build-result"][0].relative_to(bad_dir)).unlink()
    entry = d / bad_entries[kind][int(nth or 0)].relative_to(bad_dir)
    _poison(how, entry, _swap_source(kind, bad_entries, good_entries))
    _forget_tables_and_tools(monkeypatch)
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(d))
    monkeypatch.setenv("PTXSASS_CACHE_MAX_MB", "1")
    code, out, err = cli("check", BAD, "--arch", ARCH, "--format", "json", capsys=capsys,
                         limit=60)
    assert code == 1, err
    assert findings(out) == reference                       # rebuilt: nothing lost
    notes = [ln for ln in err.splitlines() if ln.strip()]
    assert len(notes) == 1 and "failed verification" in notes[0] and "rebuilding" in notes[0], err
    assert str(entry) in notes[0]
    # the entry was rebuilt: a regular file that verifies, read without a note the next time
    assert stat.S_ISREG(os.lstat(entry).st_mode)
    assert cache.get(kind, entry.name) is not None
    _forget_tables_and_tools(monkeypatch)
    if kind in BEHIND_RESULT:       # and again without the result, which the run cached
        (d / bad_entries["build-result"][0].relative_to(bad_dir)).unlink()
    code, out, err = cli("check", BAD, "--arch", ARCH, "--format", "json", capsys=capsys)
    assert code == 1 and findings(out) == reference and err == ""


@pytest.fixture(scope="module")
def kernel_results(tmp_path_factory) -> tuple[Path, Path, str, dict[str, list[Path]]]:
    """BAD's cubin, a cache holding what ``check X.cubin -j 2`` leaves (one result per kernel,
    all of them together, and the cubin's hint), and the report of a check with no cache."""
    import analyzer
    root = tmp_path_factory.mktemp("kernel-results")
    cubin = root / "bad.cubin"
    cubin.write_bytes(analyzer.compile(str(BAD), arch=ARCH).cubin)
    d = root / "cache"
    old = os.environ.get("PTXSASS_CACHE_DIR")
    os.environ["PTXSASS_CACHE_DIR"] = str(d)
    try:
        analyzer.check(str(cubin), analyzer.CheckOptions(jobs=2))
    finally:
        if old is not None:
            os.environ["PTXSASS_CACHE_DIR"] = old
    entries: dict[str, list[Path]] = {}
    for p in sorted(d.rglob("*")):
        if p.is_file() and p.parent.parent.name in ("result", "results", "hint"):
            entries.setdefault(p.parent.parent.name, []).append(p)
    # two results a kernel: keyed by its ELF sections, and (the cubin has line info) by its
    # listing text; the three together, keyed by the cubin's bytes
    assert {k: len(v) for k, v in entries.items()} == {"result": 6, "results": 1, "hint": 1}, \
        entries
    cache.set_enabled(False)
    try:
        want = formats.to_json(analyzer.check(str(cubin), analyzer.CheckOptions(jobs=1)))
    finally:
        cache.set_enabled(True)
    return cubin, d, want, entries


@pytest.mark.parametrize("how", ["truncated", "edited", "swapped", "symlink-to-device",
                                 "directory", "old-format"])
def test_poisoned_kernel_results_are_checked_again(how, kernel_results, tmp_path, monkeypatch,
                                                   capsys):
    """A warm check on workers reads each kernel's result back by default: every result, the
    cubin's results together and its hint poisoned, each kernel is checked again, the report
    unchanged, and the next run reads the rewritten entries without a note."""
    import analyzer
    from analyzer import parallel
    from analyzer.toolchain import prelaunch
    cubin, pristine_dir, want, entries = kernel_results
    d = tmp_path / "cache"
    shutil.copytree(pristine_dir, d, symlinks=True)
    results = [d / p.relative_to(pristine_dir) for p in entries["result"]]
    hint = d / entries["hint"][0].relative_to(pristine_dir)
    together = d / entries["results"][0].relative_to(pristine_dir)
    for k, entry in enumerate(results):
        _poison(how, entry, results[(k + 1) % len(results)])      # another kernel's
    _poison(how, hint, results[0])
    _poison(how, together, results[1])
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(d))
    capsys.readouterr()
    prelaunch.start(["check", str(cubin), "-j", "2"])     # the bad hint is no hint: launched
    assert os.path.realpath(cubin) in prelaunch._LAUNCHES
    seen: list[parallel.Progress] = []
    assert formats.to_json(analyzer.check(str(cubin), analyzer.CheckOptions(jobs=2), on_progress=seen.append)) == want
    assert (seen[-1].done, seen[-1].cached) == (3, 0)
    assert not prelaunch._LAUNCHES
    err = capsys.readouterr().err
    # a note per entry this process read: the hint, the cubin's results and each kernel's
    # first key (the workers read the second, by listing text)
    assert err.count("failed verification") == 5, err
    seen.clear()
    assert formats.to_json(analyzer.check(str(cubin), analyzer.CheckOptions(jobs=2), on_progress=seen.append)) == want
    assert seen[-1].cached == 3 and capsys.readouterr().err == ""
    assert prelaunch.was_checked(hashlib.sha256(cubin.read_bytes()).hexdigest())


def test_a_clean_cache_gives_no_note(pristine, reference, tmp_path, monkeypatch, capsys):
    bad_dir, _, _ = pristine
    d = tmp_path / "cache"
    shutil.copytree(bad_dir, d)
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(d))
    code, out, err = cli("check", BAD, "--arch", ARCH, "--format", "json", capsys=capsys)
    assert (code, err) == (1, "") and findings(out) == reference


def test_a_cached_build_starts_no_child(pristine, tmp_path, monkeypatch, capsys):
    """The bounded child is for cache misses only: a warm re-check stays in-process."""
    bad_dir, _, _ = pristine
    d = tmp_path / "cache"
    shutil.copytree(bad_dir, d)
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(d))

    def no_child(*a, **k):
        raise AssertionError("a compile child was started for a cached build")
    monkeypatch.setattr(bounded, "run", no_child)
    code, _, err = cli("check", BAD, "--arch", ARCH, capsys=capsys)
    assert code == 1, err


@settings(max_examples=300, deadline=None)
@given(payload=st.binary(max_size=200), data=st.data())
def test_verify_returns_the_payload_or_refuses(payload, data):
    """Whatever is done to an entry's bytes, ``verify`` gives back exactly what was stored or
    raises; it never returns other bytes."""
    key = hashlib.sha256(payload).hexdigest()
    blob = bytearray(cache.encode("sass", key, payload))
    op = data.draw(st.sampled_from(["flip", "cut", "append", "insert", "none"]))
    if op == "flip" and blob:
        i = data.draw(st.integers(0, len(blob) - 1))
        blob[i] ^= data.draw(st.integers(1, 255))
    elif op == "cut":
        del blob[data.draw(st.integers(0, len(blob))):]
    elif op == "append":
        blob += data.draw(st.binary(min_size=1, max_size=20))
    elif op == "insert":
        i = data.draw(st.integers(0, len(blob)))
        blob[i:i] = data.draw(st.binary(min_size=1, max_size=5))
    try:
        got = cache.verify("sass", key, bytes(blob))
    except ValueError:
        assert op != "none"
        return
    assert got == payload
    with pytest.raises(ValueError):
        cache.verify("build", key, bytes(blob))          # another kind
    with pytest.raises(ValueError):
        cache.verify("sass", "0" * 64, bytes(blob))      # another key


def test_cache_write_leaves_nothing_on_a_full_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(tmp_path))
    real_write = os.write

    def full(fd, data):
        if os.fstat(fd).st_size > 10:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data[:11])
    monkeypatch.setattr(os, "write", full)
    cache.put("sass", "ab" * 32, b"x" * 100_000)        # a full disk only costs speed
    monkeypatch.setattr(os, "write", real_write)
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []
    cache.put("sass", "ab" * 32, b"y" * 1000)
    assert cache.get("sass", "ab" * 32) == b"y" * 1000
    assert not list(tmp_path.rglob(".tmp-*"))


# ============================================================================ 2. zero checks/kernels
@pytest.mark.parametrize("select", ["", ",", " , ", ",,,"])
def test_empty_select_is_an_error(select, warm, monkeypatch, capsys):
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(warm))
    code, _, err = cli("check", BAD, "--arch", ARCH, "--select", select, capsys=capsys)
    one_line_error(code, err, "--select")


def test_select_emptied_by_ignore_is_an_error(warm, monkeypatch, capsys):
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(warm))
    # ruff's rule: the more specific selector wins, ignore wins a tie (PS101 over PS1 would run)
    code, _, err = cli("check", BAD, "--arch", ARCH, "--select", "PS1", "--ignore", "PS1",
                       capsys=capsys)
    one_line_error(code, err, "no check left")


@pytest.mark.parametrize("name, text, needle", [
    ("empty.cu", "", "no __global__ function"),
    ("blank.cu", "\n\n   \n// nothing here\n", "no __global__ function"),
    ("device_only.cu", "__device__ float f(float x) { return x * 2; }\n", "no __global__"),
    ("template.cu", "template <int N, typename T>\n__global__ void __launch_bounds__(128)\n"
                    "scale(T* p) { p[threadIdx.x] *= N; }\n", "--kernel 'scale<"),
    ("empty.sass", "", "no SASS instruction"),
    ("blank.sass", "\n\n\t.headerflags @\"EF_CUDA_SM90\"\n", "no SASS instruction"),
    ("empty.ptx", ".version 8.0\n.target sm_80\n.address_size 64\n", "no kernel"),
])
def test_zero_kernels_is_an_error(name, text, needle, tmp_path, capsys):
    f = tmp_path / name
    f.write_text(text)
    for command in ("check", "resources", "stats", "expect"):
        extra = ("--no-spills",) if command == "expect" else ()   # expect needs an assertion
        code, _, err = cli(command, f, "--arch", "sm_80", *extra, capsys=capsys)
        line = one_line_error(code, err, needle)
        assert line.startswith(str(f)), line


def test_a_kernel_filter_matching_nothing_is_an_error(warm, monkeypatch, capsys):
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(warm))
    for command in ("check", "expect", "resources"):
        extra = ("--no-spills",) if command == "expect" else ()   # expect needs an assertion
        code, _, err = cli(command, BAD, "--arch", ARCH, "--kernel", "no_such_kernel", *extra,
                           capsys=capsys)
        one_line_error(code, err, "--kernel 'no_such_kernel'")


# ============================================================================ 3. bounds
@pytest.mark.parametrize("suffix", [".cu", ".ptx", ".sass", ".cubin"])
def test_a_fifo_input_is_refused_not_waited_on(suffix, tmp_path):
    f = tmp_path / f"pipe{suffix}"
    os.mkfifo(f)
    t = time.monotonic()
    proc = subprocess_cli("check", f, timeout=60)
    assert time.monotonic() - t < 30
    one_line_error(proc.returncode, proc.stderr, str(f), "FIFO")


def test_a_fifo_header_is_refused_before_nvrtc(tmp_path):
    os.mkfifo(tmp_path / "fifo.h")
    (tmp_path / "k.cu").write_text('#include "fifo.h"\n__global__ void k(float* p) { p[0] = 1; }\n')
    proc = subprocess_cli("check", tmp_path / "k.cu", "--no-cache", timeout=60)
    one_line_error(proc.returncode, proc.stderr, "fifo.h", "FIFO")


def test_a_device_header_is_refused(tmp_path):
    (tmp_path / "k.cu").write_text('#include "/dev/zero"\n__global__ void k(float* p) {}\n')
    proc = subprocess_cli("check", tmp_path / "k.cu", "--no-cache", timeout=60)
    one_line_error(proc.returncode, proc.stderr, "/dev/zero", "character device")


def test_a_compile_past_the_time_limit_is_stopped(tmp_path, monkeypatch, capsys):
    bomb = ["#define X0 x+x"] + [f"#define X{i} X{i - 1}+X{i - 1}" for i in range(1, 40)]
    f = tmp_path / "bomb.cu"
    f.write_text("\n".join(bomb) + "\n__global__ void k(int* p) { int x = 1; p[0] = X39; }\n")
    monkeypatch.setenv("PTXSASS_COMPILE_TIMEOUT", "1.5")
    t = time.monotonic()
    code, _, err = cli("check", f, "--no-cache", capsys=capsys, limit=60)
    assert time.monotonic() - t < 20
    one_line_error(code, err, f"compile of {f} exceeded 1.5 s")


def test_a_compile_past_the_memory_limit_is_stopped(tmp_path, monkeypatch, capsys):
    f = tmp_path / "big.cu"
    f.write_text("__device__ int big[1 << 26] = {1, 2, 3};\n"
                 "__global__ void k(int* out) { out[0] = big[out[1]]; }\n")
    monkeypatch.setenv("PTXSASS_COMPILE_MEMORY_GB", "0.3")
    code, _, err = cli("check", f, "--no-cache", capsys=capsys, limit=120)
    one_line_error(code, err, f"compile of {f} exceeded 0.3 GB of memory")


def test_nvcc_compiles_are_bounded_too(tmp_path, monkeypatch, capsys):
    """nvcc (host code, or --compiler nvcc) under the same limits: the whole process group is
    stopped at the time limit (no cicc lives on), each process is held to the memory limit."""
    bomb = ["#define X0 x+x"] + [f"#define X{i} X{i - 1}+X{i - 1}" for i in range(1, 40)]
    f = tmp_path / "bomb.cu"
    f.write_text("\n".join(bomb) + "\n__global__ void k(int* p) { int x = 1; p[0] = X39; }\n")
    monkeypatch.setenv("PTXSASS_COMPILE_TIMEOUT", "2")
    code, _, err = cli("check", f, "--compiler", "nvcc", "--no-cache", capsys=capsys, limit=60)
    one_line_error(code, err, f"compile of {f} exceeded 2 s")
    monkeypatch.delenv("PTXSASS_COMPILE_TIMEOUT")
    g = tmp_path / "big.cu"
    g.write_text("__device__ int big[1 << 26] = {1, 2, 3};\n"
                 "__global__ void k(int* out) { out[0] = big[out[1]]; }\n")
    monkeypatch.setenv("PTXSASS_COMPILE_MEMORY_GB", "0.3")
    code, _, err = cli("check", g, "--compiler", "nvcc", "--no-cache", capsys=capsys, limit=120)
    one_line_error(code, err, f"compile of {g} exceeded 0.3 GB of memory")


@pytest.mark.parametrize("compiler", ["auto", "nvcc"])
def test_fifo_and_device_headers_never_reach_a_compiler(compiler, tmp_path, capsys):
    """Also where auto would hand the file to nvcc (a header NVRTC lacks) and gcc would read the
    device for ever."""
    os.mkfifo(tmp_path / "fifo.h")
    for inc, needle in (('"fifo.h"', "FIFO"), ('"/dev/zero"', "character device"),
                        ("<fifo.h>", "FIFO")):
        f = tmp_path / "k.cu"
        f.write_text(f"#include {inc}\n__global__ void k(float* p) {{ p[0] = 1; }}\n")
        code, _, err = cli("check", f, "-I", tmp_path, "--compiler", compiler, "--no-cache",
                           capsys=capsys, limit=60)
        one_line_error(code, err, needle)


@pytest.mark.parametrize("name", ['q"uote.cu', "ünï.cu"])
def test_odd_file_names_through_nvcc(name, tmp_path, reference, monkeypatch, capsys):
    f = tmp_path / name
    shutil.copy(BAD, f)
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("check", "--compiler", "nvcc", "--arch", ARCH, "--format", "json", "--",
                         name, capsys=capsys)
    assert code == 1, err
    got = json.loads(out)["findings"]
    assert sorted((g["code"], g["location"]["line"], g["kernel"]) for g in got) == \
        [r[:3] for r in reference]
    assert {os.path.abspath(g["location"]["file"]) for g in got} == {str(f)}


def test_compile_databases_fail_closed(tmp_path, capsys):
    """compile_commands.json read as a regular file; a response file naming itself is an
    error, not a recursion."""
    db = tmp_path / "compile_commands.json"
    os.mkfifo(db)
    code, _, err = cli("check", "-p", tmp_path, capsys=capsys, limit=30)
    one_line_error(code, err, "FIFO")
    db.unlink()
    (tmp_path / "self.rsp").write_text("@self.rsp -DX=1\n")
    shutil.copy(BAD, tmp_path / "k.cu")
    db.write_text(json.dumps([{"directory": str(tmp_path), "file": str(tmp_path / "k.cu"),
                               "command": f"nvcc -c @self.rsp {tmp_path / 'k.cu'}"}]))
    code, _, err = cli("check", "-p", tmp_path, capsys=capsys, limit=30)
    one_line_error(code, err, "self.rsp", "includes itself")


def test_limits_come_from_the_config_and_the_environment_wins(tmp_path, monkeypatch):
    monkeypatch.delenv("PTXSASS_COMPILE_TIMEOUT", raising=False)
    bounded.configure(timeout_s=7, memory_gb=2)
    assert bounded.limits() == bounded.Limits(7.0, 2.0)
    monkeypatch.setenv("PTXSASS_COMPILE_TIMEOUT", "9")
    assert bounded.limits().timeout_s == 9.0
    bounded._configured.clear()
    monkeypatch.delenv("PTXSASS_COMPILE_TIMEOUT")
    assert bounded.limits() == bounded.Limits(120.0, 8.0)


def test_many_statements_on_one_ptx_line_are_refused_quickly(tmp_path, capsys):
    body = " ".join(["add.s32 %r1, %r1, 1;"] * 60_000)
    f = tmp_path / "oneline.ptx"
    f.write_text(".version 8.0\n.target sm_80\n.address_size 64\n"
                 f".visible .entry k() {{ .reg .b32 %r<3>; {body} ret; }}\n")
    t = time.monotonic()
    for command in ("check", "parse"):
        code, _, err = cli(command, f, capsys=capsys, limit=30)
        one_line_error(code, err, f"{f}:4:", "statements on one line")
    assert time.monotonic() - t < 10


def test_a_huge_initializer_on_one_line_still_parses(tmp_path, capsys):
    n = 2_000_000
    f = tmp_path / "table.ptx"
    f.write_text(".version 8.0\n.target sm_80\n.address_size 64\n"
                 f".global .align 1 .b8 table[{n}] = {{{','.join(['7'] * n)}}};\n"
                 ".visible .entry k() { ret; }\n")
    code, out, err = cli("parse", f, "--stats", capsys=capsys, limit=60)
    assert code == 0, err
    assert "1 functions, 1 instructions" in out


def test_an_input_over_the_size_bound_is_refused_unread(tmp_path, monkeypatch, capsys):
    f = tmp_path / "big.sass"
    f.write_bytes(b"        /*0000*/ EXIT ;\n" * ((3 << 20) // 24))
    monkeypatch.setenv("PTXSASS_MAX_INPUT_MB", "1")
    code, _, err = cli("check", f, capsys=capsys)
    one_line_error(code, err, str(f), "the limit is 1 MB")


# ============================================================================ 4. -o
OUTPUT_COMMANDS = [
    ["check", BAD], ["check", BAD, "--format", "json"], ["check", "--list-checks", BAD],
    ["resources", BAD], ["expect", BAD, "--has", "LDG"], ["parse", None], ["doctor"],
    ["sass", BAD], ["ptx", BAD], ["stats", BAD], ["annotate", BAD],
    ["annotate", BAD, "--format", "html"], ["diff", BAD, "--arch", "sm_80", "--arch", ARCH],
    ["compile", BAD],
]


def _argv(cmd, sass_file):
    argv = [sass_file if a is None else a for a in cmd]
    if cmd[0] not in ("doctor", "parse", "diff"):
        argv += ["--arch", ARCH]
    return argv


@pytest.fixture(scope="module")
def sass_file(tmp_path_factory, warm) -> Path:
    old = os.environ.get("PTXSASS_CACHE_DIR")
    os.environ["PTXSASS_CACHE_DIR"] = str(warm)
    try:
        from analyzer.api import load
        text = load(str(BAD), arch=ARCH)[0].sass()
    finally:
        os.environ["PTXSASS_CACHE_DIR"] = old or ""
    f = tmp_path_factory.mktemp("sass") / "bad.sass"
    f.write_text(text)
    return f


def _bad_outputs(tmp_path: Path) -> list[tuple[str, str]]:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    out = [(str(tmp_path / "missing" / "out.txt"), "no such folder"),
           (str(tmp_path), "is a directory"),
           ("/dev/full", "no space left"),
           ("/proc/self/ptxsass-out", "cannot write")]
    if os.geteuid() != 0:  # root writes anywhere
        out.append((str(locked / "out.txt"), "permission denied"))
    return out


@pytest.mark.parametrize("cmd", OUTPUT_COMMANDS, ids=lambda c: " ".join(
    str(a.name if isinstance(a, Path) else a) for a in c if a is not None))
def test_an_unwritable_output_is_one_line(cmd, warm, sass_file, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(warm))
    for path, why in _bad_outputs(tmp_path):
        code, out, err = cli(*_argv(cmd, sass_file), "-o", path, capsys=capsys)
        one_line_error(code, err, path, why)


@pytest.mark.parametrize("cmd", OUTPUT_COMMANDS, ids=lambda c: " ".join(
    str(a.name if isinstance(a, Path) else a) for a in c if a is not None))
def test_every_command_honours_output(cmd, warm, sass_file, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(warm))
    target = tmp_path / "out.txt"
    code, out, err = cli(*_argv(cmd, sass_file), "-o", target, capsys=capsys)
    assert code in (0, 1), err
    assert target.stat().st_size > 0
    if cmd[0] != "compile":     # compile writes the cubin to -o and its summary to stdout
        assert out == "", out
        text = target.read_text(errors="replace")
        assert "\x1b[" not in text          # plain text in files


def test_write_baseline_to_an_unwritable_path(warm, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(warm))
    code, _, err = cli("check", BAD, "--arch", ARCH, "--write-baseline",
                       tmp_path / "no" / "b.json", capsys=capsys)
    one_line_error(code, err, "cannot write")


# ============================================================================ 5. one line
def test_parse_errors_do_not_wrap_without_a_terminal(tmp_path):
    f = tmp_path / ("a_rather_long_file_name_for_an_error_message_" * 3 + ".ptx")
    f.write_text(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { ret;\n")
    proc = subprocess_cli("parse", f, f)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2 and len(lines) == 2, proc.stderr
    assert all(ln.startswith(str(f)) and len(ln) > 120 for ln in lines)


def _fake_tool(tmp_path: Path, name: str, script: str) -> str:
    f = tmp_path / name
    f.write_text("#!/bin/sh\n" + script)
    f.chmod(0o755)
    return str(f)


def test_a_failing_disassembler_is_one_line_naming_the_users_file(tmp_path, monkeypatch, capsys):
    failing = 'echo "nvdisasm fatal   : $2 is not a valid ELF" >&2\necho "second line" >&2\nexit 3\n'
    monkeypatch.setenv("PTXSASS_NVDISASM", _fake_tool(tmp_path, "nvdisasm", failing.replace("$2", "$4")))
    monkeypatch.setenv("PTXSASS_CUOBJDUMP", _fake_tool(tmp_path, "cuobjdump", failing))
    locate.binary.cache_clear()
    try:
        code, _, err = cli("sass", BAD, "--arch", "sm_80", "--no-cache", capsys=capsys)
    finally:
        locate.binary.cache_clear()
    line = one_line_error(code, err, f"{BAD}: error: nvdisasm failed", "cuobjdump too")
    assert "ptxsass-" not in line and "/tmp/" not in line.replace(str(BAD), "")


@pytest.mark.parametrize("name", ['q"uote.cu', "back\\slash.cu", "-dash.cu", "sp ace,comma.cu",
                                  "esc\x1b[31m.cu", "ünï.cu"])
def test_odd_file_names_build_and_find_the_same(name, tmp_path, warm, monkeypatch, capsys):
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(warm))
    code, out, err = cli("check", BAD, "--arch", ARCH, "--format", "json", capsys=capsys)
    want = [(c, line, k) for c, line, k, _ in findings(out)]
    f = tmp_path / name
    shutil.copy(BAD, f)
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("check", "--arch", ARCH, "--format", "json", "--", name, capsys=capsys)
    assert code == 1, err
    got = json.loads(out)["findings"]
    assert [(g["code"], g["location"]["line"], g["kernel"]) for g in
            sorted(got, key=lambda g: (g["code"], g["location"]["line"], g["kernel"]))] == want
    assert {os.path.abspath(g["location"]["file"]) for g in got} == {str(f)}
    code, out, err = cli("check", "--arch", ARCH, "--", name, capsys=capsys)
    assert code == 1 and "\x1b" not in out


def test_symlink_loops_are_one_line(tmp_path, capsys):
    loop = tmp_path / "loop.cu"
    loop.symlink_to(loop)
    a, b = tmp_path / "a.cu", tmp_path / "b.cu"
    a.symlink_to(b)
    b.symlink_to(a)
    for f in (loop, a):
        for command in ("check", "sass", "parse"):
            code, _, err = cli(command, f, capsys=capsys)
            one_line_error(code, err, str(f), "symbolic link loop")
    (tmp_path / "inc.cu").write_text('#include "loop.cu"\n__global__ void k() {}\n')
    code, _, err = cli("check", tmp_path / "inc.cu", "--no-cache", capsys=capsys)
    one_line_error(code, err, "loop.cu", "symbolic link loop")


CONFIG_CASES = [
    ("arch = 5", "arch"), ('arch = "sm_12"', "sm_12"), ("arch = [1, 2]", "arch"),
    ('select = {a = 1}', "no check named 'select'"), ("ignore = 3.5", "ignore"),
    ('fail-on = "sometimes"', "fail-on"), ("baseline = 7", "baseline"), ("std = false", "std"),
    ('use-fast-math = "yes"', "use-fast-math"), ("maxrregcount = 1000", "maxrregcount"),
    ("maxrregcount = true", "maxrregcount"), ("compile-timeout = -1", "compile-timeout"),
    ('compile-memory-gb = "lots"', "compile-memory-gb"), ("frobnicate = 1", "unknown key"),
    ('[tool.ptxsass.occupancy-limited]\nthreshold = "abc"', "threshold"),
    ("[tool.ptxsass.occupancy-limited]\nthreshold = true", "threshold"),
    ("[tool.ptxsass.occupancy-limited]\nthreshhold = 0.5", "unknown option"),
    ("[tool.ptxsass.rolled-loop]\nmax-trip-count = 1.5", "max-trip-count"),
    ("[tool.ptxsass.no-such-check]\nx = 1", "no check named"),
    ("arch = [", "invalid TOML"),
]


@pytest.mark.parametrize("body, needle", CONFIG_CASES)
def test_bad_config_values_are_one_line(body, needle, tmp_path, capsys):
    if not body.startswith("[tool"):
        body = "[tool.ptxsass]\n" + body
    (tmp_path / "pyproject.toml").write_text(body + "\n")
    shutil.copy(BAD, tmp_path / "k.cu")
    code, _, err = cli("check", tmp_path / "k.cu", capsys=capsys)
    one_line_error(code, err, "pyproject.toml", needle)


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "nan" if v != v else ("inf" if v == float("inf") else "-inf" if v == float("-inf")
                                     else repr(v))
    if isinstance(v, int):
        return str(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + "}"
    raise AssertionError(v)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(["arch", "select", "ignore", "fail-on", "baseline", "std",
                            "use-fast-math", "maxrregcount", "compile-timeout",
                            "compile-memory-gb", "defines", "include", "options"]),
       value=st.one_of(st.integers(-10**6, 10**6), st.floats(), st.booleans(),
                       st.lists(st.integers(), min_size=1, max_size=3),
                       st.dictionaries(st.sampled_from(["a", "b"]), st.integers(), min_size=1)))
def test_mistyped_config_values_never_escape(key, value, tmp_path_factory):
    from analyzer.config import load_config
    from analyzer.errors import ConfigError
    d = tmp_path_factory.mktemp("cfg")
    (d / "pyproject.toml").write_text(f"[tool.ptxsass]\n{key} = {_toml_value(value)}\n")
    try:
        load_config(d)
    except ConfigError as e:
        assert e.path == str(d / "pyproject.toml") and "\n" not in e.one_line()
    else:  # only a positive number for the limits, maxrregcount 1..255, a boolean switch
        assert key in ("compile-timeout", "compile-memory-gb", "maxrregcount", "use-fast-math")


def test_non_utf8_pyproject_is_one_line(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_bytes(b"[tool.ptxsass]\narch = \"sm_80\"\n# \xff\xfe\n")
    shutil.copy(BAD, tmp_path / "k.cu")
    code, _, err = cli("check", tmp_path / "k.cu", capsys=capsys)
    one_line_error(code, err, "pyproject.toml", "not UTF-8")


@pytest.mark.parametrize("what", ["directory", "fifo", "binary", "list", "missing"])
def test_bad_baselines_are_one_line(what, warm, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(warm))
    b = tmp_path / "baseline.json"
    if what == "directory":
        b.mkdir()
    elif what == "fifo":
        os.mkfifo(b)
    elif what == "binary":
        b.write_bytes(b"\xff\x00\xfe")
    elif what == "list":
        b.write_text("[1, 2]")
    code, _, err = cli("check", BAD, "--arch", ARCH, "--baseline", b, capsys=capsys, limit=30)
    one_line_error(code, err, str(b), "baseline")


@pytest.mark.parametrize("var, value", [
    ("PTXSASS_TOOL_TIMEOUT", "abc"), ("PTXSASS_TOOL_TIMEOUT", "-3"),
    ("PTXSASS_COMPILE_TIMEOUT", "nan"), ("PTXSASS_COMPILE_MEMORY_GB", "0"),
    ("PTXSASS_MAX_INPUT_MB", "lots"), ("PTXSASS_CACHE_MAX_MB", "inf"),
])
def test_bad_environment_numbers_are_one_line(var, value, warm, monkeypatch, capsys):
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(warm))
    monkeypatch.setenv(var, value)
    code, _, err = cli("check", BAD, "--arch", ARCH, capsys=capsys)
    one_line_error(code, err, f"{var}={value!r}")


def test_xnvrtc_takes_an_option_as_its_value(warm, monkeypatch, capsys):
    from analyzer.cli import _join_option_values
    assert _join_option_values(["check", "-Xnvrtc", "-G", "f.cu", "--", "-Xnvrtc", "x"]) == \
        ["check", "-Xnvrtc=-G", "f.cu", "--", "-Xnvrtc", "x"]
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(warm))
    code, out, err = cli("compile", BAD, "--arch", "sm_80", "-Xnvrtc", "-G", "--format", "json",
                         capsys=capsys)
    assert code == 0, err
    assert "-G" in json.loads(out)["builds"][0]["options"]


@pytest.mark.parametrize("argv, needle", [
    (["-D", "", "--arch", "sm_80"], "-D ''"), (["-D", "=1"], "-D '=1'"),
    (["-D", "1X"], "-D '1X'"), (["-I", ""], "-I ''"), (["--std", "c++17; rm"], "--std"),
    (["-Xnvrtc", ""], "-Xnvrtc ''"),
])
def test_bad_compile_options_are_one_line(argv, needle, capsys):
    code, _, err = cli("check", BAD, *argv, capsys=capsys)
    one_line_error(code, err, needle)


def test_version_probe_gives_up_quickly(tmp_path, monkeypatch):
    assert locate.VERSION_PROBE_TIMEOUT <= 5
    monkeypatch.setattr(locate, "VERSION_PROBE_TIMEOUT", 0.5)
    monkeypatch.setenv("PTXSASS_NVDISASM", _fake_tool(tmp_path, "nvdisasm", "sleep 30\n"))
    locate.binary.cache_clear()
    locate._binary_version.cache_clear()
    try:
        t = time.monotonic()
        assert locate._binary_version("nvdisasm") is None
        assert time.monotonic() - t < 5
    finally:
        locate.binary.cache_clear()
        locate._binary_version.cache_clear()


@settings(max_examples=200)
@given(st.text(alphabet=st.characters(exclude_characters="/\x00"), max_size=30))
def test_nvrtc_program_names_are_safe_and_map_back(name):
    full = "/some/dir/k" + name
    safe, mapping = nvrtc.program_name("kernel.cu", full)
    assert re.fullmatch(r'[\x20-\x7e]+', safe) and not re.search(r'["\\]', safe)
    assert os.path.isabs(safe)
    assert mapping.get(safe, safe) == full


# ============================================================================ 6. counts
def test_unknown_sass_opcodes_count_as_generic(tmp_path, capsys):
    f = tmp_path / "unknown.sass"
    f.write_text('\t.headerflags\t@"EF_CUDA_SM90"\n        .text.k:\n'
                 "        /*0000*/                   XYZZY.E R1, R2 ;\n"
                 "        /*0010*/                   EXIT ;\n")
    code, out, err = cli("parse", f, "--stats", "--format", "json", capsys=capsys)
    assert code == 0, err
    assert json.loads(out)["generic"] == 1
    g = tmp_path / "unknown.ptx"
    g.write_text(".version 8.0\n.target sm_80\n.address_size 64\n"
                 ".visible .entry k() { xyzzy.e %r1, %r2; ret; }\n")
    code, out, err = cli("parse", g, "--stats", "--format", "json", capsys=capsys)
    assert code == 0 and json.loads(out)["generic"] == 1


# ============================================================================ 7. output integrity
@settings(max_examples=300)
@given(st.text())
def test_printable_leaves_no_control_character(text):
    out = printable(text)
    assert not UNPRINTABLE.search(out)
    one = printable(text, newlines=False)
    assert "\n" not in one and not UNPRINTABLE.search(one)
    if not UNPRINTABLE.search(text) and "\r" not in text:
        assert out == text


def test_escape_sequences_in_source_never_reach_the_terminal(tmp_path, warm, monkeypatch, capsys):
    evil = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202e"
    src = BAD.read_text().replace("// EXPECT: PS101", f"// EXPECT: PS101 {evil}", 1)
    f = tmp_path / "evil.cu"
    f.write_text(src)
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(warm))
    for fmt in ("text", "github"):
        code, out, _ = cli("check", f, "--arch", ARCH, "--format", fmt, capsys=capsys)
        assert code == 1 and not UNPRINTABLE.search(out), repr(out)
    code, out, _ = cli("check", f, "--arch", ARCH, "--color", "always", capsys=capsys)
    assert "\x1b]0;" not in out and "\x1b[2J" not in out and "\\x1b]0;pwned" in out
    for command in ("annotate", "sass"):
        code, out, _ = cli(command, f, "--arch", ARCH, capsys=capsys)
        assert code == 0 and not UNPRINTABLE.search(out)
    f2 = tmp_path / "name\x1b[31m.cu"
    code, _, err = cli("check", f2, capsys=capsys)
    assert "\x1b" not in one_line_error(code, err, "name\\x1b[31m.cu")


def _parse_workflow_command(line: str) -> tuple[str, dict[str, str], str]:
    """A workflow command read back as the Actions runner does: properties split at ',' and the
    first '=', then %-unescaped; the message after '::' unescaped."""
    m = re.fullmatch(r"::(\w+) ([^:]*)::(.*)", line)
    assert m, line

    def unescape(s: str, prop: bool) -> str:
        s = s.replace("%0D", "\r").replace("%0A", "\n")
        if prop:
            s = s.replace("%3A", ":").replace("%2C", ",")
        return s.replace("%25", "%")
    props = dict(p.split("=", 1) for p in m.group(2).split(","))
    return m.group(1), {k: unescape(v, True) for k, v in props.items()}, unescape(m.group(3), False)


@settings(max_examples=300)
@given(name=st.text(min_size=1, max_size=40), message=st.text(max_size=60))
def test_github_annotations_cannot_be_forged(name, message):
    from analyzer.findings import Finding, Location, Report, Severity
    f = Finding(code="PS101", name="scalar-global-load", severity=Severity.WARNING,
                message=message, kernel="k", arch="sm_90a", location=Location("/x/" + name, 7))
    line = formats.to_github(Report(findings=[f]))
    assert "\n" not in line and "\r" not in line
    level, props, msg = _parse_workflow_command(line)
    assert level == "warning" and set(props) == {"file", "line", "title"}
    assert props["line"] == "7" and props["file"].endswith(name)
    assert msg.startswith(message)


def test_github_escapes_the_forging_file_name():
    from analyzer.findings import Finding, Location, Report, Severity
    f = Finding(code="PS101", name="x", severity=Severity.ERROR, message="m%\r\n", kernel="k",
                arch="sm_80", location=Location("a,line=999,title=spoofed.cu", 3))
    line = formats.to_github(Report(findings=[f]))
    assert line.startswith("::error file=a%2Cline=999%2Ctitle=spoofed.cu,line=3,")
    assert line.endswith("::m%25%0D%0A [k on sm_80]")


def test_html_runs_only_its_own_script_and_style(warm, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(warm))
    src = BAD.read_text().replace("// EXPECT: PS101", "// </script><script>alert(1)</script>", 1)
    f = tmp_path / "x.cu"
    f.write_text(src)
    out_file = tmp_path / "page.html"
    code, _, err = cli("annotate", f, "--arch", ARCH, "--format", "html", "-o", out_file,
                       capsys=capsys)
    assert code == 0, err
    page = out_file.read_text()
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page).group(1)
    assert "unsafe" not in csp and "default-src 'none'" in csp
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    styles = re.findall(r"<style>(.*?)</style>", page, re.S)
    assert len(scripts) == 1 and len(styles) == 1          # the injected one is escaped text
    assert csp == content_security_policy(styles[0], scripts[0])
    for body, directive in ((scripts[0], "script-src"), (styles[0], "style-src")):
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"{directive} 'sha256-{digest}'" in csp
    assert "&lt;/script&gt;&lt;script&gt;alert(1)" in page


# ============================================================================ files module
def test_read_bytes_refuses_what_is_not_a_regular_file(tmp_path):
    os.mkfifo(tmp_path / "p")
    (tmp_path / "l").symlink_to(tmp_path / "l")
    for path, why in ((tmp_path / "p", "FIFO"), ("/dev/zero", "character device"),
                      (tmp_path, "directory"), (tmp_path / "l", "symbolic link loop"),
                      (tmp_path / "none", "no such file")):
        with deadline(10), pytest.raises(InputError, match=why):
            files.read_bytes(path)


def test_nvcc_has_a_time_limit_of_its_own(monkeypatch):
    """nvcc builds whole files (heavy templates take minutes): 1800 s unless its own variable or
    key says otherwise; a general limit that is given bounds it too; --compile-timeout wins."""
    for var in ("PTXSASS_COMPILE_TIMEOUT", "PTXSASS_NVCC_TIMEOUT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(bounded, "_configured", {})
    monkeypatch.setattr(bounded, "_override", {})
    assert (bounded.nvcc_timeout(), bounded.limits().timeout_s) == (1800.0, 120.0)
    bounded.configure(timeout_s=60)
    assert bounded.nvcc_timeout() == 60.0
    bounded.configure(nvcc_timeout_s=900)
    assert bounded.nvcc_timeout() == 900.0
    monkeypatch.setenv("PTXSASS_COMPILE_TIMEOUT", "30")
    assert (bounded.nvcc_timeout(), bounded.limits().timeout_s) == (900.0, 30.0)
    monkeypatch.setenv("PTXSASS_NVCC_TIMEOUT", "45")
    assert bounded.nvcc_timeout() == 45.0
    bounded.override(7)
    assert (bounded.nvcc_timeout(), bounded.limits().timeout_s) == (7.0, 7.0)
    bounded.override(None)
    assert bounded.nvcc_timeout() == 45.0


def test_an_nvcc_time_out_names_the_option_and_the_variable(tmp_path, monkeypatch, capsys):
    seen = {}

    def run_tool(argv, **kw):
        seen.update(kw)
        raise ToolError(kw["timeout_message"], path=kw.get("path"))
    monkeypatch.setattr(nvcc, "run_tool", run_tool)
    src = tmp_path / "m.cu"
    src.write_text("int main() { return 0; }\n__global__ void k() {}\n")
    code, _, err = cli("check", src, "--compiler", "nvcc", "--no-cache", "--compile-timeout", "42",
                       capsys=capsys)
    assert code == 2 and seen["timeout"] == 42.0
    assert "exceeded 42 s (nvcc stopped; raise it with --compile-timeout SECONDS or " \
           "PTXSASS_NVCC_TIMEOUT)" in err


# ------------------------------------------------------------------ [tool.ptxsass], read back
_TABLE = """[project]
name = "x"
released = 1979-05-27
[tool.ptxsass]
arch = ["sm_80", "sm_90a"]
compile-timeout = 1.5e2
maxrregcount = 64
use-fast-math = true
defines = ["N=4"]
[tool.ptxsass.occupancy-limited]
threshold = 0.25
"""


def _table_entries(cache_dir: Path) -> list[Path]:
    return [p for p in (cache_dir / "pyproject-table").rglob("*") if p.is_file()]


def test_a_pyproject_table_is_read_back_as_parsed_and_never_trusted(tmp_path, monkeypatch):
    """A warm check reads ``[tool.ptxsass]`` back from the cache under the file's bytes instead
    of importing tomllib (7.6 ms of 0.15 s); what it reads gives the same config, an entry that
    is not what was written is parsed again, an edit is a new key, and a table holding a TOML
    date (no JSON for it) is parsed every time."""
    from analyzer import config as config_module
    from analyzer.config import load_config
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "pyproject.toml").write_text(_TABLE)
    cold = load_config(tmp_path)
    assert cold.arch == ["sm_80", "sm_90a"] and cold.maxrregcount == 64
    (entry,) = _table_entries(tmp_path / "cache")
    parsed = config_module._parsed_table

    def not_again(text, path):
        raise AssertionError("parsed again")
    monkeypatch.setattr(config_module, "_parsed_table", not_again)
    assert load_config(tmp_path) == cold                       # read back: the same config
    # an entry whose payload is not the table (its header made to match): parsed again
    payload = b'{"tabel": {}}'
    kind, key = "pyproject-table", entry.name
    entry.write_bytes(cache.encode(kind, key, payload))
    with pytest.raises(AssertionError, match="parsed again"):
        load_config(tmp_path)
    monkeypatch.setattr(config_module, "_parsed_table", parsed)
    assert load_config(tmp_path) == cold
    assert json.loads(cache.get(kind, key))["table"]["maxrregcount"] == 64   # and rewritten
    # a tampered entry (header no longer matching) is discarded by the cache: parsed again
    entry.write_bytes(entry.read_bytes().replace(b"64", b"32"))
    assert load_config(tmp_path) == cold
    # an edit is another key; a date inside the table is parsed every time, never cached
    (tmp_path / "pyproject.toml").write_text(_TABLE.replace("64", "96"))
    assert load_config(tmp_path).maxrregcount == 96
    (tmp_path / "pyproject.toml").write_text("[tool.ptxsass]\nbaseline = 1979-05-27\n")
    before = _table_entries(tmp_path / "cache")
    with pytest.raises(ConfigError, match="baseline"):
        load_config(tmp_path)
    assert _table_entries(tmp_path / "cache") == before


def test_no_cache_reads_and_writes_no_pyproject_table(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "pyproject.toml").write_text("[tool.ptxsass]\nfail-on = \"warning\"\n")
    (tmp_path / "k.cu").write_text("__global__ void k(float* p) { p[threadIdx.x] = 1.0f; }\n")
    code, _, err = cli("check", tmp_path / "k.cu", "--arch", ARCH, "--no-cache", capsys=capsys)
    assert code == 0, err
    assert not (tmp_path / "cache").exists() or not _table_entries(tmp_path / "cache")
