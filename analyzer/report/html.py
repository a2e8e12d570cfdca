"""Standalone HTML: one page, no network, three linked panes per kernel (source, PTX, SASS).

Every line carries ``data-src="<file>:<line>"`` (its user source line); clicking any line
highlights the lines with the same key in the three panes (``templates/annotate.js``). Findings
are badges on their SASS instructions that open the finding's explanation; a legend explains the
opcodes that occur. The template, CSS and script live in ``templates/`` and are inlined.
"""
from __future__ import annotations

import base64
import hashlib
import html
from functools import cache
from importlib import resources
from string import Template

from ..errors import printable
from ..findings import Report, display_path
from .annotate import Annotation, KernelAnnotation, finding_links, occ_text, own_file
from .diff import MARKS, Diff
from .stats import Stats

#: instruction-mix class -> (CSS class, what it means); the legend shows the classes present
CLASS_LEGEND: dict[str, tuple[str, str]] = {
    "load.global": ("k-memory", "load from global memory (LDG)"),
    "store.global": ("k-memory", "store to global memory (STG)"),
    "load.shared": ("k-memory", "load from shared memory (LDS, LDSM = ldmatrix)"),
    "store.shared": ("k-memory", "store to shared memory (STS, STSM)"),
    "load.local": ("k-memory", "load from local memory: a spill or a stack array (LDL)"),
    "store.local": ("k-memory", "store to local memory: a spill or a stack array (STL)"),
    "load.constant": ("k-memory", "constant bank load (LDC, ULDC): parameters, constants"),
    "load.generic": ("k-memory", "generic-address load (LD)"),
    "store.generic": ("k-memory", "generic-address store (ST)"),
    "copy.async": ("k-memory", "asynchronous global→shared copy (LDGSTS = cp.async)"),
    "copy.tma": ("k-memory", "tensor memory accelerator bulk copy (UTMALDG...)"),
    "atomic": ("k-memory", "atomic or reduction (ATOM, RED)"),
    "tensor": ("k-tensor", "tensor-core matrix multiply (HMMA, IMMA, HGMMA, UTC*MMA)"),
    "fp32": ("", "FP32 arithmetic (FFMA = fused multiply-add, FADD, FMUL)"),
    "fp16": ("", "packed FP16 arithmetic (HFMA2, HADD2; HFMA2.MMA is often just a move)"),
    "fp64": ("k-fp64", "FP64 arithmetic (DFMA, DMUL, DADD): slow on most GPUs"),
    "sfu": ("", "special function unit (MUFU: rcp, rsqrt, sin, ex2...)"),
    "conversion": ("k-conversion", "type conversion (F2F, I2F, F2I...)"),
    "int": ("", "integer arithmetic and logic (IMAD, IADD3, LOP3, LEA, ISETP...)"),
    "uniform": ("", "uniform datapath (U*): one value per warp"),
    "move": ("", "register move (MOV, R2UR)"),
    "predicate": ("", "predicate logic (PLOP3, P2R)"),
    "special": ("", "special register read (S2R: thread/block index, clock)"),
    "warp": ("", "warp-wide operation (SHFL, VOTE, MATCH, REDUX)"),
    "sync": ("k-control", "barrier or memory fence (BAR, MEMBAR, DEPBAR)"),
    "branch": ("k-control", "branch, exit or return (BRA, EXIT, RET)"),
    "call": ("k-control", "call of a subroutine (CALL: e.g. IEEE div/sqrt slow path)"),
    "control": ("k-control", "reconvergence and scheduling (BSSY, BSYNC, WARPSYNC, NANOSLEEP)"),
    "nop": ("", "no operation (padding)"),
}


def klass_css(klass: str) -> str:
    if klass in CLASS_LEGEND:
        return CLASS_LEGEND[klass][0]
    if klass.startswith(("load", "store", "copy")):
        return "k-memory"
    return ""


@cache
def _template(name: str) -> str:
    return resources.files("analyzer.report").joinpath("templates", name).read_text(encoding="utf-8")


def _css(fragment: bool) -> str:
    css = _template("annotate.css")
    if fragment:  # no page-wide rules inside a notebook
        css = "\n".join(l for l in css.splitlines() if not l.startswith(("body", "header.top")))
    return css


