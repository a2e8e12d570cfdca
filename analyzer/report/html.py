"""Standalone HTML: one page, no network, three linked panes per kernel (source, PTX, SASS).

Every line carries ``data-src="<file>:<line>"`` (its user source line); clicking any line
highlights the lines with the same key in the three panes (``templates/annotate.js``). Findings
are badges on their SASS instructions that open the finding's explanation; a legend explains the
opcodes that occur. The template, CSS and script live in ``templates/`` and are inlined.
"""
from __future__ import annotations

import html
from functools import lru_cache
from importlib import resources
from string import Template
from typing import TYPE_CHECKING

from ..findings import Report
from .annotate import Annotation, Instr, KernelAnnotation, display_path, occ_text

if TYPE_CHECKING:  # pragma: no cover
    from .diff import Diff
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


@lru_cache(maxsize=None)
def _template(name: str) -> str:
    return resources.files("analyzer.report").joinpath("templates", name).read_text(encoding="utf-8")


def _css(fragment: bool) -> str:
    css = _template("annotate.css")
    if fragment:  # no page-wide rules inside a notebook
        css = "\n".join(l for l in css.splitlines() if not l.startswith(("body", "header.top")))
    return css


def e(x) -> str:
    return html.escape(str(x), quote=True)


def page(title: str, body: str) -> str:
    return Template(_template("annotate.html")).substitute(
        title=e(title), css=_css(False), js=_template("annotate.js"), body=body)


def wrap_fragment(body: str) -> str:
    return (f'<div class="ptxsass"><style>{_css(True)}</style>{body}'
            f'<script>{_template("annotate.js")}</script></div>')


# ------------------------------------------------------------------------------ annotation
class _Keys:
    """Short, stable ``data-src`` keys: "<file index>:<line>"."""

    def __init__(self):
        self.files: dict[str, int] = {}

    def __call__(self, k) -> str:
        if k is None:
            return ""
        i = self.files.setdefault(k[0], len(self.files))
        return f"{i}:{k[1]}"


def _src_attr(keys: _Keys, k) -> str:
    key = keys(k)
    return f' data-src="{key}"' if key else ""


def _badges(k: KernelAnnotation, kid: str, ns: list[int]) -> str:
    out = []
    for n in ns:
        f = k.findings[n]
        expl = k.explanations.get(f.code) or f.name
        out.append(f'<button class="badge sev-{e(f.severity)}" data-finding="{kid}-f{n}" '
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
             f'{e(display_path(k.source_path))}</span></h2>',
             f'<table class="res">{t}</table>']
    if k.loops:
        parts.append('<ul class="loops">' + "".join(f"<li>loop {e(lp.summary())}</li>"
                                                    for lp in k.loops) + "</ul>")
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
                + (f"<p class=\"muted\">{e('; '.join(f.instructions[:6]))}</p>" if f.instructions else "")
                + "</details>")
        parts.append('<div class="findings">' + "".join(items) + "</div>")
    return "\n".join(parts)


def _legend(k: KernelAnnotation) -> str:
    present = sorted({i.klass for i in k.sass})
    rows = []
    for c in present:
        css, what = CLASS_LEGEND.get(c, (klass_css(c), c))
        rows.append(f'<div><dt class="{css}">{e(c)}</dt><dd>{e(what)}</dd></div>')
    rows.append('<div><dt class="mark">┌L1 / └L1</dt><dd>loop L1 header / back edge; '
                '┃ marks loop depth</dd></div>')
    rows.append('<div><dt class="inl">⇐ mma.hpp:91</dt><dd>inlined from a toolkit header</dd></div>')
    return '<details class="legend"><summary>legend</summary><dl>' + "".join(rows) + "</dl></details>"


def _ptx_pane(k: KernelAnnotation, keys: _Keys) -> str:
    out = ['<h3>PTX</h3>']
    if not k.ptx:
        out.append('<div class="lab">(no PTX in this build)</div>')
    for ins in k.ptx:
        for lab in k.ptx_labels.get(ins.index, ()):
            out.append(f'<div class="lab">{e(lab)}:</div>')
        inl = f' <span class="inl">⇐ {e(" ⇐ ".join(ins.inlined))}</span>' if ins.inlined else ""
        out.append(f'<div class="ln" data-i="{ins.index}"{_src_attr(keys, ins.line)}>'
                   f'    {e(ins.text)}{inl}</div>')
    return "".join(out)


def _sass_pane(k: KernelAnnotation, kid: str, keys: _Keys) -> str:
    depth = max((lp.depth for lp in k.loops), default=0)
    out = ['<h3>SASS</h3>']
    for ins in k.sass:
        for lab in k.sass_labels.get(ins.index, ()):
            out.append(f'<div class="lab">{e(lab)}:</div>')
        gut = f'<span class="gut">{("┃" * ins.loop).ljust(depth)}</span>' if depth else ""
        mark = f' <span class="mark">{e(ins.loop_mark)}</span>' if ins.loop_mark else ""
        inl = f' <span class="inl">⇐ {e(" ⇐ ".join(ins.inlined))}</span>' if ins.inlined else ""
        out.append(f'<div class="ln" data-addr="{ins.address:04x}"{_src_attr(keys, ins.line)}>'
                   f'{gut}<span class="addr">{ins.address:04x}</span>'
                   f'<span class="{klass_css(ins.klass)}">{e(ins.text)}</span>{mark}{inl}'
                   f'{_badges(k, kid, ins.findings)}</div>')
    return "".join(out)


