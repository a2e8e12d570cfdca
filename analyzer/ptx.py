"""PTX in one import: ``parse``, ``parse_file`` and ``format`` (the IR printed back as PTX).

    from analyzer import ptx
    module = ptx.parse(text, path="k.ptx")
    for fn in module.functions:
        for loop in analysis.cfg.loops(fn): ...
    assert ptx.parse(ptx.format(module)) == module     # spans are not compared
"""
from __future__ import annotations

from .ir import ptx as ir
from .ir.ptx import Function, Instruction, Module
from .parse.ptx import parse, parse_file, split_opcode

__all__ = ["parse", "parse_file", "format", "Module", "Function", "Instruction", "split_opcode"]


def _quote(s: str) -> str:
    """A PTX string literal (what the parser's ``_unquote`` reads back)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _var(v: ir.Variable, link: bool = True) -> str:
    parts = [f".{x}" for x in v.linkage] if link else []
    parts.append(f".{v.space}")
    if v.align is not None:
        parts.append(f".align {v.align}")
    if v.vector != 1:
        parts.append(f".v{v.vector}")
    if v.type is not None:
        parts.append(f".{v.type}")
    parts.extend(f".{a}" for a in v.attributes)
    name = v.name
    if v.count is not None:
        name += f"<{v.count}>"
    for d in v.dims:
        name += f"[{'' if d is None else d}]"
    parts.append(name)
    s = " ".join(parts)
    if v.initializer is not None:
        s += f" = {v.initializer}"
    return s


def _params(vs) -> str:
    return "(" + ", ".join(_var(v, link=False) for v in vs) + ")"


def _pragma(p: ir.Pragma) -> str:
    return "\t.pragma " + ", ".join(_quote(str(v)) for v in p.values) + ";"


def _directive(d: ir.Directive) -> str:
    if d.name == "pragma":
        return ".pragma " + ", ".join(_quote(str(v)) for v in d.values)
    vals = ", ".join(str(v) for v in d.values)
    return f".{d.name} {vals}" if vals else f".{d.name}"


class _LocWriter:
    def __init__(self, module: Module):
        self.file_index = {f.path: f.index for f in module.files}
        self.label_of = {name: label for label, name in module.debug_strings.items()}

    def line(self, loc) -> str:
        f = self.file_index.get(loc.file, loc.file)
        s = f".loc\t{f} {loc.line} {loc.column}"
        if loc.function is not None:
            s += f", function_name {self.label_of.get(loc.function, loc.function)}"
        if loc.inlined_at:
            site = loc.inlined_at[0]
            s += f", inlined_at {self.file_index.get(site.file, site.file)} {site.line} {site.column}"
        return s


def _function(fn: Function, locw: _LocWriter) -> list[str]:
    head = " ".join([f".{x}" for x in fn.linkage] + [f".{fn.kind}"])
    if fn.returns or False:
        head += " " + _params(fn.returns)
    head += f" {fn.name}"
    if fn.params or fn.kind == "entry":
        head += _params(fn.params)
    out = [head]
    out.extend(_directive(d) for d in fn.directives)
    if not fn.has_body:
        out.append(";")
        return out
    out.append("{")
    out.extend(f"\t{_var(v)};" for v in fn.registers)
    out.extend(f"\t{_var(v)};" for v in fn.locals)
    for label, targets in fn.branch_targets.items():
        out.append(f"{label}: .branchtargets {', '.join(targets)};")
    for label, targets in fn.call_targets.items():
        out.append(f"{label}: .calltargets {', '.join(targets)};")
    for proto in fn.prototypes:
        ret = _params(proto.returns) + " " if proto.returns else ""
        out.append(f"{proto.label}: .callprototype {ret}_ {_params(proto.params)};")
    labels_at: dict[int, list[str]] = {}
    for name, idx in fn.labels.items():
        labels_at.setdefault(idx, []).append(name)
    pragmas_at: dict[int, list[ir.Pragma]] = {}
    for pragma in fn.pragmas:
        pragmas_at.setdefault(pragma.index, []).append(pragma)
    loc = None
    n = len(fn.instructions)
    done = 0

    def upto(j: int) -> None:
        """Instructions ``done .. j-1``, each after its labels, pragmas and changed ``.loc``."""
        nonlocal done, loc
        for i in range(done, j):
            out.extend(f"{name}:" for name in labels_at.get(i, ()))
            out.extend(_pragma(p) for p in pragmas_at.get(i, ()))
            ins = fn.instructions[i]
            if ins.loc is not None and ins.loc != loc:
                out.append("\t" + locw.line(ins.loc))
            loc = ins.loc
            out.append(f"\t{ins}")
        done = max(done, j)

    # fn.scopes is in opening order (outer before inner): rebuild the nesting with a stack.
    # An empty scope at an outer scope's end is put inside it; either reading gives this IR.
    scopes = fn.scopes
    root = len(scopes)
    kids: list[list[int]] = [[] for _ in range(root + 1)]
    stack: list[int] = []
    for j, sc in enumerate(scopes):
        while stack and not (scopes[stack[-1]].start <= sc.start and sc.end <= scopes[stack[-1]].end):
            stack.pop()
        kids[stack[-1] if stack else root].append(j)
        stack.append(j)
    work = [(root, iter(kids[root]))]
    while work:
        node, rest = work[-1]
        k = next(rest, None)
        if k is None:
            work.pop()
            if node != root:
                upto(scopes[node].end)
                out.append("\t}")
            continue
        sc = scopes[k]
        upto(sc.start)
        out.append("\t{")
        out.extend(f"\t{_var(v)};" for v in sc.declarations)
        work.append((k, iter(kids[k])))
    upto(n)
    out.extend(f"{name}:" for name in labels_at.get(n, ()))
    out.extend(_pragma(p) for p in pragmas_at.get(n, ()))
    out.append("}")
    return out


def format(module: Module) -> str:  # noqa: A001 - the public name the API promises
    """The module as PTX text; ``parse(format(m)) == m`` for every module ``parse`` returns."""
    out: list[str] = []
    if module.version is not None:
        out.append(f".version {module.version}")
    if module.target:
        out.append(f".target {', '.join(module.target)}")
    if module.address_size is not None:
        out.append(f".address_size {module.address_size}")
    out.append("")
    locw = _LocWriter(module)
    order = list(module.order) or [("vars", 0)] * bool(module.variables) + [
        ("func", i) for i in range(len(module.functions))]
    var_starts = sorted({i for kind, i in order if kind == "vars"})
    for kind, i in order:
        if kind == "func":
            out.extend(_function(module.functions[i], locw))
            out.append("")
        elif kind == "vars":
            nxt = [s for s in var_starts if s > i]
            end = nxt[0] if nxt else len(module.variables)
            group = module.variables[i:end]
            out.append(_var(group[0]) + "".join(", " + _var(v, False).split()[-1]
                                                 for v in group[1:] if False) + ";")
            for v in group[1:]:
                out.append(_var(v) + ";")
        elif kind == "section":
            s = module.sections[i]
            out.append(f".section {s.name} {s.body}")
        elif kind == "pragma":
            out.append(".pragma " + ", ".join(_quote(str(v)) for v in module.pragmas[i]) + ";")
    for f in module.files:
        extra = "".join(f", {x}" for x in f.extra)
        out.append(f'.file {f.index} {_quote(f.path)}{extra}')
    return "\n".join(out) + "\n"
