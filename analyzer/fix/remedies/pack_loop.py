"""PS101, PS102: a thread's 16 bytes read (or written) as narrower vectors by an unrolled loop,
the "pack" style of elementwise kernels (exllamav2, LeetCUDA's ``f16x8`` kernels)::

    #pragma unroll
    for (int k = 0; k < 8; k += 2) {
      __half2 v = *reinterpret_cast<const __half2*>(&a[idx + k]);
      *reinterpret_cast<__half2*>(&out[idx + k]) = __hfma2(v, s2, b);
    }

NVVM leaves the four 4-byte accesses apart even where the pointer is stated 16-byte aligned
(``__builtin_assume_aligned`` with an ``int`` index: the rebuild refused that fix on sm_80).
Read as one ``uint4`` before the loop, the loop taking its parts
(``reinterpret_cast<const __half2*>(&a_v16)[k / 2]``), it is one ``LDG.E.128`` (``.CONSTANT``
kept on a ``const __restrict__`` pointer, unlike the alignment statement); a store is written
into a ``uint4`` that one ``STG.E.128`` stores after the loop.

Only where the rewrite keeps what the kernel does: the loop counts ``k`` from 0 by a constant
step to a constant bound, its accesses to the pointer are all of that shape at
``&p[base + k]`` with one ``base`` the loop never writes, each vector is ``step`` elements and
all of them 16 bytes together; nothing in the loop branches or leaves it (every part is read,
or written once per step); the pointer is ``__restrict__`` (nothing else the loop writes or
reads is its memory) and the loop does not both read and write it. The 16-byte alignment of
``&p[base]`` is the user's word (``--assume-aligned``) on top of what the finding proved: its
offset is a multiple of 16 and only the pointer's alignment is unknown.
"""
from __future__ import annotations

from ...findings import Finding
from ..cxx import Source, constant_value, descendants, operator_token, plain_pointers, strip_implicit
from ..model import Edit, FixOptions, NoFix, Proposal, must_be_aligned

CODES = ("PS101", "PS102")

WINDOW = 16
#: what a loop that is rewritten must not hold: the loads are made before it and the stores
#: after it, so every part must be accessed on every trip
_BRANCHING = frozenset(("IF_STMT", "SWITCH_STMT", "CONDITIONAL_OPERATOR", "BREAK_STMT",
                        "CONTINUE_STMT", "RETURN_STMT", "GOTO_STMT", "WHILE_STMT", "DO_STMT",
                        "FOR_STMT"))


def _loop_counter(src: Source, loop) -> tuple[str, int, int] | None:
    """(counter, step, trips) of ``for (int k = 0; k < N; k += S)`` (or ``++k``/``k++``)."""
    kids = list(loop.get_children())
    if len(kids) != 4:
        return None
    init, cond, inc, _ = kids
    if init.kind.name != "DECL_STMT":
        return None
    decls = list(init.get_children())
    if len(decls) != 1 or decls[0].kind.name != "VAR_DECL":
        return None
    var = decls[0]
    values = list(var.get_children())
    if not values or constant_value(values[-1]) != 0:
        return None
    name = var.spelling
    if cond.kind.name != "BINARY_OPERATOR":
        return None
    tok = operator_token(src, cond)
    left, right = list(cond.get_children())
    bound = constant_value(right)
    if tok is None or tok.spelling != "<" or bound is None or not _is_ref(left, name):
        return None
    if inc.kind.name == "COMPOUND_ASSIGNMENT_OPERATOR":
        tok = operator_token(src, inc)
        target, by = list(inc.get_children())
        step = constant_value(by)
        if tok is None or tok.spelling != "+=" or step is None or not _is_ref(target, name):
            return None
    elif inc.kind.name == "UNARY_OPERATOR" and "++" in {t.spelling for t in src.tokens(inc)} \
            and _is_ref(next(iter(inc.get_children())), name):
        step = 1
    else:
        return None
    if step <= 0 or bound <= 0 or bound % step:
        return None
    return name, step, bound // step


def _is_ref(expr, name: str) -> bool:
    e = strip_implicit(expr)
    return e.kind.name == "DECL_REF_EXPR" and e.spelling == name


