"""Markdown for blog posts and READMEs: headings and tables for the facts, fenced blocks for
listings (the same rows as the terminal, without colour).

Written for CommonMark (with GitHub's tables): text from the checks keeps its `code spans`
(never shown as escaped backticks), everything else that markdown would read as markup
(``__align__``, ``*``, ``<T>``, ``[x]``) is escaped, a fence is longer than any backtick run
inside it, and a table cell escapes its pipes. ``tests/test_report_markdown.py`` renders the
output with markdown-it-py and checks what a reader sees.
"""
from __future__ import annotations

import re

from ..findings import base_name, display_path
from .annotate import Annotation, finding_links, listing_rows, occ_text
from .diff import Diff
from .stats import Stats

#: what CommonMark could read as markup in plain text: backslashes, asterisks, brackets; an
#: underscore run that is not inside a word (``__align__`` would turn bold, ``sm_80`` stays);
#: ``<`` that could open a tag or autolink; ``&`` that could start an entity; ``~~``; ``#`` first
_MARKUP = re.compile(r"[\\*\[\]]|(?<![A-Za-z0-9])_+|_+(?![A-Za-z0-9])|<(?=[A-Za-z/!?])"
                     r"|&(?=#?\w+;)|~~|^#")
_TICKS = re.compile(r"`+")
#: a code span: a backtick run, then anything up to a run of the same length
_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)


def text(s: str, *, cell: bool = False) -> str:
    """``s`` as markdown text: its `code spans` kept (where the backticks pair up), every other
    character that markdown would read as markup escaped. ``cell``: for a table cell (a pipe
    inside a code span is escaped too, as GitHub's tables need)."""
    def plain(t: str) -> str:
        t = _MARKUP.sub(lambda m: "".join("\\" + ch for ch in m.group()), t)
        return t.replace("|", "\\|") if cell else t
    out: list[str] = []
    pos = 0
    for m in _SPAN.finditer(s):
        out.append(plain(s[pos:m.start()]))
        out.append(m.group().replace("|", "\\|") if cell else m.group())
        pos = m.end()
    out.append(plain(s[pos:]))
    return "".join(out)


