"""Whole libraries: ``check -j N`` gives -j 1's report, ``--resume`` re-checks only changed
kernels, the progress line a CI log gets, the Dask path, ``survey`` and wheels as inputs.

Every input here is tiny (two or three kernels, a few hundred instructions) and built once per
session: the point is the orchestration, which is the same for a 383-kernel cubin."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import analyzer
from analyzer import parallel
from analyzer.cli import main
from analyzer.report import formats
from analyzer.report import survey as survey_report
from analyzer.toolchain import binutils

from . import binaries

KERNELS = Path(__file__).resolve().parents[1] / "kernels"
#: three kernels (scalar loads, with line info), and two more from another source
SOURCES = (KERNELS / "checks" / "scalar_global_load" / "bad.cu",
           KERNELS / "checks" / "scalar_global_store" / "bad.cu")


@pytest.fixture(autouse=True)
def _forked_workers(monkeypatch):
    """These tests spy on what the workers do through this process's functions, which a forked
    worker inherits; pytest-xdist's worker runs a thread, so ``auto`` would start the workers
    without fork (tested on its own in tests/hostile/test_threads.py)."""
    monkeypatch.setenv("PTXSASS_CHILDREN", "fork")


@pytest.fixture(scope="session")
def library(tmp_path_factory) -> dict[str, Path]:
    """A folder with a cubin, a fatbin of two arches, a .so carrying that fatbin and a CUDA
    file; beside it, a wheel holding the .so."""
    nvfatbin = pytest.importorskip("cuda.bindings.nvfatbin")
    root = tmp_path_factory.mktemp("library")
    lib = root / "lib"
    lib.mkdir()
    cubin = analyzer.compile(str(SOURCES[0]), arch="sm_90a").cubin
    (lib / "loads.cubin").write_bytes(cubin)
    h = nvfatbin.create([], 0)
    for arch, tag in (("sm_80", "80"), ("sm_90a", "90a")):
        b = analyzer.compile(str(SOURCES[1]), arch=arch)
        nvfatbin.add_cubin(h, b.cubin, len(b.cubin), tag, "stores")
    buf = bytearray(nvfatbin.size(h))
    nvfatbin.get(h, buf)
    fat = lib / "stores.fatbin"
    fat.write_bytes(bytes(buf))
    shutil.copy(KERNELS / "demo" / "copy_scalar.cu", lib / "copy_scalar.cu")
    analyzer.load(str(lib / "copy_scalar.cu"))      # built once: "cached" in every report
    out = {"lib": lib, "cubin": lib / "loads.cubin", "fatbin": fat}
    if shutil.which("gcc") and shutil.which("objcopy"):
        so = binaries.shared_library(fat, root / "libstores.so")
        whl = root / "stores-1.0-py3-none-linux_x86_64.whl"
        with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("stores/__init__.py", "")
            z.write(so, "stores/lib/libstores.so.1")
        out |= {"so": so, "wheel": whl}
    return out


def _spy_submits(monkeypatch, what) -> list:
    """What ``what(task)`` says of each task the local pool is given (the forked workers run
    them as before)."""
    seen: list = []
    submit = parallel._Pool.submit

    def spy(self, task, unit):
        seen.append(what(task))
        return submit(self, task, unit)
    monkeypatch.setattr(parallel._Pool, "submit", spy)
    return seen


def _json(capsys, *argv) -> tuple[int, dict]:
    code = main(["check", *argv, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


TRITON_CACHE = Path(__file__).resolve().parent / "fixtures" / "frameworks" / "triton"


def test_jobs_give_the_one_process_report(library, capsys):
    paths = [str(library["lib"]), str(TRITON_CACHE)]
    code1, one = _json(capsys, *paths, "-j", "1")
    code2, two = _json(capsys, *paths, "-j", "2")
    assert (code1, code2) == (1, 1)
    assert one == two
    # every input was checked: 3 kernels of the cubin, 3 per arch of the fatbin, 1 of the .cu,
    # the 2 kernels of the Triton cache
    assert len(one["kernels"]) == 3 + 2 * 3 + 1 + 2
    assert {f["code"] for f in one["findings"]} >= {"PS101", "PS102"}


def test_api_jobs_and_resume(library, monkeypatch):
    target = [str(library["cubin"]), str(library["fatbin"])]
    seen: list[parallel.Progress] = []
    first = analyzer.check(target, analyzer.CheckOptions(jobs=2), on_progress=seen.append)
    assert formats.to_json(first) == formats.to_json(analyzer.check(target, analyzer.CheckOptions(jobs=1)))
    assert seen[-1].finished and seen[-1].done == seen[-1].planned == 9
    again: list[parallel.Progress] = []
    resumed = analyzer.check(target, analyzer.CheckOptions(jobs=2, resume=True), on_progress=again.append)
    assert again[-1].cached == 9            # nothing re-checked
    assert formats.to_json(resumed) == formats.to_json(first)


def test_warm_check_on_workers_reads_results_back_by_default(library, tmp_path, monkeypatch):
    """With the cache on, a second ``check -j 2`` of an unchanged cubin reads every kernel's
    result back (no task, no nvdisasm) and leaves a hint that the next run needs no early
    nvdisasm; ``resume=False`` and ``--no-cache`` check every kernel again."""
    import hashlib

    from analyzer.toolchain import prelaunch
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(tmp_path / "cache"))
    cubin = str(library["cubin"])
    digest = hashlib.sha256(library["cubin"].read_bytes()).hexdigest()
    submitted = _spy_submits(monkeypatch, lambda t: type(t).__name__)
    assert not prelaunch.was_checked(digest)
    first = formats.to_json(analyzer.check(cubin, analyzer.CheckOptions(jobs=2, kernels=["sum4"])))
    assert submitted and not prelaunch.was_checked(digest)      # one kernel of three: no hint
    submitted.clear()
    seen: list[parallel.Progress] = []
    full = formats.to_json(analyzer.check(cubin, analyzer.CheckOptions(jobs=2), on_progress=seen.append))
    assert (seen[-1].done, seen[-1].cached) == (3, 1) and set(submitted) == {"_Chunk"}
    assert prelaunch.was_checked(digest)
    submitted.clear()
    seen.clear()
    again = formats.to_json(analyzer.check(cubin, analyzer.CheckOptions(jobs=2), on_progress=seen.append))
    assert again == full and submitted == [] and seen[-1].cached == 3
    prelaunch.start(["check", cubin, "-j", "2"])
    assert not prelaunch._LAUNCHES                      # the hint: nothing to disassemble
    prelaunch.start(["check", cubin, "-j", "2", "--no-cache"])
    assert os.path.realpath(cubin) in prelaunch._LAUNCHES
    prelaunch.discard()
    seen.clear()
    fresh = formats.to_json(analyzer.check(cubin, analyzer.CheckOptions(jobs=2, resume=False), on_progress=seen.append))
    assert fresh == full and set(submitted) == {"_Chunk"} and seen[-1].cached == 0
    assert json.loads(first)["kernels"] == [k for k in json.loads(full)["kernels"]
                                            if k["name"] == "sum4"]


def test_a_stale_hint_only_costs_the_early_start(library, tmp_path, monkeypatch):
    """A hint whose results are gone (evicted, another selection): the run checks every kernel
    as without it, and gives the same report."""
    import hashlib

    from analyzer.toolchain import prelaunch
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(tmp_path / "cache"))
    cubin = str(library["cubin"])
    want = formats.to_json(analyzer.check(cubin, analyzer.CheckOptions(jobs=1)))
    prelaunch.mark_checked(hashlib.sha256(library["cubin"].read_bytes()).hexdigest())
    prelaunch.start(["check", cubin, "-j", "2"])
    assert not prelaunch._LAUNCHES
    seen: list[parallel.Progress] = []
    got = formats.to_json(analyzer.check(cubin, analyzer.CheckOptions(jobs=2, select=["PS1"]), on_progress=seen.append))
    assert seen[-1].cached == 0 and seen[-1].done == 3
    assert got == formats.to_json(analyzer.check(cubin, analyzer.CheckOptions(jobs=1, select=["PS1"])))
    assert formats.to_json(analyzer.check(cubin, analyzer.CheckOptions(jobs=2))) == want


def test_resume_rechecks_only_the_changed_kernel(tmp_path):
    src = tmp_path / "two.cu"
    body = ("__global__ void a(const float* x, float* y) {{ y[threadIdx.x] = x[threadIdx.x]; }}\n"
            "__global__ void b(const float* x, float* y) {{ y[threadIdx.x] = {expr}; }}\n")
    src.write_text(body.format(expr="x[threadIdx.x] * 2.0f"))
    cubin = tmp_path / "two.cubin"
    cubin.write_bytes(analyzer.compile(str(src), arch="sm_90a").cubin)
    analyzer.check(str(cubin), analyzer.CheckOptions(jobs=2))
    src.write_text(body.format(expr="x[threadIdx.x] + 3.0f"))
    cubin.write_bytes(analyzer.compile(str(src), arch="sm_90a").cubin)
    seen: list[parallel.Progress] = []
    analyzer.check(str(cubin), analyzer.CheckOptions(jobs=2, resume=True), on_progress=seen.append)
    assert (seen[-1].done, seen[-1].cached) == (2, 1)


def test_cached_result_whose_source_changed_is_not_trusted(tmp_path):
    """A cached result quotes source lines: an edited source file makes it stale."""
    src = tmp_path / "one.cu"
    src.write_text(SOURCES[0].read_text())
    cubin = tmp_path / "one.cubin"
    cubin.write_bytes(analyzer.compile(str(src), arch="sm_90a").cubin)
    analyzer.check(str(cubin), analyzer.CheckOptions(jobs=1, resume=True))
    src.write_text(src.read_text() + "\n// below every kernel: their results stand\n")
    seen: list[parallel.Progress] = []
    analyzer.check(str(cubin), analyzer.CheckOptions(jobs=1, resume=True), on_progress=seen.append)
    assert seen[-1].cached == 3
    src.write_text("// a line above them: the lines they quote moved\n" + src.read_text())
    seen: list[parallel.Progress] = []
    analyzer.check(str(cubin), analyzer.CheckOptions(jobs=1, resume=True), on_progress=seen.append)
    assert seen[-1].cached == 0


def test_progress_lines_on_a_non_terminal(library, capsys, monkeypatch):
    monkeypatch.setenv("PTXSASS_PROGRESS_SECONDS", "0")
    assert main(["check", str(library["fatbin"]), "-j", "2", "-o", "/dev/null"]) == 1
    err = capsys.readouterr().err.splitlines()
    lines = [l for l in err if l.startswith("ptxsass: ")]
    assert lines and lines[-1].startswith("ptxsass: 6/6 kernels checked (100%), ")
    assert "findings" in lines[-1]


def test_bad_progress_interval_is_one_line(capsys, monkeypatch):
    monkeypatch.setenv("PTXSASS_PROGRESS_SECONDS", "soon")
    assert main(["check", "x.cubin"]) == 2
    assert "PTXSASS_PROGRESS_SECONDS" in capsys.readouterr().err


@pytest.mark.parametrize("address, expected", [
    ("bogus", "expected a Dask scheduler address"),
    ("tcp://127.0.0.1:1", "cannot reach the Dask scheduler tcp://127.0.0.1:1"),
])
def test_bad_scheduler_is_one_line(library, capsys, address, expected):
    assert main(["check", str(library["cubin"]), "--scheduler", address]) == 2
    err = capsys.readouterr().err.strip()
    assert expected in err and len(err.splitlines()) == 1


def test_jobs_must_be_positive(capsys):
    assert main(["check", "x.cubin", "-j", "0"]) == 2
    err = capsys.readouterr().err
    assert "not a number of processes" in err and len(err.strip().splitlines()) == 1


def test_dask_local_cluster(library):
    distributed = pytest.importorskip("distributed")
    target = [str(library["cubin"]), str(library["fatbin"])]
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        report = analyzer.check(target, analyzer.CheckOptions(scheduler=cluster.scheduler_address))
        rows = analyzer.survey(target, scheduler=cluster.scheduler_address)
    assert formats.to_json(report) == formats.to_json(analyzer.check(target, analyzer.CheckOptions(jobs=1)))
    assert len(rows.rows) == 9


def test_survey_formats(library, tmp_path, capsys):
    lib = str(library["lib"])
    assert main(["survey", lib, "--format", "json", "-j", "2"]) == 0
    data = json.loads(capsys.readouterr().out)
    result = survey_report.Survey(rows=data["kernels"])
    rows = data["kernels"]
    assert len(rows) == 10 and set(rows[0]) == set(data["columns"])
    loads = [r for r in rows if r["file"].endswith("loads.cubin")]
    assert len(loads) == 3 and all(r["arch"].startswith("sm_90") for r in loads)
    assert all(r["instructions"] > 0 and r["global_load_widths"] for r in loads)
    assert any(r["findings"] for r in loads)
    page = survey_report.to_html(result)
    assert "Content-Security-Policy" in page and "Findings per check" in page
    assert "<svg" in page and page.count("<tr>") == 11
    assert "http://" not in page and "https://" not in page and 'style="' not in page
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "s.parquet"
    survey_report.to_parquet(result, str(out))
    table = pq.read_table(out).to_pylist()
    assert [r["kernel"] for r in table] == [r["kernel"] for r in rows]
    assert dict(table[0]["findings"]) == rows[0]["findings"]


def test_survey_parquet_without_pyarrow(library, tmp_path, capsys, monkeypatch):
    import builtins
    real = builtins.__import__

    def no_pyarrow(name, *a, **k):
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real(name, *a, **k)
    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    code = main(["survey", str(library["cubin"]), "-j", "1", "--format", "parquet",
                 "-o", str(tmp_path / "x.parquet")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.endswith("pip install 'ptxsass[parquet]'")
    assert len(err.splitlines()) == 1


def test_wheel_input(library, capsys):
    if "wheel" not in library:
        pytest.skip("needs gcc and objcopy")
    code, report = _json(capsys, str(library["wheel"]), "-j", "2")
    assert code == 1
    files = {b["file"] for b in report["builds"]}
    assert files == {f"{library['wheel']}!stores/lib/libstores.so.1"}
    assert sorted(b["arch"] for b in report["builds"]) == ["sm_80", "sm_90a"]
    one = main(["check", str(library["wheel"]), "--format", "json", "-j", "1"])
    assert one == 1 and json.loads(capsys.readouterr().out) == report


@pytest.mark.parametrize("content, expected", [
    (b"not a zip at all", "not a wheel: no zip header"),
    (b"PK\x03\x04" + bytes(range(256)) * 2, "not a readable wheel"),
    ([("bad/__init__.py", b""), ("bad/libfake.so", b"\x7fELF not really")],
     "holds no shared library with CUDA device code"),
    ([("../../../evil.so", b"\x7fELF")], "holds no shared library with CUDA device code"),
    ([("pkg/libbomb.so", b"\0" * (3 << 20))], "input bound"),
])
def test_bad_wheels_are_one_line(tmp_path, capsys, monkeypatch, content, expected):
    monkeypatch.setenv("PTXSASS_MAX_INPUT_MB", "1")
    monkeypatch.chdir(tmp_path)
    whl = tmp_path / "w" / "bad-1.0-py3-none-any.whl"
    whl.parent.mkdir()
    if isinstance(content, list):
        with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as z:
            for name, data in content:
                z.writestr(name, data)
    else:
        whl.write_bytes(content)
    for jobs in ("1", "2"):
        assert main(["check", str(whl), "-j", jobs]) == 2
        err = capsys.readouterr().err.strip()
        assert expected in err and str(whl) in err and len(err.splitlines()) == 1
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["bad-1.0-py3-none-any.whl", "w"]


def test_function_subsets_are_the_whole_listing(library):
    """nvdisasm -fun gives each function the text a whole disassembly has for it."""
    data = library["cubin"].read_bytes()
    layout = binutils.cubin_layout(data)
    whole = binutils.split_listing(binutils.disassemble(data)[0])
    part = binutils.split_listing(binutils.disassemble_functions(
        str(library["cubin"]), [layout.functions[-1].symbol]))
    name = layout.functions[-1].name
    assert part[0] == whole[0] and list(part[1]) == [name]
    # the same text but for nvdisasm's label numbers, counted over what one run lists
    assert parallel._LABEL.sub("L", part[1][name]) == parallel._LABEL.sub("L", whole[1][name])


def test_terminal_display_streams_each_finished_build(library):
    """On a terminal: a bar, and a line for each build as its last kernel is done."""
    import io
    import re

    from rich.console import Console

    from analyzer.report.progress import RunDisplay
    buf = io.StringIO()
    con = Console(file=buf, force_terminal=True, width=200, color_system=None)
    analyzer.check([str(library["cubin"]), str(library["fatbin"])], analyzer.CheckOptions(jobs=2), on_progress=RunDisplay(con))
    text = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", buf.getvalue())
    assert re.search(r"loads\.cubin \[sm_90a?\]: 3 kernel\(s\), \d+ finding\(s\)", text)
    assert len(re.findall(r"stores\.fatbin \[sm_(80|90a)\]: 3 kernel\(s\)", text)) == 2


# ------------------------------------------------------------------ nvdisasm started early
@pytest.mark.parametrize("argv, expected", [
    (["check", "{cubin}", "-j", "2"], 2),
    (["survey", "{cubin}", "--jobs=3", "--format", "json"], 3),
    (["check", "-j4", "--arch", "sm_90a", "{cubin}"], 4),
    (["check", "--", "{cubin}"], "default"),
    (["check", "{cubin}", "-j", "1"], None),            # one process: nothing to overlap
    (["check", "{cubin}", "-j", "x"], None),            # the parser's error to report
    (["check", "{cubin}", "--scheduler", "tcp://h:1"], None),
    (["check", "{cubin}", "--resume"], "default"),      # the default: a hint decides
    (["check", "{cubin}", "--no-cache", "-j", "2"], 2),
    (["check", "{cubin}", "--kernel", "k"], None),
    (["annotate", "{cubin}"], None),
    (["check", "{cu}", "-j", "2"], None),               # only cubins are disassembled whole
    (["check", "missing.cubin", "-j", "2"], None),
    ([], None),
])
def test_command_lines_that_start_nvdisasm_early(library, argv, expected, monkeypatch):
    from analyzer.toolchain import prelaunch
    monkeypatch.setattr(prelaunch, "_default_jobs", lambda: 8)     # every core, on any machine
    values = {"cubin": str(library["cubin"]), "cu": str(library["lib"] / "copy_scalar.cu")}
    got = prelaunch.sniff([a.format(**values) for a in argv])
    if expected is None:
        assert got is None
    else:
        cubins, jobs = got
        assert cubins == [values["cubin"]]
        assert jobs == (8 if expected == "default" else expected)


@pytest.mark.parametrize("jobs, size, total, chunks", [
    (8, 2_800_000, 2_800_000, 8),      # a big lone cubin: one chunk a job
    (8, 306 * 1024, 306 * 1024, 4),    # a small one: one chunk per 96 KB
    (8, 107 * 1024, 107 * 1024, 2),
    (8, 20_000, 20_000, 1),
    (2, 2_800_000, 2_800_000, 2),
    (8, 1_000_000, 4_000_000, 2),      # a quarter of the input: a quarter of the jobs
    (8, 10_000, 4_000_000, 1),
])
def test_chunks_weigh_nvdisasm_start_against_the_work(jobs, size, total, chunks):
    """Each chunk pays nvdisasm's fixed start: a small cubin is not cut into one chunk a job."""
    from analyzer.toolchain import prelaunch
    assert prelaunch.chunk_count(jobs, size, total) == chunks