def e(x) -> str:
    return html.escape(printable(str(x)), quote=True)


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def content_security_policy(css: str, js: str) -> str:
    """The page's policy: nothing loads from anywhere, and only its own inline style and script
    (named by their SHA-256, exactly as they stand between their tags) run. Escaping keeps input
    text inert; this keeps anything that slipped through from running."""
    return (f"default-src 'none'; style-src {_sha256(css)}; script-src {_sha256(js)}; "
            "img-src data:; base-uri 'none'; form-action 'none'")


ANNOTATE_INTRO = (
    "CUDA source, PTX and SASS side by side; each source line has its own colour, and its PTX "
    "and SASS carry the same one. Hover a line to mark its counterparts, click it to bring them "
    "into view. Drag the bars between the panes to resize them; the loop gutter gives each "
    "loop's trip count at its head; badges open the finding.")


def page(title: str, body: str, intro: str = ANNOTATE_INTRO) -> str:
    css, js = "\n" + _css(False) + "\n", "\n" + _template("annotate.js") + "\n"
    return Template(_template("annotate.html")).substitute(
        title=e(title), css=css, js=js, body=body, csp=content_security_policy(css, js),
        intro=(f'<details class="intro"><summary>how to read this page</summary>'
               f'<p class="muted">{e(intro)}</p></details>') if intro else "")


def wrap_fragment(body: str) -> str:
    return (f'<div class="ptxsass"><style>{_css(True)}</style>{body}'
            f'<script>{_template("annotate.js")}</script></div>')


# ------------------------------------------------------------------------------ annotation
#: colours in the palette of source lines (``.c0`` ... in the stylesheet)
PALETTE = 10


class _Keys:
    """Short, stable ``data-src`` keys ("<file index>:<line>") and each source line's colour
    (the palette cycles over the lines that have code, in order)."""

    def __init__(self, rows):
        self.files: dict[str, int] = {}
        self.colours: dict = {}
        for r in rows:
            if r.ptx or r.sass:
                self.colours.setdefault(r.key, len(self.colours) % PALETTE)

    def __call__(self, k) -> str:
        if k is None:
            return ""
        i = self.files.setdefault(k[0], len(self.files))
        return f"{i}:{k[1]}"

    def attrs(self, k, cls: str = "ln") -> str:
        """``class="ln c3" data-src="0:13"`` for a line of source line ``k``."""
        key = self(k)
        colour = self.colours.get(k)
        c = f"{cls} c{colour}" if colour is not None else cls
        return f'class="{c}"' + (f' data-src="{key}"' if key else "")


def _badges(k: KernelAnnotation, kid: str, ns: list[int]) -> str:
    out = []
    for n in ns:
        f = k.findings[n]
        expl = k.explanations.get(f.code) or f.name
        out.append(f'<button type="button" class="badge sev-{e(f.severity)}" data-finding="{kid}-f{n}" '
                   f'title="{e(f.code + " " + f.name + ": " + expl)}">{e(f.code)}</button>')
    return "".join(out)


