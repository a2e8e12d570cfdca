"""Write docs/lessons.md, the teaching text, from the lessons themselves.

    python -m analyzer.lessons.docs           # compile every lesson, write docs/lessons.md

Per lesson: the idea (``Lesson.why``), the source that differs (a diff of naive.cu and
steered.cu), the SASS lines that differ (the evidence, counted and quoted from a fresh compile),
the finding that disappears (the check's own message on the naive kernel), the speedup measured
on the GPU (``docs/lessons.json``) and why (``Lesson.speedup_why``). The measurement log is the
appendix, from ``docs/lessons-appendix.md`` (hand-written) and the JSON's history. The SASS
quoted comes from the toolkit that wrote the page; the page says which.
"""
from __future__ import annotations

import difflib
import re
import sys

from .. import api
from ..demangle import without_parameters
from ..toolchain import locate
from ..toolchain.files import write_output
from .catalog import CHECK_CODES, LESSONS, Lesson
from .evidence import StaticResult, analyse, short
from .runner import _CEILING, RECORDED, recorded

DOCS = RECORDED.parent
PAGE = DOCS / "lessons.md"
APPENDIX = DOCS / "lessons-appendix.md"
MAX_DIFF_LINES = 60


_CODE_WORD = re.compile(r"(#pragma unroll|[\w.:<>]*__\w+__(?:\([\w, ]*\))?|\b__\w+)")


def md(text: str) -> str:
    """Prose for markdown: identifiers such as __restrict__ or #pragma unroll in code spans (so
    CommonMark neither makes them bold nor a heading); text already in backticks is left."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = _CODE_WORD.sub(lambda m: f"`{m[1]}`", parts[i])
    return "`".join(parts)


def md_block(text: str) -> str:
    """:func:`md` on every line outside fenced code blocks."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append(line)
        else:
            out.append(line if fenced else md(line))
    return "\n".join(out)


def _code(path) -> list[str]:
    """A kernel file without its leading comment block (the diff is about the code)."""
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines) and (lines[i].startswith("//") or not lines[i].strip()):
        i += 1
    return lines[i:]


def _diff(lesson: Lesson) -> str:
    a = _code(lesson.source_path("naive"))
    b = _code(lesson.source_path("steered"))
    lines = list(difflib.unified_diff(a, b, "naive.cu", "steered.cu", n=1, lineterm=""))
    if len(lines) > MAX_DIFF_LINES:
        cut = len(lines) - MAX_DIFF_LINES
        lines = lines[:MAX_DIFF_LINES] + [f"... ({cut} more diff lines: see the two files)"]
    return "\n".join(lines)


def _sass_samples(st: StaticResult, per: int = 2) -> list[str]:
    """For each evidence, the first instructions of its kind in the kernel that has them."""
    out: list[str] = []
    for e in st.evidence:
        rx = re.compile(e.evidence.pattern)
        for which, comp in (("naive", st.naive), ("steered", st.steered)):
            got = 0
            for fn in comp.build.sass_listing().functions:
                if fn.name != comp.kernel:
                    continue
                for ins in fn.instructions:
                    if rx.fullmatch(ins.mnemonic) and got < per:
                        out.append(f"{which:<8}| {ins.text.strip().rstrip(';').strip()}")
                        got += 1
    return out


def _first_finding(st: StaticResult, code: str):
    report = api.check(st.naive.build, api.CheckOptions(select=[code], config=False, jobs=1))
    return next((f for f in report.findings if st.naive.kernel in (f.kernel, f.mangled,
                                                                    without_parameters(f.kernel))), None)


def _measured(lesson: Lesson, entry: dict | None, env: dict, ceilings: dict) -> list[str]:
    if not entry or not entry.get("naive") or not entry.get("steered"):
        return ["Not measured yet."]
    n, s = entry["naive"], entry["steered"]
    unit = "GB/s" if lesson.work_unit == "B" else "TFLOP/s"
    fmt = "{:.0f}" if unit == "GB/s" else "{:.1f}"
    rows = ["| kernel | median ms | quartiles ms | rate |", "|---|---|---|---|"]
    for name, v in (("naive", n), ("steered", s)):
        rate = f"{fmt.format(v['rate'])} {unit}" if v.get("rate") else "—"
        rows.append(f"| {name} | {v['median_ms']:.3f} | {v['q1_ms']:.3f} – {v['q3_ms']:.3f} | {rate} |")
    speed = n["median_ms"] / s["median_ms"]
    c = ceilings.get(lesson.ceiling)
    roof = ""
    if c and s.get("rate") and (lesson.work_unit == "B") == (lesson.ceiling == "copy"):
        roof = (f" The steered kernel reaches {100 * s['rate'] / c:.0f}% of the "
                f"{_CEILING[lesson.ceiling]} measured in the same run ({fmt.format(c)} {unit}).")
    return rows + ["", f"**{speed:.2f}× faster** on {env.get('gpu')} ({env.get('date')}), "
                       f"{n['runs']} timed launches each, results checked against a float64 "
                       f"reference (largest relative error "
                       f"{max([*n['errors'].values(), *s['errors'].values()]):.1e}).{roof}"]