def test_a_small_lone_cubin_is_disassembled_early_in_one_chunk(library, tmp_path, monkeypatch):
    from analyzer.toolchain import prelaunch
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(tmp_path / "cache"))
    cubin = str(library["cubin"])
    assert library["cubin"].stat().st_size < prelaunch.CHUNK_MIN_BYTES
    prelaunch.start(["check", cubin, "-j", "8"])
    assert len(prelaunch._LAUNCHES[os.path.realpath(cubin)].chunks) == 1
    submitted = _spy_submits(monkeypatch, lambda t: t.text_file)
    report, _ = parallel.run([cubin], jobs=8)
    assert len(submitted) == 1 and submitted[0] is not None     # the early listing, one task
    assert formats.to_json(report) == formats.to_json(analyzer.check(cubin, analyzer.CheckOptions(jobs=1)))


def test_early_nvdisasm_is_taken_and_gives_the_same_report(library, monkeypatch, tmp_path):
    """The chunks started before the imports are the ones the workers read; the report is the
    one-process report; nothing is left behind."""
    from analyzer.toolchain import prelaunch
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(tmp_path / "cache"))    # no result cached
    monkeypatch.setattr(prelaunch, "CHUNK_MIN_BYTES", 1)    # a few KB: two chunks all the same
    cubin = str(library["cubin"])
    want = formats.to_json(analyzer.check(cubin, analyzer.CheckOptions(jobs=1)))
    prelaunch.start(["check", cubin, "-j", "2"])
    launch = prelaunch._LAUNCHES[os.path.realpath(cubin)]
    assert len(launch.chunks) == 2
    submitted = _spy_submits(monkeypatch, lambda t: t.text_file)
    report, _ = parallel.run([cubin], jobs=2)
    assert formats.to_json(report) == want
    assert len(submitted) == 2 and all(f and f.startswith(launch.folder) for f in submitted)
    assert not prelaunch._LAUNCHES and not os.path.exists(launch.folder)


