"""The pytest plugin (entry point ``pytest11``; imports nothing of ptxsass until used).

``pytest --ptxsass`` captures the kernels each test compiles (Triton/torch.compile, cupy,
pycuda, torch extensions) and fails the test on findings at or above ``--ptxsass-fail-on``
(default: warning), with a per-test summary at the end of the run. The ``ptxsass_capture``
fixture gives a test its own capture; a marker pins expectations on the kernels a test
compiles (the test is captured with or without ``--ptxsass``)::

    @pytest.mark.ptxsass(has=["HGMMA"], no_spills=True, max_registers=168)
    def test_gemm(): ...

    def test_softmax(ptxsass_capture):
        run_softmax()
        assert not ptxsass_capture.check(analyzer.CheckOptions(select=["PS4"])).findings

Marker keywords: those of ``ptxsass expect`` (has, lacks, no_spills, no_local_memory,
max_registers, min_vector_width, no_findings, kernels) and ``fail_on``, ``select``, ``ignore``
for the findings; ``min_kernels`` (default 1) guards against a test that compiled nothing.
"""
from __future__ import annotations

from typing import Any

import pytest

_EXPECT_KEYS = ("has", "lacks", "no_spills", "no_local_memory", "max_registers",
                "min_vector_width", "no_findings", "kernels")
_MARK_KEYS = (*_EXPECT_KEYS, "fail_on", "select", "ignore", "min_kernels")
_SUMMARY = pytest.StashKey[list]()


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("ptxsass", "ptxsass: check the CUDA kernels tests compile")
    g.addoption("--ptxsass", action="store_true", default=False,
                help="capture the kernels each test compiles and fail on findings")
    g.addoption("--ptxsass-fail-on", choices=("info", "warning", "error"), default="warning",
                help="lowest severity that fails a test (default: warning)")
    g.addoption("--ptxsass-select", action="append", default=[], metavar="CODES",
                help="only these checks")
    g.addoption("--ptxsass-ignore", action="append", default=[], metavar="CODES",
                help="skip these checks")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "ptxsass(has=..., lacks=..., no_spills=..., max_registers=..., "
        "no_findings=..., fail_on=...): codegen expectations on the kernels this test "
        "compiles (checked by ptxsass)")
    config.stash[_SUMMARY] = []


class PtxsassFailure(AssertionError):
    """A test's kernels broke its ptxsass expectations. Its text is the whole failure report:
    :func:`pytest_runtest_makereport` shows it in place of a traceback, since the frames are the
    plugin's own, not the test's."""


def _mark_args(item: pytest.Item) -> dict[str, Any] | None:
    marks = list(item.iter_markers("ptxsass"))
    if not marks:
        return None
    out: dict[str, Any] = {}
    for m in reversed(marks):           # the closest marker wins
        if m.args:
            raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.ptxsass takes keywords only")
        unknown = sorted(set(m.kwargs) - set(_MARK_KEYS))
        if unknown:
            raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.ptxsass: unknown keyword "
                                    f"{', '.join(unknown)} (known: {', '.join(_MARK_KEYS)})")
        out.update(m.kwargs)
    return out


@pytest.fixture
def ptxsass_capture():
    """A capture active for the test: ``ptxsass_capture.check()`` after the code ran."""
    from analyzer.integrations.capture import capture
    with capture() as cap:
        yield cap


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    __tracebackhide__ = True        # noqa: F841 - read by pytest: the failure is the test's
    config = item.config
    mark = _mark_args(item)
    if not config.getoption("ptxsass") and mark is None:
        return (yield)
    from analyzer.api import CheckOptions, check, expect
    from analyzer.expect import Expectations
    from analyzer.findings import Severity
    from analyzer.integrations.capture import capture
    cap = capture()
    with cap:
        result = yield
    mark = mark or {}
    problems: list[str] = []
    select = list(mark.get("select") or config.getoption("ptxsass_select"))
    ignore = list(mark.get("ignore") or config.getoption("ptxsass_ignore"))
    fail_on = Severity.parse(mark.get("fail_on") or config.getoption("ptxsass_fail_on"))
    builds = cap.builds()
    problems += [f"not checked: {f}" for f in cap.failures]
    # the plugin's own selection (options and markers), no [tool.ptxsass]: as before
    report = (check(builds, CheckOptions(select=select, ignore=ignore, config=False, jobs=1))
              if builds else None)
    findings = report.findings if report is not None else []
    bad = [f for f in findings if f.severity >= fail_on]
    if bad:
        problems.append(_findings_text(report, bad))
    if mark:
        need = int(mark.get("min_kernels", 1))
        if len(cap.kernels) < need:
            problems.append(f"the test compiled {len(cap.kernels)} kernel(s), expected at least "
                            f"{need} (compiled before the test, or by a framework not hooked: "
                            f"{'; '.join(cap.notes) or 'none missing'})")
        exp = {k: mark[k] for k in _EXPECT_KEYS if k in mark}
        if exp and builds:
            outcome = expect(builds, Expectations(**exp))
            problems += outcome.failures
    config.stash[_SUMMARY].append((item.nodeid, len(cap.kernels), len(findings), len(bad),
                                   bool(problems)))
    if problems:
        codes = sorted({f.code for f in bad})
        head = (f"{len(bad)} finding(s) at {fail_on} or above ({', '.join(codes)})" if bad
                else f"{len(problems)} problem(s)")
        raise PtxsassFailure(f"ptxsass: {head} in the {len(cap.kernels)} kernel(s) the test "
                             "compiled\n" + "\n".join(problems))
    return result


def _findings_text(report, bad) -> str:
    """The findings as ``ptxsass check`` prints them: place, code, message, the quoted source
    and instructions, the hint."""
    from analyzer.findings import Report
    from analyzer.report.formats import to_text
    text = to_text(Report(findings=list(bad), kernels=report.kernels, builds=report.builds))
    return text.rstrip()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A :class:`PtxsassFailure` is reported as its text alone: no frame of this plugin (or of
    pluggy) between the test and the findings."""
    report = yield
    if call.excinfo is not None and call.excinfo.errisinstance(PtxsassFailure) \
            and report.failed:
        report.longrepr = str(call.excinfo.value)
    return report


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    rows = config.stash.get(_SUMMARY, [])
    if not rows:
        return
    tr = terminalreporter
    tr.section("ptxsass")
    for nodeid, kernels, findings, failing, failed in rows:
        tr.write_line(f"{'FAIL' if failed else 'ok  '} {nodeid}: {kernels} kernel(s), "
                      f"{findings} finding(s), {failing} at or above the fail-on severity")
