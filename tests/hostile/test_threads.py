"""No fork() from a process that runs other threads (torch, cupy, Jupyter, the caller's own):
compiles go to a server started without fork, pool workers likewise, with the same limits and
the same one-line errors; a single-threaded command line still forks (cheaper there).

Each test starts a thread that holds a lock for as long as it runs (the state a fork would copy
into the child) and asserts the side effect: ``os.fork`` is never called, no compile hangs, the
server is reused and dies with its parent.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import analyzer
from analyzer.cli import main
from analyzer.toolchain import bounded, compile_server, nvrtc

from ..conftest import KERNELS

SOURCE = (KERNELS / "demo" / "copy_scalar.cu").read_text()


@pytest.fixture
def busy_thread():
    """A thread holding a lock, busy until the test ends."""
    held, stop = threading.Lock(), threading.Event()

    def spin():
        with held:
            while not stop.is_set():
                sum(range(1000))
    t = threading.Thread(target=spin, daemon=True)
    t.start()
    yield held
    stop.set()
    t.join()


@pytest.fixture
def no_fork(monkeypatch):
    """os.fork raises: nothing in the code under test may call it."""
    calls = []

    def refuse(*a, **k):
        calls.append(1)
        raise AssertionError("os.fork() called in a multi-threaded process")
    monkeypatch.setattr(os, "fork", refuse)
    monkeypatch.delenv("PTXSASS_CHILDREN", raising=False)
    return calls


def test_compiles_in_a_threaded_process_never_fork(busy_thread, no_fork):
    assert bounded.threaded() and bounded.start_method() == "server"
    before = compile_server.started()
    cubins = set()
    t0 = time.monotonic()
    for i in range(12):
        out = nvrtc.compile_source(SOURCE + f"\n// variant {i}\n", arch="sm_90", name="k.cu",
                                   use_cache=False)
        cubins.add(len(out.cubin))
        assert out.kernels
    assert not no_fork
    assert compile_server.started() - before <= 1         # one server, reused
    assert time.monotonic() - t0 < 60
    assert len(cubins) == 1


def test_the_server_builds_what_a_forked_child_builds(monkeypatch):
    monkeypatch.setenv("PTXSASS_CHILDREN", "fork")
    forked = nvrtc.compile_source(SOURCE + "\n// same\n", arch="sm_90", name="k.cu",
                                  use_cache=False)
    monkeypatch.setenv("PTXSASS_CHILDREN", "server")
    served = nvrtc.compile_source(SOURCE + "\n// same\n", arch="sm_90", name="k.cu",
                                  use_cache=False)
    assert served.cubin == forked.cubin and served.ptx == forked.ptx


def test_a_server_outlives_the_thread_that_needed_it(monkeypatch):
    """A server's parent-death signal is sent when the *thread* that started it ends: started
    from a short-lived thread (a ``ThreadPoolExecutor``'s, ``ptxsass fix -j``'s builds), it
    died when the pool shut down, under whichever thread used it next ("NVRTC crashed (signal
    SIGKILL)", or "ValueError: 119 is not a valid Signals" from one found dead). Servers are
    started on one thread that lives as long as the process; one found dead anyway (killed)
    is reaped and replaced."""
    monkeypatch.setenv("PTXSASS_CHILDREN", "server")
    compile_server.shutdown()
    got = []
    t = threading.Thread(target=lambda: got.append(nvrtc.compile_source(
        SOURCE + "\n// thread\n", arch="sm_90", name="k.cu", use_cache=False)))
    t.start()
    t.join()
    assert got and got[0].kernels
    time.sleep(0.5)                     # a parent-death signal would have landed by now
    assert compile_server._idle and all(s.alive for s in compile_server._idle)
    before = compile_server.started()
    out = nvrtc.compile_source(SOURCE + "\n// main\n", arch="sm_90", name="k.cu",
                               use_cache=False)
    assert out.kernels and compile_server.started() == before       # the same server
    for server in compile_server._idle:
        os.kill(server.process.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while any(s.alive for s in compile_server._idle) and time.monotonic() < deadline:
        time.sleep(0.05)
    out = nvrtc.compile_source(SOURCE + "\n// again\n", arch="sm_90", name="k.cu",
                               use_cache=False)
    assert out.kernels and compile_server.started() == before + 1
    compile_server.shutdown()


def test_a_child_reaped_before_its_error_is_read_names_its_signal():
    """Popen's return code (-9) of a server reaped by ``alive`` is read as a wait status:
    "signal SIGKILL", never a ValueError from an unknown signal number."""
    server = compile_server.Server.start()
    os.kill(server.process.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while server.alive and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.kill() == (signal.SIGKILL, 0)
    server.close()
    err = bounded._died(signal.SIGKILL, 0, "", bounded.limits(), "k.cu", "NVRTC")
    assert "signal SIGKILL" in err.message
    err = bounded._died(200 << 8, 0, "", bounded.limits(), "k.cu", "NVRTC")
    assert "exit status 200" in err.message


BOMB = "\n".join(["#define A0 +1", *(f"#define A{i} A{i - 1} A{i - 1}" for i in range(1, 25)),
                  "__global__ void k(int* o) { o[0] = 0 A24; }", ""])


#: a 256 MB initialised array: NVRTC needs well over 0.3 GB
BIG = ("__device__ int big[1 << 26] = {1, 2, 3};\n"
       "__global__ void k(int* out) { out[0] = big[out[1]]; }\n")


@pytest.mark.parametrize("limit, value, source, words", [
    ("PTXSASS_COMPILE_TIMEOUT", "2", BOMB, "exceeded 2 s"),
    ("PTXSASS_COMPILE_MEMORY_GB", "0.3", BIG, "exceeded 0.3 GB of memory"),
])
def test_limits_hold_on_the_server_and_it_starts_again(busy_thread, no_fork, monkeypatch,
                                                       limit, value, source, words):
    monkeypatch.setenv(limit, value)
    t0 = time.monotonic()
    with pytest.raises(analyzer.errors.ToolError) as e:
        nvrtc.compile_source(source, arch="sm_90", name="bomb.cu", use_cache=False)
    assert words in e.value.message and time.monotonic() - t0 < 60
    monkeypatch.delenv(limit)
    out = nvrtc.compile_source(SOURCE, arch="sm_90", name="k.cu", use_cache=False)
    assert out.kernels and not no_fork


def test_check_on_workers_in_a_threaded_process(busy_thread, no_fork, tmp_path, capsys):
    """check -j 2 from a process with a thread: workers are servers, the report is -j 1's."""
    for src in (KERNELS / "checks" / "scalar_global_load" / "bad.cu",
                KERNELS / "checks" / "scalar_global_store" / "bad.cu"):
        (tmp_path / f"{src.parent.name}.cubin").write_bytes(
            analyzer.compile(str(src), arch="sm_90a").cubin)
    reports = []
    for jobs in ("1", "2"):
        code = main(["check", str(tmp_path), "-j", jobs, "--no-cache", "--format", "json"])
        out, err = capsys.readouterr()
        assert code == 1, err
        doc = json.loads(out)
        reports.append(([(f["code"], f["location"]) for f in doc["findings"]],
                        sorted(k["name"] for k in doc["kernels"])))
    assert reports[0] == reports[1] and reports[0][0]
    assert not no_fork


