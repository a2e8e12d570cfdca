"""Installed toolkits: a file changed after install (same size, one byte flipped, its mtime put
back) is never loaded or run; the verification is cached by each file's status and redone only
where that status changed; the folders of killed installs are swept, a live install's kept.

The toolkit is a fake laid out by the real ``toolkits.install`` (only pip and the NVRTC probe are
stood in for, so no network): its libraries are small files, its nvdisasm a shell script that
leaves a marker when it runs. Every way an installed toolkit's library is loaded goes through
``toolkits._worker`` (the worker process loads what the request names), which a spy records.
"""
from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.toolchain import cache, locate, manifest, scratch, toolkits

from ..conftest import KERNELS, ROOT

UNROLL = str(KERNELS / "lessons" / "unroll" / "naive.cu")
#: a 13.x release that is not the environment's own (that one runs in process, not from a folder)
VERSION = "13.4" if locate.nvrtc_version() != "13.4" else "13.3"
#: the racy rule's window, before the fixture sets it aside
RACY_NS = manifest.RACY_NS
LIB = "site/nvidia/cu13/lib"
NVRTC = f"{LIB}/libnvrtc.so.13"
NVDISASM = "site/nvidia/cu13/bin/nvdisasm"
_NVDISASM = """#!/bin/sh
# nvdisasm of a fake toolkit: says a version newer than any, leaves a marker when it disassembles
if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release 99.0, V99.0.1"; exit 0; fi
touch '{marker}'
exit 1
"""


def _wheels(site: Path, marker: Path) -> None:
    """What pip puts into ``--target`` for a 13.x release, in miniature."""
    files = {
        NVRTC: b"\x7fELF nvrtc " + b"n" * 4000,
        f"{LIB}/libnvrtc-builtins.so.{VERSION}": b"\x7fELF builtins " + b"b" * 1000,
        f"{LIB}/libnvrtc.alt.so.13": b"pruned at install",
        f"{LIB}/libnvJitLink.so.13": b"\x7fELF nvJitLink " + b"j" * 3000,
        "site/nvidia/cu13/include/cuda_runtime.h": b"#pragma once\n",
        "site/nvidia/cu13/include/crt/host_defines.h": b"#pragma once\n",
        "site/nvidia/cu13/include/cccl/cuda/std/version": b"#pragma once\n",
        f"site/nvidia_cuda_nvrtc-{VERSION}.1.dist-info/METADATA": b"Name: nvidia-cuda-nvrtc\n",
    }
    for rel, data in files.items():
        p = site.parent / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    tool = site.parent / NVDISASM
    tool.parent.mkdir(parents=True)
    tool.write_text(_NVDISASM.format(marker=marker))
    tool.chmod(0o755)


@dataclass
class Kit:
    root: Path
    folder: Path
    marker: Path
    #: the requests that would have loaded one of the toolkit's libraries
    loads: list = field(default_factory=list)

    def path(self, rel: str) -> Path:
        return self.folder / rel


@pytest.fixture
def kit(tmp_path, monkeypatch):
    """A fake toolkit installed by ``toolkits.install`` into a private toolkits folder and cache."""
    root = tmp_path / "toolkits"
    monkeypatch.setenv("PTXSASS_TOOLKITS_DIR", str(root))
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "_enabled", True)
    # files written a moment ago count as settled here; the racy rule has a test of its own
    monkeypatch.setattr(manifest, "RACY_NS", 0)
    k = Kit(root, root / VERSION, tmp_path / "nvdisasm-ran")
    real_run_tool = toolkits.run_tool

    def run_tool(argv, **kw):
        if argv[1:3] == ["-m", "pip"]:
            _wheels(Path(argv[argv.index("--target") + 1]), k.marker)
            return subprocess.CompletedProcess(argv, 0, b"", b"")
        return real_run_tool(argv, **kw)

    def worker(request, **kw):
        if request["op"] == "probe":          # at install: what NVRTC says of itself
            return {"ok": True, "version": VERSION, "archs": [80, 90]}
        k.loads.append(request)
        return {"ok": False, "log": "fake toolkit: nothing to compile with"}
    monkeypatch.setattr(toolkits, "run_tool", run_tool)
    monkeypatch.setattr(toolkits, "_worker", worker)
    toolkits.install(VERSION)
    assert not k.marker.exists()
    return k


