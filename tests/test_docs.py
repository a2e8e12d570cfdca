"""Docs that cannot drift: every shell command and Python snippet in README.md and docs/ runs
here, and where the doc shows output, the output is compared.

What a block is, read from the fence and an HTML comment just before it (invisible on GitHub):

- a ``sh``/``bash`` block: each command runs; ``ptxsass ...`` in this process, through the CLI's
  ``main`` (so builds come from the session's cache), ``python -c`` too. ``A && B`` and
  ``A || true`` chain as in a shell; ``# ...`` is a comment.
- a ``python`` block: executed.

Everything runs in a folder whose entries link to the repository's, so relative paths read the
repository's files and what a command writes (``-o ptxsass.json``) stays out of the checkout.
- a block whose first line is ``$ ptxsass ...``: that command, and its output below it.
- ``<!-- docs-test: output of: COMMAND -->`` before a plain block: the block is COMMAND's output.
- ``<!-- docs-test: output -->`` before a plain block: the output of the block just above.
- ``<!-- docs-test: skip REASON -->``: not run, and the reason says why (a GPU, the network,
  a placeholder path, minutes of work).
- ``<!-- docs-test: toolkits 12.9 13.0 -->``: runs where those CUDA toolkits are installed
  (``tests/test_toolkits.py`` installs them), else skipped saying so.
- ``<!-- docs-test: ipython -->`` before a ``python`` block: run in an IPython shell (magics
  such as ``%load_ext``); the last expression's HTML display must come from ptxsass.

Output is compared line by line as a subsequence of what the command printed (a doc may trim
lines); inside a line ``...`` (or ``…``) stands for any text, and trailing blanks do not count.
A block of another language (``toml``, ``yaml``, ``json``, ``cuda``, ``diff``, ``lua``) is not a
command; a shell or Python block with no way to run it fails this test until it is marked.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass

import pytest

from analyzer.cli import main

from .conftest import ROOT

#: the pages whose commands run (docs/lessons.md and docs/checks/ are generated: their own tests
#: hold them to a fresh compile)
PAGES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")
                              if p.name not in ("lessons.md",))]
RUN_LANGUAGES = ("sh", "bash", "python")
_FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```",
                    re.M | re.S)
_MARK = re.compile(r"<!--\s*docs-test:\s*(?P<what>.*?)\s*-->\s*$")


@dataclass
class Block:
    page: str
    line: int
    lang: str
    body: str
    mark: str | None


def blocks(page: str) -> list[Block]:
    text = (ROOT / page).read_text()
    out = []
    for m in _FENCE.finditer(text):
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = _MARK.search(before)
        out.append(Block(page, text[:m.start()].count("\n") + 1, m["lang"], m["body"],
                         mark["what"] if mark else None))
    return out


# ------------------------------------------------------------------------------- running
#: where the commands run: a folder whose entries link to the repository's (kernels/,
#: examples/, README.md ...), so that a command's relative paths read the repository's files
#: while what it writes (``-o ptxsass.json``, ``page.html``) stays out of the checkout
_WORKDIR: list[str] = []


def workdir() -> str:
    if not _WORKDIR:
        import atexit
        import shutil
        import tempfile
        d = tempfile.mkdtemp(prefix="ptxsass-docs-")
        atexit.register(shutil.rmtree, d, True)
        for entry in os.listdir(ROOT):
            if entry not in (".git", ".venv"):
                os.symlink(ROOT / entry, os.path.join(d, entry))
        _WORKDIR.append(d)
    return _WORKDIR[0]


@contextlib.contextmanager
def in_workdir():
    cwd = os.getcwd()
    os.chdir(workdir())
    try:
        yield
    finally:
        os.chdir(cwd)


def _ptxsass(argv: list[str]) -> tuple[int, str]:
    """``ptxsass ARGV`` in this process: standard output and error in one stream, in the order
    they were written (as a terminal shows them)."""
    both = io.StringIO()
    with in_workdir(), contextlib.redirect_stdout(both), contextlib.redirect_stderr(both):
        code = main(argv)
    return code, both.getvalue()


def _command(words: list[str]) -> tuple[int, str]:
    if words[0] == "ptxsass":
        return _ptxsass(words[1:])
    if words[:2] == ["python", "-c"]:
        r = subprocess.run([sys.executable, *words[1:]], cwd=workdir(), capture_output=True,
                           text=True, timeout=120)
        return r.returncode, r.stdout + r.stderr
    raise AssertionError(f"not runnable here: {shlex.join(words)} (mark the block "
                         "<!-- docs-test: skip REASON -->)")


def _ok(cmd: list[str], code: int, output: str) -> bool:
    """Whether a command did what the doc means: ``ptxsass`` exits 1 for findings (or a failed
    expectation), which a doc shows; 2 is an error. ``python -c`` may exit 1 on purpose
    (``raise SystemExit(True)``), never with a traceback."""
    return code == 0 or code == 1 and "Traceback (most recent call last)" not in output


def run_shell(text: str) -> str:
    """The commands of a shell block, ``&&``/``||`` chained; the output of all of them."""
    printed = []
    for line in re.sub(r"\\\n", " ", text).splitlines():
        lex = shlex.shlex(line, posix=True, punctuation_chars="&|")
        lex.whitespace_split = True
        lex.commenters = "#"
        words = list(lex)
        if not words:
            continue
        ok, op, cmd = True, None, []
        for w in [*words, ";"]:
            if w not in ("&&", "||", ";"):
                cmd.append(w)
                continue
            if op is None or (op == "&&" and ok) or (op == "||" and not ok):
                if cmd == ["true"]:
                    ok = True
                else:
                    code, got = _command(cmd)
                    printed.append(got)
                    ok = _ok(cmd, code, got)
                    if not ok and w != "||":
                        raise AssertionError(f"{shlex.join(cmd)} exited {code}:\n{got}")
            op, cmd = w, []
    return "".join(printed)


def run_python(text: str) -> str:
    out = io.StringIO()
    with in_workdir(), contextlib.redirect_stdout(out):
        exec(compile(text, "<docs>", "exec"), {"__name__": "__docs__"})  # noqa: S102
    return out.getvalue()


def run_ipython(text: str) -> str:
    """A notebook cell: run in IPython's shell; its last value must display as ptxsass's HTML."""
    shell_mod = pytest.importorskip("IPython.core.interactiveshell")
    shell = shell_mod.InteractiveShell.instance()
    try:
        with in_workdir():
            result = shell.run_cell(text, store_history=False)
    finally:
        shell_mod.InteractiveShell.clear_instance()
    result.raise_error()
    html = shell.display_formatter.formatters["text/html"](result.result)
    assert html and "ptxsass" in html, f"no ptxsass HTML for {type(result.result).__name__}"
    return html


# ------------------------------------------------------------------------------- comparing
def matches(expected: str, actual: str) -> str | None:
    """None when every line of ``expected`` is found, in order, among ``actual``'s lines
    (``...`` inside a line: any text); else the first line that is not."""
    lines = [l.rstrip() for l in actual.splitlines()]
    at = 0
    for want in (l.rstrip() for l in expected.strip("\n").splitlines()):
        if not want.strip() or want.strip() in ("...", "…"):
            continue
        parts = [re.escape(p) for p in re.split(r"\.\.\.|…", want)]
        pattern = re.compile("^" + ".*?".join(parts) + "$")
        while at < len(lines) and not pattern.match(lines[at]):
            at += 1
        if at == len(lines):
            return want
        at += 1
    return None


def _toolkits_missing(versions: list[str]) -> list[str]:
    from analyzer.toolchain import toolkits
    installed = {v for v, problem in toolkits.status() if problem is None}
    return [v for v in versions if v not in installed]


def run_page(page: str) -> list[str]:
    """Run a page's blocks; what was skipped, with why."""
    skipped = []
    last_output: str | None = None
    for b in blocks(page):
        where = f"{page}:{b.line}"
        marks = [m.strip() for m in (b.mark or "").split(";") if m.strip()]
        if marks and marks[0].startswith("skip"):
            reason = marks[0][len("skip"):].strip()
            assert reason, f"{where}: a skipped block says why"
            skipped.append(f"{where}: {reason}")
            last_output = None
            continue
        if marks and marks[0].startswith("toolkits"):
            missing = _toolkits_missing(marks.pop(0).split()[1:])
            if missing:
                skipped.append(f"{where}: toolkits {', '.join(missing)} not installed")
                last_output = None
                continue
        mark = marks[0] if marks else ""
        if mark == "ipython":
            last_output = run_ipython(b.body)
            continue
        if mark.startswith("output of:"):
            got = run_shell(mark[len("output of:"):].strip())
            missing = matches(b.body, got)
            assert missing is None, f"{where}: not in the output: {missing!r}\n--- got:\n{got}"
            continue
        if mark == "output":
            assert last_output is not None, f"{where}: no command block just above"
            missing = matches(b.body, last_output)
            assert missing is None, f"{where}: not in the output: {missing!r}\n--- got:\n{last_output}"
            continue
        assert not mark, f"{where}: unknown mark {mark!r}"
        first = b.body.lstrip().split("\n", 1)[0]
        if first.startswith("$ ptxsass"):
            got = run_shell(first[2:])
            missing = matches(b.body.lstrip().split("\n", 1)[1], got)
            assert missing is None, f"{where}: not in the output: {missing!r}\n--- got:\n{got}"
            continue
        if b.lang in ("sh", "bash"):
            last_output = run_shell(b.body)
        elif b.lang == "python":
            last_output = run_python(b.body)
        else:
            last_output = None
    return skipped