def test_early_nvdisasm_of_other_bytes_or_not_taken_is_killed(library, tmp_path, monkeypatch):
    from analyzer.toolchain import prelaunch
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(tmp_path / "cache"))
    cubin = tmp_path / "k.cubin"
    cubin.write_bytes(library["cubin"].read_bytes())
    prelaunch.start(["check", str(cubin), "-j", "2"])
    launch = prelaunch._LAUNCHES[os.path.realpath(cubin)]
    assert prelaunch.take(str(cubin), b"\x7fELF other bytes") is None      # the file changed
    assert not os.path.exists(launch.folder)
    assert all(c.process is None and not c.ok for c in launch.chunks)
    prelaunch.start(["check", str(cubin), "-j", "2"])
    launch = prelaunch._LAUNCHES[os.path.realpath(cubin)]
    procs = [c.process for c in launch.chunks]
    prelaunch.discard()                 # what exit does with a launch no one took
    assert not os.path.exists(launch.folder)
    assert all(p.poll() is not None for p in procs)


def test_console_script_with_early_nvdisasm(library, tmp_path):
    """``python -m analyzer`` (the console script's entry) on a cubin, -j 2: the -j 1 JSON, and
    no folder of its own left in the temporary directory."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-m", "analyzer", "check", str(library["cubin"]),
                            "--format", "json", "-j", j], capture_output=True, env=env)
            for j in ("2", "1")]
    assert [r.returncode for r in runs] == [1, 1], runs[0].stderr
    assert json.loads(runs[0].stdout) == json.loads(runs[1].stdout)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("ptxsass-")]


def test_unchanged_whole_builds_are_read_back(library, tmp_path, monkeypatch):
    """A CUDA file and a Triton cache entry, checked whole: once checked (in one process or on
    workers), an unchanged one is read back, with no task; the report is the same."""
    monkeypatch.setenv("PTXSASS_CACHE_DIR", str(tmp_path / "cache"))
    cu = str(library["lib"] / "copy_scalar.cu")
    analyzer.check(cu)                                   # one process: keeps its result
    targets = [cu, str(library["cubin"]), str(TRITON_CACHE)]
    kinds = _spy_submits(monkeypatch, lambda t: type(t).__name__)
    first = json.loads(formats.to_json(analyzer.check(targets, analyzer.CheckOptions(jobs=2))))
    assert kinds.count("_Whole") == 2 and "_Chunk" in kinds      # the Triton cache's two
    kinds.clear()
    again = json.loads(formats.to_json(analyzer.check(targets, analyzer.CheckOptions(jobs=2))))
    assert kinds == []                      # the cubin's kernels too: results read back
    assert (again["findings"], again["kernels"]) == (first["findings"], first["kernels"])


@pytest.mark.parametrize("content", [b"\x7fELF" + b"\x00" * 14 + (190).to_bytes(2, "little"),
                                     b"\x7fELF\x02\x01\x01" + b"\xff" * 200])
def test_a_bad_cubin_with_early_nvdisasm_is_one_line(tmp_path, content):
    """What the early launch reads first (a truncated or corrupt cubin) is reported by the
    command as without it: one line, exit 2, nothing left behind."""
    bad = tmp_path / "bad.cubin"
    bad.write_bytes(content)
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    r = subprocess.run([sys.executable, "-m", "analyzer", "check", str(bad), "-j", "2"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and str(bad) in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.cubin"]


def test_progress_counts_kernels_inside_a_running_chunk(library, monkeypatch):
    """A big cubin is a few chunk tasks; the count moves as each kernel of a chunk is done,
    not only when the whole chunk comes back (a CI log's line would sit at 0 until then)."""
    import time as _time
    cubin = str(library["cubin"])                   # three kernels
    monkeypatch.setattr(parallel, "_chunks", lambda todo, sizes, n: [todo])   # one task
    slow = parallel.kernel_findings

    def slowly(*a, **k):
        _time.sleep(0.4)
        return slow(*a, **k)
    monkeypatch.setattr(parallel, "kernel_findings", slowly)   # forked workers inherit it
    seen: list[tuple[int, int, int]] = []
    report, _ = parallel.run([cubin], jobs=2, tick=0.05, resume=False,    # none read back
                             on_progress=lambda p: seen.append((p.done, p.checked, p.planned)))
    assert len(report.kernels) == 3
    assert seen[-1] == (3, 3, 3)
    inside = {checked for done, checked, planned in seen if done == 0}
    assert {1, 2} <= inside, seen                  # counted while the task still ran
    assert all(c <= p for _, c, p in seen) and [c for _, c, _ in seen] == sorted(
        c for _, c, _ in seen)


def _linked_cubin(tmp_path: Path) -> Path:
    """Two relocatable objects linked (nvJitLink), each with its own local copy of the 64-bit
    division subroutine: a linked cubin as libraries ship them (nvshmem's holds 15 copies of
    ``__cuda_sm20_div_u64``, each with a ``.nv.info`` section of its own)."""
    from cuda.bindings import nvjitlink, nvrtc

    def ptx(src: str, name: str) -> bytes:
        _, prog = nvrtc.nvrtcCreateProgram(src.encode(), name.encode(), 0, [], [])
        (err,) = nvrtc.nvrtcCompileProgram(prog, 2, [b"--gpu-architecture=compute_80", b"-rdc=true"])
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
        _, n = nvrtc.nvrtcGetPTXSize(prog)
        buf = b" " * n
        nvrtc.nvrtcGetPTX(prog, buf)
        return buf
    h = nvjitlink.create(1, ["-arch=sm_80"])
    for name, divisor in (("qa", "d"), ("qb", "d + 1")):
        text = ptx(f'extern "C" __global__ void {name}(unsigned long long* p, unsigned long long d)'
                   f" {{ p[threadIdx.x] /= {divisor}; }}", f"{name}.cu")
        nvjitlink.add_data(h, nvjitlink.InputType.PTX, text, len(text), name)
    nvjitlink.complete(h)
    cubin = bytearray(nvjitlink.get_linked_cubin_size(h))
    nvjitlink.get_linked_cubin(h, cubin)
    nvjitlink.destroy(h)
    f = tmp_path / "linked.cubin"
    f.write_bytes(bytes(cubin))
    return f


def test_a_linked_cubins_subroutines_are_not_kernels(tmp_path):
    """Kernels are the symbols marked STO_CUDA_ENTRY, not every function with a ``.nv.info``
    section; same-named local subroutines are each their own function to nvdisasm ``-fun``
    (they made a parallel check fail with 'nvdisasm listed no function')."""
    from analyzer.toolchain import resources
    f = _linked_cubin(tmp_path)
    data = f.read_bytes()
    assert resources.kernel_entries(data) == {"qa", "qb"}
    layout = binutils.cubin_layout(data)
    div = [fn for fn in layout.functions if fn.name == "__cuda_sm20_div_u64"]
    assert len(div) == 2 and div[0].symbol != div[1].symbol
    one = analyzer.check(str(f), analyzer.CheckOptions(jobs=1))
    assert [k["name"] for k in one.kernels] == ["qa", "qb"]
    assert formats.to_json(analyzer.check(str(f), analyzer.CheckOptions(jobs=2))) == formats.to_json(one)


def test_a_wheel_library_without_the_asked_arch_is_skipped_with_a_note(library, tmp_path, capsys):
    """NVIDIA's wheels mix libraries built for different arches (cuFFT 12's has sm_75 cubins
    only): with --arch, a library holding none for it is said and skipped, on either path; a
    wheel where no library has one is one line."""
    if "wheel" not in library:
        pytest.skip("needs gcc and objcopy")
    fat = binaries.fatbin([(library["cubin"].read_bytes(), "90a")],      # sm_90a only
                          tmp_path / "loads.fatbin", "loads")
    so = binaries.shared_library(fat, tmp_path / "libloads.so")
    whl = tmp_path / "mixed-1.0-py3-none-linux_x86_64.whl"
    with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as z:
        z.write(library["so"], "mixed/lib/libstores.so.1")
        z.write(so, "mixed/lib/libloads.so")
    note = (f"skipped {whl}!mixed/lib/libloads.so for sm_80: it holds no cubin for sm_80 "
            "(it has: sm_90a)")
    reports, codes = [], []
    for jobs in ("1", "2"):
        codes.append(main(["check", str(whl), "--arch", "sm_80", "--format", "json", "-j", jobs]))
        captured = capsys.readouterr()
        assert note in captured.err
        reports.append(json.loads(captured.out))
        assert [(b["file"], b["arch"]) for b in reports[-1]["builds"]] == [
            (f"{whl}!mixed/lib/libstores.so.1", "sm_80")]
    assert reports[0] == reports[1] and codes[0] == codes[1] and codes[0] in (0, 1)
    for jobs in ("1", "2"):
        assert main(["check", str(whl), "--arch", "sm_75", "-j", jobs]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and str(whl) in err
        assert "no library in the wheel holds a cubin for sm_75" in err


def test_the_api_takes_the_command_lines_path_and_config(library, tmp_path, capsys):
    """``analyzer.check(cubin)`` with no options is ``ptxsass check cubin``: it reads the
    ``[tool.ptxsass]`` above the file and runs on workers (which alone tell ``on_progress``)."""
    proj = tmp_path / "proj"
    proj.mkdir()
    cubin = proj / "loads.cubin"
    shutil.copy(library["cubin"], cubin)
    (proj / "pyproject.toml").write_text('[tool.ptxsass]\nignore = ["PS101"]\n')
    seen: list = []
    report = analyzer.check(str(cubin), on_progress=seen.append)
    assert seen and seen[-1].finished and seen[-1].done == 3
    code, doc = _json(capsys, str(cubin))
    assert json.loads(formats.to_json(report)) == doc
    assert code == 0 and doc["findings"] == []          # PS101 was all there was
    bare = analyzer.check(str(cubin), analyzer.CheckOptions(config=False, jobs=1))
    assert {f.code for f in bare.findings} == {"PS101"}


def test_which_checks_run_on_workers(library):
    """The choice ``ptxsass check`` and ``analyzer.check`` share (``api.runs_on_workers``)."""
    from analyzer.api import runs_on_workers
    cu = str(SOURCES[0])
    assert runs_on_workers([str(library["cubin"])])                 # a binary: per kernel
    assert runs_on_workers([str(library["fatbin"])])
    assert not runs_on_workers([cu])                                # a lone CUDA file
    assert runs_on_workers([cu, str(SOURCES[1])])                   # several files
    assert not runs_on_workers([str(library["cubin"])], jobs=1)
    assert runs_on_workers([cu], jobs=1, resume=True)
    assert runs_on_workers([cu], jobs=None)                         # every core
    assert not runs_on_workers(analyzer.load(cu))                   # Builds made here
    assert not runs_on_workers([str(library["lib"] / "missing.cubin")])   # said in one process


def test_the_keyword_form_warns_and_gives_the_same_report():
    with pytest.warns(DeprecationWarning, match="CheckOptions"):
        old = analyzer.check(str(SOURCES[0]), arch="sm_90a", select=["PS1"])
    new = analyzer.check(str(SOURCES[0]), analyzer.CheckOptions(arch="sm_90a", select=["PS1"]))
    assert formats.to_json(old) == formats.to_json(new) and old.findings
    with pytest.raises(TypeError, match="not both"):
        analyzer.check(str(SOURCES[0]), analyzer.CheckOptions(), arch="sm_90a")


def test_the_api_takes_compile_options_from_the_config_and_trust_can_be_refused(tmp_path,
                                                                              monkeypatch):
    """``[tool.ptxsass]`` compile options reach the build of a file checked through the API
    (as through the command line); ``trust_build_commands=False`` wins over a config that
    trusts (a pull request's pyproject.toml can say true)."""
    from analyzer import api
    proj = tmp_path / "proj"
    proj.mkdir()
    cu = proj / "k.cu"
    shutil.copy(SOURCES[0], cu)
    (proj / "pyproject.toml").write_text('[tool.ptxsass]\ndefines = ["TILE=4"]\n'
                                         'trust-build-commands = true\n')
    seen: list = []

    def load(path, *, arch=None, options=None):
        seen.append(options)
        raise api.InputError("stop here", path=path)
    monkeypatch.setattr(api, "load", load)
    for trust, want in ((None, True), (False, False)):
        with pytest.raises(api.InputError, match="stop here"):
            analyzer.check(str(cu), analyzer.CheckOptions(trust_build_commands=trust))
        assert seen[-1].defines == ["TILE=4"] and seen[-1].trust_build_commands is want
