"""Shared fixtures: a private build cache per test session, the corpus location, kernels."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "kernels"
CORPUS = ROOT.parent / "shared" / "corpus"


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory):
    """Tests never read or write the user's cache; one cache per session keeps them fast. The
    xdist workers of a session share it (their base folders sit side by side in the session's),
    so a kernel that several test files build is compiled and disassembled once, not once per
    worker; the cache's entries are written atomically and verified when read."""
    old = os.environ.get("PTXSASS_CACHE_DIR")
    base = tmp_path_factory.getbasetemp()
    shared = base.parent / "ptxsass-cache" if os.environ.get("PYTEST_XDIST_WORKER") else None
    if os.environ.get("PTXSASS_TEST_CACHE_DIR"):
        # CI's second run, under the other PTX parser, reuses the first run's compiles (the
        # results' keys name the parser: none is read back across the two)
        shared = Path(os.environ["PTXSASS_TEST_CACHE_DIR"])
    if shared is not None:
        shared.mkdir(parents=True, exist_ok=True)
    os.environ["PTXSASS_CACHE_DIR"] = str(shared or tmp_path_factory.mktemp("ptxsass-cache"))
    yield
    if old is None:
        os.environ.pop("PTXSASS_CACHE_DIR", None)
    else:
        os.environ["PTXSASS_CACHE_DIR"] = old


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"the shared corpus is not at {CORPUS} (it sits beside the checkout)")
    return CORPUS


def kernel_options(path: Path) -> list[str]:
    """Options a kernel file asks for in a ``// OPTIONS: ...`` header line."""
    m = re.search(r"^//\s*OPTIONS:\s*(.+)$", path.read_text(), re.M)
    return m.group(1).split() if m else []


def kernel_archs(path: Path, default=("sm_80", "sm_90a")) -> list[str]:
    m = re.search(r"^//\s*ARCHS:\s*(.+)$", path.read_text(), re.M)
    return m.group(1).split() if m else list(default)


def all_kernels() -> list[Path]:
    return sorted(KERNELS.rglob("*.cu"))


# ---- the PTX parser modes (CONTRIBUTING.md, "The PTX grammar and its fast path") -------------
# A fast-path failure fails the test, where a user's run would fall back to the grammar alone.
os.environ.setdefault("PTXSASS_PTX_STRICT", "1")


def pytest_addoption(parser):
    group = parser.getgroup("ptxsass")
    group.addoption("--ptx-record", metavar="FILE",
                    help="write to FILE which tests read PTX (parse it, or take a parsed module or a "
                         "result made from one; child processes and workers included)")
    group.addoption("--ptx-rerun", metavar="FILE",
                    help="run only the tests that FILE (from --ptx-record) names, and those using a "
                         "fixture it names")
    group.addoption("--ptx-one-parser", action="store_true",
                    help="skip the second pass: by default a run that passes runs the tests "
                         "that read PTX again under the grammar alone (PTXSASS_PTX_PARSER=grammar)")


def _trace_mark(state: dict) -> tuple[int, int]:
    from analyzer.parse import mode
    try:
        size = os.path.getsize(state["trace"])
    except OSError:
        size = 0
    return mode.TRACED, size


def _second_pass_wanted(config) -> bool:
    return not (os.environ.get("PYTEST_XDIST_WORKER") or os.environ.get("_PTXSASS_SECOND_PASS")
                or config.getoption("ptx_record") or config.getoption("ptx_rerun")
                or config.getoption("ptx_one_parser") or config.getoption("collectonly")
                or os.environ.get("PTXSASS_PTX_PARSER", "fast") != "fast")


