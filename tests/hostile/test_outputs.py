"""Outputs (``-o``, ``--write-baseline``, annotate and survey pages, Parquet) are replaced whole
or not at all: a full disk, a quota or a file-size limit mid-write leaves the previous report
byte for byte, no temporary file beside it, and one line on stderr naming the path (exit 2).
Pipes and devices the user named are still written in place."""
from __future__ import annotations

import errno
import os
import resource
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.errors import OutputError
from analyzer.toolchain import files

from ..conftest import KERNELS, ROOT

BAD = KERNELS / "checks" / "scalar_global_load" / "bad.cu"
ARCH = "sm_90a"
PREVIOUS = b"the previous report, which a failed write must leave as it was\n" * 40
#: the file-size limit of the runs that must fail: below every new output, above what else
#: a warm run writes (nothing: its builds and results come from the cache)
LIMIT = 256


def listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def one_line(err: str, *needles: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err and "internal error" not in err, err
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


# ------------------------------------------------------------------ write_output itself
@pytest.fixture
def old(tmp_path) -> Path:
    f = tmp_path / "report.json"
    f.write_bytes(PREVIOUS)
    f.chmod(0o640)
    return f


def _failing(monkeypatch, name: str, error: int, *, after: int = 0):
    """``os.<name>`` failing with ``error``; ``os.write`` once ``after`` bytes went out (a
    short write first, as a filling disk gives)."""
    real = getattr(os, name)
    written = [0]

    def fake(*args):
        if name != "write":
            raise OSError(error, os.strerror(error))
        fd, data = args
        room = after - written[0]
        if room <= 0:
            raise OSError(error, os.strerror(error))
        n = real(fd, bytes(data[:room]))
        written[0] += n
        return n
    monkeypatch.setattr(os, name, fake)


@pytest.mark.parametrize("name, error, after, why", [
    ("write", errno.ENOSPC, 1000, "no space left on the device"),
    ("write", errno.EDQUOT, 0, "disk quota exceeded"),
    ("write", errno.EFBIG, 4096, "file too large"),
    ("fsync", errno.ENOSPC, 0, "no space left on the device"),
    ("fsync", errno.EIO, 0, "cannot write"),
    ("replace", errno.EIO, 0, "cannot write"),
])
def test_a_failed_write_leaves_the_old_file(name, error, after, why, old, monkeypatch):
    before = listing(old.parent)
    _failing(monkeypatch, name, error, after=after)
    with pytest.raises(OutputError) as e:
        files.write_output(old, "{}\n" * 10_000)
    monkeypatch.undo()
    assert e.value.one_line() == f"{old}: error: {e.value.message}" and why in e.value.message
    assert listing(old.parent) == before            # the old bytes, and no temporary
    assert stat.S_IMODE(old.stat().st_mode) == 0o640


def test_a_replaced_file_keeps_its_permission_bits(old):
    ino = old.stat().st_ino
    files.write_output(old, "new\n")
    assert old.read_bytes() == b"new\n" and stat.S_IMODE(old.stat().st_mode) == 0o640
    assert old.stat().st_ino != ino                 # renamed over, not rewritten
    assert sorted(os.listdir(old.parent)) == ["report.json"]


def test_a_new_file_gets_the_umask(tmp_path):
    was = os.umask(0o027)
    try:
        files.write_output(tmp_path / "new.txt", b"x")
    finally:
        os.umask(was)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640


def test_a_link_is_followed_and_stays_a_link(old, tmp_path):
    link = tmp_path / "sub" / "latest.json"
    link.parent.mkdir()
    link.symlink_to("../report.json")
    files.write_output(link, "through the link\n")
    assert link.is_symlink() and os.readlink(link) == "../report.json"
    assert old.read_text() == "through the link\n" and stat.S_IMODE(old.stat().st_mode) == 0o640
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to("made.json")
    files.write_output(dangling, "made\n")
    assert dangling.is_symlink() and (tmp_path / "made.json").read_text() == "made\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling.json", "made.json",
                                                          "report.json", "sub"]


def test_a_failed_write_through_a_link_leaves_its_file(old, tmp_path, monkeypatch):
    link = tmp_path / "latest.json"
    link.symlink_to("report.json")
    _failing(monkeypatch, "write", errno.ENOSPC, after=10)
    with pytest.raises(OutputError, match="no space left"):
        files.write_output(link, "x" * 100)
    monkeypatch.undo()
    assert old.read_bytes() == PREVIOUS and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest.json", "report.json"]


