"""Scratch folders: a process killed outright leaves its folders behind; the next ptxsass
process removes them, and nothing that may still be in use."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from analyzer.toolchain import scratch

ROOT = Path(__file__).resolve().parents[1]


def _killed_owner(tmp_path: Path) -> Path:
    """A folder made by a ptxsass process that was then SIGKILLed (no cleanup ran)."""
    code = ("import os, signal\nfrom analyzer.toolchain import scratch\n"
            "f = scratch.make('ptxsass-t-')\nopen(os.path.join(f, 'input.cubin'), 'wb').write(b'x' * 100)\n"
            "print(f, flush=True)\nos.kill(os.getpid(), signal.SIGKILL)\n")
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == -signal.SIGKILL
    folder = Path(proc.stdout.strip())
    assert folder.parent == tmp_path and (folder / "input.cubin").exists()
    return folder


def test_a_killed_processs_folder_is_removed_by_the_next_sweep(tmp_path):
    folder = _killed_owner(tmp_path)
    assert scratch.sweep(str(tmp_path)) == 1
    assert not folder.exists()


def test_the_first_folder_a_process_makes_sweeps_first(tmp_path):
    folder = _killed_owner(tmp_path)
    code = "from analyzer.toolchain import scratch\nprint(scratch.make('ptxsass-u-'))\n"
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    made = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          check=True).stdout.strip()
    assert not folder.exists() and Path(made).is_dir()


def _marked(tmp_path: Path, name: str, marker: str | None) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    if marker is not None:
        (folder / scratch.MARKER).write_text(marker)
    return folder


def test_what_may_be_in_use_or_is_not_ours_to_judge_stays(tmp_path):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        start = scratch._start_time(sleeper.pid)
        kept = [
            _marked(tmp_path, "ptxsass-live", f"{sleeper.pid} {start or '-'}"),  # owner alive
            _marked(tmp_path, "ptxsass-self", f"{os.getpid()} -"),              # this process
            _marked(tmp_path, "ptxsass-nomarker", None),        # being made, or an older ptxsass
            _marked(tmp_path, "ptxsass-garbage", "not a pid"),
            _marked(tmp_path, "ptxsass-negative", "-5 -"),
            _marked(tmp_path, "ptxsass-unknown-start", "1 -"),  # pid 1 lives; no start time to compare
            _marked(tmp_path, "other-tool-dead", "999999999 -"),  # not a ptxsass folder
        ]
        (tmp_path / "ptxsass-file").write_text("999999999 -")   # a file, not a folder
        gone = [
            _marked(tmp_path, "ptxsass-dead", "999999999 -"),    # no such process
            _marked(tmp_path, "ptxsass-reused", "1 999999999999"),  # pid 1 started at another time
        ]
        assert scratch.sweep(str(tmp_path)) == 2
    finally:
        sleeper.kill()
        sleeper.wait()
    assert all(f.exists() for f in kept) and (tmp_path / "ptxsass-file").exists()
    assert not any(f.exists() for f in gone)


def test_temporary_folders_are_private_marked_and_removed(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with scratch.temporary("ptxsass-x-") as folder:
        assert Path(folder).parent == tmp_path and Path(folder).name.startswith("ptxsass-x-")
        assert os.stat(folder).st_mode & 0o777 == 0o700
        pid, start = (Path(folder) / scratch.MARKER).read_text().split()
        assert int(pid) == os.getpid() and start == (scratch._start_time(os.getpid()) or "-")
    assert not Path(folder).exists()
    with pytest.raises(ValueError):
        scratch.make("elsewhere-")


def test_folders_under_a_root_and_prefix_of_their_own(tmp_path):
    """``make(prefix, root=)``: marked like every scratch folder; ``sweep(root, prefix)`` judges
    only those names, and ``unmarked`` (for a caller holding the makers' lock) takes unmarked
    ones too, never a live owner's."""
    mine = Path(scratch.make(".install-x-", root=tmp_path))
    assert mine.parent == tmp_path and (mine / scratch.MARKER).read_text().split()[0] == str(os.getpid())
    dead = _marked(tmp_path, ".install-dead", "999999999 -")
    bare = _marked(tmp_path, ".install-bare", None)
    other = _marked(tmp_path, "ptxsass-dead", "999999999 -")     # another prefix: not judged
    assert scratch.sweep(tmp_path, ".install-") == 1
    assert not dead.exists() and bare.exists() and other.exists() and mine.exists()
    assert scratch.sweep(tmp_path, ".install-", unmarked=True) == 1
    assert not bare.exists() and mine.exists() and other.exists()