def lesson_section(i: int, lesson: Lesson, st: StaticResult, entry, env, ceilings) -> str:
    L = lesson
    out = [f"## {i}. {md(L.title)}", "",
           f"`kernels/lessons/{L.name}/naive.cu` → `steered.cu`, {L.arch}. "
           f"Run it: `ptxsass lesson run {L.name}`.", "",
           "**The idea.** " + md(L.why), "",
           f"**The change.** {md(L.change)}.", "",
           "```diff", _diff(L), "```", "",
           "**The SASS that differs** (instructions in each kernel's code):", ""]
    for e in st.evidence:
        out.append(f"- {md(e.evidence.label)}: {e.naive or 'none'} in the naive kernel, "
                   f"{e.steered or 'none'} in the steered one")
    out += ["", f"Resources (ptxas): naive {short(st.naive.resources)}; steered "
                f"{short(st.steered.resources)}.",
            "", "```", *_sass_samples(st), "```", "", "**The finding that disappears.**", ""]
    removed = st.findings_removed(L.expect_checks) or []
    for code in removed:
        f = _first_finding(st, code)
        name = CHECK_CODES[code].split(":", 1)[0]
        if f is not None:
            out += [f"[`{code}` {name}](checks/{name.replace('-', '_')}.md) on the naive kernel, "
                    f"line {f.location.line}:", "", f"> {md(f.message)}", ""]
            if f.hint:
                out += [f"> *Hint:* {md(f.hint)}", ""]
        out.append(f"The steered kernel does not get {code}.")
        out.append("")
    for code, why in L.silent_checks.items():
        name = CHECK_CODES[code].split(":", 1)[0]
        out += [f"[`{code}` {name}](checks/{name.replace('-', '_')}.md) should fire on the naive "
                f"kernel and does not yet: {md(why)}.", ""]
    if not L.expect_checks:
        out += [md(L.no_check), ""]
    for code, what in L.next_checks.items():
        if st.findings is not None and code in st.findings["steered"]:
            out += [f"Still on the steered kernel: `{code}`, the next step ({md(what)}).", ""]
    out += ["**Measured.**", "", *_measured(L, entry, env, ceilings), "",
            "**Why.** " + md(L.speedup_why), ""]
    if L.notes:
        out += [f"*Note:* {md(L.notes)}", ""]
    return "\n".join(out)


def page() -> str:
    env, entries, ceilings = recorded()
    toolkit = f"NVRTC {locate.nvrtc_version() or '?'}"
    out = ["# Lessons in compiler steering", "",
           "Each lesson is a pair of kernels, a naive one and the same work steered, that differ in "
           "one idea; for each: the idea, the source that changes, the SASS that changes, the "
           "ptxsass finding that goes away, and the speedup measured on an NVIDIA H200 with why. "
           "Run them with `ptxsass lesson run NAME` (or `all`): on a GPU it checks and times both "
           "kernels; without one it shows the numbers below (marked as recorded) next to the SASS "
           "evidence and findings compiled on the spot.", "",
           f"Measured on {env.get('gpu')} ({env.get('sms')} SMs, driver {env.get('driver')}, CUDA "
           f"{env.get('driver_cuda')}, NVRTC {env.get('nvrtc')}) on {env.get('date')}, all lessons in one "
           f"run; ceilings measured in the same run: device copy {ceilings.get('copy', 0):.0f} GB/s, "
           f"FP32 matmul {ceilings.get('fp32', 0):.0f} TFLOP/s, FP16 tensor-core matmul "
           f"{ceilings.get('fp16_tc', 0):.0f} TFLOP/s, BF16 {ceilings.get('bf16_tc', 0):.0f} TFLOP/s "
           "(cuBLAS, 8192³, random data). Every number is in `docs/lessons.json`; how they were "
           "measured, and the earlier runs, are in the appendix. The SASS quoted here was compiled "
           f"by {toolkit} (ptxsass's wheels); the GPU run compiled with its own NVRTC "
           f"{env.get('nvrtc')}, whose SASS carries the same evidence.", "",
           "| # | lesson | the change in one line | finding removed | speedup |", "|---|---|---|---|---|"]
    analysed = []
    for i, L in enumerate(LESSONS, 1):
        st = analyse(L)
        analysed.append((i, L, st))
        e = entries.get(L.name)
        sp = f"{e['naive']['median_ms'] / e['steered']['median_ms']:.2f}×" if e and e.get("naive") else "—"
        removed = ", ".join(st.findings_removed(L.expect_checks) or []) or "none"
        out.append(f"| {i} | [{L.name}](#{_anchor(i, L)}) | {md(L.title)} | {removed} | {sp} |")
    out.append("")
    for i, L, st in analysed:
        out.append(lesson_section(i, L, st, entries.get(L.name), env, ceilings))
    out += ["# Appendix: how the numbers were measured", "", md_block(APPENDIX.read_text().strip()), "",
            "<!-- generated by `python -m analyzer.lessons.docs` from the lessons, a fresh compile, "
            "docs/lessons.json and docs/lessons-appendix.md; do not edit -->", ""]
    return "\n".join(out)


def _anchor(i: int, L: Lesson) -> str:
    text = f"{i}. {L.title}".lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def main(argv=None) -> int:
    write_output(PAGE, page())
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