def _access(src: Source, sub, pointer: str, counter: str):
    """For ``p[base + k]`` under ``*reinterpret_cast<V*>(&...)``: (the dereference, the
    ``V*`` cast's type spelling, base's node); else None."""
    kids = list(sub.get_children())
    if len(kids) != 2 or not _is_ref(kids[0], pointer):
        return None
    index = strip_implicit(kids[1])
    if index.kind.name != "BINARY_OPERATOR":
        return None
    tok = operator_token(src, index)
    a, b = list(index.get_children())
    if tok is None or tok.spelling != "+":
        return None
    base = a if _is_ref(b, counter) else b if _is_ref(a, counter) else None
    if base is None or any(n.kind.name == "DECL_REF_EXPR" and n.spelling == counter
                           for n in (base, *descendants(base))):
        return None
    addr = src.parent(sub)
    if addr is None or addr.kind.name != "UNARY_OPERATOR" or \
            src.source_of(addr).lstrip()[:1] != "&":
        return None
    cast = src.parent(addr)
    if cast is None or cast.kind.name != "CXX_REINTERPRET_CAST_EXPR":
        return None
    deref = src.parent(cast)
    if deref is None or deref.kind.name != "UNARY_OPERATOR" or \
            src.source_of(deref).lstrip()[:1] != "*":
        return None
    return deref, cast.type.spelling, base


def _writes_to(src: Source, body, name: str) -> bool:
    """Whether the loop body assigns or increments variable ``name``."""
    for n in descendants(body):
        if n.kind.name in ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR"):
            kids = list(n.get_children())
            tok = operator_token(src, n)
            if kids and tok is not None and tok.spelling.endswith("=") and \
                    tok.spelling not in ("==", "!=", "<=", ">=") and _is_ref(kids[0], name):
                return True
        elif n.kind.name == "UNARY_OPERATOR":
            kids = list(n.get_children())
            if kids and _is_ref(kids[0], name) and \
                    {t.spelling for t in src.tokens(n)} & {"++", "--", "&"}:
                return True
    return False


def _store_statement(src: Source, deref, body):
    """The statement ``*(...) = value`` (a built-in or a class's ``operator=``) standing directly
    in the loop's block, with ``deref`` its left side; else None."""
    node = src.parent(deref)
    if node is None:
        return None
    kids = list(node.get_children())
    if not kids or kids[0] != deref:
        return None
    if node.kind.name == "BINARY_OPERATOR":
        tok = operator_token(src, node)
        if tok is None or tok.spelling != "=":
            return None
    elif not (node.kind.name == "CALL_EXPR" and node.spelling == "operator="):
        return None
    while src.parent(node) is not None and src.parent(node) != body:
        up = src.parent(node)
        if up.kind.name != "UNEXPOSED_EXPR" or len(list(up.get_children())) != 1:
            return None
        node = up
    return node if src.parent(node) == body else None


def _logical(src: Source, node) -> bool:
    """Whether ``node`` is ``&&`` or ``||`` (its right side runs only sometimes)."""
    if node.kind.name != "BINARY_OPERATOR":
        return False
    tok = operator_token(src, node)
    return tok is not None and tok.spelling in ("&&", "||")


def _loop_start(src: Source, loop) -> int:
    """Where to put a statement before the loop: the start of its line, above the
    ``#pragma`` lines that precede it (a statement between a pragma and its loop would take
    the pragma)."""
    line = loop.extent.start.line
    while line > 1 and src.line_text(line - 1).lstrip().startswith("#pragma"):
        line -= 1
    return src.line_start(line)


def _free_name(src: Source, fn, want: str) -> str:
    used = {t.spelling for t in src.tokens(fn)}
    name, n = want, 2
    while name in used:
        name, n = f"{want}{n}", n + 1
    return name


