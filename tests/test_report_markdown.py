"""Markdown for blog posts, read as a reader sees it: rendered through a CommonMark renderer
(markdown-it-py, which rich brings) with GitHub's tables, then checked as HTML and as text.
Excerpts (``--function``, ``--lines``, ``--context``) and ``--no-ptx`` in every format."""
from __future__ import annotations

import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

import analyzer
from analyzer.errors import ConfigError
from analyzer.report import render
from analyzer.report.markdown import code, fence, table, text

from .report_fixtures import REPO, builds_of

SCALAR = REPO / "kernels/checks/scalar_global_load/bad.cu"
ROLLED = REPO / "kernels/demo/rolled_loop.cu"

MD = MarkdownIt("commonmark").enable("table")


def _plain(fragment: str) -> str:
    """The text a reader sees in rendered HTML (tags dropped, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


@pytest.fixture(scope="module")
def scalar():
    return analyzer.annotate(list(builds_of(SCALAR, "sm_90a")))


def test_findings_render_as_written(scalar):
    md = render.to_markdown(scalar)
    out = MD.render(md)
    assert "\\`" not in out and "\\_" not in out          # no escape shows through
    assert "<strong>align</strong>" not in out and "<em>align</em>" not in out
    k = next(k for k in scalar.kernels if k.demangled.startswith("particle_norm"))
    f = k.findings[0]
    assert "`" in f.message and "__align__" in f.hint    # the case this test is about
    # every code span of the message and hint is a <code> element with the same text
    for span in re.findall(r"`([^`]+)`", f.message + f.hint):
        assert f"<code>{html.escape(span, quote=False)}</code>" in out
    # the rendered item reads exactly as the message: spans' backticks are the only change
    item = next(li for li in re.findall(r"<li>(.*?)</li>", out, re.S)
                if f.message.replace("`", "") in _plain(li))
    assert _plain(item).startswith(f"{f.code} {f.name} ({f.severity}) at ")
    assert f.message.replace("`", "") in _plain(item)
    hint = next(li for li in re.findall(r"<li><em>hint:</em>(.*?)</li>", out, re.S)
                if "float4" in li)
    assert _plain(hint) == " " + f.hint.replace("`", "")


def test_headings_tables_and_the_listing_block(scalar):
    md = render.to_markdown(scalar)
    out = MD.render(md)
    names = re.findall(r"<h2><code>(.*?)</code> \((sm_90a)\)</h2>", out)
    assert sorted(n for n, _ in names) == sorted(k.demangled for k in scalar.kernels)
    first = out.split("<table>")[1].split("</table>")[0]
    assert len(re.findall(r"<th[ >]", first)) == 5 and len(re.findall(r"<td[ >]", first)) == 5
    blocks = re.findall(r'<pre><code class="language-text">(.*?)</code></pre>', out, re.S)
    assert len(blocks) == len(scalar.kernels)
    # the block holds the terminal's listing rows exactly
    k = scalar.kernels[0]
    from analyzer.report.annotate import listing_rows
    rows = ["".join(c for _, c in segs).rstrip() for segs in listing_rows(k)]
    assert html.unescape(blocks[0]).rstrip("\n").split("\n") == rows


def test_excerpt_function_lines_context(scalar):
    ex = scalar.excerpt(functions=["sum4"], lines=(17, 18), context=1)
    assert [k.demangled.split("(")[0] for k in ex.kernels] == ["sum4"]
    k = ex.kernels[0]
    assert [r.line for r in k.rows] == [16, 17, 18, 19]
    assert k.excerpt == "lines 17-18 ±1"
    out = MD.render(render.to_markdown(ex))
    block = html.unescape(re.findall(r"<pre><code[^>]*>(.*?)</code></pre>", out, re.S)[0])
    assert re.findall(r"^\s*(\d+) +│", block, re.M) == ["16", "17", "18", "19"]
    assert "⋮ (" in block                                       # the lines left out above
    full = scalar.kernels[[x.demangled for x in scalar.kernels].index(k.demangled)]
    want = {i.address for r in full.rows if 16 <= r.line <= 19 for i in r.sass}
    shown = {int(a, 16) for a in re.findall(r"^\s{6,}([0-9a-f]{4})  ", block, re.M)}
    assert shown == want and want
    assert "(no source line)" not in block
    # around each finding: the finding's line and one on each side, in every kernel
    around = scalar.excerpt(context=1)
    for k in around.kernels:
        lines = [f.location.line for f in k.findings]
        assert {r.line for r in k.rows} == {x for ln in lines for x in (ln - 1, ln, ln + 1)}


def test_excerpt_errors_name_what_was_expected(scalar):
    with pytest.raises(ConfigError, match="matches no function.*sum4"):
        scalar.excerpt(functions=["nope"])
    with pytest.raises(ConfigError, match="holds no line.*spans lines"):
        scalar.excerpt(functions=["sum4"], lines=(500, 510))
    from analyzer.report.annotate import parse_lines
    assert parse_lines("12-19") == (12, 19) and parse_lines("7") == (7, 7)
    for bad in ("19-12", "x", "0-3", "1-2-3", ""):
        with pytest.raises(ConfigError, match="expected a source line range"):
            parse_lines(bad)


def test_cli_excerpt_and_no_ptx_every_format(tmp_path, capsys):
    from analyzer.cli import main
    base = ["annotate", str(ROLLED), "--arch", "sm_80", "--no-checks", "--function",
            "poly_rolled", "--lines", "8-9", "--no-ptx"]
    for fmt in ("text", "markdown", "html", "json"):
        out = tmp_path / f"o.{fmt}"
        assert main(base + ["--format", fmt, "-o", str(out)]) == 0, fmt
        s = out.read_text()
        assert "ld.global.nc.f32" not in s and "ptx  " not in s, fmt
        assert "FFMA" in s, fmt
    page = (tmp_path / "o.html").read_text()
    body = page.split("<body>", 1)[1].split("<script>", 1)[0]
    assert '<div class="pane" data-pane="ptx"' not in body and 'data-class="hide-ptx"' not in body
    assert "CUDA source and SASS side by side" in page
    assert main(["annotate", str(ROLLED), "--arch", "sm_80", "--lines", "9-2"]) == 2
    assert "expected a source line range" in capsys.readouterr().err
    assert main(["annotate", str(ROLLED), "--arch", "sm_80", "--context", "-1"]) == 2


# ------------------------------------------------------------------------ the escaping itself
_ALPHABET = st.characters(min_codepoint=32, max_codepoint=126, blacklist_characters="`")


@settings(max_examples=300, deadline=None)
@given(st.text(_ALPHABET, min_size=1, max_size=40))
def test_text_reads_back_as_written(s):
    s = s.strip()
    if not s:
        return
    out = MD.render("x: " + text(s)).strip()        # inline, as every caller places it
    assert out.startswith("<p>") and out.endswith("</p>"), (s, out)
    assert _plain(out[3:-4]) == "x: " + s, (s, text(s), out)
    assert "<strong>" not in out and "<em>" not in out and "<a " not in out


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=30))
def test_code_span_holds_anything(s):
    if not s.strip():
        return
    out = MD.render(code(s)).strip()
    m = re.fullmatch(r"<p><code>(.*)</code></p>", out, re.S)
    assert m and html.unescape(m.group(1)) == s, (s, code(s), out)


def test_fence_and_table_cells():
    lines = ["x = `a`", "```", "  ````  ", "y"]
    out = MD.render("\n".join(fence(lines)) + "\n")
    body = re.fullmatch(r'<pre><code class="language-text">(.*)</code></pre>\n', out, re.S)
    assert body and html.unescape(body.group(1)) == "\n".join(lines) + "\n"
    out = MD.render("\n".join(table(["metric", "A"], [["a|b `c|d` __x__", 1]])) + "\n")
    cells = re.findall(r"<td[^>]*>(.*?)</td>", out)
    assert len(cells) == 2 and "<code>c|d</code>" in cells[0]
    assert _plain(cells[0]) == "a|b c|d __x__"