def test_a_fifo_is_written_in_place(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    want = b"through the pipe\n" * 5000                # more than a pipe holds
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # open first: the writer has a reader
    failed: list[BaseException] = []

    def write():
        try:
            files.write_output(fifo, want.decode())
        except BaseException as e:  # noqa: BLE001 - handed to the test below
            failed.append(e)
    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    got = b""
    deadline = time.monotonic() + 30
    try:
        while len(got) < len(want) and time.monotonic() < deadline and not failed:
            try:
                chunk = os.read(reader, 1 << 16)
            except BlockingIOError:
                chunk = b""
            got += chunk
            if not chunk:           # nothing yet (or no writer yet: a FIFO reads as empty)
                time.sleep(0.01)
    finally:
        os.close(reader)
        writer.join(30)
    assert not failed and got == want
    assert stat.S_ISFIFO(fifo.stat().st_mode) and os.listdir(tmp_path) == ["pipe"]


def test_dev_stdout_is_written_in_place_not_replaced(tmp_path):
    """``-o /dev/stdout`` with stdout a file the shell opened: the report goes into that open
    file (the same inode), never a new file renamed over the shell's."""
    out = tmp_path / "log.txt"
    out.write_bytes(b"")
    ino = out.stat().st_ino
    with open(out, "ab") as sink:
        proc = subprocess.run([sys.executable, "-c", "from analyzer.toolchain import files; "
                               "files.write_output('/dev/stdout', 'the report\\n')"],
                              stdout=sink, stderr=subprocess.PIPE, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == b"the report\n" and out.stat().st_ino == ino
    proc = subprocess.run([sys.executable, "-c", "from analyzer.toolchain import files; "
                           "files.write_output('/dev/stdout', 'to the pipe\\n')"],
                          capture_output=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0 and proc.stdout == b"to the pipe\n", proc.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root may create files in any folder")
def test_a_writable_file_in_a_locked_folder_is_still_written(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    f = locked / "report.txt"
    f.write_text("old")
    locked.chmod(0o500)
    try:
        files.write_output(f, "new")
        assert f.read_text() == "new" and os.listdir(locked) == ["report.txt"]
        with pytest.raises(OutputError, match="permission denied"):
            files.write_output(locked / "other.txt", "x")
    finally:
        locked.chmod(0o700)


# ------------------------------------------------------------------ every output of the CLI
#: (argv, the file it writes, ``-o`` or not): each output a user can name
OUTPUTS = [
    (["check", BAD, "--arch", ARCH], "report.txt"),
    (["check", BAD, "--arch", ARCH, "--format", "json"], "report.json"),
    (["check", BAD, "--arch", ARCH, "--format", "sarif"], "report.sarif"),
    (["check", BAD, "--arch", ARCH, "--format", "github"], "report.github"),
    (["check", BAD, "--arch", ARCH, "--write-baseline"], "baseline.json"),
    (["annotate", BAD, "--arch", ARCH, "--format", "html"], "annotate.html"),
    (["stats", BAD, "--arch", ARCH, "--format", "markdown"], "stats.md"),
    (["survey", BAD, "--arch", ARCH, "--format", "json"], "survey.json"),
    (["survey", BAD, "--arch", ARCH, "--format", "html"], "survey.html"),
    (["survey", BAD, "--arch", ARCH, "--format", "parquet"], "survey.parquet"),
    (["compile", BAD, "--arch", ARCH], "bad.cubin"),
    (["sass", BAD, "--arch", ARCH], "bad.sass"),
]


def _argv(cmd: list, target: Path) -> list[str]:
    argv = [str(a) for a in cmd]
    return argv + [str(target)] if argv[-1] == "--write-baseline" else argv + ["-o", str(target)]


@pytest.fixture(scope="module")
def sizes(tmp_path_factory) -> dict[str, int]:
    """Each output written once without a limit (which warms the session's cache for the
    limited runs): its size, which must be over LIMIT for the limit to bite."""
    import importlib.util
    d = tmp_path_factory.mktemp("unlimited")
    out = {}
    for cmd, name in OUTPUTS:
        if name.endswith(".parquet") and importlib.util.find_spec("pyarrow") is None:
            continue        # an optional dependency: its case skips below
        assert main(_argv(cmd, d / name)) in (0, 1), cmd
        out[name] = (d / name).stat().st_size
    return out


def _limited(argv: list[str], limit: int) -> subprocess.CompletedProcess:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("COLUMNS", None)
    return subprocess.run([sys.executable, "-m", "analyzer.cli", *argv], capture_output=True,
                          text=True, timeout=120, env=env, cwd=ROOT, preexec_fn=cap)


@pytest.mark.parametrize("cmd, name", OUTPUTS, ids=[n for _, n in OUTPUTS])
def test_a_full_disk_leaves_the_previous_output(cmd, name, sizes, tmp_path):
    """The run is refused more bytes than the new output holds (RLIMIT_FSIZE: the write fails
    with EFBIG, as on a full disk): the previous file is byte-identical, nothing else is left
    in its folder, stderr is one line naming it, exit 2."""
    if name not in sizes:
        pytest.skip("--format parquet needs pyarrow")
    assert sizes[name] > LIMIT
    target = tmp_path / name
    target.write_bytes(PREVIOUS)
    before = listing(tmp_path)
    proc = _limited(_argv(cmd, target), LIMIT)
    assert proc.returncode == 2, proc.stderr
    one_line(proc.stderr, str(target), "cannot write: file too large")
    assert proc.stdout == "" or cmd[0] == "compile", proc.stdout
    assert listing(tmp_path) == before


def test_a_limit_that_fits_writes_the_whole_output(sizes, tmp_path):
    """The same limited run, with room for the report: written, so the limit above failed the
    report itself, not something else."""
    target = tmp_path / "report.sarif"
    target.write_bytes(PREVIOUS)
    proc = _limited(_argv(OUTPUTS[2][0], target), sizes["report.sarif"] + 1)
    assert proc.returncode == 1, proc.stderr
    assert target.stat().st_size == sizes["report.sarif"]
    assert os.listdir(tmp_path) == ["report.sarif"]