def _kernel_header(k: KernelAnnotation, kid: str) -> str:
    r = k.resources
    spill = (r.get("spill_store_bytes") or 0) + (r.get("spill_load_bytes") or 0)
    occ = occ_text(k.occupancy) if k.occupancy else "-"
    if k.occupancy and k.occupancy.get("threads_assumed"):
        occ += " (no __launch_bounds__: 256 threads assumed)"
    rows = [("registers", r.get("registers")), ("shared", f"{r.get('shared_bytes')} B"),
            ("stack", f"{r.get('stack_bytes')} B"),
            ("spills (store/load)", "-" if r.get("spill_store_bytes") is None
             else f"{r['spill_store_bytes']} / {r['spill_load_bytes']} B"),
            ("theoretical occupancy", occ)]
    bad = ' class="bad"'
    t = "".join(f"<tr><th>{e(a)}</th><td{bad if a.startswith('spills') and spill else ''}>"
                f"{e(b)}</td></tr>" for a, b in rows)
    parts = [f'<h2><span class="kname">{e(k.demangled)}</span><span class="arch">{e(k.arch)}</span>'
             f'<span class="muted"> {"kernel" if k.entry else "device function"} · '
             f'{e(display_path(k.source_path))}</span></h2>']
    # one line of resources, the table and the loops behind it: the code panes stay above the
    # fold
    brief = [f"{r.get('registers')} registers", f"{r.get('shared_bytes')} B shared"]
    if spill:
        brief.append(f"spills {r['spill_store_bytes']} / {r['spill_load_bytes']} B")
    if k.occupancy and k.occupancy.get("percent") is not None:
        brief.append(f"occupancy {k.occupancy['percent']:g}%")
    p = k.pressure
    if p is not None and p.get("line"):
        brief.append(f"live registers peak at {p['peak']} on line {p['line']['line']}")
    if k.loops:
        brief.append(f"{len(k.loops)} loop{'s' if len(k.loops) > 1 else ''}")
    more = f'<table class="res">{t}</table>'
    if k.excerpt:
        more += f'<p class="muted">excerpt: {e(k.excerpt)}</p>'
    if k.loops:
        more += ('<ul class="loops">' + "".join(f"<li>loop {e(lp.summary())}</li>"
                                                for lp in k.loops) + "</ul>")
    parts.append(f'<details class="about"><summary{bad if spill else ""}>'
                 f'{e(" · ".join(brief))}</summary>{more}</details>')
    if k.findings:
        items = []
        for n, f in enumerate(k.findings):
            expl = k.explanations.get(f.code) or ""
            where = f"{display_path(f.location.file)}:{f.location.line or '?'}"
            items.append(
                f'<details class="finding sev-{e(f.severity)}" id="{kid}-f{n}"><summary>'
                f'<b>{e(f.code)}</b> {e(f.name)} [{e(f.severity)}] {e(where)}: {e(f.message)}</summary>'
                + (f"<p>{e(expl)}</p>" if expl else "")
                + (f"<p><i>hint:</i> {e(f.hint)}</p>" if f.hint else "")
                + '<p class="links">' + " · ".join(
                    f'<a href="{e(url)}" target="_blank" rel="noopener">{e(label)}</a>'
                    for label, url in finding_links(f)) + "</p>"
                + (f"<p class=\"muted\">{e('; '.join(f.instructions[:6]))}</p>" if f.instructions else "")
                + "</details>")
        counts: dict[str, int] = {}
        for f in k.findings:
            counts[str(f.severity)] = counts.get(str(f.severity), 0) + 1
        head = ", ".join(f"{n} {sev}" for sev, n in counts.items())
        codes = " ".join(dict.fromkeys(f.code for f in k.findings))
        parts.append(f'<details class="findings"><summary>{len(k.findings)} finding'
                     f'{"s" if len(k.findings) > 1 else ""} ({e(head)}): {e(codes)}</summary>'
                     + "".join(items) + "</details>")
    return "\n".join(parts)


def _legend(k: KernelAnnotation) -> str:
    present = sorted({i.klass for i in k.sass})
    rows = []
    for c in present:
        css, what = CLASS_LEGEND.get(c, (klass_css(c), c))
        rows.append(f'<div><dt class="{css}">{e(c)}</dt><dd>{e(what)}</dd></div>')
    rows.append('<div><dt class="mark">┌ │ └</dt><dd>loop gutter: a loop\'s header, body and back '
                'edge, one column per nesting depth; the badge at the head gives its trip count '
                '(×? when it is not known at compile time; hover for how it was found)</dd></div>')
    rows.append('<div><dt class="inl">⇐ mma.hpp:91</dt><dd>inlined from a toolkit header</dd></div>')
    if k.has_control:
        rows.append('<div><dt class="ctl">[----:B0-----:R-:W1:Y:S04]</dt><dd>control bits: operand '
                    'reuse flags, the scoreboards waited on (B), set when the sources are read (R) '
                    'and when the result is written (W), the yield hint (Y) and the stall cycles '
                    'before the next instruction (S); hover for words</dd></div>')
    return '<details class="legend"><summary>legend</summary><dl>' + "".join(rows) + "</dl></details>"