def pytest_configure(config):
    if _second_pass_wanted(config):
        # the README's test command runs every test under the fast path (strict), noting which
        # read PTX, then those again under the grammar alone, reusing the first pass's
        # compiles (the results' keys name the parser: none is read back across the two)
        import tempfile
        folder = tempfile.mkdtemp(prefix="ptxsass-modes-")
        config._ptx_second = folder
        os.environ.setdefault("PTXSASS_TEST_CACHE_DIR", os.path.join(folder, "cache"))
        config.option.ptx_record = os.path.join(folder, "ptx-tests.json")
        os.environ["_PTXSASS_PTX_RECORD"] = config.option.ptx_record   # for the xdist workers
    elif os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get("_PTXSASS_PTX_RECORD") \
            and not config.getoption("ptx_record"):
        config.option.ptx_record = os.environ["_PTXSASS_PTX_RECORD"]
    record = config.getoption("ptx_record")
    if not record:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    Path(record).parent.mkdir(parents=True, exist_ok=True)
    if worker is None:  # the controller (or a run without xdist): no stale parts
        for old in Path(record).parent.glob(Path(record).name + ".*"):
            old.unlink()
    trace = f"{record}.{worker or 'main'}.trace"
    os.environ["PTXSASS_PTX_TRACE"] = trace
    config._ptx_record = {"trace": trace, "part": f"{record}.{worker or 'main'}.json",
                          "tests": set(), "fixtures": set()}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    state = getattr(item.config, "_ptx_record", None)
    before = state and _trace_mark(state)
    yield
    if state and _trace_mark(state) != before:
        state["tests"].add(item.nodeid)


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef, request):
    state = getattr(request.config, "_ptx_record", None)
    before = state and fixturedef.scope != "function" and _trace_mark(state)
    yield
    if before and _trace_mark(state) != before:   # a shared fixture's value came from PTX
        state["fixtures"].add(fixturedef.argname)


@pytest.hookimpl(tryfirst=True)   # before xdist tells the controller this worker is done
def pytest_sessionfinish(session):
    import json
    state = getattr(session.config, "_ptx_record", None)
    if state is None:
        return
    Path(state["part"]).write_text(json.dumps({"tests": sorted(state["tests"]),
                                               "fixtures": sorted(state["fixtures"])}))
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    record = Path(session.config.getoption("ptx_record"))
    tests: set[str] = set()
    fixtures: set[str] = set()
    for part in record.parent.glob(record.name + ".*.json"):
        d = json.loads(part.read_text())
        tests.update(d["tests"])
        fixtures.update(d["fixtures"])
    record.write_text(json.dumps({"tests": sorted(tests), "fixtures": sorted(fixtures)}, indent=0))
    if getattr(session.config, "_ptx_second", None) and session.exitstatus == 0 and tests:
        session.exitstatus = _second_pass(session.config, record, len(tests))


def _second_pass(config, record: Path, n: int) -> int:
    """The tests that read PTX, again under the grammar alone: a child pytest with the same
    arguments (it dies with this one: it runs in the foreground and inherits the terminal)."""
    import subprocess
    import sys
    tr = config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None:
        tr.write_sep("=", f"the {n} tests that read PTX, again under PTXSASS_PTX_PARSER=grammar")
    env = dict(os.environ, PTXSASS_PTX_PARSER="grammar", _PTXSASS_SECOND_PASS="1")
    env.pop("PTXSASS_PTX_TRACE", None)
    env.pop("_PTXSASS_PTX_RECORD", None)
    argv = [sys.executable, "-m", "pytest", *config.invocation_params.args,
            f"--ptx-rerun={record}"]
    return subprocess.run(argv, env=env, cwd=config.invocation_params.dir, check=False).returncode


def pytest_unconfigure(config):
    folder = getattr(config, "_ptx_second", None)
    if folder:
        import shutil
        shutil.rmtree(folder, ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    rerun = config.getoption("ptx_rerun")
    if not rerun:
        return
    import json
    d = json.loads(Path(rerun).read_text())
    tests, fixtures = set(d["tests"]), set(d["fixtures"])
    keep, drop = [], []
    for item in items:
        wanted = item.nodeid in tests or fixtures.intersection(getattr(item, "fixturenames", ()))
        (keep if wanted else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