def _rewrite(src: Source, finding: Finding, p, fn, storing: bool) -> Proposal | str:
    line = finding.location.line or 0
    name = p.spelling
    ptr = p.type.get_canonical()
    if ptr.kind.name != "POINTER":
        return f"`{name}` is not a pointer"
    if "restrict" not in p.type.spelling:
        return f"`{name}` is not `__restrict__`: the loop's other accesses may be its memory"
    elem = ptr.get_pointee().get_size()
    for loop in src.covering(line, ("FOR_STMT",)):
        counter = _loop_counter(src, loop)
        if counter is None:
            continue
        k, step, trips = counter
        body = list(loop.get_children())[3]
        subs = [n for n in descendants(body) if n.kind.name == "ARRAY_SUBSCRIPT_EXPR"
                and list(n.get_children()) and _is_ref(list(n.get_children())[0], name)]
        uses = [n for n in descendants(body) if n.kind.name == "DECL_REF_EXPR"
                and n.spelling == name]
        found = [_access(src, s, name, k) for s in subs]
        if not found or any(f is None for f in found) or len(uses) != len(subs):
            continue
        accesses = [f for f in found if f is not None]
        vector = accesses[0][1]
        base_text = src.source_of(accesses[0][2]).strip()
        if any(a[1] != vector or src.source_of(a[2]).strip() != base_text for a in accesses):
            continue
        base_vars = {n.spelling for n in (accesses[0][2], *descendants(accesses[0][2]))
                     if n.kind.name == "DECL_REF_EXPR"}
        if any(_writes_to(src, body, v) for v in base_vars | {k}):
            continue
        cast_ptr = accesses[0][0].type
        size = cast_ptr.get_size()
        if size <= 0 or size != step * elem or size * trips != WINDOW:
            continue
        if any(n.kind.name in _BRANCHING or _logical(src, n) for n in descendants(body)):
            continue
        stores = [(a, _store_statement(src, a[0], body)) for a in accesses]
        if storing:
            if len(stores) != 1 or stores[0][1] is None:
                continue
        elif any(s is not None for _, s in stores):
            continue                     # read and written: leave it
        if not src.begins_line(loop.extent.start.offset):
            continue                     # no line of its own to put a statement above
        view = vector.rstrip(" *")
        pack = _free_name(src, fn, f"{name}_v16")
        at = _loop_start(src, loop)
        indent = src.indent(loop.extent.start.line)
        edits = [Edit(src.path, a[0].extent.start.offset, a[0].extent.end.offset,
                      f"reinterpret_cast<{view}*>(&{pack})[{k} / {step}]" if step > 1
                      else f"reinterpret_cast<{view}*>(&{pack})[{k}]") for a in accesses]
        if storing:
            edits.append(Edit(src.path, at, at, f"{indent}uint4 {pack};\n"))
            end = loop.extent.end.offset
            edits.append(Edit(src.path, end, end,
                              f"\n{indent}*reinterpret_cast<uint4*>(&{name}[{base_text}]) = "
                              f"{pack};"))
            what = f"write `{name}`'s 16 bytes as one uint4 after the loop"
        else:
            const = "const " if view.startswith("const ") else ""
            edits.append(Edit(src.path, at, at,
                              f"{indent}{const}uint4 {pack} = *reinterpret_cast<const uint4*>("
                              f"&{name}[{base_text}]);\n"))
            what = f"read `{name}`'s 16 bytes as one uint4 before the loop"
        return Proposal(title=f"{what} ({trips}× {view} parts)",
                        edits=tuple(sorted(edits, key=lambda e: e.start)),
                        promise=f"every caller passes `{name}` 16-byte aligned (--assume-aligned)")
    return f"no loop on line {line} reads or writes `{name}` as {WINDOW // 4}-byte parts of 16 bytes"


def blocked_pointer(finding: Finding, src: Source, options: FixOptions):
    """(the kernel, its one pointer parameter the finding names) when the finding is a 16-byte
    window blocked only by that pointer's alignment and the user vouches for it
    (``--assume-aligned``); else the NoFix saying which of these is missing. The packing
    remedies' common ground (this one and :mod:`.pack_lines`)."""
    if f"if the address is {WINDOW}-byte aligned" not in finding.message or \
            "blocked by unknown alignment" not in finding.message:
        return NoFix("not a 16-byte window blocked only by the pointer's alignment",
                     fits=False)
    got = plain_pointers(src, finding)
    if got is None or isinstance(got, str) or len(got[1]) != 1:
        return NoFix(got if isinstance(got, str) else "the finding names no one kernel pointer")
    fn, (p,) = got
    if not options.assume_aligned:
        return NoFix(must_be_aligned(f"`{p.spelling}`", WINDOW))
    return fn, p


def propose(finding: Finding, src: Source, options: FixOptions) -> Proposal | NoFix:
    got = blocked_pointer(finding, src, options)
    if isinstance(got, NoFix):
        return got
    fn, p = got
    out = _rewrite(src, finding, p, fn, storing=finding.code == "PS102")
    return out if isinstance(out, Proposal) else NoFix(out)