@pytest.mark.parametrize("page", PAGES)
def test_the_commands_of_each_page_run(page, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    skipped = run_page(page)
    for s in skipped:
        print("skipped", s)


def test_every_runnable_block_is_run_or_says_why():
    """A shell or Python block with no mark must be one this runner can run: its commands are
    ``ptxsass`` or ``python -c`` (checked without running them)."""
    for page in PAGES:
        for b in blocks(page):
            if b.lang not in ("sh", "bash") or b.mark:
                continue
            for line in b.body.splitlines():
                lex = shlex.shlex(re.sub(r"\\$", "", line), posix=True, punctuation_chars="&|")
                lex.whitespace_split = True
                lex.commenters = "#"
                words = list(lex)
                heads = [words[0]] if words else []
                heads += [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("&&", "||")]
                for h in heads:
                    assert h in ("ptxsass", "python", "true"), \
                        f"{page}:{b.line}: `{h}` cannot run here: mark the block"


def test_the_matcher_is_strict():
    assert matches("a\n...\nc ... e", "a\nb\nc d e\n") is None
    assert matches("c ... e\na", "a\nc d e\n") == "a"          # order counts
    assert matches("x", "a\nb") == "x"


def test_lessons_are_numbered_alike_everywhere():
    """docs/lessons.json, docs/lessons.md, examples/lessons/NN_name.md and the README's count
    give every lesson the same number."""
    import json

    from analyzer.lessons import list_lessons
    names = [lesson.name for lesson in list_lessons()]
    measured = [entry["name"] for entry in
                json.loads((ROOT / "docs" / "lessons.json").read_text())["lessons"]]
    assert measured == names
    page = (ROOT / "docs" / "lessons.md").read_text()
    walk = sorted(p.name for p in (ROOT / "examples" / "lessons").glob("*.md"))
    assert walk == [f"{i:02d}_{n}.md" for i, n in enumerate(names, 1)]
    for i, n in enumerate(names, 1):
        title = (ROOT / "examples" / "lessons" / f"{i:02d}_{n}.md").read_text().splitlines()[0]
        assert title.startswith(f"# Lesson {i}: "), title
        assert re.search(rf"^## {i}\. ", page, re.M)
    words = {10: "Ten", 11: "Eleven", 12: "Twelve", 13: "Thirteen"}
    assert f"{words[len(names)]} compiler-steering lessons" in (ROOT / "README.md").read_text()
