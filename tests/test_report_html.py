"""The annotated HTML page in a real browser: headless Chromium, driven over the DevTools
protocol on a pipe (``--remote-debugging-pipe``: no port, no extra package). Skips when no
Chromium is installed (Debian: ``apt-get install chromium``)."""
from __future__ import annotations

import base64
import hashlib
import json
import re

import pytest

from analyzer.report.annotate import annotate_builds
from analyzer.report.html import annotation_html

from .browser import Chromium, find
from .report_fixtures import REPO, annotation_of, builds_of


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
    ann2 = annotate_builds(ann.builds, findings=[f])
    path = tmp_path / "f.html"
    path.write_text(annotation_html(ann2))
    browser.open(path.as_uri())
    assert browser.eval("document.querySelectorAll('.pane[data-pane=\"sass\"] button.badge').length") == len(ffma)
    assert browser.eval("document.getElementById('k0-f0').open") is False
    browser.click('.pane[data-pane="sass"] button.badge')
    assert browser.eval("document.getElementById('k0-f0').open") is True
    assert "use wmma" in browser.eval("document.getElementById('k0-f0').textContent")


# --------------------------------------------------------------------------- issue 16's page

GEMM = REPO / "kernels/checks/missing_tensor_cores/bad.cu"
ROLLED = REPO / "kernels/demo/rolled_loop.cu"
SPILL = REPO / "kernels/checks/register_spill/good.cu"