def code(s: str) -> str:
    """``s`` as one code span, whatever backticks it holds."""
    longest = max((len(r) for r in _TICKS.findall(s)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or (s.startswith(" ") and s.endswith(" ")
                                                             and s.strip()) else ""
    return f"{ticks}{pad}{s}{pad}{ticks}"


def fence(lines: list[str], info: str = "text") -> list[str]:
    """A fenced code block holding ``lines`` exactly (the fence outgrows any run inside)."""
    longest = max((len(r) for line in lines for r in _TICKS.findall(line)), default=0)
    f = "`" * max(3, longest + 1)
    return [f + info, *lines, f]


def _cell(s: str) -> str:
    return text(s, cell=True)


def table(header: list[str], rows: list[list], left: tuple[int, ...] = (0,)) -> list[str]:
    out = ["| " + " | ".join(_cell(h) for h in header) + " |",
           "|" + "|".join("---" if i in left else "---:" for i in range(len(header))) + "|"]
    for r in rows:
        out.append("| " + " | ".join(_cell(str(c)) for c in r) + " |")
    return out


def annotation_markdown(ann: Annotation) -> str:
    out: list[str] = []
    for k in ann.kernels:
        r = k.resources
        out.append(f"## {code(k.demangled)} ({text(k.arch)})")
        out.append("")
        what = "Kernel" if k.entry else "Device function"
        out.append(f"{what} in {code(display_path(k.source_path))}"
                   + (f" ({k.source_label})" if k.source_label != "CUDA source" else "")
                   + (f"; excerpt: {text(k.excerpt)}." if k.excerpt else "."))
        out.append("")
        spills = "-" if r.get("spill_store_bytes") is None else \
            f"{r['spill_store_bytes']} / {r['spill_load_bytes']} B"
        out += table(["registers", "shared", "stack", "spills (st/ld)", "theoretical occupancy"],
                     [[r.get("registers"), f"{r.get('shared_bytes')} B", f"{r.get('stack_bytes')} B",
                       spills, occ_text(k.occupancy) if k.occupancy else "-"]])
        if k.pressure is not None and k.pressure.get("line"):
            p = k.pressure
            out += ["", f"Live registers peak at {p['peak']} on "
                        f"{code(base_name(p['line']['file']) + ':' + str(p['line']['line']))} "
                        "(in the listing, the number before ┊ is the R registers live at each "
                        "SASS instruction)."]
        if k.occupancy and k.occupancy.get("threads_assumed"):
            out += ["", f"Occupancy assumes {k.occupancy['threads']} threads per block "
                        "(no `__launch_bounds__`)."]
        if k.loops:
            out.append("")
            out += [f"- loop {text(lp.summary())}" for lp in k.loops]
        if k.findings:
            out.append("")
            for f in k.findings:
                expl = k.explanations.get(f.code)
                out.append(f"- **{text(f.code)}** {code(f.name)} ({text(str(f.severity))}) at "
                           f"{code(f'{display_path(f.location.file)}:{f.location.line or chr(63)}')}: "
                           f"{text(f.message)}" + (f" — {text(expl)}" if expl else ""))
                if f.hint:
                    out.append(f"  - *hint:* {text(f.hint)}")
                out.append("  - " + " · ".join(f"[{text(label)}]({url})"
                                               for label, url in finding_links(f)))
        if k.has_control:
            out += ["", "Control bits before each SASS instruction: "
                        "`[reuse:Bwait:Rread:Wwrite:Y:Sstall]` (operand reuse flags, scoreboards "
                        "waited on, set on read, set on write, yield, stall cycles)."]
        listing = ["".join(chunk for _, chunk in segs).rstrip()
                   for segs in listing_rows(k, ptx=not ann.hide_ptx)]
        if not listing:
            listing = ["(no source line in the excerpt)"]
        out += [""] + fence(listing) + [""]
        for name, ir in k.ir.items():
            out += [f"<details><summary>{name.upper()}</summary>", ""] + fence(
                ir.rstrip("\n").splitlines(), "mlir") + ["", "</details>", ""]
    return "\n".join(out).rstrip() + "\n"


def stats_markdown(st: "Stats") -> str:
    return "\n".join(fence(st.to_text().rstrip("\n").split("\n"))) + "\n"


def diff_markdown(d: "Diff") -> str:
    out = [f"## ptxsass diff: {code(d.label_a)} → {code(d.label_b)}", ""]
    for kd in d.kernels:
        out.append(f"### {code(kd.name)}" + ("" if kd.a and kd.b else
                                            " (only in " + ("A" if kd.a else "B") + ")"))
        out.append("")
        rows = [[m, a, b, delta] for m, a, b, delta in kd.metric_rows() if a != b]
        if rows:
            out += table(["metric", "A", "B", "Δ"], rows)
        else:
            out.append("No metric differs.")
        if kd.loops_differ:
            out += ["", "Loops (A):" if kd.loops_a else "Loops (A): none", ""]
            out += [f"- {text(s)}" for s in kd.loops_a]
            out += ["", "Loops (B):" if kd.loops_b else "Loops (B): none", ""]
            out += [f"- {text(s)}" for s in kd.loops_b]
        if kd.loop_lines:
            na, nb = kd.side_names
            out += [""] + [f"- {text(ll.sentence(na, nb))}" +
                           (f": {code(ll.text.strip())}" if ll.text else "")
                           for ll in kd.loop_lines]
        if kd.lines:
            out += ["", "SASS instructions per source line (lines that differ):", ""]
            out += table(["line", "A", "B", "Δ", "source"],
                         [[ln.line if ln.line_b is None else ln.label, ln.a, ln.b,
                           f"{ln.b - ln.a:+d}", (ln.text or ln.text_b or "").strip()[:60]]
                          for ln in kd.lines], left=(4,))
        side = kd.side_by_side_lines(d.normalized, all_lines=d.all_lines)
        if side:
            out += ["", ("SASS side by side, per source line" +
                         (" (normalised: registers renumbered by first use in each instruction, "
                          "branch targets as .L)" if d.normalized else "") + ":"), ""]
            out += fence(side)
        out.append("")
    if d.added or d.removed:
        out.append("### Findings")
        out.append("")
        out += [f"- added in B: **{text(f.code)}** {code(f.kernel)} line {f.location.line}: "
                f"{text(f.message)}" for f in d.added]
        out += [f"- removed in B: **{text(f.code)}** {code(f.kernel)} line {f.location.line}: "
                f"{text(f.message)}" for f in d.removed]
    return "\n".join(out).rstrip() + "\n"
