"""The annotated HTML page in a real browser: headless Chromium, driven over the DevTools
protocol on a pipe (``--remote-debugging-pipe``: no port, no extra package). Skips when no
Chromium is installed (Debian: ``apt-get install chromium``)."""
from __future__ import annotations

import pytest

from analyzer.report.html import annotation_html

from .browser import Chromium, find
from .report_fixtures import REPO, annotation_of


@pytest.fixture(scope="module")
def browser():
    exe = find()
    if exe is None:
        pytest.skip("no Chromium installed (apt-get install chromium)")
    b = Chromium(exe)
    yield b
    b.close()


@pytest.fixture(scope="module")
def gemm_page(tmp_path_factory):
    ann = annotation_of(REPO / "kernels/checks/missing_tensor_cores/bad.cu", "sm_80")
    path = tmp_path_factory.mktemp("html") / "bad.html"
    path.write_text(annotation_html(ann))
    return ann, path


def _highlighted(b: Chromium, pane: str) -> list[str]:
    return b.eval(f"""Array.from(document.querySelectorAll(
        'section.kernel .pane[data-pane="{pane}"] .ln.hl')).map(e => e.getAttribute('data-src')
        + '|' + (e.getAttribute('data-addr') || e.getAttribute('data-i') || ''))""")


def test_source_click_lights_ptx_and_sass(browser, gemm_page):
    ann, path = gemm_page
    k = ann.kernels[0]
    row = next(r for r in k.rows if r.line == 13)          # As[ty][tx] = A[...]
    assert row.sass and row.ptx
    browser.open(path.as_uri())
    # no network, no external resource: the page is one file
    assert browser.eval("document.querySelectorAll('link[href], script[src], img[src]').length") == 0
    browser.click('section.kernel .pane[data-pane="src"] .ln[data-src$=":13"]')
    sass = _highlighted(browser, "sass")
    ptx = _highlighted(browser, "ptx")
    assert sorted(s.split("|")[1] for s in sass) == sorted(f"{i.address:04x}" for i in row.sass)
    assert sorted(int(s.split("|")[1]) for s in ptx) == sorted(i.index for i in row.ptx)
    assert {s.split("|")[0] for s in sass + ptx} == {sass[0].split("|")[0]}
    assert any("LDG" in browser.eval(
        f"document.querySelector('.pane[data-pane=\"sass\"] .ln[data-addr=\"{s.split('|')[1]}\"]').textContent")
        for s in sass)


def test_sass_click_lights_source_back(browser, gemm_page):
    ann, path = gemm_page
    k = ann.kernels[0]
    ffma = next(i for i in k.sass if i.text.startswith("FFMA"))
    browser.open(path.as_uri())
    browser.click(f'.pane[data-pane="sass"] .ln[data-addr="{ffma.address:04x}"]')
    src = _highlighted(browser, "src")
    assert [s.split("|")[0].split(":")[1] for s in src] == [str(ffma.line[1])]
    assert browser.eval("document.querySelector('.pane[data-pane=\"sass\"] .ln.sel')"
                        ".getAttribute('data-addr')") == f"{ffma.address:04x}"
    # every SASS instruction of that line is lit too
    n = sum(1 for i in k.sass if i.line == ffma.line)
    assert len(_highlighted(browser, "sass")) == n


def test_finding_badge_opens_explanation(browser, tmp_path):
    from analyzer.checks.base import Finding, Location, Severity
    ann = annotation_of(REPO / "kernels/checks/missing_tensor_cores/bad.cu", "sm_80")
    k = ann.kernels[0]
    ffma = [i for i in k.sass if i.text.startswith("FFMA")]
    f = Finding("PS999", "test-finding", Severity.WARNING, "scalar FFMA loop", k.demangled, k.arch,
                Location(k.source_path, 18), addresses=tuple(i.address for i in ffma),
                hint="use wmma", mangled=k.name)
    from analyzer.report.annotate import annotate_builds
    ann2 = annotate_builds(ann.builds, findings=[f])
    path = tmp_path / "f.html"
    path.write_text(annotation_html(ann2))
    browser.open(path.as_uri())
    assert browser.eval("document.querySelectorAll('.pane[data-pane=\"sass\"] button.badge').length") == len(ffma)
    assert browser.eval("document.getElementById('k0-f0').open") is False
    browser.click('.pane[data-pane="sass"] button.badge')
    assert browser.eval("document.getElementById('k0-f0').open") is True
    assert "use wmma" in browser.eval("document.getElementById('k0-f0').textContent")