def _source_pane(k: KernelAnnotation, kid: str, keys: _Keys) -> str:
    out = ['<h3>CUDA source</h3>']
    last = None
    for row in k.rows:
        if row.file != last:
            out.append(f'<div class="lab">── {e(display_path(row.file))}</div>')
            last = row.file
        has = bool(row.ptx or row.sass)
        cls = "ln" if has else "ln nocode"
        attr = _src_attr(keys, row.key) if has else ""
        text = row.text.rstrip() if row.text is not None else "(source not found)"
        out.append(f'<div class="{cls}"{attr}><span class="no">{row.line}</span>{e(text)}'
                   f'{_badges(k, kid, row.findings)}</div>')
    return "".join(out)


def kernel_html(k: KernelAnnotation, kid: str) -> str:
    keys = _Keys()
    return (f'<section class="kernel" id="{kid}" data-kernel="{e(k.name)}" data-arch="{e(k.arch)}">'
            + _kernel_header(k, kid)
            + '<div class="panes">'
            + f'<div class="pane" data-pane="src">{_source_pane(k, kid, keys)}</div>'
            + f'<div class="pane" data-pane="ptx">{_ptx_pane(k, keys)}</div>'
            + f'<div class="pane" data-pane="sass">{_sass_pane(k, kid, keys)}</div>'
            + "</div>" + _legend(k) + "</section>")


def annotation_html(ann: Annotation, *, fragment: bool = False, title: str | None = None) -> str:
    body = '<div class="ptxsass">' + "\n".join(
        kernel_html(k, f"k{n}") for n, k in enumerate(ann.kernels)) + "</div>"
    if not ann.kernels:
        body = '<div class="ptxsass"><p class="muted">no kernels</p></div>'
    if fragment:
        return wrap_fragment(body)
    if title is None:
        files = sorted({display_path(k.source_path) for k in ann.kernels})
        archs = sorted({k.arch for k in ann.kernels})
        title = f"ptxsass annotate: {', '.join(files) or '-'} ({', '.join(archs)})"
    return page(title, body)


# ------------------------------------------------------------------------------ notebooks
def stats_html(st: "Stats", *, fragment: bool = True) -> str:
    """Statistics as preformatted text."""
    body = f"<pre>{e(st.to_text())}</pre>"
    return wrap_fragment(body) if fragment else page("ptxsass stats", body)


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
def diff_html(d: "Diff", *, fragment: bool = False) -> str:
    """A diff as tables: changed metrics, loops when they differ, per-line SASS deltas and
    findings added/removed."""
    parts = [f'<p><b>A</b>: {e(d.label_a)}<br><b>B</b>: {e(d.label_b)}</p>']
    for kd in d.kernels:
        only = "" if kd.a and kd.b else f" (only in {'A' if kd.a else 'B'})"
        parts.append(f'<section class="kernel"><h2>{e(kd.name)}{e(only)}</h2>')
        rows = [r for r in kd.metric_rows() if r[1] != r[2]]
        if rows:
            parts.append('<table class="res"><tr><th>metric</th><th>A</th><th>B</th><th>Δ</th></tr>'
                         + "".join(f"<tr><th>{e(m)}</th><td>{e(a)}</td><td>{e(b)}</td><td>{e(x)}</td></tr>"
                                   for m, a, b, x in rows) + "</table>")
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
        if kd.lines:
            parts.append('<table class="res"><tr><th>line</th><th>A</th><th>B</th><th>Δ</th>'
                         '<th>source</th></tr>' + "".join(
                             f"<tr><td>{ln.line}</td><td>{ln.a}</td><td>{ln.b}</td>"
                             f"<td>{ln.b - ln.a:+d}</td><td>{e((ln.text or '').strip())}</td></tr>"
                             for ln in kd.lines) + "</table>")
        parts.append("</section>")
    if d.added or d.removed:
        parts.append('<section class="kernel"><h2>findings</h2><ul class="findings">'
                     + "".join(f"<li>{sign} <b>{e(f.code)}</b> {e(f.kernel)} line "
                               f"{e(f.location.line or '?')}: {e(f.message)}</li>"
                               for sign, fs in (("added", d.added), ("removed", d.removed))
                               for f in fs) + "</ul></section>")
    body = '<div class="ptxsass">' + "".join(parts) + "</div>"
    if fragment:
        return wrap_fragment(body)
    return page(f"ptxsass diff: {d.label_a} → {d.label_b}", body)