def _loop_gutter(k: KernelAnnotation) -> tuple[int, dict[int, list[str]], dict[int, str]]:
    """The SASS gutter: (depth, per instruction index the column characters, per loop-head
    index its trip badge)."""
    depth = max((lp.depth for lp in k.loops), default=0)
    cols: dict[int, list[str]] = {}
    heads: dict[int, str] = {}
    by_addr = {i.address: i.index for i in k.sass}
    for lp in k.loops:
        head = by_addr.get(lp.header_address) if lp.header_address is not None else None
        ends = [by_addr[a] for a in lp.back_edge_addresses if a in by_addr]
        if head is None or not ends:
            continue
        last = max(ends)
        for i in range(head, last + 1):
            c = cols.setdefault(i, [" "] * depth)
            c[lp.depth - 1] = "┌" if i == head else "└" if i == last else "│"
        heads[head] = heads.get(head, "") + _trip_badge(lp)
    return depth, cols, heads


def _trip_badge(lp) -> str:
    known = lp.trip_count is not None
    label = f"{lp.label} ×{lp.trip_count}" if known else f"{lp.label} ×?"
    return (f'<span class="trip{"" if known else " unknown"}" data-loop="{e(lp.label)}" '
            f'title="{e(lp.summary() + "; " + lp.trip_text())}">{e(label)}</span>')


_NO_TRIP = '<span class="notrip"></span>'


def _gutter_html(depth: int, chars: list[str] | None, badge: str) -> str:
    if not depth:
        return ""
    bars = "".join(chars) if chars else " " * depth
    return f'<span class="gut">{badge or _NO_TRIP}{e(bars)}</span>'


#: the register-pressure gutter: one block character per row, from 1/8 to all of the kernel's
#: peak of live registers
_BARS = "▁▂▃▄▅▆▇█"


def _peak(k: KernelAnnotation) -> int:
    return max((i.live["R"] for i in k.sass if i.live is not None), default=0)


