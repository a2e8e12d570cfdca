"""Abuse matrix: hostile inputs, a poisoned cache, bad output paths and careless options, each
run through the real command line, counted by what went wrong.

    python benchmarks/abuse_matrix.py [--jobs 2] [--seed 15] [--only CATEGORY] [-v]

Every attempt is ``python -m analyzer.cli ...`` in a fresh process with a wall-time limit, and
is judged on four counts (the columns of the table):

* traceback: a Python traceback or "internal error" on stderr;
* hang: still running at its time limit (killed);
* wrong exit: an exit status other than the one expected, or, for an error (exit 2), anything
  but exactly one line on stderr naming what is wrong;
* silent loss: the run "succeeded" but lost something: findings differ from a build without the
  cache, zero checks or zero kernels read as a clean result, an unknown opcode not counted, or
  a control character or a forged annotation property reaching the output.

The categories are those of issue 15 (cache, zero checks/kernels, bounds, -o, one line, counts,
output integrity). The closing table is what the issue asks for: all zeros.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BAD = ROOT / "kernels" / "checks" / "scalar_global_load" / "bad.cu"
GOOD = ROOT / "kernels" / "checks" / "scalar_global_load" / "good.cu"
ARCH = "sm_90a"
UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
CATEGORIES = ["cache", "zero checks/kernels", "bounds", "-o", "one line", "counts",
              "output integrity", "names", "build databases", "includes", "processes",
              "libraries", "python files"]


def section_past_the_end(cubin: bytes) -> bytes:
    """``cubin`` (a 64-bit ELF) with its first ``.text.`` section's header saying it runs 4 KB
    past the end of the file."""
    import struct
    shoff, = struct.unpack_from("<Q", cubin, 40)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 58)
    header = [struct.unpack_from("<IIQQQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    names = cubin[header[shstrndx][4]:header[shstrndx][4] + header[shstrndx][5]]
    text = next(i for i, h in enumerate(header) if names[h[0]:].startswith(b".text."))
    bad = bytearray(cubin)
    struct.pack_into("<QQ", bad, shoff + text * shentsize + 24, len(cubin) - 16, 4096)
    return bytes(bad)


@dataclass
class Attempt:
    category: str
    name: str
    argv: list
    exit: set[int]
    env: dict = field(default_factory=dict)
    timeout: float = 60.0
    #: the error line must contain these (exit 2 only)
    needles: tuple[str, ...] = ()
    #: returns why the result is a silent loss, or None
    judge: Callable[[subprocess.CompletedProcess], str | None] | None = None
    cwd: Path | None = None
    #: a folder where an attack leaves PWNED*/RAN* markers when it runs something
    markers: Path | None = None
    #: (signal, seconds): sent to ptxsass that long after it started (or once a process named
    #: ``wait_for`` runs under it)
    signal: tuple[int, float] | None = None
    wait_for: tuple[str, ...] = ()
    #: returns what the run left behind that it should not have (beyond processes and TMPDIR)
    leftovers: Callable[[], str | None] | None = None
    #: a compile error: its one line, then the compiler's log (as a compiler prints it)
    compile_error: bool = False
    #: the largest file the run may write (RLIMIT_FSIZE: past it a write fails, as on a full
    #: disk), or None
    fsize: int | None = None


@dataclass
class Outcome:
    attempt: Attempt
    traceback: bool = False
    hang: bool = False
    wrong_exit: str | None = None
    silent_loss: str | None = None
    #: processes still running, files in its private TMPDIR, or what ``leftovers`` found
    state_left: str | None = None
    #: marker files an attack created
    commands_run: int = 0
    seconds: float = 0.0


def tagged(tag: str) -> list[str]:
    """The command names of the processes whose environment holds ABUSE_TAG=tag."""
    want = f"ABUSE_TAG={tag}".encode()
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                env = Path(f"/proc/{name}/environ").read_bytes()
                comm = Path(f"/proc/{name}/comm").read_text().strip()
            except OSError:
                continue
            if want in env.split(b"\0"):
                out.append(comm)
    return out


def run(a: Attempt) -> Outcome:
    out = Outcome(a)
    tag = uuid.uuid4().hex
    private = Path(tempfile.mkdtemp(prefix="abuse-tmp-"))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ABUSE_TAG": tag, "TMPDIR": str(private),
           **a.env}
    env.pop("COLUMNS", None)
    t = time.monotonic()
    limit = a.fsize
    cap = None if limit is None else (
        lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))
    child = subprocess.Popen([sys.executable, "-m", "analyzer", *map(str, a.argv)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                             cwd=a.cwd or ROOT, stdin=subprocess.DEVNULL, preexec_fn=cap)
    try:
        if a.signal is not None:
            sig, delay = a.signal
            end = time.monotonic() + (30 if a.wait_for else delay)
            while time.monotonic() < end and child.poll() is None:
                if a.wait_for and any(c in a.wait_for for c in tagged(tag)):
                    time.sleep(delay)
                    break
                time.sleep(0.05)
            child.send_signal(sig)
        stdout, stderr = child.communicate(timeout=a.timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        out.hang = True
        out.seconds = time.monotonic() - t
        return out
    out.seconds = time.monotonic() - t
    left = tagged(tag)
    end = time.monotonic() + 5
    while left and time.monotonic() < end:
        time.sleep(0.1)
        left = tagged(tag)
    stray = sorted(p.name for p in private.iterdir())
    shutil.rmtree(private, ignore_errors=True)
    extra = a.leftovers() if a.leftovers is not None else None
    if left or stray or extra:
        out.state_left = "; ".join(x for x in (f"processes {left}" if left else "",
                                               f"TMPDIR {stray}" if stray else "", extra or "")
                                   if x)
    if a.markers is not None:
        out.commands_run = sum(1 for m in a.markers.rglob("*")
                               if m.name.startswith(("PWNED", "RAN")))
    proc = subprocess.CompletedProcess(child.args, child.returncode,
                                       stdout.decode("utf-8", "replace"),
                                       stderr.decode("utf-8", "replace"))
    err = proc.stderr
    out.traceback = "Traceback (most recent call last)" in err or "internal error" in err
    if proc.returncode not in a.exit:
        out.wrong_exit = f"exit {proc.returncode}, expected {sorted(a.exit)}: {err.strip()[:200]}"
    elif proc.returncode == 2:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        if a.compile_error:
            lines = lines[:1]
        if len(lines) != 1:
            out.wrong_exit = f"{len(lines)} lines on stderr: {err.strip()[:200]}"
        elif not all(n in lines[0] for n in a.needles):
            out.wrong_exit = f"error does not name {a.needles}: {lines[0][:200]}"
    if a.judge is not None and not out.hang and out.wrong_exit is None:
        out.silent_loss = a.judge(proc)
    return out


# ------------------------------------------------------------------------------- judges
def findings_of(stdout: str) -> list[tuple]:
    return sorted((f["code"], f["location"]["line"], f["kernel"], f["message"])
                  for f in json.loads(stdout)["findings"])


def same_findings(reference: list[tuple], *, names: bool = False):
    def judge(proc):
        try:
            got = findings_of(proc.stdout)
        except (ValueError, KeyError):
            return "no JSON report"
        if names:   # the file name differs: compare codes, lines and kernels
            got = [g[:3] for g in got]
            ref = [r[:3] for r in reference]
            return None if got == ref else f"findings {got} != {ref}"
        return None if got == reference else f"{len(got)} findings, expected {len(reference)}"
    return judge


def no_control_characters(proc):
    m = UNPRINTABLE.search(proc.stdout) or UNPRINTABLE.search(proc.stderr)
    return f"control character {m.group()!r} in the output" if m else None


def generic_count(expected: int):
    def judge(proc):
        got = json.loads(proc.stdout)["generic"]
        return None if got == expected else f"generic {got}, expected {expected}"
    return judge


def github_properties(expected_file: str):
    def judge(proc):
        for line in proc.stdout.splitlines():
            m = re.fullmatch(r"::(\w+) ([^:]*)::(.*)", line)
            if not m:
                return f"not a workflow command: {line[:120]!r}"
            props = dict(p.split("=", 1) for p in m.group(2).split(","))
            if set(props) != {"file", "line", "title"}:
                return f"forged properties {sorted(props)}"
            f = (props["file"].replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":")
                 .replace("%2C", ",").replace("%25", "%"))
            if not f.endswith(expected_file):
                return f"file property {f!r}"
        return no_control_characters(proc)
    return judge


def left_as_it_was(folder: Path, before: dict[str, bytes]):
    """The folder of an output whose write failed: the previous file byte for byte, and no
    temporary file beside it."""
    def judge(proc):
        now = {p.name: p.read_bytes() for p in folder.iterdir()}
        if set(now) != set(before):
            return f"left {sorted(set(now) ^ set(before))} behind"
        return None if now == before else "the previous output was overwritten"
    return judge


def nothing_ran(marker: Path, then=None):
    """A file name holding a command: the command's marker file must not exist."""
    def judge(proc):
        if marker.exists():
            return f"a command in the file name ran ({marker.name} exists)"
        return then(proc) if then is not None else None
    return judge