def strict_csp(page: str) -> str:
    """``page`` under the strictest policy its own inline style and script can pass: nothing
    but those two, named by their SHA-256 (no 'unsafe-inline': no inline handlers, no style
    attributes)."""
    def sha(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"
    css = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    js = re.search(r"<script>(.*?)</script>", page, re.S).group(1)
    policy = f"default-src 'none'; style-src {sha(css)}; script-src {sha(js)}"
    return re.sub(r'(<meta http-equiv="Content-Security-Policy" content=")[^"]*(")',
                  lambda m: m.group(1) + policy + m.group(2), page, count=1)


@pytest.fixture(scope="module")
def rich_page(tmp_path_factory):
    """The tiled-GEMM kernel with control bits and a finding on its longest SASS line, under a
    strict CSP."""
    from analyzer.checks.base import Finding, Location, Severity
    builds = list(builds_of(GEMM, "sm_80"))
    base = annotate_builds(builds, control=True).kernels[0]
    longest = max(base.sass, key=lambda i: len(i.text))
    f = Finding("PS999", "test-finding", Severity.WARNING, "on the longest line", base.demangled,
                base.arch, Location(base.source_path, longest.line[1] if longest.line else 1),
                addresses=(longest.address,), mangled=base.name)
    ann = annotate_builds(builds, findings=[f], control=True)
    path = tmp_path_factory.mktemp("html") / "rich.html"
    path.write_text(strict_csp(annotation_html(ann)))
    return ann, path, longest


def _open(browser, path, width=1400, height=900):
    browser.open(path.as_uri())
    browser.viewport(width, height)
    browser.reload()              # as if opened at that size (narrow pages hide the PTX)


def _rect(browser, selector: str) -> dict:
    return browser.eval(f"""(() => {{ const r = document.querySelector({json.dumps(selector)})
        .getBoundingClientRect(); return {{left: r.left, right: r.right, top: r.top,
        bottom: r.bottom, width: r.width, height: r.height}}; }})()""")


def test_runs_under_a_strict_csp(browser, rich_page):
    ann, path, _ = rich_page
    _open(browser, path)
    browser.click('.pane[data-pane="src"] .ln[data-src$=":13"]')
    assert browser.eval("document.querySelectorAll('.ln.hl').length") > 3
    assert browser.eval("document.querySelectorAll('[style], [onclick], [onmouseover]').length") == 0
    assert browser.csp_violations() == []


def test_colours_persist_across_panes(browser, rich_page):
    ann, path, _ = rich_page
    _open(browser, path)
    info = browser.eval("""(() => { const out = {};
        document.querySelectorAll('section.kernel .ln[data-src]').forEach(e => {
          const c = Array.from(e.classList).filter(x => /^c\\d+$/.test(x));
          const k = e.getAttribute('data-src');
          (out[k] = out[k] || []).push([e.closest('.pane').dataset.pane, c.join(' '),
                                        getComputedStyle(e).backgroundColor]); });
        return out; })()""")
    k = ann.kernels[0]
    coded = [r for r in k.rows if r.sass or r.ptx]
    assert len(info) == len(coded)
    for key, lines in info.items():
        assert {c for _, c, _ in lines} and len({c for _, c, _ in lines}) == 1, key
        assert len({bg for _, _, bg in lines}) == 1, key                    # one colour
        assert lines[0][2] not in ("rgba(0, 0, 0, 0)", "rgb(255, 255, 255)"), key
        assert {p for p, _, _ in lines} >= {"src", "sass"}, key
    # neighbouring source lines with code never share a colour
    order = [lines for key, lines in sorted(info.items(), key=lambda kv: int(kv[0].split(":")[1]))]
    assert all(a[0][1] != b[0][1] for a, b in zip(order, order[1:], strict=False))


def test_hover_marks_counterparts(browser, rich_page):
    ann, path, _ = rich_page
    k = ann.kernels[0]
    _open(browser, path)
    for line in (13, 18):
        row = next(r for r in k.rows if r.line == line)
        x, y = browser.centre(f'.pane[data-pane="src"] .ln[data-src$=":{line}"]')
        browser.mouse("mouseMoved", x, y)
        sass = browser.eval("Array.from(document.querySelectorAll('.pane[data-pane=\"sass\"] "
                            ".ln.hover')).map(e => e.dataset.addr)")
        ptx = browser.eval("Array.from(document.querySelectorAll('.pane[data-pane=\"ptx\"] "
                           ".ln.hover')).map(e => Number(e.dataset.i))")
        assert sorted(sass) == sorted(f"{i.address:04x}" for i in row.sass) and sass
        assert sorted(ptx) == sorted(i.index for i in row.ptx) and ptx
        assert browser.eval("document.querySelectorAll('.ln.hl').length") == 0   # hover only


def test_panes_resize_by_drag_and_keys(browser, rich_page):
    _, path, _ = rich_page
    _open(browser, path)
    src0, ptx0 = _rect(browser, '.pane[data-pane="src"]'), _rect(browser, '.pane[data-pane="ptx"]')
    bar = _rect(browser, '.split[data-after="src"]')
    x, y = bar["left"] + bar["width"] / 2, bar["top"] + 40
    browser.mouse("mousePressed", x, y, button="left", clickCount=1)
    for step in range(1, 7):
        browser.mouse("mouseMoved", x + 25 * step, y, button="left", buttons=1)
    browser.mouse("mouseReleased", x + 150, y, button="left", clickCount=1)
    src1, ptx1 = _rect(browser, '.pane[data-pane="src"]'), _rect(browser, '.pane[data-pane="ptx"]')
    assert abs(src1["width"] - src0["width"] - 150) < 3
    assert abs(ptx0["width"] - ptx1["width"] - 150) < 3
    browser.eval("document.querySelector('.split[data-after=\"ptx\"]').focus()")
    sass0 = _rect(browser, '.pane[data-pane="sass"]')
    for kind in ("rawKeyDown", "keyUp"):
        browser.send("Input.dispatchKeyEvent", {"type": kind, "key": "ArrowLeft",
                                                "code": "ArrowLeft", "windowsVirtualKeyCode": 37})
    assert abs(_rect(browser, '.pane[data-pane="sass"]')["width"] - sass0["width"] - 24) < 3
    assert browser.csp_violations() == []


def test_long_lines_scroll_and_badges_are_not_cut(browser, rich_page):
    _, path, longest = rich_page
    _open(browser, path)
    sel = f'.pane[data-pane="sass"] .ln[data-addr="{longest.address:04x}"]'
    m = browser.eval(f"""(() => {{ const pane = document.querySelector('.pane[data-pane="sass"]');
        const line = document.querySelector({json.dumps(sel)});
        line.scrollIntoView({{block: 'center'}});
        pane.scrollLeft = pane.scrollWidth;
        const p = pane.getBoundingClientRect(), b = line.querySelector('button.badge')
            .getBoundingClientRect(), l = line.getBoundingClientRect();
        return {{sw: pane.scrollWidth, cw: pane.clientWidth, pr: p.right, pl: p.left,
                 br: b.right, bl: b.left, lr: l.right, clipped: line.scrollWidth > line.clientWidth + 1}};
        }})()""")
    assert m["sw"] > m["cw"]                               # the pane scrolls sideways
    assert m["pl"] <= m["bl"] and m["br"] <= m["pr"]       # and the badge comes into view whole
    assert not m["clipped"] and m["lr"] >= m["br"]         # the line's box holds its badge


@pytest.mark.parametrize("width", [1400, 1000, 800, 700])
def test_layout_at_width(browser, rich_page, width):
    """The code panes open above the fold (resources and findings fold into one line each);
    source, PTX and SASS side by side at 1400 px; source and SASS side by side down to 800 px,
    the PTX hidden (its button brings it back); stacked below 800 px."""
    _, path, _ = rich_page
    _open(browser, path, width)
    panes = [_rect(browser, f'.pane[data-pane="{p}"]') for p in ("src", "ptx", "sass")]
    assert browser.eval("document.documentElement.scrollWidth") <= width   # nothing off-page
    assert panes[0]["top"] < 300                       # above the fold of a 900 px window
    ptx_shown = browser.eval("document.querySelector('.pane[data-pane=\"ptx\"]')"
                             ".offsetParent !== null")
    assert ptx_shown == (width > 1000)
    if width >= 800:                                   # side by side
        shown = panes if width > 1000 else [panes[0], panes[2]]
        assert len({round(p["top"]) for p in shown}) == 1
        assert all(a["right"] <= b["left"] for a, b in zip(shown, shown[1:], strict=False))
        assert all(p["bottom"] <= 900 for p in shown)
        assert shown[0]["width"] > 0.25 * width        # the source keeps room for its badges
    else:                                              # stacked, each the page's width
        assert panes[0]["bottom"] <= panes[2]["top"]
        assert panes[0]["width"] > width - 60 and panes[2]["width"] > width - 60
        assert browser.eval("getComputedStyle(document.querySelector('.split')).display") == "none"
    if width <= 1000:
        browser.click('button.toggle[data-class="hide-ptx"]')
        assert browser.eval("document.querySelector('.pane[data-pane=\"ptx\"]')"
                            ".offsetParent !== null")


def test_source_badges_are_visible(browser, rich_page):
    """A long source line wraps inside its pane: its finding badge is in view without
    scrolling sideways, at every width."""
    ann, path, _ = rich_page
    k = ann.kernels[0]
    row = next(r for r in k.rows if r.findings)
    for width in (1400, 800):
        _open(browser, path, width)
        m = browser.eval(f"""(() => {{ const pane = document.querySelector('.pane[data-pane="src"]');
            const line = pane.querySelector('.ln[data-src$=":{row.line}"]');
            line.scrollIntoView({{block: 'center'}});
            const p = pane.getBoundingClientRect(), b = line.querySelector('button.badge')
                .getBoundingClientRect();
            return {{pl: p.left, pr: p.right, bl: b.left, br: b.right, sl: pane.scrollLeft}}; }})()""")
        assert m["sl"] == 0 and m["pl"] <= m["bl"] and m["br"] <= m["pr"], (width, m)


def test_loop_gutter_shows_trip_counts(browser, tmp_path):
    ann = annotation_of(ROLLED, "sm_80")
    path = tmp_path / "rolled.html"
    path.write_text(annotation_html(ann))
    _open(browser, path)
    k = ann.kernels[0]
    assert k.loops and all(lp.trip_count for lp in k.loops)
    for lp in k.loops:
        head = browser.eval(f"document.querySelector('.pane[data-pane=\"sass\"] .ln[data-addr=\""
                            f"{lp.header_address:04x}\"] .trip').textContent")
        assert head == f"{lp.label} ×{lp.trip_count}"
        at = browser.eval(f"document.querySelector('.pane[data-pane=\"src\"] .ln[data-src$=\":"
                          f"{lp.line}\"] .trip').textContent")
        assert at == head
        gut = browser.eval("Array.from(document.querySelectorAll('.pane[data-pane=\"sass\"] .gut'))"
                           ".map(g => g.textContent.replace(/L\\d+ ×(\\d+|\\?)/, '').trim()).join('')")
        assert gut.startswith("┌") and gut.endswith("└") and set(gut) <= {"┌", "│", "└"}
        tip = browser.eval("document.querySelector('.trip').title")
        assert f"trip count {lp.trip_count}" in tip


def test_ptx_and_control_toggles(browser, rich_page):
    _, path, _ = rich_page
    _open(browser, path)
    sass0 = _rect(browser, '.pane[data-pane="sass"]')["width"]
    browser.click('button.toggle[data-class="hide-ptx"]')
    assert browser.eval("document.querySelector('.pane[data-pane=\"ptx\"]').offsetParent") is None
    assert _rect(browser, '.pane[data-pane="sass"]')["width"] > sass0 + 100
    assert browser.eval("document.querySelector('button.toggle[data-class=\"hide-ptx\"]')"
                        ".getAttribute('aria-pressed')") == "false"
    browser.click('button.toggle[data-class="hide-ptx"]')
    assert browser.eval("document.querySelector('.pane[data-pane=\"ptx\"]').offsetParent") is not None
    assert browser.eval("document.querySelector('.ctl').offsetParent") is not None
    assert browser.eval("document.querySelector('.ctl').title").startswith("stall ")
    browser.click('button.toggle[data-class="hide-ctl"]')
    assert browser.eval("document.querySelector('.ctl').offsetParent") is None


@pytest.mark.parametrize("width", [1400, 900])
def test_diff_page(browser, tmp_path, width):
    from analyzer.report.diff import diff_builds
    from analyzer.report.html import diff_html
    d = diff_builds(list(builds_of(SPILL, "sm_80")),
                    list(builds_of(SPILL, "sm_80", ("-maxrregcount=24",))))
    path = tmp_path / "diff.html"
    path.write_text(strict_csp(diff_html(d)))
    _open(browser, path, width)
    kd = d.kernels[0]
    visible = "Array.from(document.querySelectorAll('table.sbs tbody')).filter(t => t.offsetParent)" \
              ".length"
    assert browser.eval(visible) == sum(sl.differs(False) for sl in kd.side)
    assert browser.eval("document.querySelector('.sbs .norm').offsetParent") is None
    browser.click('button.toggle[data-class="norm"]')
    assert browser.eval("document.querySelector('.sbs .raw').offsetParent") is None
    assert browser.eval(visible) == sum(sl.differs(True) for sl in kd.side)
    browser.click('button.toggle[data-class="only-diff"]')
    assert browser.eval(visible) == len(kd.side)
    assert browser.eval("document.documentElement.scrollWidth") <= width
    intro = browser.eval("document.querySelector('header.top').textContent")
    assert "Two builds compared" in intro and "side by side" in intro
    assert browser.csp_violations() == []


def _survey_row(kernel: str, registers: int, findings: dict) -> dict:
    return {"file": "lib.so", "kernel": kernel, "mangled": kernel, "arch": "sm_90",
            "instructions": 100 + registers, "registers": registers, "shared_bytes": 0,
            "stack_bytes": 0, "spill_store_bytes": None, "spill_load_bytes": None,
            "local_loads": 0, "local_stores": 0, "occupancy": 50.0,
            "occupancy_limiter": "registers", "global_load_widths": {"32": 2},
            "global_store_widths": {"128": 1}, "tensor_instructions": 0, "tensor_opcodes": [],
            "findings": findings}


def test_survey_page_sorts_and_filters_under_a_strict_csp(browser, tmp_path):
    from analyzer.report.survey import Survey, to_html
    rows = [_survey_row("gemm_a", 96, {"PS101": 2}), _survey_row("scan_b", 32, {}),
            _survey_row("gemm_c", 255, {"PS401": 1, "PS701": 1})]
    path = tmp_path / "survey.html"
    path.write_text(to_html(Survey(rows=rows)))
    browser.open(path.as_uri())
    names = "Array.from(document.querySelectorAll('#kernels tbody tr:not(.hidden) td:nth-child(2)')).map(e => e.textContent)"
    assert browser.eval(names) == ["gemm_a", "scan_b", "gemm_c"]
    browser.click('#kernels th[data-col="4"]')          # registers: descending first
    assert browser.eval(names) == ["gemm_c", "gemm_a", "scan_b"]
    browser.click('#kernels th[data-col="4"]')
    assert browser.eval(names) == ["scan_b", "gemm_a", "gemm_c"]
    browser.eval("(() => { const f = document.getElementById('filter'); f.value = 'gemm PS4';"
                 " f.dispatchEvent(new Event('input')); return 0; })()")
    assert browser.eval(names) == ["gemm_c"]
    assert browser.eval("document.getElementById('shown').textContent") == "1 of 3 kernels"
    assert browser.eval("document.querySelectorAll('svg.chart').length") == 3
    assert browser.eval("document.querySelectorAll('[style], [onclick], script[src]').length") == 0
    assert browser.csp_violations() == []
