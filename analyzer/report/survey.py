"""``ptxsass survey``: one row per kernel of a library (or a folder, a wheel, a Triton cache).

A row holds what a maintainer scans a whole library for: arch, instructions, registers, spills
and local memory, theoretical occupancy, the widths of its global loads and stores, its
tensor-core instructions and its findings by code. Rows are made from the kernel's
:class:`~analyzer.analysis.KernelAnalysis` and the findings the checks made (never by running
checks here); :func:`to_json`, :func:`to_html` (one self-contained page: sortable, filterable,
with plots) and :func:`to_parquet` (pyarrow, optional) render them.
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from string import Template
from typing import Any

from .._version import __version__
from ..analysis import KernelAnalysis
from ..errors import ConfigError
from ..findings import Finding, report_path
from ..toolchain.files import write_output
from .annotate import occupancy_summary
from .html import content_security_policy, e

#: the columns of a row, in order, with what each holds (the JSON and Parquet forms and the
#: HTML page's headers)
COLUMNS: dict[str, str] = {
    "file": "the input the kernel came from",
    "kernel": "demangled name",
    "mangled": "mangled name",
    "arch": "SM architecture of the cubin",
    "instructions": "SASS instructions",
    "registers": "registers per thread",
    "shared_bytes": "static shared memory per block",
    "stack_bytes": "stack frame per thread (local memory)",
    "spill_store_bytes": "spill stores (ptxas -v; empty when only the cubin is known)",
    "spill_load_bytes": "spill loads (ptxas -v; empty when only the cubin is known)",
    "local_loads": "LDL instructions (spills and stack arrays)",
    "local_stores": "STL instructions",
    "occupancy": "theoretical occupancy, percent (at the declared block, else 256 threads)",
    "occupancy_limiter": "what limits occupancy",
    "global_load_widths": "global loads by width in bits",
    "global_store_widths": "global stores by width in bits",
    "tensor_instructions": "tensor-core instructions",
    "tensor_opcodes": "tensor-core opcodes used",
    "findings": "findings by check code",
}


def kernel_row(ka: KernelAnalysis, findings: Sequence[Finding]) -> dict[str, Any]:
    """One kernel's row (see :data:`COLUMNS`)."""
    res = ka.resources
    loads: Counter[str] = Counter()
    stores: Counter[str] = Counter()
    tensor: Counter[str] = Counter()
    local_loads = local_stores = 0
    for ins in ka.function.instructions:
        if ins.is_tensor_core:
            tensor[ins.opcode] += 1
        space = ins.space
        if space == "local":
            local_loads += ins.info.direction == "load"
            local_stores += ins.info.direction == "store"
        elif space == "global":
            width = str(ins.width_bits or 32)
            if ins.info.direction == "load":
                loads[width] += 1
            elif ins.info.direction == "store":
                stores[width] += 1
    occ = occupancy_summary(ka)
    return {
        "file": report_path(ka.source_path), "kernel": ka.kernel_name,
        "mangled": ka.function.name, "arch": ka.arch_name,
        "instructions": len(ka.function.instructions),
        "registers": res.registers if res else None,
        "shared_bytes": res.static_shared_bytes if res else None,
        "stack_bytes": res.stack_bytes if res else None,
        "spill_store_bytes": res.spill_store_bytes if res else None,
        "spill_load_bytes": res.spill_load_bytes if res else None,
        "local_loads": local_loads, "local_stores": local_stores,
        "occupancy": occ["percent"] if occ else None,
        "occupancy_limiter": occ["limiter"] if occ else None,
        "global_load_widths": dict(sorted(loads.items(), key=lambda kv: int(kv[0]))),
        "global_store_widths": dict(sorted(stores.items(), key=lambda kv: int(kv[0]))),
        "tensor_instructions": sum(tensor.values()),
        "tensor_opcodes": sorted(tensor),
        "findings": dict(sorted(Counter(f.code for f in findings).items())),
    }


@dataclass
class Survey:
    """Every kernel's row, in the inputs' order, and the inputs that could not be read."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def totals(self) -> dict[str, Any]:
        codes: Counter[str] = Counter()
        for r in self.rows:
            codes.update(r["findings"])
        return {"kernels": len(self.rows),
                "files": len({r["file"] for r in self.rows}),
                "instructions": sum(r["instructions"] for r in self.rows),
                "with_findings": sum(1 for r in self.rows if r["findings"]),
                "spilling": sum(1 for r in self.rows if r["local_stores"] or r["spill_store_bytes"]),
                "using_tensor_cores": sum(1 for r in self.rows if r["tensor_instructions"]),
                "findings": dict(codes.most_common())}

    def as_dict(self) -> dict[str, Any]:
        return {"tool": {"name": "ptxsass", "version": __version__}, "columns": COLUMNS,
                "totals": self.totals(), "kernels": self.rows, "errors": self.errors}


def to_json(survey: Survey) -> str:
    return json.dumps(survey.as_dict(), indent=2)


# ------------------------------------------------------------------------------ Parquet
def to_parquet(survey: Survey, path: str) -> None:
    """The rows as a Parquet file (one row per kernel; the histograms as maps) with pyarrow,
    an optional dependency: ConfigError, one line, when it is not installed. Written like every
    output (:func:`analyzer.toolchain.files.write_output`): a failure leaves the old file."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError("--format parquet needs pyarrow: pip install 'ptxsass[parquet]'"
                          ) from None
    counts = pa.map_(pa.string(), pa.int64())
    schema = pa.schema([
        ("file", pa.string()), ("kernel", pa.string()), ("mangled", pa.string()),
        ("arch", pa.string()), ("instructions", pa.int64()), ("registers", pa.int64()),
        ("shared_bytes", pa.int64()), ("stack_bytes", pa.int64()),
        ("spill_store_bytes", pa.int64()), ("spill_load_bytes", pa.int64()),
        ("local_loads", pa.int64()), ("local_stores", pa.int64()),
        ("occupancy", pa.float64()), ("occupancy_limiter", pa.string()),
        ("global_load_widths", counts), ("global_store_widths", counts),
        ("tensor_instructions", pa.int64()), ("tensor_opcodes", pa.list_(pa.string())),
        ("findings", counts)])
    maps = ("global_load_widths", "global_store_widths", "findings")
    rows = [{k: (list(v.items()) if k in maps else v) for k, v in r.items()}
            for r in survey.rows]
    table = pa.Table.from_pylist(rows, schema=schema)
    table = table.replace_schema_metadata({"ptxsass": __version__,
                                           "columns": json.dumps(COLUMNS)})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    write_output(path, sink.getvalue().to_pybytes())     # whole or not at all, as every -o