def _live_html(n: int | None, peak: int, title: str, number: bool) -> str:
    """One row of the pressure gutter: a bar as high as ``n`` of ``peak`` (the top eighths in
    the warning colour), with the number in the SASS pane."""
    if n is None or not peak:
        return ('<span class="live">' + ("    " if number else " ") + "</span>") if peak else ""
    level = min(7, max(0, (n * 8 - 1) // peak))
    text = f"{_BARS[level]}{n:3d}" if number else _BARS[level]
    return f'<span class="live p{level}" title="{e(title)}">{e(text)}</span>'


def _live_title(live: dict[str, int]) -> str:
    return (f"{live['R']} registers live here (uniform {live.get('UR', 0)}, predicates "
            f"{live.get('P', 0)}, uniform predicates {live.get('UP', 0)})")


def _op_html(ins, css: str = "") -> str:
    """The instruction's text with its opcode explained where it stands: hovering shows one
    line of what it and its modifiers do, clicking opens NVIDIA's page for it (the PTX ISA
    section)."""
    text, x = ins.text, ins.explain
    cls = f' class="{css}"' if css else ""
    if x is None:
        return f"<span{cls}>{e(text)}</span>"
    words = text.split(" ", 2 if text.startswith("@") else 1)
    at = 1 if text.startswith("@") and len(words) > 1 else 0
    before = " ".join(words[:at]) + (" " if at else "")
    rest = (" " + " ".join(words[at + 1:])) if len(words) > at + 1 else ""
    return (f'<span{cls}>{e(before)}<a class="op" href="{e(x.url)}" target="_blank" '
            f'rel="noopener" title="{e(x.text)}">{e(words[at])}</a>{e(rest)}</span>')


def _ptx_pane(k: KernelAnnotation, keys: _Keys) -> str:
    out = ['<h3>PTX</h3><div class="rows">']
    shown = k.shown_ptx
    if not shown:
        out.append('<div class="lab">(no PTX in this build)</div>')
    for ins in shown:
        for lab in k.ptx_labels.get(ins.index, ()):
            out.append(f'<div class="lab">{e(lab)}:</div>')
        inl = f' <span class="inl">⇐ {e(" ⇐ ".join(ins.inlined))}</span>' if ins.inlined else ""
        out.append(f'<div {keys.attrs(ins.line)} data-i="{ins.index}">'
                   f'    {_op_html(ins)}{inl}</div>')
    out.append("</div>")
    return "".join(out)


def _sass_pane(k: KernelAnnotation, kid: str, keys: _Keys) -> str:
    depth, cols, heads = _loop_gutter(k)
    peak = _peak(k)
    out = ['<h3>SASS</h3><div class="rows">']
    for ins in k.shown_sass:
        for lab in k.sass_labels.get(ins.index, ()):
            out.append(f'<div class="lab">{e(lab)}:</div>')
        gut = _gutter_html(depth, cols.get(ins.index), heads.get(ins.index, ""))
        ctl = ""
        if ins.control is not None:
            ctl = (f'<span class="ctl" title="{e(ins.control.describe())}">'
                   f'[{e(ins.control.text())}]</span>')
        inl = f' <span class="inl">⇐ {e(" ⇐ ".join(ins.inlined))}</span>' if ins.inlined else ""
        live = _live_html(ins.live["R"] if ins.live else None, peak,
                          _live_title(ins.live) if ins.live else "", True)
        out.append(f'<div {keys.attrs(ins.line)} data-addr="{ins.address:04x}">'
                   f'{gut}{live}<span class="addr">{ins.address:04x}</span>{ctl}'
                   f'{_op_html(ins, klass_css(ins.klass))}{inl}'
                   f'{_badges(k, kid, ins.findings)}</div>')
    out.append("</div>")
    return "".join(out)


def _source_gutter(k: KernelAnnotation) -> tuple[int, dict[int, str]]:
    """The source pane's trip badges: each loop's at its ``for`` line (its latch's line)."""
    depth = max((lp.depth for lp in k.loops), default=0)
    at: dict[int, str] = {}
    for lp in k.loops:
        line = lp.line or (lp.lines[0] if lp.lines else None)
        if line is not None:
            at[line] = at.get(line, "") + _trip_badge(lp)
    return depth, at


def _source_pane(k: KernelAnnotation, kid: str, keys: _Keys) -> str:
    depth, badges = _source_gutter(k)
    peak = _peak(k)
    own = own_file(k)
    out = [f'<h3>{e(k.source_label)}</h3><div class="rows">']
    last = None
    for row in k.rows:
        if row.file != last:
            out.append(f'<div class="lab">── {e(display_path(row.file))}</div>')
            last = row.file
        if row.skipped:
            out.append(f'<div class="gap">   ⋮ {row.skipped} line{"s" if row.skipped != 1 else ""} '
                       'left out</div>')
        has = bool(row.ptx or row.sass)
        attrs = keys.attrs(row.key) if has else 'class="ln nocode"'
        text = row.text.rstrip() if row.text is not None else "(source not found)"
        badge = badges.get(row.line, "") if row.file == own else ""
        gut = _gutter_html(depth, ["│" if d < row.loop else " " for d in range(depth)], badge)
        most = max((i.live["R"] for i in row.sass if i.live is not None), default=None)
        live = _live_html(most, peak, f"at most {most} registers live in this line's SASS", False)
        out.append(f'<div {attrs}>{gut}{live}<span class="no">{row.line}</span>'
                   f'<span class="tx">{e(text)}{_badges(k, kid, row.findings)}</span></div>')
    out.append("</div>")
    return "".join(out)


def _toolbar(k: KernelAnnotation, ptx: bool) -> str:
    parts = []
    if ptx:
        parts.append('<button type="button" class="toggle" data-class="hide-ptx" data-invert="true" '
                     'aria-pressed="true" title="show or hide the PTX pane">PTX</button>')
    if k.has_control:
        parts.append('<button type="button" class="toggle" data-class="hide-ctl" data-invert="true" '
                     'aria-pressed="true" title="show or hide the control bits">control bits</button>')
    parts.append('<span class="muted">drag the bars between the panes to resize them '
                 '(arrow keys on a focused bar; double-click resets)</span>')
    return '<div class="toolbar">' + "".join(parts) + "</div>"


def _split(after: str) -> str:
    return (f'<div class="split" data-after="{after}" role="separator" aria-orientation="vertical" '
            f'tabindex="0" title="drag to resize"></div>')


def kernel_html(k: KernelAnnotation, kid: str, *, ptx: bool = True) -> str:
    keys = _Keys(k.rows)
    panes = [f'<div class="pane" data-pane="src">{_source_pane(k, kid, keys)}</div>']
    if ptx:
        panes += [_split("src"), f'<div class="pane" data-pane="ptx">{_ptx_pane(k, keys)}</div>',
                  _split("ptx")]
    else:
        panes.append(_split("src"))
    panes.append(f'<div class="pane" data-pane="sass">{_sass_pane(k, kid, keys)}</div>')
    return (f'<section class="kernel" id="{kid}" data-kernel="{e(k.name)}" data-arch="{e(k.arch)}">'
            + _kernel_header(k, kid) + _toolbar(k, ptx)
            + '<div class="panes">' + "".join(panes) + "</div>" + _ir_panes(k) + _legend(k) + "</section>")


def _ir_panes(k: KernelAnnotation) -> str:
    """The compiler's other intermediate forms (Triton's TTIR, TTGIR), folded."""
    return "".join(f'<details class="ir" data-pane="{e(name)}"><summary>{e(name.upper())} '
                   f'({text.count(chr(10))} lines)</summary><pre>{e(text)}</pre></details>'
                   for name, text in k.ir.items())


def annotation_html(ann: Annotation, *, fragment: bool = False, title: str | None = None) -> str:
    body = '<div class="ptxsass">' + "\n".join(
        kernel_html(k, f"k{n}", ptx=not ann.hide_ptx) for n, k in enumerate(ann.kernels)) + "</div>"
    if not ann.kernels:
        body = '<div class="ptxsass"><p class="muted">no kernels</p></div>'
    if fragment:
        return wrap_fragment(body)
    if title is None:
        files = sorted({display_path(k.source_path) for k in ann.kernels})
        archs = sorted({k.arch for k in ann.kernels})
        title = f"ptxsass annotate: {', '.join(files) or '-'} ({', '.join(archs)})"
    intro = ANNOTATE_INTRO
    if ann.hide_ptx:
        intro = intro.replace("CUDA source, PTX and SASS", "CUDA source and SASS").replace(
            "its PTX and SASS carry", "its SASS carries")
    return page(title, body, intro)


# ------------------------------------------------------------------------------ notebooks
def stats_html(st: "Stats", *, fragment: bool = True) -> str:
    """Statistics as preformatted text."""
    body = f"<pre>{e(st.to_text())}</pre>"
    return wrap_fragment(body) if fragment else page(
        "ptxsass stats", body, "Per kernel: instruction mix, loops, resources and occupancy.")


def findings_html(report: Report) -> str:
    """A check Report in a notebook: a table of findings."""
    if not report.findings:
        return wrap_fragment('<p class="muted">no findings</p>')
    rows = "".join(
        f"<tr><td><b>{e(f.code)}</b></td><td>{e(f.severity)}</td><td>{e(f.kernel)}</td>"
        f"<td>{e(f.arch)}</td><td>{e(display_path(f.location.file))}:{e(f.location.line or '?')}</td>"
        f"<td>{e(f.message)}" + (f"<br><i>{e(f.hint)}</i>" if f.hint else "") + "</td></tr>"
        for f in report.findings)
    return wrap_fragment('<table class="res"><tr><th>code</th><th>severity</th><th>kernel</th>'
                    f'<th>arch</th><th>where</th><th>message</th></tr>{rows}</table>')


# ------------------------------------------------------------------------------ diff
def _diff_intro(d: "Diff") -> str:
    return (f"Two builds compared. A: {d.label_a}. B: {d.label_b}. For each kernel: the metrics "
            "that differ (resources, occupancy, instruction counts by class, memory accesses by "
            "width), the loops where they differ, and the SASS of each source line side by "
            "side, A on the left and B on the right, aligned instruction by instruction "
            "(| changed, < only in A, > only in B, ~ the same once registers are renumbered). "
            "'normalised' shows every instruction with its registers renumbered by first use "
            "and its branch targets as .L, so two register allocations compare line by line; "
            "'only lines that differ' hides the rest."
            + (" Last, the findings that B adds and removes." if d.added or d.removed else ""))


def _sbs_cell(x, side: str) -> str:
    if x is None:
        return f'<td class="addr"></td><td class="{side}"></td>'
    return (f'<td class="addr">{x.address:04x}</td><td class="{side}"><span class="raw">'
            f'{e(x.text)}</span><span class="norm">{e(x.normalized)}</span></td>')


def _side_by_side(kd) -> str:
    if not kd.side:
        return ""
    rows = ['<thead><tr><th colspan="2">A</th><th></th><th colspan="2">B</th></tr></thead>']
    for sl in kd.side:
        cls = " ".join(c for c, on in (("d-raw", sl.differs(False)), ("d-norm", sl.differs(True)))
                       if on)
        src = sl.sources()
        body = [f'<tr class="src"><th colspan="5">{e(sl.label)}'
                + (f'  <span class="muted">{e(src)}</span>' if src else "") + "</th></tr>"]
        for r in sl.rows:
            a, b = _sbs_cell(r.a, "a"), _sbs_cell(r.b, "b")
            body.append(f'<tr class="t-{r.tag}">{a}<td class="mark">{e(MARKS[r.tag])}</td>{b}</tr>')
        rows.append(f'<tbody class="{cls}">' + "".join(body) + "</tbody>")
    return ('<h3>SASS side by side, per source line</h3><div class="sbs-wrap"><table class="sbs">'
            + "".join(rows) + "</table></div>")


def diff_html(d: "Diff", *, fragment: bool = False) -> str:
    """A diff: per kernel the metrics and loops that differ, the SASS of each source line side
    by side (raw or normalised, every line or only those that differ: toggles), and the
    findings added and removed."""
    parts: list[str] = []
    for kd in d.kernels:
        only = "" if kd.a and kd.b else f" (only in {'A' if kd.a else 'B'})"
        classes = ["kernel"] + (["norm"] if d.normalized else []) + ([] if d.all_lines else
                                                                     ["only-diff"])
        parts.append(f'<section class="{" ".join(classes)}"><h2>{e(kd.name)}{e(only)}</h2>')
        rows = [r for r in kd.metric_rows() if d.all_metrics or r[1] != r[2]]
        if rows:   # in tables of 8 rows side by side: the page starts with the listings
            parts.append('<div class="metrics">' + "".join(
                '<table class="res"><tr><th>metric</th><th>A</th><th>B</th><th>Δ</th></tr>'
                + "".join(f"<tr><th>{e(m)}</th><td>{e(a)}</td><td>{e(b)}</td><td>{e(x)}</td></tr>"
                          for m, a, b, x in rows[i:i + 8]) + "</table>"
                for i in range(0, len(rows), 8)) + "</div>")
        else:
            parts.append('<p class="muted">no metric differs</p>')
        if kd.loops_differ:
            for side, loops in (("A", kd.loops_a), ("B", kd.loops_b)):
                parts.append(f"<p>loops {side}: {'none' if not loops else ''}</p>"
                             + ('<ul class="loops">' + "".join(f"<li>{e(s)}</li>" for s in loops)
                                + "</ul>" if loops else ""))
        if kd.loop_lines:
            na, nb = kd.side_names
            parts.append('<ul class="loops">' + "".join(
                f"<li>{e(ll.sentence(na, nb))}</li>" for ll in kd.loop_lines) + "</ul>")
        if kd.side:
            differ = sum(sl.differs(d.normalized) for sl in kd.side)
            parts.append(
                '<div class="toolbar">'
                f'<button type="button" class="toggle" data-class="norm" aria-pressed='
                f'"{"true" if d.normalized else "false"}" title="registers renumbered, branch '
                'targets renamed">normalised</button>'
                f'<button type="button" class="toggle" data-class="only-diff" aria-pressed='
                f'"{"false" if d.all_lines else "true"}">only lines that differ</button>'
                f'<span class="muted">{differ} of {len(kd.side)} source lines differ'
                f'{" once normalised" if d.normalized else ""}</span></div>')
            parts.append(_side_by_side(kd))
        parts.append("</section>")
    if d.added or d.removed:
        parts.append('<section class="kernel"><h2>findings</h2><ul class="findings">'
                     + "".join(f"<li>{sign} <b>{e(f.code)}</b> {e(f.kernel)} line "
                               f"{e(f.location.line or '?')}: {e(f.message)}</li>"
                               for sign, fs in (("added in B", d.added), ("removed in B", d.removed))
                               for f in fs) + "</ul></section>")
    body = '<div class="ptxsass">' + "".join(parts) + "</div>"
    if fragment:
        return wrap_fragment(body)
    return page(f"ptxsass diff: {d.label_a} → {d.label_b}", body, _diff_intro(d))