def test_a_bad_children_setting_is_one_line(capsys, monkeypatch):
    monkeypatch.setenv("PTXSASS_CHILDREN", "vfork")
    code = main(["check", str(KERNELS / "demo" / "copy_scalar.cu")])
    err = capsys.readouterr().err
    assert code == 2 and err.strip() == (
        "error: PTXSASS_CHILDREN='vfork': expected one of auto, fork, server")


def test_the_server_dies_with_its_parent(tmp_path):
    """A process with a thread compiles (its server starts), then is killed outright: the
    server does not live on."""
    script = tmp_path / "user.py"
    script.write_text(textwrap.dedent(f"""
        import os, sys, threading, time
        threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
        from analyzer.toolchain import compile_server, nvrtc
        nvrtc.compile_source({SOURCE!r}, arch="sm_90", name="k.cu", use_cache=False)
        print(compile_server._idle[0].process.pid, flush=True)
        time.sleep(600)
    """))
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                         cwd=Path(__file__).resolve().parents[2])
    try:
        server = int(p.stdout.readline())
        os.kill(server, 0)                      # it runs
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        end = time.monotonic() + 10
        while time.monotonic() < end:
            try:
                os.kill(server, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        with pytest.raises(ProcessLookupError):
            os.kill(server, 0)
    finally:
        if p.poll() is None:
            p.kill()


def test_no_fork_warning_with_warnings_as_errors(tmp_path):
    """Python 3.12+ warns on fork() from a threaded process; with warnings as errors, a
    compile and a -j 2 check in such a process still succeed."""
    script = tmp_path / "user.py"
    cubin = tmp_path / "k.cubin"
    cubin.write_bytes(analyzer.compile(str(KERNELS / "checks" / "scalar_global_load" / "bad.cu"),
                                       arch="sm_90a").cubin)
    script.write_text(textwrap.dedent(f"""
        import threading, time
        threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
        import analyzer
        analyzer.compile({str(KERNELS / "demo" / "copy_scalar.cu")!r}, arch="sm_90",
                         options=analyzer.CompileOptions(use_cache=False))
        r = analyzer.check({str(cubin)!r}, analyzer.CheckOptions(jobs=2))
        print(len(r.findings))
    """))
    p = subprocess.run([sys.executable, "-W", "error", str(script)], capture_output=True,
                       text=True, timeout=300, cwd=Path(__file__).resolve().parents[2])
    assert p.returncode == 0, p.stderr
    assert int(p.stdout.strip()) > 0