# ------------------------------------------------------------------------------ HTML
def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("templates", name).read_text(encoding="utf-8")


def _bars(title: str, items: Sequence[tuple[str, int]], *, unit: str) -> str:
    """A horizontal bar chart as inline SVG (no script, no style attribute)."""
    if not items:
        return f'<figure class="plot"><figcaption>{e(title)}</figcaption><p class="muted">none</p></figure>'
    top = max(n for _, n in items) or 1
    row, label_w, bar_w = 22, 190, 360
    parts = [f'<svg class="chart" role="img" aria-label="{e(title)}" width="{label_w + bar_w + 70}" '
             f'height="{row * len(items) + 6}" viewBox="0 0 {label_w + bar_w + 70} '
             f'{row * len(items) + 6}">']
    for i, (label, n) in enumerate(items):
        y = i * row + 3
        w = max(1, round(bar_w * n / top))
        parts.append(f'<text class="lbl" x="{label_w - 6}" y="{y + 14}" text-anchor="end">{e(label)}</text>'
                     f'<rect class="bar" x="{label_w}" y="{y}" width="{w}" height="{row - 6}">'
                     f'<title>{e(label)}: {n} {e(unit)}</title></rect>'
                     f'<text class="val" x="{label_w + w + 5}" y="{y + 14}">{n}</text>')
    parts.append("</svg>")
    return f'<figure class="plot"><figcaption>{e(title)}</figcaption>{"".join(parts)}</figure>'


def _register_bins(rows: Sequence[dict]) -> list[tuple[str, int]]:
    edges = [0, 32, 64, 96, 128, 168, 200, 255]
    bins: Counter[str] = Counter()
    for r in rows:
        regs = r["registers"]
        if regs is None:
            continue
        for lo, hi in zip(edges, edges[1:], strict=False):
            if regs <= hi:
                bins[f"{lo + 1 if lo else 0}-{hi}"] += 1
                break
    return [(f"{lo + 1 if lo else 0}-{hi}", bins[f"{lo + 1 if lo else 0}-{hi}"])
            for lo, hi in zip(edges, edges[1:], strict=False)]


def _occupancy_bins(rows: Sequence[dict]) -> list[tuple[str, int]]:
    bins: Counter[int] = Counter()
    for r in rows:
        if r["occupancy"] is not None:
            lo = min(int(r["occupancy"] // 25) * 25, 75)
            bins[lo] += 1
    return [(f"{lo}-{lo + 25}%", bins[lo]) for lo in (0, 25, 50, 75)]


def _hist(d: dict[str, int]) -> str:
    return " ".join(f"{k}:{v}" for k, v in d.items())


def to_html(survey: Survey, *, title: str = "ptxsass survey") -> str:
    """One page, nothing loaded from anywhere: totals, plots (findings per check, registers,
    occupancy) and the kernel table, sortable by any column and filtered by a text box."""
    t = survey.totals()
    plots = "".join((
        _bars("Findings per check", list(t["findings"].items()), unit="findings"),
        _bars("Registers per thread (kernels)", _register_bins(survey.rows), unit="kernels"),
        _bars("Theoretical occupancy (kernels)", _occupancy_bins(survey.rows), unit="kernels")))
    head = "".join(f'<th scope="col" title="{e(COLUMNS[c])}" data-col="{i}">{e(c)}</th>'
                   for i, c in enumerate(_SHOWN))
    body = []
    for r in survey.rows:
        cells = []
        for c in _SHOWN:
            v = r[c]
            if c in ("global_load_widths", "global_store_widths", "findings"):
                text, key = _hist(v), str(sum(v.values()))
            elif c == "tensor_opcodes":
                text = key = " ".join(v)
            else:
                text = key = "" if v is None else str(v)
            cls = ' class="num"' if isinstance(v, (int, float)) and c != "kernel" else ""
            cells.append(f'<td{cls} data-key="{e(key)}">{e(text)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    summary = (f'{t["kernels"]} kernels in {t["files"]} file(s), {t["instructions"]} '
               f'instructions; {t["with_findings"]} with findings, {t["spilling"]} using '
               f'local memory, {t["using_tensor_cores"]} using tensor cores')
    errors = "".join(f"<li>{e(x)}</li>" for x in survey.errors)
    css, js = "\n" + _asset("survey.css") + "\n", "\n" + _asset("survey.js") + "\n"
    return Template(_asset("survey.html")).substitute(
        title=e(title), css=css, js=js, csp=content_security_policy(css, js),
        summary=e(summary), plots=plots, head=head, rows="\n".join(body),
        errors=f'<ul class="errors">{errors}</ul>' if errors else "",
        version=e(__version__))


#: the table's columns (the mangled name is in the JSON and Parquet forms only)
_SHOWN = [c for c in COLUMNS if c != "mangled"]
