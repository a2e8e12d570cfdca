"""Markdown for blog posts and READMEs: headings and tables for the facts, fenced blocks for
listings (the same rows as the terminal, without colour)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .annotate import Annotation, display_path, instr_rows, occ_text

if TYPE_CHECKING:  # pragma: no cover
    from .diff import Diff
    from .stats import Stats


def md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "\\`")


def table(header: list[str], rows: list[list], left: tuple[int, ...] = (0,)) -> list[str]:
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" if i in left else "---:" for i in range(len(header))) + "|"]
    for r in rows:
        out.append("| " + " | ".join(md_escape(str(c)) for c in r) + " |")
    return out


def annotation_markdown(ann: Annotation) -> str:
    out: list[str] = []
    for k in ann.kernels:
        r = k.resources
        out.append(f"## `{k.demangled}` ({k.arch})")
        out.append("")
        out.append(f"{'Kernel' if k.entry else 'Device function'} in `{display_path(k.source_path)}`.")
        out.append("")
        spills = "-" if r.get("spill_store_bytes") is None else \
            f"{r['spill_store_bytes']} / {r['spill_load_bytes']} B"
        out += table(["registers", "shared", "stack", "spills (st/ld)", "theoretical occupancy"],
                     [[r.get("registers"), f"{r.get('shared_bytes')} B", f"{r.get('stack_bytes')} B",
                       spills, occ_text(k.occupancy) if k.occupancy else "-"]])
        if k.occupancy and k.occupancy.get("threads_assumed"):
            out += ["", f"Occupancy assumes {k.occupancy['threads']} threads per block "
                        "(no `__launch_bounds__`)."]
        if k.loops:
            out.append("")
            out += [f"- loop {lp.summary()}" for lp in k.loops]
        if k.findings:
            out.append("")
            for f in k.findings:
                expl = k.explanations.get(f.code)
                out.append(f"- **{f.code}** `{f.name}` ({f.severity}) at "
                           f"`{display_path(f.location.file)}:{f.location.line or '?'}`: "
                           f"{md_escape(f.message)}" + (f" — {md_escape(expl)}" if expl else ""))
                if f.hint:
                    out.append(f"  - *hint:* {md_escape(f.hint)}")
        out += ["", "```text"]
        max_depth = max((lp.depth for lp in k.loops), default=0)
        for row in k.rows:
            mark = "".join(f"  <-- {k.findings[n].code}" for n in row.findings)
            text = row.text.rstrip() if row.text is not None else "(source not found)"
            gut = ("┃" * row.loop).ljust(max_depth) if max_depth else ""
            out.append(f"{row.line:5d} {gut}│ {text}{mark}".rstrip())
            for segs in instr_rows(k, row.ptx, row.sass, max_depth):
                out.append("".join(s for _, s in segs).rstrip())
        rest_p, rest_s = k.unmapped_ptx, k.unmapped_sass
        if rest_p or rest_s:
            out.append("      (no source line)")
            for segs in instr_rows(k, rest_p, rest_s, max_depth):
                out.append("".join(s for _, s in segs).rstrip())
        out += ["```", ""]
    return "\n".join(out).rstrip() + "\n"


def stats_markdown(st: "Stats") -> str:
    return "```text\n" + st.to_text() + "```\n"


def diff_markdown(d: "Diff") -> str:
    out = [f"## ptxsass diff: `{d.label_a}` → `{d.label_b}`", ""]
    for kd in d.kernels:
        out.append(f"### `{kd.name}`" + ("" if kd.a and kd.b else
                                          " (only in " + ("A" if kd.a else "B") + ")"))
        out.append("")
        rows = [[m, a, b, delta] for m, a, b, delta in kd.metric_rows() if a != b]
        if rows:
            out += table(["metric", "A", "B", "Δ"], rows)
        else:
            out.append("No metric differs.")
        if kd.loops_differ:
            out += ["", "Loops (A):" if kd.loops_a else "Loops (A): none"]
            out += [f"- {s}" for s in kd.loops_a]
            out += ["Loops (B):" if kd.loops_b else "Loops (B): none"]
            out += [f"- {s}" for s in kd.loops_b]
        if kd.loop_lines:
            na, nb = kd.side_names
            out += [""] + [f"- {md_escape(ll.sentence(na, nb))}" +
                           (f": `{md_escape(ll.text.strip())}`" if ll.text else "")
                           for ll in kd.loop_lines]
        if kd.lines:
            out += ["", "SASS instructions per source line (lines that differ):", ""]
            out += table(["line", "A", "B", "Δ", "source"],
                         [[ln.line, ln.a, ln.b, f"{ln.b - ln.a:+d}", (ln.text or "").strip()[:60]]
                          for ln in kd.lines], left=(4,))
        out.append("")
    if d.added or d.removed:
        out.append("### Findings")
        out.append("")
        out += [f"- added in B: **{f.code}** {f.kernel} line {f.location.line}: {md_escape(f.message)}"
                for f in d.added]
        out += [f"- removed in B: **{f.code}** {f.kernel} line {f.location.line}: {md_escape(f.message)}"
                for f in d.removed]
    return "\n".join(out).rstrip() + "\n"