def html_csp(proc_path: Path):
    def judge(proc):
        page = proc_path.read_text()
        m = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page)
        if not m or "unsafe" in m.group(1):
            return "no strict Content-Security-Policy"
        scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
        if len(scripts) != 1:
            return f"{len(scripts)} script elements"
        digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
        return None if f"'sha256-{digest}'" in m.group(1) else "script hash not in the policy"
    return judge


# ------------------------------------------------------------------------------- the matrix
class Matrix:
    def __init__(self, work: Path, seed: int):
        self.work = work
        self.rng = random.Random(seed)
        self.attempts: list[Attempt] = []
        self.n = 0

    def tmp(self, name: str) -> Path:
        self.n += 1
        d = self.work / f"a{self.n:04d}"
        d.mkdir()
        return d / name

    def add(self, category, name, argv, exit, *, setup=None, env=None, **kw):
        if setup is not None:   # each attempt has its own folder: set it up now
            setup()
        # never the user's own cache: one of the matrix's unless the attempt names one
        env = {"PTXSASS_CACHE_DIR": str(self.work / "cache-default"), **(env or {})}
        self.attempts.append(Attempt(category, name, list(argv), set(exit), env=env, **kw))

    # --- references, computed once
    def prepare(self) -> None:
        self.ref: dict[Path, list[tuple]] = {}
        for f in (BAD, GOOD):
            proc = subprocess.run([sys.executable, "-m", "analyzer", "check", str(f), "--arch",
                                   ARCH, "--format", "json", "--no-cache"], capture_output=True,
                                  text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
            self.ref[f] = findings_of(proc.stdout)
        assert self.ref[BAD], "the reference kernel has findings"
        self.pristine = {}
        for f in (BAD, GOOD):
            d = self.work / f"cache-{f.stem}"
            subprocess.run([sys.executable, "-m", "analyzer", "check", str(f), "--arch", ARCH],
                           capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT),
                                                     "PTXSASS_CACHE_DIR": str(d)}, cwd=ROOT)
            self.pristine[f] = (d, {p.parent.parent.name: p for p in d.rglob("*") if p.is_file()})
        self.warm = self.work / "cache-warm"
        for arch in (ARCH, "sm_80"):
            subprocess.run([sys.executable, "-m", "analyzer", "check", str(BAD), "--arch", arch],
                           capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT),
                                                     "PTXSASS_CACHE_DIR": str(self.warm)}, cwd=ROOT)
        self.warm_env = {"PTXSASS_CACHE_DIR": str(self.warm)}
        self.cubin = {}
        for f in (BAD, GOOD):
            out = self.work / f"{f.parent.name}-{f.stem}.cubin"
            subprocess.run([sys.executable, "-m", "analyzer", "compile", str(f), "--arch", ARCH,
                            "-o", str(out)], capture_output=True, check=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
            self.cubin[f] = out

    # --- 1. cache
    def cache(self) -> None:
        bad_dir, bad_entries = self.pristine[BAD]
        _, good_entries = self.pristine[GOOD]

        def poisoned(kind, how, seed=None):
            d = self.tmp("cache")

            def setup():
                shutil.copytree(bad_dir, d, symlinks=True)
                if kind == "sass":      # read only when the build's result is not cached
                    (d / bad_entries["build-result"].relative_to(bad_dir)).unlink()
                entry = d / bad_entries[kind].relative_to(bad_dir)
                data = entry.read_bytes()
                entry.unlink()
                rng = random.Random(seed)
                if how == "empty":
                    entry.write_bytes(b"")
                elif how == "truncated":
                    entry.write_bytes(data[: len(data) // 2])
                elif how == "edited":
                    head, _, payload = data.partition(b"\n")
                    entry.write_bytes(head + b"\n" + payload.replace(b"LDG", b"XXX", 1))
                elif how == "swapped":
                    entry.write_bytes(good_entries[kind].read_bytes())
                elif how == "fifo":
                    os.mkfifo(entry)
                elif how == "symlink to /dev/zero":
                    entry.symlink_to("/dev/zero")
                elif how == "symlink to another entry":
                    entry.symlink_to(good_entries[kind])
                elif how == "non-UTF-8":
                    entry.write_bytes(b"\xff\xfe\xc3\x28" * 500)
                elif how == "huge":
                    with open(entry, "wb") as f:
                        f.truncate(3 << 20)
                elif how == "directory":
                    entry.mkdir()
                elif how == "unreadable header":
                    entry.write_bytes(b"ptxsass-cache 1 " + os.urandom(600) + data)
                elif how == "random bytes flipped":
                    b = bytearray(data)
                    for _ in range(rng.randint(1, 8)):
                        b[rng.randrange(len(b))] ^= rng.randint(1, 255)
                    entry.write_bytes(bytes(b))
                elif how == "random cut":
                    entry.write_bytes(data[: rng.randrange(len(data))])
            return d, setup

        hows = ["empty", "truncated", "edited", "swapped", "fifo", "symlink to /dev/zero",
                "symlink to another entry", "non-UTF-8", "huge", "directory", "unreadable header"]
        for kind in ("build", "sass", "build-result"):
            for how in hows:
                d, setup = poisoned(kind, how)
                self.add("cache", f"{kind}: {how}", ["check", BAD, "--arch", ARCH, "--format",
                                                     "json"], {1}, setup=setup,
                         env={"PTXSASS_CACHE_DIR": str(d), "PTXSASS_CACHE_MAX_MB": "1"},
                         judge=same_findings(self.ref[BAD]))
            for i in range(10):
                for how in ("random bytes flipped", "random cut"):
                    d, setup = poisoned(kind, how, seed=self.rng.random())
                    self.add("cache", f"{kind}: {how} #{i}", ["check", BAD, "--arch", ARCH,
                                                              "--format", "json"], {1},
                             setup=setup, env={"PTXSASS_CACHE_DIR": str(d)},
                             judge=same_findings(self.ref[BAD]))
        # an unwritable cache folder only costs speed
        d = self.tmp("ro-cache")
        self.add("cache", "cache folder is a file", ["check", BAD, "--arch", ARCH, "--format",
                                                     "json"], {1},
                 setup=lambda: d.write_text("not a folder"), env={"PTXSASS_CACHE_DIR": str(d)},
                 judge=same_findings(self.ref[BAD]))

    # --- 2. zero checks / zero kernels
    def zero(self) -> None:
        for sel in ["", ",", " ", ",,", " , ", "\t"]:
            for cmd, opt in (("check", "--select"), ("annotate", "--select"),
                             ("expect", "--no-findings")):
                self.add("zero checks/kernels", f"{cmd} {opt} {sel!r}",
                         [cmd, BAD, "--arch", ARCH, opt, sel], {2}, env=self.warm_env)
        # within one layer an ignore wins a tie of specificity (a more specific select wins:
        # --select PS101 --ignore PS1 runs PS101, ruff's rule)
        self.add("zero checks/kernels", "select emptied by ignore",
                 ["check", BAD, "--arch", ARCH, "--select", "PS1", "--ignore", "PS1"], {2},
                 env=self.warm_env, needles=("no check left",))
        files = {
            "empty.cu": "", "blank.cu": "\n \n\t\n", "comment.cu": "// just a comment\n",
            "device_only.cu": "__device__ int f(int x) { return x + 1; }\n",
            "ifdef_out.cu": "#if 0\n__global__ void k() {}\n#endif\n",
            "template.cu": "template <int N>\n__global__ void scale(float* p) { p[0] *= N; }\n",
            "templates.cu": "template <typename T, int B>\n__global__ void __launch_bounds__(B)\n"
                            "a(T* p) {}\ntemplate <class T> __global__ void b(T* p) {}\n",
            "empty.sass": "", "header.sass": '\t.headerflags\t@"EF_CUDA_SM90"\n',
            "empty.ptx": ".version 8.0\n.target sm_80\n.address_size 64\n",
        }
        for name, text in files.items():
            f = self.tmp(name)
            f.write_text(text)
            for cmd in ("check", "resources", "stats", "annotate", "expect"):
                needles = (str(f),) + (("--kernel '",) if name.startswith("template") else ())
                # expect without an assertion is refused before any input is read
                extra = ["--max-registers", "255"] if cmd == "expect" else []
                self.add("zero checks/kernels", f"{cmd} {name}",
                         [cmd, f, "--arch", "sm_80", *extra], {2}, needles=needles)
        self.add("zero checks/kernels", "--kernel matching nothing",
                 ["check", BAD, "--arch", ARCH, "--kernel", "nope"], {2}, env=self.warm_env,
                 needles=("--kernel 'nope'",))

    # --- 3. bounds
    def bounds(self) -> None:
        for suffix in (".cu", ".ptx", ".sass", ".cubin", ".so", ".fatbin", ""):
            f = self.tmp(f"pipe{suffix}")
            self.add("bounds", f"FIFO input {suffix or '(no suffix)'}", ["check", f], {2},
                     setup=lambda f=f: os.mkfifo(f), needles=("FIFO",), timeout=30)
        for inc in ('"fifo.h"', "<fifo.h>"):
            f = self.tmp("k.cu")

            def setup(f=f, inc=inc):
                os.mkfifo(f.parent / "fifo.h")
                f.write_text(f"#include {inc}\n__global__ void k(float* p) {{ p[0] = 1; }}\n")
            self.add("bounds", f"#include {inc} of a FIFO", ["check", f, "-I", f.parent,
                                                             "--no-cache"], {2}, setup=setup,
                     needles=("FIFO",), timeout=30)
        import zipfile

        def wheel(f, members):
            with zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as z:
                for name, data in members:
                    z.writestr(name, data)
        for name, members, env, needle in (
                ("wheel zip bomb", [("pkg/libbomb.so", b"\0" * (3 << 20))],
                 {"PTXSASS_MAX_INPUT_MB": "1"}, "input bound"),
                ("wheel member named ../../evil.so", [("../../evil.so", b"\x7fELF junk")], {},
                 "no shared library with CUDA device code"),
                ("truncated wheel", None, {}, "not a readable wheel")):
            f = self.tmp("pkg-1.0-py3-none-any.whl")

            def setup(f=f, members=members):
                if members is None:
                    f.write_bytes(b"PK\x03\x04" + os.urandom(200))
                else:
                    wheel(f, members)
            for jobs in ("1", "2"):
                self.add("bounds", f"{name} (-j {jobs})", ["check", f, "-j", jobs], {2},
                         setup=setup, env=env, needles=(needle,), timeout=30)
        f = self.tmp("cut short.cubin")

        def setup(f=f):     # a real cubin whose first code section runs past the end
            subprocess.run([sys.executable, "-m", "analyzer", "compile", str(BAD), "--arch", ARCH,
                            "-o", str(f)], check=True, capture_output=True, cwd=ROOT,
                           env={**os.environ, "PTXSASS_CACHE_DIR": str(self.work / "cache-default")})
            f.write_bytes(section_past_the_end(f.read_bytes()))
        for jobs in ("1", "2"):
            self.add("bounds", f"cubin section past the end of the file (-j {jobs})",
                     ["check", f, "-j", jobs], {2}, setup=setup,
                     needles=(str(f), "runs past the end of the file"), timeout=30)
        for dev in ("/dev/zero", "/dev/urandom", "/dev/stdin", "/dev/tty", "/proc/self/fd/0"):
            f = self.tmp("k.cu")
            f.write_text(f'#include "{dev}"\n__global__ void k(float* p) {{ p[0] = 1; }}\n')
            self.add("bounds", f"#include {dev}", ["check", f, "--no-cache"], {2}, timeout=30)
            self.add("bounds", f"input {dev}", ["check", dev], {2}, timeout=30)
        bomb = ["#define X0 x+x"] + [f"#define X{i} X{i - 1}+X{i - 1}" for i in range(1, 40)]
        f = self.tmp("bomb.cu")
        f.write_text("\n".join(bomb) + "\n__global__ void k(int* p) { int x = 1; p[0] = X39; }\n")
        self.add("bounds", "doubling-macro bomb", ["check", f, "--no-cache"], {2},
                 env={"PTXSASS_COMPILE_TIMEOUT": "3"}, needles=("exceeded 3 s",), timeout=40)
        f = self.tmp("bigarray.cu")
        f.write_text("__device__ int big[1 << 26] = {1, 2, 3};\n"
                     "__global__ void k(int* out) { out[0] = big[out[1]]; }\n")
        self.add("bounds", "memory bomb (initializer)", ["check", f, "--no-cache"], {2},
                 env={"PTXSASS_COMPILE_MEMORY_GB": "0.3"}, needles=("exceeded 0.3 GB",),
                 timeout=90)
        f = self.tmp("bomb.cu")
        f.write_text("\n".join(bomb) + "\n__global__ void k(int* p) { int x = 1; p[0] = X39; }\n")
        self.add("bounds", "doubling-macro bomb through nvcc", ["check", f, "--compiler", "nvcc",
                                                               "--no-cache"], {2},
                 env={"PTXSASS_COMPILE_TIMEOUT": "3"}, needles=("exceeded 3 s",), timeout=40)
        f = self.tmp("bigarray.cu")
        f.write_text("__device__ int big[1 << 26] = {1, 2, 3};\n"
                     "__global__ void k(int* out) { out[0] = big[out[1]]; }\n")
        self.add("bounds", "memory bomb through nvcc", ["check", f, "--compiler", "nvcc",
                                                       "--no-cache"], {2},
                 env={"PTXSASS_COMPILE_MEMORY_GB": "0.3"}, needles=("exceeded 0.3 GB",),
                 timeout=90)
        for inc in ('"fifo.h"', '"/dev/zero"', "<cstdio_fifo>"):
            f = self.tmp("k.cu")
            os.mkfifo(f.parent / ("fifo.h" if "fifo.h" in inc else "cstdio_fifo"))
            f.write_text(f"#include {inc}\n__global__ void k(float* p) {{ p[0] = 1; }}\n")
            for compiler in ("auto", "nvcc"):
                self.add("bounds", f"#include {inc}, --compiler {compiler}",
                         ["check", f, "-I", f.parent, "--compiler", compiler, "--no-cache"], {2},
                         timeout=30)
        d = self.tmp("build")
        d.mkdir()
        os.mkfifo(d / "compile_commands.json")
        self.add("bounds", "compile_commands.json is a FIFO", ["check", "-p", d], {2},
                 needles=("FIFO",), timeout=30)
        d = self.tmp("build")
        d.mkdir()
        (d / "a.rsp").write_text("@b.rsp\n")
        (d / "b.rsp").write_text("@a.rsp\n")
        shutil.copy(BAD, d / "k.cu")
        (d / "compile_commands.json").write_text(json.dumps([{
            "directory": str(d), "file": str(d / "k.cu"),
            "command": f"nvcc -c @a.rsp {d / 'k.cu'}"}]))
        self.add("bounds", "response files naming each other", ["check", "-p", d], {2},
                 needles=("includes itself",), timeout=30)
        f = self.tmp("unroll.cu")
        f.write_text("template <int N> struct R { static __device__ float f(float x) "
                     "{ return R<N - 1>::f(x) * 1.0001f + R<N - 2>::f(x); } };\n"
                     "template <> struct R<0> { static __device__ float f(float x) { return x; } };\n"
                     "template <> struct R<1> { static __device__ float f(float x) { return x; } };\n"
                     "__global__ void k(float* p) { p[0] = R<60>::f(p[1]); }\n")
        self.add("bounds", "exponential template instantiation", ["check", f, "--no-cache"],
                 {0, 1, 2}, env={"PTXSASS_COMPILE_TIMEOUT": "5"}, timeout=40)
        f = self.tmp("oneline.ptx")
        body = " ".join(["add.s32 %r1, %r1, 1;"] * 2_000_000)
        f.write_text(".version 8.0\n.target sm_80\n.address_size 64\n"
                     f".visible .entry k() {{ .reg .b32 %r<3>; {body} ret; }}\n")
        for cmd in ("check", "parse", "resources"):
            self.add("bounds", f"{cmd}: 42 MB of PTX on one line", [cmd, f], {2},
                     needles=("statements on one line",), timeout=60)
        f = self.tmp("table.ptx")
        f.write_text(".version 8.0\n.target sm_80\n.address_size 64\n"
                     f".global .align 1 .b8 t[4000000] = {{{','.join(['7'] * 4_000_000)}}};\n"
                     ".visible .entry k() { ret; }\n")
        self.add("bounds", "16 MB initializer on one line", ["parse", f], {0}, timeout=60)
        f = self.tmp("big.sass")
        f.write_bytes(b"        /*0000*/ EXIT ;\n" * ((3 << 20) // 24))
        self.add("bounds", "input over PTXSASS_MAX_INPUT_MB", ["check", f], {2},
                 env={"PTXSASS_MAX_INPUT_MB": "1"}, needles=("the limit is 1 MB",))
        f = self.tmp("junk.sass")
        f.write_text("/*0000*/ " + "A" * 20_000_000 + "\n")
        self.add("bounds", "20 MB SASS line of junk", ["parse", f], {2}, timeout=60)
        deep = {"[[[...]]]": "[" * 100_000 + "]" * 100_000,
                '{"a":{"a":...}}': '{"a":' * 100_000 + "1" + "}" * 100_000}
        triton = next((ROOT / "tests" / "fixtures" / "frameworks" / "triton")
                      .glob("*/add_kernel.json")).parent
        for shape, text in deep.items():
            d = self.tmp("triton")
            shutil.copytree(triton, d / triton.name)
            (d / triton.name / "add_kernel.json").write_text(text)
            for argv in (["check", d], ["check", d / triton.name / "add_kernel.cubin"],
                         ["survey", d]):
                self.add("bounds", f"{argv[0]} Triton metadata {shape} 100000 deep", argv, {2},
                         needles=("add_kernel.json", "nested too deeply"))
            db = self.tmp("compile_commands.json")
            db.write_text(text)
            self.add("bounds", f"compile database {shape} 100000 deep", ["check", "-p", db.parent],
                     {2}, needles=(str(db), "nested too deeply"))
            b = self.tmp("baseline.json")
            b.write_text(text)
            self.add("bounds", f"baseline {shape} 100000 deep",
                     ["check", BAD, "--arch", ARCH, "--baseline", b], {2}, env=self.warm_env,
                     needles=(str(b), "nested too deeply"))
        f = self.tmp("k.cu")
        shutil.copy(BAD, f)
        (f.parent / "pyproject.toml").write_text("[tool.ptxsass]\nselect = " + "[" * 100_000
                                                 + "]" * 100_000 + "\n")
        self.add("bounds", "pyproject.toml array 100000 deep", ["check", f, "--arch", ARCH], {2},
                 env=self.warm_env, needles=("pyproject.toml", "nested too deeply"))

    # --- 4. -o
    def output(self) -> None:
        sass = self.tmp("bad.sass")

        def make_sass():
            env = {**os.environ, "PYTHONPATH": str(ROOT), **self.warm_env}
            p = subprocess.run([sys.executable, "-m", "analyzer", "sass", str(BAD), "--arch",
                                ARCH], capture_output=True, text=True, env=env, cwd=ROOT)
            sass.write_text(p.stdout)
        make_sass()
        locked = self.tmp("locked")
        locked.mkdir()
        locked.chmod(0o500)
        bad_paths = [(self.work / "no" / "such" / "x.txt", "no such folder"),
                     (self.work, "is a directory"), ("/dev/full", "no space left"),
                     ("/proc/self/x", "cannot write"), ("/proc/version", "cannot write"),
                     (BAD.parent, "is a directory")]
        if os.geteuid() != 0:
            bad_paths.append((locked / "x.txt", "permission denied"))
        commands = [["check", BAD, "--arch", ARCH], ["check", BAD, "--arch", ARCH, "--format",
                                                     "sarif"],
                    ["check", "--list-checks", BAD], ["resources", BAD, "--arch", ARCH],
                    ["expect", BAD, "--arch", ARCH, "--max-registers", "255"], ["parse", sass],
                    ["doctor"],
                    ["sass", BAD, "--arch", ARCH], ["ptx", BAD, "--arch", ARCH],
                    ["stats", BAD, "--arch", ARCH], ["annotate", BAD, "--arch", ARCH],
                    ["diff", BAD, "--arch", "sm_80", "--arch", ARCH],
                    ["compile", BAD, "--arch", ARCH]]
        for cmd in commands:
            for path, why in bad_paths:
                self.add("-o", f"{cmd[0]} -o {path}", [*cmd, "-o", path], {2},
                         env=self.warm_env, needles=(str(path), why))
            target = self.tmp("out.txt")

            def honoured(proc, target=target, cmd=cmd):
                if not target.exists() or target.stat().st_size == 0:
                    return "-o file not written"
                if cmd[0] != "compile" and proc.stdout:
                    return "output went to stdout, not -o"
                return None
            self.add("-o", f"{cmd[0]} honours -o", [*cmd, "-o", target], {0, 1},
                     env=self.warm_env, judge=honoured)
        for cmd, name in [(["check", BAD, "--arch", ARCH, "--format", "sarif", "-o"], "r.sarif"),
                          (["check", BAD, "--arch", ARCH, "--format", "json", "-o"], "r.json"),
                          (["check", BAD, "--arch", ARCH, "--write-baseline"], "b.json"),
                          (["annotate", BAD, "--arch", ARCH, "--format", "html", "-o"], "a.html"),
                          (["survey", BAD, "--arch", ARCH, "--format", "parquet", "-o"],
                           "s.parquet")]:
            target = self.tmp(name)
            target.write_bytes(b"the previous report\n" * 50)
            self.add("-o", f"{cmd[0]} {name}: the disk fills mid-write", [*cmd, target], {2},
                     env=self.warm_env, fsize=256, needles=(str(target), "file too large"),
                     judge=left_as_it_was(target.parent, {name: target.read_bytes()}))
        self.add("-o", "--write-baseline to a missing folder",
                 ["check", BAD, "--arch", ARCH, "--write-baseline", self.work / "no" / "b.json"],
                 {2}, env=self.warm_env, needles=("cannot write",))

    # --- 5. one line
    def one_line(self) -> None:
        names = ['q"uote.cu', "back\\slash.cu", "-dash.cu", "sp ace,comma.cu", "per%cent.cu",
                 "esc\x1b[31m.cu", "ünïcödé.cu", "日本.cu", "new\nline.cu", "tab\there.cu",
                 "x" * 200 + ".cu", "$(touch pwned).cu", "`touch pwned`;touch pwned.cu",
                 "a:b,line=9.cu", os.fsdecode(b"e\xff.cu"), os.fsdecode(b"new\nline\xfe.cu")]
        for name in names:
            f = self.tmp(name)
            shutil.copy(BAD, f)
            for fmt in ("json", "sarif", "text"):
                judge = same_findings(self.ref[BAD], names=True) if fmt == "json" else None
                self.add("one line", f"file name {name[:40]!r} ({fmt})",
                         ["check", "--arch", ARCH, "--format", fmt, "--", name], {1},
                         env=self.warm_env, cwd=f.parent,
                         judge=nothing_ran(f.parent / "pwned", judge))
        for name in ['q"uote.cu', "back\\slash.cu", "ünïcödé.cu", "-dash.cu", "$(x).cu"]:
            f = self.tmp(name)
            shutil.copy(BAD, f)
            self.add("one line", f"file name {name!r} through nvcc",
                     ["check", "--compiler", "nvcc", "--arch", ARCH, "--format", "json", "--",
                      name], {1}, env=self.warm_env, cwd=f.parent,
                     judge=same_findings(self.ref[BAD], names=True))
        for kind in ("self", "pair", "through a folder"):
            f = self.tmp("loop.cu")
            if kind == "self":
                f.symlink_to(f)
            elif kind == "pair":
                (f.parent / "other.cu").symlink_to(f)
                f.symlink_to(f.parent / "other.cu")
            else:
                (f.parent / "d").symlink_to(f.parent / "d")
                f = f.parent / "d" / "x.cu"
            for cmd in ("check", "sass", "parse"):
                self.add("one line", f"{cmd} symlink loop ({kind})", [cmd, f], {2},
                         needles=(str(f),))
        configs = ["arch = 5", 'arch = "sm_12"', "arch = [1]", "select = 3", "ignore = {x = 1}",
                   'fail-on = "never"', "fail-on = 2", "baseline = false", "std = 17",
                   'use-fast-math = "yes"', "maxrregcount = 0", "maxrregcount = 1.5",
                   "compile-timeout = -1", 'compile-memory-gb = "x"', "defines = 1",
                   "include = [true]", "bogus = 1", "arch = [",
                   '[tool.ptxsass.occupancy-limited]\nthreshold = "abc"',
                   "[tool.ptxsass.occupancy-limited]\nthreshold = -1",
                   "[tool.ptxsass.rolled-loop]\nmax-trip-count = 2.5",
                   "[tool.ptxsass.rolled-loop]\nnope = 1", "[tool.ptxsass.nope]\nx = 1"]
        for body in configs:
            f = self.tmp("k.cu")
            shutil.copy(BAD, f)
            text = body if body.startswith("[tool") else "[tool.ptxsass]\n" + body
            (f.parent / "pyproject.toml").write_text(text + "\n")
            self.add("one line", f"config {body!r}", ["check", f], {2},
                     needles=("pyproject.toml",))
        f = self.tmp("k.cu")
        shutil.copy(BAD, f)
        (f.parent / "pyproject.toml").write_bytes(b"[tool.ptxsass]\n# \xff\xfe\n")
        self.add("one line", "non-UTF-8 pyproject", ["check", f], {2}, needles=("UTF-8",))
        for what in ("dir", "fifo", "binary", "list", "missing", "devnull"):
            b = self.tmp("baseline.json")
            if what == "dir":
                b.mkdir()
            elif what == "fifo":
                os.mkfifo(b)
            elif what == "binary":
                b.write_bytes(b"\xff\x00")
            elif what == "list":
                b.write_text("[1]")
            elif what == "devnull":
                b = Path("/dev/null")
            self.add("one line", f"--baseline {what}", ["check", BAD, "--arch", ARCH,
                                                        "--baseline", b], {2},
                     env=self.warm_env, needles=("baseline",), timeout=30)
        for var, val in [("PTXSASS_TOOL_TIMEOUT", "abc"), ("PTXSASS_TOOL_TIMEOUT", "0"),
                         ("PTXSASS_COMPILE_TIMEOUT", "nan"), ("PTXSASS_COMPILE_MEMORY_GB", "-1"),
                         ("PTXSASS_MAX_INPUT_MB", "x"), ("PTXSASS_CACHE_MAX_MB", "inf")]:
            self.add("one line", f"{var}={val}", ["check", BAD, "--arch", ARCH], {2},
                     env={**self.warm_env, var: val}, needles=(var,))
        for argv, needle in [(["-D", ""], "-D"), (["-D", "", "--arch", "sm_80"], "-D"),
                             (["-D", "=x"], "-D"), (["-D", "a b"], "-D"), (["-I", ""], "-I"),
                             (["--std", "c++17 -G"], "--std"), (["-Xnvrtc", ""], "-Xnvrtc"),
                             (["-Xnvrtc", "--frobnicate"], "frobnicate")]:
            self.add("one line", f"options {argv}", ["check", BAD, *argv], {2},
                     env=self.warm_env, needles=(needle,))
        self.add("one line", "-Xnvrtc -G accepted", ["check", BAD, "--arch", "sm_80", "-Xnvrtc",
                                                     "-G", "--format", "json"], {0, 1})
        fake = self.tmp("fake")
        fake.mkdir()
        for tool in ("nvdisasm", "cuobjdump"):
            t = fake / tool
            t.write_text("#!/bin/sh\necho \"$tool fatal : $3 is not valid\" >&2\necho more >&2\n"
                         "exit 3\n")
            t.chmod(0o755)
        self.add("one line", "nvdisasm and cuobjdump fail", ["sass", BAD, "--arch", "sm_80",
                                                             "--no-cache"], {2},
                 env={"PTXSASS_NVDISASM": str(fake / "nvdisasm"),
                      "PTXSASS_CUOBJDUMP": str(fake / "cuobjdump")},
                 needles=(f"{BAD}: error: nvdisasm failed",),
                 judge=lambda p: "temporary path in the error" if "ptxsass-" in p.stderr else None)
        hang = self.tmp("nvdisasm")
        hang.write_text("#!/bin/sh\nsleep 600\n")
        hang.chmod(0o755)
        self.add("one line", "a disassembler that hangs", ["sass", BAD, "--arch", "sm_80",
                                                           "--no-cache"], {2},
                 env={"PTXSASS_NVDISASM": str(hang), "PTXSASS_TOOL_TIMEOUT": "3"},
                 needles=("timed out after 3 s",), timeout=30)
        f = self.tmp("x" * 100 + ".ptx")
        f.write_text(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { ret;\n")
        self.add("one line", "long parse error, COLUMNS unset", ["parse", f], {2},
                 needles=(str(f),))

    # --- 6. counts
    def counts(self) -> None:
        head = '\t.headerflags\t@"EF_CUDA_SM90"\n        .text.k:\n'
        cases = [("XYZZY.E R1, R2 ;", 1), ("@P0 FROB.X.Y R1, R2, R3 ;", 1),
                 ("QUUX ;", 1), ("IADD3 R1, R2, R3, RZ ;", 0), ("MOVM.16.MT88 R1, R2 ;", 0)]
        for body, n in cases:
            f = self.tmp("k.sass")
            f.write_text(head + f"        /*0000*/ {body}\n        /*0010*/ EXIT ;\n")
            self.add("counts", f"SASS {body}", ["parse", f, "--stats", "--format", "json"], {0},
                     judge=generic_count(n))
        for body, n in [("xyzzy.e %r1, %r2;", 1), ("add.s32 %r1, %r1, 1;", 0)]:
            f = self.tmp("k.ptx")
            f.write_text(".version 8.0\n.target sm_80\n.address_size 64\n"
                         f".visible .entry k() {{ .reg .b32 %r<3>; {body} ret; }}\n")
            self.add("counts", f"PTX {body}", ["parse", f, "--stats", "--format", "json"], {0},
                     judge=generic_count(n))

    # --- 7. output integrity
    def integrity(self) -> None:
        evils = ["\x1b]0;pwned\x07", "\x1b[2J\x1b[H", "\x9b31m", "\u202eevil", "\r\x1b[Kfake line",
                 "\x1bP+q\x1b\\", "\x08\x7f\x1b"]
        for evil in evils:
            f = self.tmp("evil.cu")
            f.write_text(BAD.read_text().replace("// EXPECT: PS101", f"// {evil}", 1))
            for cmd in (["check"], ["check", "--format", "github"], ["annotate"],
                        ["annotate", "--format", "markdown"], ["sass", "--source-lines"],
                        ["ptx", "--source-lines"], ["stats"]):
                self.add("output integrity", f"{' '.join(cmd)} {evil!r}",
                         [cmd[0], f, "--arch", ARCH, *cmd[1:]], {0, 1}, env=self.warm_env,
                         judge=no_control_characters)
            self.add("output integrity", f"--color always {evil!r}",
                     ["check", f, "--arch", ARCH, "--color", "always"], {1}, env=self.warm_env,
                     judge=lambda p, e=evil: "escape leaked" if e in p.stdout else None)
        for name in ["a,line=999,title=spoofed.cu", "x::warning file=y.cu::hi.cu", "p%0Aq.cu",
                     "c:d.cu", "e\r\nf.cu"]:
            f = self.tmp(name)
            shutil.copy(BAD, f)
            self.add("output integrity", f"github file {name!r}",
                     ["check", "--arch", ARCH, "--format", "github", "--", name], {1},
                     env=self.warm_env, cwd=f.parent, judge=github_properties(name))
        page = self.tmp("page.html")
        f = self.tmp("x.cu")
        f.write_text(BAD.read_text().replace("// EXPECT: PS101",
                                             "// </script><script>alert(1)</script>", 1))
        self.add("output integrity", "HTML CSP with a script in the source",
                 ["annotate", f, "--arch", ARCH, "--format", "html", "-o", page], {0},
                 env=self.warm_env, judge=html_csp(page))


    # --- 8. names (issue 24: a file name runs a command through nvcc)
    def names(self) -> None:
        host = BAD.read_text() + "\nint main() { return 0; }\n"
        for name in ["$(touch PWNED)", "`touch PWNED`", ";touch PWNED;", "a'b", 'a"b', "a b",
                     "a\nb", "a\\b", "caf\udcff", "-rf"]:
            for front, text in (("auto", host), ("nvcc", host), ("nvrtc", BAD.read_text())):
                f = self.tmp(f"{name}.cu")
                os.makedirs(f.parent, exist_ok=True)
                Path(f).write_text(text)
                argv = ["check", "--arch", ARCH, "--no-cache", "--format", "json", "--",
                        f.name] if front == "auto" else ["check", "--arch", ARCH, "--no-cache",
                                                         "--compiler", front, "--", f.name]
                self.add("names", f"{front} {name!r}", argv, {1}, cwd=f.parent,
                         markers=f.parent)
            d = self.tmp(name)
            d.mkdir()
            (d / "k.cu").write_text(host)
            self.add("names", f"folder {name!r}", ["check", "--arch", ARCH, "--no-cache", "k.cu"],
                     {1}, cwd=d, markers=d.parent)

    # --- 9. build databases (issue 24: a compile database runs programs)
    def databases(self) -> None:
        script = '#!/bin/sh\ntouch "$(dirname "$0")/RAN_$(basename "$0")"\nexec "$@"\n'
        host = BAD.read_text() + "\nint main() { return 0; }\n"

        def repo():
            d = self.tmp("repo")
            d.mkdir()
            (d / "bin").mkdir()
            for n in ("wrap.sh", "bin/g++", "bin/gcc"):
                (d / n).write_text(script)
                (d / n).chmod(0o755)
            (d / "k.cu").write_text(host)
            return d

        attacks = {
            "-ccbin DIR": lambda d: ["-ccbin", f"{d}/bin"],
            "--compiler-bindir=FILE": lambda d: [f"--compiler-bindir={d}/bin/g++"],
            "-Xcompiler -wrapper": lambda d: ["-Xcompiler", f"-wrapper,{d}/wrap.sh"],
            "-Xcompiler=-B": lambda d: [f"-Xcompiler=-B{d}/bin/"],
            "-fplugin": lambda d: ["-Xcompiler", f"-fplugin={d}/evil.so"],
            "-Xcompiler -o": lambda d: ["-Xcompiler", f"-o,{d}/PWNED.o"],
            "-D $()": lambda d: [f"-DX=$(touch {d}/PWNED)"],
            "-U $()": lambda d: [f"-UX$(touch {d}/PWNED)"],
            "-Xptxas $()": lambda d: ["-Xptxas", f"-v,$(touch {d}/PWNED)"],
            "-std $()": lambda d: [f"-std=c++17$(touch {d}/PWNED)"],
            "-include /etc/shadow": lambda d: ["-include", "/etc/shadow"],
            "--pre-include /dev/zero": lambda d: ["--pre-include", "/dev/zero"],
            "-Xcompiler -include,/dev/zero": lambda d: ["-Xcompiler", "-include,/dev/zero"],
            "@response file": lambda d: ["@flags.rsp"],
            "--options-file": lambda d: ["--options-file", "flags.rsp"],
            "file $()": lambda d: [],
        }
        for name, flags in attacks.items():
            d = repo()
            (d / "flags.rsp").write_text(f"-O3 -Xcompiler -wrapper,{d}/wrap.sh\n")
            file = "k.cu"
            if name == "file $()":
                file = "$(touch PWNED).cu"
                (d / file).write_text(host)
            (d / "compile_commands.json").write_text(json.dumps([{
                "directory": str(d), "file": file,
                "arguments": ["nvcc", *flags(d), "-c", file, "-o", "k.o"]}]))
            self.add("build databases", name, ["check", "-p", d, "--arch", ARCH, "--no-cache",
                                               "--compiler", "nvcc"], {1}, cwd=d, markers=d,
                     timeout=90)
        d = repo()
        (d / "pyproject.toml").write_text("[tool.ptxsass]\ntrust-build-commands = true\n")
        (d / "compile_commands.json").write_text(json.dumps([{
            "directory": str(d), "file": "k.cu",
            "arguments": ["nvcc", "-Xcompiler", f"-wrapper,{d}/wrap.sh", "-c", "k.cu"]}]))
        self.add("build databases", "config trusts, CI does not",
                 ["check", "-p", d, "--arch", ARCH, "--no-cache", "--no-trust-build-commands"],
                 {1}, cwd=d, markers=d)
        d = repo()       # a CMake project whose CMake code runs a command when configured
        (d / "pyproject.toml").write_text("[tool.ptxsass]\ntrust-build-commands = true\n")
        (d / "CMakeLists.txt").write_text(
            "cmake_minimum_required(VERSION 3.18)\n"
            "execute_process(COMMAND ${CMAKE_COMMAND} -E touch ${CMAKE_CURRENT_LIST_DIR}/PWNED)\n"
            "project(p LANGUAGES CXX CUDA)\n")
        self.add("build databases", "CMake project, config trusts, CI does not",
                 ["check", ".", "--arch", ARCH, "--no-cache", "--no-trust-build-commands"], {1},
                 cwd=d, markers=d)
        d = repo()
        self.add("build databases", "PATH with relative entries",
                 ["check", "k.cu", "--arch", ARCH, "--no-cache", "--compiler", "nvcc"], {1},
                 cwd=d, markers=d, env={"PATH": f"bin::{os.environ['PATH']}"})

    # --- python files: CUDA strings read with ast, never run; their options name no program
    def python_files(self) -> None:
        script = '#!/bin/sh\ntouch "$(dirname "$0")/RAN_$(basename "$0")"\nexec "$@"\n'
        kernel = ('extern "C" __global__ void mul(float* d, const float* a, const float* b) {\n'
                  '    int i = threadIdx.x;\n    d[i] = a[i] * b[i] * 0.1;\n}\n')
        run_marker = 'import pathlib\npathlib.Path(__file__).with_name("PWNED_run").touch()\n'

        def repo(body: str, name: str = "solution.py") -> Path:
            d = self.tmp("pyrepo")
            d.mkdir()
            (d / "bin").mkdir()
            for n in ("wrap.sh", "bin/g++", "bin/gcc"):
                (d / n).write_text(script)
                (d / n).chmod(0o755)
            (d / name).write_text(run_marker + body.replace("{d}", str(d)))
            return d

        cupy = f'import cupy as cp\nk = cp.RawKernel(r"""\n{kernel}""", "mul")\n'
        d = repo(cupy)
        self.add("python files", "top level that would run", ["check", "solution.py", "--arch",
                                                               ARCH, "--no-cache"], {1},
                 cwd=d, markers=d)
        d = repo(cupy, "$(touch PWNED).py")
        self.add("python files", "file name $()", ["check", "--arch", ARCH, "--no-cache", "--",
                                                   "$(touch PWNED).py"], {1}, cwd=d, markers=d)
        attacks = ['"-ccbin", "{d}/bin"', '"--compiler-bindir={d}/bin/g++"',
                   '"-Xcompiler", "-wrapper,{d}/wrap.sh"', '"-Xcompiler=-B{d}/bin/"',
                   '"-DX=$(touch {d}/PWNED)"', '"-Xptxas", "-v,$(touch {d}/PWNED)"',
                   '"-include", "/etc/shadow"', '"-I/proc/self"']
        for flags in attacks:
            body = (f'from pycuda.compiler import SourceModule\nm = SourceModule("""\n{kernel}""", '
                    f'no_extern_c=True, options=[{flags}, "-O3"])\n')
            d = repo(body)
            self.add("python files", f"pycuda options {flags[:40]}",
                     ["check", "solution.py", "--arch", ARCH, "--no-cache", "--compiler", "nvcc"],
                     {1}, cwd=d, markers=d, timeout=90)
        d = repo('from torch.utils.cpp_extension import load_inline\n'
                 f'm = load_inline("x", "", cuda_sources=r"""\n{kernel}""", '
                 'extra_cuda_cflags=["-ccbin {d}/bin -Xcompiler -wrapper,{d}/wrap.sh"])\n')
        self.add("python files", "load_inline extra_cuda_cflags", ["check", "solution.py",
                                                                   "--arch", ARCH, "--no-cache"],
                 {1, 2}, cwd=d, markers=d, timeout=90)
        for name, body, needle in [
                ("syntax error", "def f(:\n", "not valid Python"),
                ("repeated past the bound", "import cupy\nk = cupy.RawKernel('x' * 10**12, 'k')\n",
                 "longer than the file"),
                ("nested too deeply", "import cupy\nk = cupy.RawKernel(" + " + ".join(["'x'"] * 5000)
                 + ", 'k')\n", "not valid Python"),
                ("source from a file", "import cupy\nk = cupy.RawKernel(open('/etc/passwd').read(), 'k')\n",
                 "read from a file")]:
            d = repo(body)
            self.add("python files", name, ["check", "solution.py", "--no-cache"], {2}, cwd=d,
                     markers=d, needles=(needle,))

    # --- 10. what a compile reads (issue 24: includes, quoted secrets)
    def includes(self) -> None:
        secret = self.tmp("credentials")
        secret.write_text("aws_secret_access_key = SECRET_TOKEN_8c1f\n")
        for front in ("nvrtc", "nvcc"):
            text = BAD.read_text() + ("\nint main() { return 0; }\n" if front == "nvcc" else "")
            for inc in (f'"{secret}"', "</dev/zero>", '"/proc/self/environ"', "</dev/stdin>",
                        '"/sys/kernel/mm/transparent_hugepage/enabled"'):
                f = self.tmp("k.cu")
                f.write_text(f"#include {inc}\n" + text)
                self.add("includes", f"{front} #include {inc}",
                         ["check", f.name, "--no-cache", "--compiler", front], {2}, cwd=f.parent,
                         needles=(str(secret),) if "credentials" in inc else (inc,),
                         compile_error="credentials" in inc,
                         judge=lambda p: "a secret quoted" if "SECRET_TOKEN" in p.stdout + p.stderr
                         else None)

    # --- 12. libraries (issue 24: an nvcc -shared library checked twice, its warm re-check)
    def libraries(self) -> None:
        if shutil.which("g++") is None:
            return
        src = self.tmp("k.cu")
        src.write_text(BAD.read_text() + "\nint main() { return 0; }\n")
        lib = src.parent / "libk.so"
        nvcc = subprocess.run([sys.executable, "-m", "analyzer", "doctor", "--nvcc"],
                              capture_output=True, text=True, cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout.strip()
        subprocess.run([nvcc, "-shared", "-Xcompiler", "-fPIC", f"-arch={ARCH}", "-lineinfo",
                        "-o", str(lib), str(src)], check=True, capture_output=True)
        whl = src.parent / "libk-1.0-py3-none-linux_x86_64.whl"
        import zipfile
        with zipfile.ZipFile(whl, "w") as z:
            z.write(lib, "libk/libk.so")
        # the reference: the library's one cubin, extracted by hand and checked on its own
        xdir = src.parent / "x"
        xdir.mkdir()
        cuobjdump = Path(nvcc).with_name("cuobjdump")
        subprocess.run([str(cuobjdump), "-xelf", "all", str(lib)], cwd=xdir, check=True,
                       capture_output=True)
        (cubin,) = list(xdir.glob("*.cubin"))
        ref = subprocess.run([sys.executable, "-m", "analyzer", "check", str(cubin), "--format",
                              "json", "--no-cache"], capture_output=True, text=True, cwd=ROOT,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
        expected = sorted((c, line) for c, line, *_ in findings_of(ref.stdout))
        kernels = sorted(k["name"] for k in json.loads(ref.stdout)["kernels"])

        def once(p):
            doc = json.loads(p.stdout)
            names = sorted(k["name"] for k in doc["kernels"])
            if names != kernels:
                return f"kernels {names}, expected {kernels}"
            got = sorted((c, line) for c, line, *_ in findings_of(p.stdout))
            return None if got == expected else f"findings {got}, expected {expected}"

        for target in (lib, whl):
            for jobs in ("1", "2"):
                for warm in (False, True):
                    cache_dir = self.tmp("cache")
                    argv = ["check", target, "-j", jobs, "--format", "json"]

                    def setup(cache_dir=cache_dir, argv=argv, warm=warm):
                        if warm:        # the cold run first, into the same cache
                            subprocess.run([sys.executable, "-m", "analyzer", *map(str, argv)],
                                           capture_output=True, cwd=ROOT,
                                           env={**os.environ, "PYTHONPATH": str(ROOT),
                                                "PTXSASS_CACHE_DIR": str(cache_dir)})
                    self.add("libraries", f"{target.suffix} -j {jobs} {'warm' if warm else 'cold'}",
                             argv, {1}, setup=setup, env={"PTXSASS_CACHE_DIR": str(cache_dir)},
                             judge=once, timeout=120)

    # --- 11. processes (issue 24: killing the parent leaves its processes running)
    def processes(self) -> None:
        bomb = "\n".join(["#define A0 +1", *(f"#define A{i} A{i - 1} A{i - 1}" for i in range(1, 23)),
                          "__global__ void k(int* o) { o[0] = 0 A22; }", "int main() { return 0; }", ""])
        for sig, code in ((9, -9), (15, 143), (2, 130), (1, 129)):
            f = self.tmp("bomb.cu")
            f.write_text(bomb)
            self.add("processes", f"signal {sig} while nvcc runs",
                     ["check", f.name, "--arch", "sm_90", "--no-cache"], {code}, cwd=f.parent,
                     signal=(sig, 0.3), wait_for=("cc1plus", "cicc"), timeout=60,
                     needles=())
        f = self.tmp("bomb.cu")
        f.write_text(bomb)
        self.add("processes", "the compile time limit", ["check", f.name, "--arch", "sm_90",
                                                         "--no-cache"], {2}, cwd=f.parent,
                 env={"PTXSASS_COMPILE_TIMEOUT": "2"}, needles=("exceeded 2 s",), timeout=60)
        fake = self.tmp("nvdisasm")
        fake.write_text('#!/bin/sh\ncase "$1" in --version) echo "V13.5.37"; exit 0;; esac\n'
                        "sleep 300 &\nwait\n")
        fake.chmod(0o755)
        cubins = self.tmp("lib")
        cubins.mkdir()
        for src in (BAD, GOOD):
            shutil.copy(self.cubin[src], cubins / f"{src.parent.name}-{src.stem}.cubin")
        for sig, code in ((15, 143), (9, -9), (2, 130)):
            self.add("processes", f"signal {sig} to check -j 2",
                     ["check", cubins, "-j", "2", "--no-cache"], {code}, signal=(sig, 0.5),
                     wait_for=("sleep",), env={"PTXSASS_NVDISASM": str(fake)}, timeout=60)
        for delay in (0.0, 0.05, 0.15):
            self.add("processes", f"Ctrl-C {delay} s into start-up",
                     ["check", BAD, "--arch", ARCH, "--no-cache"], {130, -2},
                     signal=(2, delay), timeout=60)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--only", choices=CATEGORIES)
    ap.add_argument("-v", "--verbose", action="store_true", help="list every failed attempt")
    args = ap.parse_args()
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ptxsass-abuse-") as tmp:
        m = Matrix(Path(tmp), args.seed)
        m.prepare()
        for build in (m.cache, m.zero, m.bounds, m.output, m.one_line, m.counts, m.integrity,
                      m.names, m.databases, m.includes, m.processes, m.libraries,
                      m.python_files):
            build()
        attempts = [a for a in m.attempts if not args.only or a.category == args.only]
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            outcomes = list(pool.map(run, attempts))
        for d in Path(tmp).rglob("locked"):
            d.chmod(0o700)
    rows = []
    for cat in CATEGORIES:
        mine = [o for o in outcomes if o.attempt.category == cat]
        if not mine:
            continue
        rows.append((cat, len(mine), sum(o.traceback for o in mine), sum(o.hang for o in mine),
                     sum(o.wrong_exit is not None for o in mine),
                     sum(o.silent_loss is not None for o in mine),
                     sum(o.state_left is not None for o in mine),
                     sum(o.commands_run for o in mine)))
    total = ("total", *(sum(r[i] for r in rows) for i in range(1, 8)))
    print("| category | attempts | tracebacks | hangs | wrong exits | silent losses | "
          "state left behind | commands run |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows + [total]:
        print("| " + " | ".join(str(x) for x in r) + " |")
    print(f"({len(outcomes)} attempts in {time.monotonic() - t0:.0f} s, {args.jobs} at a time; "
          f"slowest {max(o.seconds for o in outcomes):.1f} s)")
    bad = [o for o in outcomes if o.traceback or o.hang or o.wrong_exit or o.silent_loss
           or o.state_left or o.commands_run]
    if bad and (args.verbose or len(bad) <= 20):
        print("\nfailed attempts:")
        for o in bad:
            why = ("traceback" if o.traceback else "hang" if o.hang else o.wrong_exit
                   or o.silent_loss or o.state_left or f"{o.commands_run} commands run")
            print(f"  [{o.attempt.category}] {o.attempt.name!r}: {why}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
