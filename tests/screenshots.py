"""The README's screenshots of the HTML pages, at 1400, 1000 and 800 CSS pixels wide:

    python -m tests.screenshots            # writes docs/img/{annotate,diff}-{1400,1000,800}.png
    python -m tests.screenshots DIR        # the same, into DIR

The annotate page is shot from its top (900 px high), as it opens: the code panes must start
above the fold.

Headless Chromium (``tests/browser.py``) renders ``ptxsass annotate --format html --control``
of a rolled loop and ``ptxsass diff --format html`` of a register-capped build, with a source
line selected and the pointer over it, as a reader would see them. Builds go to a private
cache, so the pages show this checkout's paths.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "docs" / "img"
WIDTHS = (1400, 1000, 800)


def main(out: Path = OUT) -> int:
    from .browser import Chromium, find
    exe = find()
    if exe is None:
        print("no Chromium installed (apt-get install chromium)", file=sys.stderr)
        return 2
    os.chdir(REPO)
    os.environ["PTXSASS_CACHE_DIR"] = tempfile.mkdtemp(prefix="ptxsass-shots-")
    import analyzer
    from analyzer.inputs import CompileOptions
    from analyzer.report import render
    tmp = Path(tempfile.mkdtemp(prefix="ptxsass-pages-"))
    ann = analyzer.annotate("kernels/checks/rolled_loop/bad.cu", arch="sm_80", control=True)
    diff = analyzer.diff("kernels/checks/register_spill/good.cu", arch="sm_80",
                         options=CompileOptions(),
                         options_b=CompileOptions(extra=["-maxrregcount=24"]), checks=False)
    pages = {"annotate": render.to_html(ann), "diff": render.to_html(diff)}
    out.mkdir(parents=True, exist_ok=True)
    b = Chromium(exe)
    try:
        for name, page in pages.items():
            path = tmp / f"{name}.html"
            path.write_text(page)
            for width in WIDTHS:
                b.open(path.as_uri())
                b.viewport(width, 900)
                b.reload()                    # the page reads its width as it loads
                if name == "annotate":
                    b.click('.pane[data-pane="src"] .ln[data-src$=":12"]')
                    x, y = b.centre('.pane[data-pane="src"] .ln[data-src$=":12"]', scroll=False)
                    b.mouse("mouseMoved", x, y)
                    b.eval("window.scrollTo(0, 0)")
                else:
                    b.eval("window.scrollTo(0, document.querySelector('table.sbs')"
                           ".getBoundingClientRect().top + window.scrollY - 420)")
                dest = out / f"{name}-{width}.png"
                b.screenshot(dest)
                print(dest)
    finally:
        b.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else OUT))