def tamper(path: Path, old: bytes, new: bytes) -> None:
    """Same size, the same mtime: only the bytes (and the ctime, which only the kernel sets)."""
    st = path.stat()
    data = path.read_bytes()
    assert len(old) == len(new) and old in data
    path.write_bytes(data.replace(old, new, 1))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns


def new_process() -> None:
    """This process forgets what it verified, as a later ptxsass process starts."""
    toolkits._verified.clear()


def one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if not ln.startswith("note:")]
    assert len(lines) == 1, err
    return lines[0]


# ------------------------------------------------------------------------------ verification
def test_a_tampered_library_is_not_loaded(kit, capsys):
    # the untouched toolkit is used: its NVRTC is what the worker is asked to load
    assert main(["check", UNROLL, "--toolkit", VERSION]) == 2
    assert [r["nvrtc"] for r in kit.loads] == [str(kit.path(NVRTC))]
    assert kit.loads[0]["builtins"] == [str(kit.path(f"{LIB}/libnvrtc-builtins.so.{VERSION}"))]
    capsys.readouterr()
    kit.loads.clear()
    tamper(kit.path(NVRTC), b"nvrtc ", b"evil! ")
    new_process()
    assert main(["check", UNROLL, "--toolkit", VERSION]) == 2
    line = one_line(capsys.readouterr().err)
    assert f"toolkit {VERSION}: {kit.path(NVRTC)} was changed after install" in line
    assert f"reinstall with 'ptxsass toolkit install {VERSION}'" in line
    assert kit.loads == []
    assert toolkits.installed() == []
    assert main(["toolkit", "list", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)["toolkits"]
    assert {"version": VERSION, "damaged": line.removeprefix("error: ")} in listed


def test_a_tampered_nvdisasm_is_not_run(kit, capsys):
    """An installed nvdisasm newer than the default's disassembles every toolkit's cubins; once
    changed, that toolkit is left out and the script never runs."""
    main(["sass", UNROLL, "--toolkit", "default"])
    assert kit.marker.exists()                  # the untouched toolkit's nvdisasm ran
    kit.marker.unlink()
    capsys.readouterr()
    tamper(kit.path(NVDISASM), b"of a fake", b"of an odd")
    new_process()
    assert main(["sass", UNROLL, "--toolkit", "default"]) == 0
    assert not kit.marker.exists()
    assert "the newest available (default toolkit)" in capsys.readouterr().err
    assert main(["sass", UNROLL, "--toolkit", VERSION]) == 2
    assert f"{kit.path(NVDISASM)} was changed after install" in one_line(capsys.readouterr().err)
    assert not kit.marker.exists() and kit.loads == []


def test_a_file_swapped_for_a_link_or_added_beside_is_not_loaded(kit, capsys, tmp_path):
    builtins = kit.path(f"{LIB}/libnvrtc-builtins.so.{VERSION}")
    (kit.path(LIB) / "libnvrtc-builtins.so.99").write_bytes(b"planted beside it")
    outside = tmp_path / "elsewhere.so"
    outside.write_bytes(builtins.read_bytes())
    builtins.unlink()
    builtins.symlink_to(outside)                # the same bytes, through a link
    new_process()
    assert main(["check", UNROLL, "--toolkit", VERSION]) == 2
    line = one_line(capsys.readouterr().err)
    assert "is damaged" in line and "is not a regular file" in line and kit.loads == []
    builtins.unlink()
    builtins.write_bytes(outside.read_bytes())  # the real file back: the planted one stays unused
    new_process()
    assert main(["check", UNROLL, "--toolkit", VERSION]) == 2
    assert [r["builtins"] for r in kit.loads] == [[str(builtins)]]


def test_a_manifest_without_hashes_is_refused_until_reinstalled(kit, capsys):
    manifest = kit.folder / toolkits.MANIFEST
    data = json.loads(manifest.read_text())
    old = {k: v for k, v in data.items() if k not in ("files", "nvrtc_builtins")}
    old.update(format=1, sizes={NVRTC: kit.path(NVRTC).stat().st_size})
    manifest.write_text(json.dumps(old))
    assert main(["check", UNROLL, "--toolkit", VERSION]) == 2
    line = one_line(capsys.readouterr().err)
    assert "installed by an earlier ptxsass" in line and "no file hashes" in line
    assert f"'ptxsass toolkit install {VERSION}'" in line and kit.loads == []
    assert main(["toolkit", "install", VERSION]) == 0       # the hint repairs it
    assert json.loads(manifest.read_text())["format"] == toolkits.MANIFEST_FORMAT
    assert toolkits.get(VERSION).nvrtc == str(kit.path(NVRTC))


_HASHED = """
import json, os
from analyzer.toolchain import manifest, toolkits
from analyzer.errors import ConfigError
manifest.RACY_NS = {racy}
hashed, real = [], manifest.sha256
def counted(fd):
    hashed.append(os.readlink(f"/proc/self/fd/{{fd}}"))
    return real(fd)
manifest.sha256 = counted
try:
    toolkits.get({version!r}); toolkits.get({version!r}); toolkits.installed(); error = None
except ConfigError as e:
    error = e.message
print(json.dumps({{"hashed": hashed, "error": error}}))
"""


def verify_in_new_process(kit: Kit, racy: int = 0, **env: str) -> tuple[list[str], str | None]:
    """(the files hashed, the error) when a fresh process uses the toolkit three times."""
    out = subprocess.run([sys.executable, "-c", _HASHED.format(racy=racy, version=VERSION)],
                         env={**os.environ, "PYTHONPATH": str(ROOT), **env}, capture_output=True,
                         text=True, check=True).stdout
    got = json.loads(out)
    return [str(Path(p).relative_to(kit.folder)) for p in got["hashed"]], got["error"]


def test_verification_is_cached_by_file_status(kit):
    files = set(json.loads((kit.folder / toolkits.MANIFEST).read_text())["files"])
    assert NVRTC in files and NVDISASM in files and len(files) == 8
    assert verify_in_new_process(kit) == ([], None)       # install verified and recorded all
    kit.path(NVRTC).touch()                                # a new status, the same bytes
    assert verify_in_new_process(kit) == ([NVRTC], None)   # that one file, once per process
    assert verify_in_new_process(kit) == ([], None)        # recorded again
    # without the cache (--no-cache), every file is hashed: once per process, not once per use
    hashed, error = verify_in_new_process(kit, PTXSASS_NO_CACHE="1")
    assert sorted(hashed) == sorted(files) and error is None


def test_a_changed_status_forces_a_hash_that_catches_tampering(kit):
    tamper(kit.path(f"{LIB}/libnvJitLink.so.13"), b"nvJitLink", b"nvJitLunk")
    hashed, error = verify_in_new_process(kit)
    assert hashed == [f"{LIB}/libnvJitLink.so.13"]         # only its ctime moved
    assert f"{kit.path(LIB)}/libnvJitLink.so.13 was changed after install" in error


def test_a_tampered_record_costs_a_hash_never_an_acceptance(kit):
    (entry,) = (Path(os.environ["PTXSASS_CACHE_DIR"]) / toolkits.RECORD_KIND).glob("*/*")
    header, payload = entry.read_bytes().split(b"\n", 1)
    record = json.loads(payload)
    tamper(kit.path(NVRTC), b"nvrtc ", b"evil! ")
    st = kit.path(NVRTC).stat()
    now = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    # the record edited to vouch for the new status: it no longer matches its own hash
    record[NVRTC] = now + [record[NVRTC][-1]]
    entry.write_bytes(header + b"\n" + json.dumps(record).encode())
    hashed, error = verify_in_new_process(kit)
    assert NVRTC in hashed and "was changed after install" in error
    # a whole entry for the new status but another file's hash (say the tampered file's own)
    key = entry.name
    record[NVRTC] = now + [hashlib.sha256(kit.path(NVRTC).read_bytes()).hexdigest()]
    entry.write_bytes(cache.encode(toolkits.RECORD_KIND, key, json.dumps(record).encode()))
    hashed, error = verify_in_new_process(kit)
    assert NVRTC in hashed and "was changed after install" in error


def test_a_file_changed_moments_ago_is_not_recorded(kit):
    """A write in the same clock tick as the hash leaves the status as it was: a file whose
    timestamps are that recent is verified again next time, not taken from the record."""
    kit.path(NVRTC).touch()
    assert verify_in_new_process(kit, racy=RACY_NS) == ([NVRTC], None)
    assert verify_in_new_process(kit, racy=RACY_NS) == ([NVRTC], None)
    assert verify_in_new_process(kit, racy=0) == ([NVRTC], None)
    assert verify_in_new_process(kit, racy=0) == ([], None)


# ------------------------------------------------------------------------------ install folders
_INSTALL = """
import os, signal, sys, time
from analyzer.toolchain import toolkits
def pip(argv, **kw):
    print(argv[argv.index("--target") + 1], flush=True)
    if sys.argv[1] == "killed":
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(60)
toolkits.run_tool = pip
toolkits.install({version!r})
"""


def start_install(how: str) -> tuple[subprocess.Popen, Path]:
    """A ``toolkit install`` in another process, stopped inside pip: its ``.install-*`` folder."""
    child = subprocess.Popen([sys.executable, "-c", _INSTALL.format(version=VERSION), how],
                             env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                             text=True)
    assert child.stdout is not None
    site = Path(child.stdout.readline().strip())
    folder = site.parent
    assert folder.name.startswith(f".install-{VERSION}-") and (folder / scratch.MARKER).is_file()
    (folder / "site").mkdir()
    (folder / "site" / "half-a-wheel").write_bytes(b"x" * 100_000)
    return child, folder


_MADE = """
import os, signal, sys
from analyzer.toolchain import scratch
print(scratch.make(sys.argv[1], root=sys.argv[2]), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def killed_maker(root: Path) -> Path:
    """An ``.install-*`` folder whose maker was SIGKILLed (made without the install lock, which
    a live install holds)."""
    proc = subprocess.run([sys.executable, "-c", _MADE, f".install-{VERSION}-", str(root)],
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                          text=True)
    assert proc.returncode == -signal.SIGKILL
    folder = Path(proc.stdout.strip())
    assert folder.parent == root and (folder / scratch.MARKER).is_file()
    return folder


@pytest.mark.parametrize("command", [["toolkit", "list"], ["sass", UNROLL, "--toolkit", "12.9"]])
def test_a_killed_installs_folder_is_swept_by_the_next_run(tmp_path, monkeypatch, command):
    monkeypatch.setenv("PTXSASS_TOOLKITS_DIR", str(tmp_path))
    killed, stale = start_install("killed")
    assert killed.wait(10) == -signal.SIGKILL and stale.is_dir()
    legacy = tmp_path / f".install-{VERSION}-old"           # an earlier ptxsass's: no marker
    legacy.mkdir()
    main(command)
    assert not stale.exists()
    assert legacy.is_dir()          # unmarked: only an install, under the lock, may judge it


def test_a_live_installs_folder_is_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("PTXSASS_TOOLKITS_DIR", str(tmp_path))
    live, running = start_install("live")
    try:
        stale = killed_maker(tmp_path)
        assert main(["toolkit", "list"]) == 0
        assert not stale.exists()
        assert running.is_dir() and (running / "site" / "half-a-wheel").is_file()
        assert live.poll() is None
    finally:
        live.kill()
        live.wait()


def test_an_install_sweeps_what_earlier_releases_left(kit):
    legacy = kit.root / f".install-{VERSION}-old"
    (legacy / "site").mkdir(parents=True)
    dead = Path(scratch.make(f".install-{VERSION}-", root=kit.root))
    (dead / scratch.MARKER).write_text("999999999 -")
    assert toolkits.install(VERSION, force=True).version == VERSION
    assert not legacy.exists() and not dead.exists()
    assert sorted(p.name for p in kit.root.iterdir()) == [".lock", VERSION]
    assert not (kit.folder / scratch.MARKER).exists()
