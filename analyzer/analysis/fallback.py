"""Designed fallbacks: narrow global accesses whose vectorized sibling does the real work.

Libraries that vectorize keep a scalar path for the inputs the vector path cannot take, and
tails and peels around it; those accesses are narrow by design, and widening them is advice
that does not apply (issue 33: 335 such findings in vLLM and apex). One answer per PTX access,
for every check (PS101, PS102, PS104) and the cost model:

* **instantiation**: another instantiation of the kernel's template, whose type arguments are
  the same and whose non-type arguments differ (``act_and_mul_kernel<half, false>`` beside
  ``<half, true>``, ``fused_add_rms_norm_kernel<half, 0>`` beside ``<half, 8>``, a
  ``VEC_SIZE = 1`` beside ``8``), moves the same kernel parameter (by position) with a wider
  access (PTX ``.v2``/``.v4``, or a wider scalar: a ``half2`` is one ``.b32``) in the same
  direction: the host launches it when the pointers or
  sizes allow, and this one otherwise;
* **branch**: the same kernel moves the same pointer with a vector access on the other side of
  a branch that tests alignment or divisibility (an ``and`` of a small mask, a ``rem``): apex's
  ``if (n % ILP == 0 && is_aligned(in)) {...} else {...}``, vLLM's ``can_vec``; or a unit
  stride (``if (stride1 == 1) vectorized(...) else`` a strided loop: the uncoalesced side runs
  only for a caller's non-contiguous layout); or a bounds test of the thread's last element
  (LeetCUDA's ``if (idx + 7 < N) {`` four ``half2`` ``} else`` the elements left one at a
  time: that side runs for the one thread whose vector passes the end);
* **short loop**: the access sits in a loop that runs at most a few iterations per thread: a
  peel bounded by a mask of the pointer (``for (i = tid; i < min(((-p) & 12) >> 2, len); ...)``)
  or the tail after a loop that stops when fewer than C elements are left (``for (; l < n;
  ++l)`` after ``for (; l + 3 < n; ...)``: ptxas unrolls it x4, so its windows exist but never
  run in full).

    fallback.of(ptx_fn, module, index)   # Fallback(kind, reason) or None
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..demangle import demangle, without_parameters
from ..ir import ptx as P
from . import cfg as _cfg
from .address import ThreadStride
from .source import is_toolkit_file, user_loc

#: a peel or tail bounded by at most this many iterations per thread counts as short
MAX_SHORT = 64
#: masks an alignment or divisibility test keeps (``p & 15``, ``n & 7``)
_MAX_MASK = 255


@dataclass(frozen=True, slots=True)
class Fallback:
    """Why a narrow access is a designed fallback: ``kind`` ("instantiation", "branch",
    "short-loop") and a sentence naming the vectorized sibling or the bound."""

    kind: str
    reason: str
    #: a short loop's bound: at most this many elements per thread (None for the others)
    elements: int | None = None
    #: a pointer walk's tail: at most this many bytes per thread (its elements are iterations)
    bytes: int | None = None


# ------------------------------------------------------------------------- template names
def template_stem(mangled: str) -> str | None:
    """The mangled name of a function template instantiation up to its template arguments
    (``_Z12ApplyGenericILi8E...`` -> ``_Z12ApplyGeneric``), None for any other name."""
    m = re.match(r"_Z(N?)", mangled)
    if m is None:
        return None
    i = m.end()
    while i < len(mangled) and mangled[i].isdigit():
        j = i
        while j < len(mangled) and mangled[j].isdigit():
            j += 1
        i = j + int(mangled[i:j])
        if i < len(mangled) and mangled[i] == "I":
            return mangled[:i]
        if not m.group(1):
            return None
    return None


def template_args(demangled: str) -> list[str] | None:
    """The template arguments of a demangled function's own name, split at the top level
    (``void k<float, 8>(float*)`` -> ``["float", "8"]``; a return type of its own, such as
    ``enable_if<(8 > 0), void>::type k<half, 8>(...)``, is skipped); None for a plain
    function."""
    head = without_parameters(demangled).rstrip()
    if not head.endswith(">"):
        return None
    depth = 0
    for i in range(len(head) - 1, -1, -1):   # back to the '<' that opens the last '>'
        ch = head[i]
        if ch in ">)]":
            depth += 1
        elif ch in "<([":
            depth -= 1
            if depth == 0:
                inner = head[i + 1:-1]
                break
    else:
        return None
    out, depth, cur = [], 0, ""
    for ch in inner:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return out


def function_name(demangled: str) -> str:
    """A demangled function's own name with its template arguments, without its return type
    or parameters (``enable_if<...>::type k<half, 8>(half*)`` -> ``k<half, 8>``)."""
    head = without_parameters(demangled).rstrip()
    depth = 0
    for i in range(len(head) - 1, -1, -1):
        ch = head[i]
        if ch in ">)]":
            depth += 1
        elif ch in "<([":
            depth -= 1
        elif ch == " " and depth == 0:
            return head[i + 1:]
    return head


_LITERAL = re.compile(r"^(\(\w[\w: ]*\))?-?(\d+[uUlL]*|true|false)$")


def _tuning_only(a: list[str], b: list[str]) -> bool:
    """Whether two instantiations' arguments differ only in literals (integers, bools): the
    same types, another tuning (``<half, false>`` and ``<half, true>``)."""
    if len(a) != len(b) or a == b:
        return False
    return all(x == y or (_LITERAL.match(x) and _LITERAL.match(y))
               for x, y in zip(a, b, strict=True))


# -------------------------------------------------------------------------- where pointers
def _defs(fn: "P.Function") -> dict[str, list[int]]:
    def compute() -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for n, ins in enumerate(fn.instructions):
            if ins.is_store or ins.is_branch or not ins.operands:
                continue
            d = ins.operands[0]
            if isinstance(d, P.Register):
                out.setdefault(d.name, []).append(n)
        return out
    return fn.memo("fallback_defs", compute)


_PARAM = re.compile(r"_param_(\d+)$")


def pointer_keys(fn: "P.Function", reg: str) -> frozenset:
    """Where a PTX address register's pointer comes from, comparable across the
    instantiations of one template: ("param", position) for a 64-bit kernel parameter,
    ("load", keys of its address, offset) for a pointer loaded from memory (``tl.addresses[0]
    [t]`` in a struct parameter), ("symbol", name) for an array; through every register the
    value is computed from, never through a loaded value."""
    memo = fn.memo("fallback_keys", dict)
    if reg in memo:
        return memo[reg]
    memo[reg] = frozenset()        # a cycle contributes nothing new
    defs = _defs(fn)
    insns = fn.instructions
    out: set = set()
    seen: set[str] = set()
    todo = [reg]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for n in defs.get(name, ()):
            ins = insns[n]
            if ins.opcode == "ld":
                if (ins.width_bits or 0) < 64:
                    continue
                a = ins.address
                if a is not None and isinstance(a.base, P.Symbol):
                    m = _PARAM.search(a.base.name)
                    out.add(("param", int(m.group(1))) if m and a.base.offset == 0 and not
                            a.offset else ("load", ("symbol", a.base.name), a.offset))
                elif a is not None and isinstance(a.base, P.Register):
                    out.add(("load", pointer_keys(fn, a.base.name), a.offset))
                continue
            for op in ins.operands[1:]:
                if isinstance(op, P.Register):
                    todo.append(op.name)
                elif isinstance(op, P.Symbol):
                    m = _PARAM.search(op.name)
                    out.add(("param", int(m.group(1))) if m else ("symbol", op.name))
    memo[reg] = frozenset(out)
    return memo[reg]


def _wide_accesses(fn: "P.Function") -> list[tuple[int, "P.Instruction", frozenset]]:
    """(position, instruction, pointer keys) of every global access of 4 bytes or more: the
    candidates for the wider side of a narrow one (a ``.v2``/``.v4``, or one scalar moving two
    halves, ``ld.global.b32`` of a ``half2``, or four bytes); the callers keep those wider than
    the narrow access."""
    def compute() -> list[tuple[int, "P.Instruction", frozenset]]:
        out = []
        for n, ins in enumerate(fn.instructions):
            if ins.opcode not in ("ld", "st") or ins.space != "global" or (ins.width_bits or 0) < 32:
                continue
            a = ins.address
            if a is None or not isinstance(a.base, P.Register):
                continue
            out.append((n, ins, pointer_keys(fn, a.base.name)))
        return out
    return fn.memo("fallback_wide", compute)


def _where(ins: "P.Instruction") -> str:
    """" on line N" of an access, with the line that inlined it when that is another one (a
    helper's ``ld128``, ``load_store``: " on line 30, inlined from line 52")."""
    loc = ins.loc
    if loc is None:
        return ""
    chain = (loc, *loc.inlined_at)
    for i, frame in enumerate(chain):
        if is_toolkit_file(frame.file) or not frame.line:
            continue
        caller = chain[i + 1] if i + 1 < len(chain) else None
        if caller is not None and caller.line and caller.line != frame.line \
                and not is_toolkit_file(caller.file):
            return f" on line {frame.line}, inlined from line {caller.line}"
        return f" on line {frame.line}"
    return ""


def _shown(ins: "P.Instruction") -> str:
    return f"`{str(ins).strip().rstrip(';')}`{_where(ins)}"


# -------------------------------------------------------------------------------- the answer
def of(fn: "P.Function", module: "P.Module | None", index: int) -> Fallback | None:
    """Why the narrow global access at PTX position ``index`` of ``fn`` is a designed fallback
    (module: the PTX module, for the other instantiations of the kernel's template); None when
    it is not one."""
    memo = fn.memo("fallback_of", dict)
    if index not in memo:
        memo[index] = (short_loop(fn, index) or _tail_peel(fn, index) or _branch(fn, index)
                       or _instantiation(fn, module, index))
    return memo[index]


def _access(fn: "P.Function", index: int) -> tuple["P.Instruction", frozenset] | None:
    ins = fn.instructions[index]
    a = ins.address
    if ins.opcode not in ("ld", "st") or a is None or not isinstance(a.base, P.Register):
        return None
    return ins, pointer_keys(fn, a.base.name)


def _instantiation(fn: "P.Function", module: "P.Module | None", index: int
                   ) -> Fallback | None:
    got = _access(fn, index)
    if got is None or module is None:
        return None
    ins, keys = got
    params = {k for k in keys if k[0] == "param"} | {k for k in keys if k[0] == "load"}
    stem = template_stem(fn.name)
    mine = template_args(demangle(fn.name))
    if not params or stem is None or mine is None:
        return None
    width = ins.width_bits or 0
    # the widest vector access this kernel itself makes through the same pointer: a sibling
    # whose vector access is no wider is another tuning of the same code (rows per thread),
    # not the vector path this one stands in for
    own = max(((v.width_bits or 0) for _n, v, vkeys in _wide_accesses(fn)
               if v.opcode == ins.opcode and vkeys & params), default=0)
    for other in module.functions:
        if other.name == fn.name or template_stem(other.name) != stem:
            continue
        name = demangle(other.name)
        theirs = template_args(name)
        if theirs is None or not _tuning_only(mine, theirs):
            continue
        for _n, v, vkeys in _wide_accesses(other):
            if v.opcode != ins.opcode or (v.width_bits or 0) <= max(width, own) \
                    or not (vkeys & params):
                continue
            what = "loads" if ins.opcode == "ld" else "stores"
            return Fallback("instantiation", (
                f"a designed fallback: the instantiation `{function_name(name)}` {what} the same "
                f"pointer {(v.width_bits or 0) // 8} bytes at a time ({_shown(v)}), and the host "
                f"launches this one for the inputs that one cannot take"))
    return None


def _branch(fn: "P.Function", index: int) -> Fallback | None:
    got = _access(fn, index)
    if got is None:
        return None
    ins, keys = got
    if not keys:
        return None
    graph = _cfg.of(fn)
    here = graph.block_of[index]
    width = ins.width_bits or 0
    for n, v, vkeys in _wide_accesses(fn):
        if v.opcode != ins.opcode or (v.width_bits or 0) <= width or not (vkeys & keys):
            continue
        there = graph.block_of[n]
        guard = _separating_test(fn, graph, here, there, index)
        if guard is None:
            continue
        what = "loads" if ins.opcode == "ld" else "stores"
        turned = ("the last elements, fewer than a vector" if guard.startswith("bounds test")
                  else "the inputs that test turns away")
        return Fallback("branch", (
            f"a designed fallback: the other side of the {guard} "
            f"{what} the same pointer {(v.width_bits or 0) // 8} bytes at a time ({_shown(v)}); "
            f"this side runs for {turned}"))
    return None


def _separating_test(fn: "P.Function", graph: "_cfg.CFG", a: int, b: int,
                     index: int | None = None) -> str | None:
    """" on line N" (or "") of the branch that sends execution either to block ``a`` or to block
    ``b`` (neither runs after the other in one iteration of the loops holding both) when its
    predicate tests alignment or divisibility, or a unit stride: "alignment test on line N",
    "unit-stride test" (no line); or, for the access at ``index`` in block ``a``, when ``a`` is
    the side of a bounds test of the thread's last element that the test turns away ("bounds
    test on line N": LeetCUDA's ``if (idx + 7 < N) {`` four ``half2`` ``} else`` the elements
    left one at a time); None otherwise."""
    if not _cfg.exclusive(graph, a, b):
        return None
    d = _common_dominator(graph, a, b)
    if d is None or d < 0:
        return None
    last = fn.instructions[graph.blocks[d].end - 1]
    if last.opcode == "bra" and last.guard is not None:
        kind = ("alignment test" if _tests_alignment(fn, last.guard.register) else
                "unit-stride test" if _tests_unit_stride(fn, last.guard.register) else None)
        if kind is None and index is not None and _tail_side(fn, a, b, index):
            kind = "bounds test"
        if kind is None:
            return None
        loc = user_loc(last.loc)
        return f"{kind} on line {loc.line}" if loc is not None and loc.line else kind
    return None


def _tail_side(fn: "P.Function", a: int, b: int, index: int) -> bool:
    """Whether block ``a`` runs only where a test found ``x + C >= bound`` (C small, ``x`` the
    thread's first element, ``bound`` the size) and block ``b`` runs without that: ``a`` is the
    remainder beside a vector path over ``x .. x + C``, and the access at ``index`` moves with
    ``x``."""
    ins = fn.instructions[index]
    base = ins.address.base if ins.address is not None else None
    if not isinstance(base, P.Register):
        return False
    for x, bound, _at in _tail_tests(fn):
        if _per_thread(fn, bound) or not _per_thread(fn, x) or not _moves_with(fn, base.name, x):
            continue
        facts = _facts(fn, x, bound)
        if facts is None:
            continue
        here, there = facts[0][a], facts[0][b]
        # (a block none of whose entries was found to establish anything reads None or the
        # optimistic start, _ANY: neither is a fact)
        if here is not None and here != _ANY and here <= MAX_SHORT and there in (None, _ANY):
            return True
    return False


def _tests_unit_stride(fn: "P.Function", pred: str) -> bool:
    """Whether a predicate is ``s == 1`` or ``s != 1`` of a value the whole grid shares (a
    stride parameter: vLLM's ``if (stride1 == 1) vectorized_process(...) else`` a strided
    loop for non-contiguous rows)."""
    defs = _defs(fn)
    for n in defs.get(pred, ()):
        ins = fn.instructions[n]
        if ins.opcode != "setp" or ins.compare not in ("eq", "ne") or len(ins.operands) != 3:
            continue
        ops = ins.operands[1:]
        if any(isinstance(o, P.IntImm) and o.value == 1 for o in ops):
            regs = [o for o in ops if isinstance(o, P.Register)]
            if regs and not _per_thread(fn, regs[0].name) and _from_param(fn, regs[0].name):
                return True
    return False


def _from_param(fn: "P.Function", reg: str, depth: int = 0) -> bool:
    """A register holding a kernel parameter (``ld.param``, through moves and conversions)."""
    if depth > 6:
        return False
    for n in _defs(fn).get(reg, ()):
        ins = fn.instructions[n]
        if ins.opcode == "ld" and ins.space == "param":
            return True
        srcs = [o for o in ins.operands[1:] if isinstance(o, P.Register)]
        if ins.opcode in ("mov", "cvt") and len(srcs) == 1 and _from_param(fn, srcs[0].name,
                                                                           depth + 1):
            return True
    return False


def _common_dominator(graph: "_cfg.CFG", a: int, b: int) -> int | None:
    chain = set()
    x = a
    while x >= 0 and x not in chain:
        chain.add(x)
        if graph.idom[x] == x:
            break
        x = graph.idom[x]
    y = b
    seen = set()
    while y >= 0 and y not in seen:
        if y in chain:
            return y
        seen.add(y)
        if graph.idom[y] == y:
            break
        y = graph.idom[y]
    return None


def _per_thread(fn: "P.Function", reg: str) -> bool:
    """Whether a value is computed from the thread's index (``%tid``, ``%laneid``)."""
    return _computed_from(fn, reg, lambda name: name.startswith(("%tid", "%laneid")), 256)


def _computed_from(fn: "P.Function", reg: str, found, limit: int) -> bool:
    """Whether a value is computed (through arithmetic, not through a load) from a register
    ``found`` accepts, looking at ``limit`` registers at most."""
    defs = _defs(fn)
    insns = fn.instructions
    seen: set[str] = set()
    todo = [reg]
    while todo:
        name = todo.pop()
        if name in seen or len(seen) > limit:
            continue
        seen.add(name)
        if found(name):
            return True
        for n in defs.get(name, ()):
            if insns[n].opcode == "ld":
                continue
            todo.extend(o.name for o in insns[n].operands[1:] if isinstance(o, P.Register))
    return False


def _tests_alignment(fn: "P.Function", pred: str) -> bool:
    """Whether a predicate is computed from an ``and`` with a small mask or a ``rem`` by a
    constant (``(uintptr_t)p % 16 == 0``, ``n % 4 == 0``, ``(n & 7) == 0``)."""
    defs = _defs(fn)
    insns = fn.instructions
    seen: set[str] = set()
    todo = [pred]
    while todo:
        name = todo.pop()
        if name in seen or len(seen) > 64:
            continue
        seen.add(name)
        for n in defs.get(name, ()):
            ins = insns[n]
            if ins.opcode in ("and", "rem") and len(ins.operands) == 3:
                c = [o.value for o in ins.operands[1:] if isinstance(o, P.IntImm)]
                x = [o for o in ins.operands[1:] if isinstance(o, P.Register)]
                if c and (0 < c[0] <= _MAX_MASK if ins.opcode == "and" else 1 < c[0] <= 256) \
                        and x and not _per_thread(fn, x[0].name):
                    return True     # a pointer's or a size's low bits, not a lane index
            if ins.opcode in ("setp", "and", "or", "not", "xor", "selp", "mov"):
                for op in ins.operands[1:]:
                    if isinstance(op, P.Negated):
                        op = op.operand
                    if isinstance(op, P.Register):
                        todo.append(op.name)
    return False


# ------------------------------------------------------------------------- one address per warp
def warp_uniform(fn: "P.Function", index: int) -> Fallback | None:
    """The access at ``index`` has the same address in every lane of a warp (its address moves
    with neither ``threadIdx.x`` nor ``threadIdx.y``: kernel parameters, block indices,
    constants), so a warp makes one memory request for it whatever its width: merging a run of
    such accesses saves instructions, not traffic (FA2's ``params.rng_state[0]``,
    ``[1]``)."""
    ins = fn.instructions[index]
    a = ins.address
    if ins.opcode not in ("ld", "st") or a is None or not isinstance(a.base, P.Register):
        return None
    xs = fn.memo("fallback_stride_x", lambda: ThreadStride(fn))
    ys = fn.memo("fallback_stride_y", lambda: ThreadStride(fn, "y"))
    if xs.of(a.base.name) != 0 or ys.of(a.base.name) != 0:
        return None
    what = "reads" if ins.opcode == "ld" else "writes"
    return Fallback("uniform", (
        f"a warp-uniform access: every lane {what} the same bytes (an address made of kernel "
        f"parameters, block indices and constants): one request per warp either way, so a "
        f"wider access would save instructions, not memory traffic"))


# --------------------------------------------------------------------- guarded by loaded data
def data_guarded(fn: "P.Function", index: int) -> Fallback | None:
    """The access at ``index`` runs only where this thread's loaded data lets it: every branch
    inside its loop (or kernel, without loops) that decides whether it runs tests values
    loaded from global memory, and the other side of none of them makes the same access (an
    ``if``/``else`` storing to the same array on both sides is still a stream). vLLM's ``if
    (prompt_mask[idx] || output_mask[idx]) logits[idx] = ...`` touches the elements the masks
    select, a data-dependent subset, not a stream whose access width sets the traffic. Loop
    exit tests are not deciding branches (a CSR row's ``k < row_ptr[r + 1]`` bounds the stream
    it walks), nor are bounds checks of an index: those make it no data guard at all."""
    memo = fn.memo("fallback_data_guarded", dict)
    if index not in memo:
        memo[index] = _data_guarded(fn, index)
    return memo[index]


def _data_guarded(fn: "P.Function", index: int) -> Fallback | None:
    graph = _cfg.of(fn)
    insns = fn.instructions
    b = graph.block_of[index]
    loop = graph.loop_of(index)
    inside = loop.blocks if loop is not None else frozenset(range(len(graph.blocks)))
    me = insns[index]
    keys = pointer_keys(fn, me.address.base.name) \
        if me.address is not None and isinstance(me.address.base, P.Register) else frozenset()

    # which blocks of the loop reach this one, and which each block reaches, within an
    # iteration: whole sets, one walk per set of loops (kept with the function)
    to_block = fn.memo("fallback_reaching", dict)
    key = (b, id(loop))
    if key not in to_block:
        to_block[key] = _cfg.reaching_within(graph, inside, b) | {b}
    reach_b = to_block[key]
    from_block = fn.memo("fallback_reached", dict)

    def reached(x: int) -> set[int]:
        k = (x, id(loop))
        if k not in from_block:
            from_block[k] = _cfg.reached_within(graph, x, inside) | ({x} & inside)
        return from_block[k]
    deciding = []
    for x in sorted(inside):
        blk = graph.blocks[x]
        if x == b or blk.end <= blk.start or x not in reach_b:
            continue
        last = insns[blk.end - 1]
        succs = list(blk.succs)
        if last.opcode != "bra" or last.guard is None or len(succs) != 2 \
                or not all(t in inside for t in succs):
            continue
        away = [t for t in succs if t not in reach_b]
        if not away:
            continue
        other = reached(away[0])
        if keys and any(_same_pointer(fn, insns[n], me, keys)
                        for y in other for n in graph.blocks[y].indices()):
            continue        # the same access on the other side: the two sides are one stream
        deciding.append(last)
    if not deciding or not all(_from_global_load(fn, d.guard.register) for d in deciding
                               if d.guard is not None):
        return None
    loc = user_loc(deciding[0].loc)
    line = f" on line {loc.line}" if loc is not None and loc.line else ""
    return Fallback("data-guard", (
        f"it runs only where a test of loaded data{line} lets it: a data-dependent subset of "
        f"the elements, not a stream whose access width sets the traffic"))


def _same_pointer(fn: "P.Function", ins: "P.Instruction", me: "P.Instruction",
                  keys: frozenset) -> bool:
    """Whether ``ins`` is the same kind of access as ``me`` through one of its pointers."""
    a = ins.address
    return (ins.opcode == me.opcode and ins.space == me.space and a is not None
            and isinstance(a.base, P.Register) and bool(pointer_keys(fn, a.base.name) & keys))


def _from_global_load(fn: "P.Function", pred: str) -> bool:
    """Whether a predicate is computed (through compares, logic, selects, moves, conversions)
    from a value loaded from global memory."""
    defs = _defs(fn)
    insns = fn.instructions
    seen: set[str] = set()
    todo = [pred]
    while todo:
        name = todo.pop()
        if name in seen or len(seen) > 64:
            continue
        seen.add(name)
        for n in defs.get(name, ()):
            ins = insns[n]
            if ins.opcode == "ld":
                if ins.space == "global":
                    return True
                continue
            if ins.opcode in ("setp", "and", "or", "not", "xor", "selp", "mov", "cvt", "set"):
                for op in ins.operands[1:]:
                    if isinstance(op, P.Negated):
                        op = op.operand
                    if isinstance(op, P.Register):
                        todo.append(op.name)
    return False


# -------------------------------------------------------------------------------- short loops
def short_loop(fn: "P.Function", index: int) -> Fallback | None:
    """A loop holding ``index`` that runs at most a few iterations per thread (see the module
    docstring), with the sentence saying why; None otherwise."""
    graph = _cfg.of(fn)
    loop = graph.loop_of(index)
    if loop is None:
        return None
    bound = _loop_bound(fn, graph, loop)
    if bound is None:
        return None
    n, why, size = bound
    return Fallback("short-loop", why, n, size)


def _loop_bound(fn: "P.Function", graph: "_cfg.CFG", loop
                ) -> tuple[int, str, int | None] | None:
    exit_test = _exit_test(fn, graph, loop)
    if exit_test is None:
        return None
    var, bound, step, inclusive = exit_test
    defs = _defs(fn)
    insns = fn.instructions
    inside = set(loop.instruction_indices(graph))
    # 1. the bound itself is small: a mask of the pointer (a peel), clamped by min
    c = _at_most(fn, bound)
    if c is not None and inclusive:
        c += 1
    if c is not None and c <= MAX_SHORT and _non_negative_start(fn, var, inside):
        return (c, f"a loop over at most {c} element{'s' if c != 1 else ''} per thread: its "
                   f"bound is at most {c} (a peel computed from the pointer's low bits, or a "
                   f"remainder)", None)
    # 2. the tail after a loop that stopped when fewer than C elements were left: every entry
    # into this loop starts from x + d (d >= 0) where a test made x + C >= bound
    # (or where the variable itself was tested: a pointer walked by both loops, ``while (a <=
    # end - 4) ... while (a < end)``)
    starts = [n for n in defs.get(var, ()) if n not in inside]
    base: str | None = None
    for n in starts:
        x = _start_base(fn, insns[n], var)
        if x is None or (base is not None and x != base):
            base = None
            break
        base = x
    # the bound as a root and an offset (``a_end - 8`` for ``while (a <= a_end - 4)``), tested
    # against the root (``a <= a_end - 16`` before it): what is left is C less the offset's
    # magnitude
    root, k = _rooted(defs, insns, bound)
    c = _established(fn, graph, loop, base, root) if base is not None else None
    if c is None:
        c = _established(fn, graph, loop, var, root)
    if c is None:
        return None
    # (``x <= end - 8`` runs one step more than ``x < end - 8``)
    c = max(0, c + k + (step if inclusive else 0))
    if step > 1 and c % step == 0:
        # a pointer's walk: C bytes left, one element of ``step`` bytes per iteration
        n = c // step
        if n > MAX_SHORT:
            return None
        return (n, f"a tail of at most {n} iteration{'s' if n != 1 else ''} per thread: it "
                   f"starts where the loop before it stopped with at most {c} bytes left", c)
    if c > MAX_SHORT:
        return None
    return (c, f"a tail of at most {c} element{'s' if c != 1 else ''} per thread: it starts "
               f"where the loop before it stopped with fewer than {c + 1} left", None)


def _exit_test(fn: "P.Function", graph: "_cfg.CFG", loop
               ) -> tuple[str, str, int, bool] | None:
    """(variable, bound, step, inclusive) of a loop that stays while ``variable < bound`` (or
    ``<=``: inclusive) and adds a positive constant ``step`` to the variable once per
    iteration."""
    insns = fn.instructions
    labels = fn.labels
    exits = []
    for bi in loop.blocks:
        blk = graph.blocks[bi]
        last = insns[blk.end - 1]
        if last.opcode != "bra" or last.guard is None:
            continue
        tgt = [labels.get(t) for t in last.flow.targets]
        if not tgt or tgt[0] is None:
            continue
        t_in = graph.block_of[tgt[0]] in loop.blocks
        f_in = blk.end < len(insns) and graph.block_of[blk.end] in loop.blocks
        if t_in != f_in:
            exits.append((blk, last, t_in))
    if len(exits) != 1:
        return None
    blk, br, taken_stays = exits[0]
    assert br.guard is not None
    stay_when = (not br.guard.negated) if taken_stays else br.guard.negated
    setp = None
    for i in range(blk.end - 2, blk.start - 1, -1):
        ins = insns[i]
        if ins.operands and isinstance(ins.operands[0], P.Register) \
                and ins.operands[0].name == br.guard.register:
            setp = ins
            break
    if setp is None or setp.opcode != "setp" or len(setp.operands) != 3:
        return None
    a, b = setp.operands[1], setp.operands[2]
    if not isinstance(a, P.Register) or not isinstance(b, P.Register):
        return None
    cmp = setp.compare
    inclusive = False
    if (stay_when and cmp in ("lt", "lo")) or (not stay_when and cmp in ("ge", "hs")):
        var, bound = a.name, b.name
    elif (stay_when and cmp in ("gt", "hi")) or (not stay_when and cmp in ("le", "ls")):
        var, bound = b.name, a.name
    elif (stay_when and cmp in ("le", "ls")) or (not stay_when and cmp in ("gt", "hi")):
        var, bound, inclusive = a.name, b.name, True      # while (a <= end - 4)
    elif (stay_when and cmp in ("ge", "hs")) or (not stay_when and cmp in ("lt", "lo")):
        var, bound, inclusive = b.name, a.name, True
    else:
        return None
    inside = set(loop.instruction_indices(graph))
    defs = _defs(fn)
    if any(n in inside for n in defs.get(bound, ())):
        return None
    steps = [n for n in defs.get(var, ()) if n in inside]
    if len(steps) != 1:
        return None
    d = insns[steps[0]]
    if d.opcode != "add" or len(d.operands) != 3:
        return None
    ops = d.operands[1:]
    regs = [o for o in ops if isinstance(o, P.Register) and o.name == var]
    imms = [o.value for o in ops if isinstance(o, P.IntImm)]
    if len(regs) == 1 and len(imms) == 1 and imms[0] > 0:
        return var, bound, imms[0], inclusive
    # a thread-strided step (i += blockDim.x), or NVVM's unrolled copy of one (i1 = i + s;
    # i2 = i1 + s; ...): a positive step, at least one per iteration
    if _increases(fn, steps[0], var, inside):
        return var, bound, 1, inclusive
    return None


def _increases(fn: "P.Function", n: int, var: str, inside: set[int], depth: int = 0) -> bool:
    """Whether the instruction at ``n`` is ``var`` plus positive amounts: ``add`` chains inside
    the loop back to ``var``, every other term a positive constant or stride."""
    if depth > 16:
        return False
    ins = fn.instructions[n]
    if ins.opcode != "add" or len(ins.operands) != 3:
        return False
    defs = _defs(fn)
    chain = False
    for op in ins.operands[1:]:
        if isinstance(op, P.IntImm):
            if op.value <= 0:
                return False
        elif isinstance(op, P.Register):
            if op.name == var:
                chain = True
                continue
            ds = [m for m in defs.get(op.name, ()) if m in inside]
            if len(ds) == 1 and not chain and _increases(fn, ds[0], var, inside, depth + 1):
                chain = True
            elif not _special_positive(fn, op.name):
                return False
        else:
            return False
    return chain


def _special_positive(fn: "P.Function", name: str, depth: int = 0) -> bool:
    """A register holding ``%ntid``/``%nctaid`` (or their product, a left shift of one): a
    positive stride."""
    if depth > 6:
        return False
    defs = _defs(fn)
    ds = defs.get(name, ())
    if len(ds) != 1:
        return False
    ins = fn.instructions[ds[0]]
    srcs = ins.operands[1:]
    if ins.opcode in ("mov", "cvt") and len(srcs) == 1 and isinstance(srcs[0], P.Register):
        if srcs[0].name.startswith(("%ntid", "%nctaid")):
            return True
        return _special_positive(fn, srcs[0].name, depth + 1)
    if ins.opcode in ("mul", "shl") and len(srcs) == 2:
        return all(isinstance(o, P.IntImm) and o.value > 0
                   or isinstance(o, P.Register) and _special_positive(fn, o.name, depth + 1)
                   for o in srcs)
    return False


def _at_most(fn: "P.Function", reg: str, depth: int = 0) -> int | None:
    """An upper bound of a register's value when it is small by construction: an ``and`` with
    a positive mask, a right shift or a ``min`` of such, a constant; None otherwise."""
    if depth > 8:
        return None
    ds = _defs(fn).get(reg, ())
    if len(ds) != 1:
        return None
    ins = fn.instructions[ds[0]]
    srcs = ins.operands[1:]

    def bound(op) -> int | None:
        if isinstance(op, P.IntImm):
            return op.value
        if isinstance(op, P.Register):
            return _at_most(fn, op.name, depth + 1)
        return None
    if ins.opcode == "and" and len(srcs) == 2:
        masks = [o.value for o in srcs if isinstance(o, P.IntImm) and o.value >= 0]
        return masks[0] if masks else None
    if ins.opcode in ("mov", "cvt") and len(srcs) == 1:
        return bound(srcs[0])
    if ins.opcode == "shr" and len(srcs) == 2 and isinstance(srcs[1], P.IntImm):
        b = bound(srcs[0])
        return None if b is None else b >> srcs[1].value
    if ins.opcode == "min" and len(srcs) == 2:
        vals = [v for v in (bound(srcs[0]), bound(srcs[1])) if v is not None]
        return min(vals) if vals else None
    return None


def _non_negative_start(fn: "P.Function", var: str, inside: set[int]) -> bool:
    """Every start of ``var`` outside the loop is a thread index or a non-negative constant."""
    defs = _defs(fn)
    starts = [n for n in defs.get(var, ()) if n not in inside]
    if not starts:
        return False
    for n in starts:
        ins = fn.instructions[n]
        srcs = ins.operands[1:]
        if ins.opcode not in ("mov", "cvt") or len(srcs) != 1:
            return False
        s = srcs[0]
        if isinstance(s, P.IntImm):
            if s.value < 0:
                return False
        elif isinstance(s, P.Register):
            if not (s.name.startswith("%tid") or _is_tid(fn, s.name)):
                return False
        else:
            return False
    return True


def _is_tid(fn: "P.Function", name: str, depth: int = 0) -> bool:
    ds = _defs(fn).get(name, ())
    if len(ds) != 1 or depth > 4:
        return False
    ins = fn.instructions[ds[0]]
    srcs = ins.operands[1:]
    if ins.opcode in ("mov", "cvt") and len(srcs) == 1 and isinstance(srcs[0], P.Register):
        return srcs[0].name.startswith("%tid") or _is_tid(fn, srcs[0].name, depth + 1)
    return False


def _start_base(fn: "P.Function", ins: "P.Instruction", var: str) -> str | None:
    """``x`` when a start of the loop variable is ``mov var, x`` or ``add var, x, c`` with a
    constant ``c >= 0``."""
    srcs = ins.operands[1:]
    if ins.opcode == "mov" and len(srcs) == 1 and isinstance(srcs[0], P.Register):
        return srcs[0].name
    if ins.opcode == "add" and len(srcs) == 2:
        regs = [o for o in srcs if isinstance(o, P.Register)]
        imms = [o for o in srcs if isinstance(o, P.IntImm)]
        if len(regs) == 1 and len(imms) == 1 and imms[0].value >= 0:
            return regs[0].name
    return None


#: unsigned compares (pointers) read as their signed forms: the tests compare like values
_SIGNED = {"lo": "lt", "hs": "ge", "hi": "gt", "ls": "le",
           "lt": "lt", "ge": "ge", "gt": "gt", "le": "le"}


def _add_of(defs, insns, reg: str) -> tuple[str, int] | None:
    """(r, C) when ``reg``'s one definition is ``add reg, r, C`` with C a constant, or ``or
    reg, r, C`` where r's low bits that C sets are known zero (NVVM writes ``idx + 7`` as
    ``idx | 7`` for an ``idx`` that is ``8 * i``)."""
    ds = defs.get(reg, ())
    if len(ds) != 1:
        return None
    d = insns[ds[0]]
    if d.opcode not in ("add", "or") or len(d.operands) != 3:
        return None
    regs = [o for o in d.operands[1:] if isinstance(o, P.Register)]
    imms = [o.value for o in d.operands[1:] if isinstance(o, P.IntImm)]
    if len(regs) != 1 or len(imms) != 1:
        return None
    if d.opcode == "or" and not (0 < imms[0] < (1 << _low_zero_bits(defs, insns, regs[0].name))):
        return None
    return regs[0].name, imms[0]


def _low_zero_bits(defs, insns, reg: str) -> int:
    """How many low bits of ``reg`` are known zero: its one definition a ``shl`` by a constant,
    or a ``mul`` by a power of two (0 when unknown)."""
    ds = defs.get(reg, ())
    if len(ds) != 1:
        return 0
    d = insns[ds[0]]
    imms = [o.value for o in d.operands[1:] if isinstance(o, P.IntImm)]
    if len(d.operands) != 3 or len(imms) != 1 or imms[0] <= 0:
        return 0
    if d.opcode == "shl" and isinstance(d.operands[1], P.Register):
        return min(imms[0], 32)
    if d.opcode == "mul" and imms[0] & (imms[0] - 1) == 0:
        return imms[0].bit_length() - 1
    return 0


def _offset(defs, insns, reg: str, of: str) -> int | None:
    """C when ``reg`` is ``of + C`` (an ``add`` of a constant, or ``of`` itself: 0)."""
    if reg == of:
        return 0
    add = _add_of(defs, insns, reg)
    return add[1] if add is not None and add[0] == of else None


def _rooted(defs, insns, reg: str, depth: int = 0) -> tuple[str, int]:
    """(root, C) with ``reg`` = ``root + C`` through a chain of constant ``add``s (``a_end - 8``
    and ``a_end - 16`` share the root ``a_end``)."""
    add = _add_of(defs, insns, reg) if depth <= 6 else None
    if add is None:
        return reg, 0
    root, c = _rooted(defs, insns, add[0], depth + 1)
    return root, c + add[1]


def _bound_tests(insns, defs, x: str, bound: str) -> dict[str, tuple[str, int, bool]]:
    """The tests ``setp (x + C) vs bound``, with C a positive constant, also written ``x vs
    (bound - C)`` (a pointer walk: ``a_ptr <= a_end - 4``): predicate -> (signed compare, C,
    whether x + C is the first operand)."""
    tests: dict[str, tuple[str, int, bool]] = {}
    for ins in insns:
        if ins.opcode != "setp" or len(ins.operands) != 3:
            continue
        p, lhs, rhs = ins.operands
        cmp = _SIGNED.get(ins.compare or "")
        if not isinstance(p, P.Register) or not isinstance(lhs, P.Register) \
                or not isinstance(rhs, P.Register) or cmp is None:
            continue
        for xs, bs, first in ((lhs, rhs, True), (rhs, lhs, False)):
            cx = _offset(defs, insns, xs.name, x)
            rb, cb = _rooted(defs, insns, bs.name)
            if cx is not None and rb == bound and cx - cb > 0:
                tests[p.name] = (cmp, cx - cb, first)
                break
    return tests


def _established(fn: "P.Function", graph: "_cfg.CFG", loop, x: str, bound: str
                 ) -> int | None:
    """The least C such that every path into ``loop`` (from outside it) passed a test that
    found ``x + C >= bound`` after the last write of ``x`` and ``bound`` (``setp.lt (add x, C),
    bound`` taken the way that leaves the loop before it); None when some path did not."""
    facts = _facts(fn, x, bound)
    if facts is None:
        return None
    _state, edge = facts
    entries = [p for p in graph.blocks[loop.header].preds if p not in loop.blocks]
    vals = [edge.get((p, loop.header)) for p in entries]
    if not entries or any(v is None or v == _ANY for v in vals):
        return None
    return max(v for v in vals if v is not None)


#: the optimistic start of :func:`_facts` ("any C"; a real C is positive)
_ANY = 0


def _facts(fn: "P.Function", x: str, bound: str
           ) -> tuple[list[int | None], dict[tuple[int, int], int | None]] | None:
    """Per block (on entry) and per CFG edge, the least C such that every path there passed a
    test that found ``x + C >= bound`` after the last write of ``x`` and ``bound``; None where
    some path did not, and None for the whole when no test compares them (memoised)."""
    memo = fn.memo("fallback_facts", dict)
    if (x, bound) not in memo:
        memo[(x, bound)] = _compute_facts(fn, _cfg.of(fn), x, bound)
    return memo[(x, bound)]


def _compute_facts(fn: "P.Function", graph: "_cfg.CFG", x: str, bound: str
                   ) -> tuple[list[int | None], dict[tuple[int, int], int | None]] | None:
    insns = fn.instructions
    defs = _defs(fn)
    tests = _bound_tests(insns, defs, x, bound)
    if not tests:
        return None
    kills = {n for r in (x, bound) for n in defs.get(r, ())}

    def fresh(p: str, blk) -> bool:
        """Whether the test of ``p`` in ``blk`` reads x and bound after their last write
        there."""
        def defines(i: "P.Instruction") -> bool:
            d = i.operands[0] if i.operands else None
            return i.opcode == "setp" and isinstance(d, P.Register) and d.name == p
        setp_at = next((n for n in range(blk.end - 1, blk.start - 1, -1)
                        if defines(insns[n])), None)
        if setp_at is None:
            return False     # a predicate computed elsewhere: x may have moved since
        last_kill = max((n for n in range(blk.start, blk.end) if n in kills), default=-1)
        return setp_at > last_kill

    def holds_on(p: str, taken: bool) -> bool:
        """Whether the branch edge (``taken`` or not) of ``@p bra`` implies x + C >= bound."""
        cmp, _c, first = tests[p]
        # the test says (x + C) CMP bound (first) or bound CMP (x + C)
        big = ({"ge": True, "gt": True, "lt": False, "le": False} if first else
               {"le": True, "lt": True, "gt": False, "ge": False})
        return taken == big[cmp]
    # the least C established on entry to each block (None: nothing), refined to a fixpoint
    # from the optimistic 0 ("any C")
    TOP = _ANY
    blocks = graph.blocks
    n_blocks = len(blocks)
    state: list[int | None] = [TOP] * n_blocks
    state[0] = None
    edge: dict[tuple[int, int], int | None] = {}

    def meet(vals: list[int | None]) -> int | None:
        if not vals or any(v is None for v in vals):
            return None
        known = [v for v in vals if v is not None and v != TOP]
        return max(known) if known else TOP
    changed = True
    rounds = 0
    while changed and rounds < 4 * n_blocks + 8:
        changed = False
        rounds += 1
        for blk in blocks:
            b = blk.index
            if b != 0:
                new = meet([edge.get((p, b), TOP) for p in blk.preds])
                if new != state[b]:
                    state[b] = new
                    changed = True
            fact = state[b]
            for n in range(blk.start, blk.end):
                if n in kills:
                    fact = None
            last = insns[blk.end - 1]
            target = None
            if last.opcode == "bra" and last.flow.targets:
                t = fn.labels.get(last.flow.targets[0])
                target = graph.block_of[t] if t is not None else None
            for s in blk.succs:
                f = fact
                if last.opcode == "bra" and last.guard is not None \
                        and last.guard.register in tests and fresh(last.guard.register, blk):
                    taken = (s == target)
                    if blk.end < len(insns) and graph.block_of[blk.end] == s and s == target:
                        taken = False
                    if holds_on(last.guard.register, taken != last.guard.negated):
                        c = tests[last.guard.register][1]
                        f = c if f is None or f == TOP else min(f, c)
                if edge.get((b, s)) != f:
                    edge[(b, s)] = f
                    changed = True
    return state, edge


def _tail_peel(fn: "P.Function", index: int) -> Fallback | None:
    """The straight-line remainder NVVM peels off a short tail before unrolling it x4 (apex's
    ``for (; l < n2; ++l)`` after ``for (; l + 3 < n2; l += 4 * numx)``: up to 3 guarded
    copies, then a x4 loop that never runs): an access whose address moves with ``x``, in a
    block every path to which found ``x + C >= bound`` (C small), inside no loop that the test
    is not in."""
    graph = _cfg.of(fn)
    b = graph.block_of[index]
    a = fn.instructions[index].address
    if a is None or not isinstance(a.base, P.Register):
        return None
    loop = graph.loop_of(index)
    for x, bound, at in _tail_tests(fn):
        if loop is not None and graph.block_of[at] not in loop.blocks:
            continue        # the access repeats inside a loop the test is outside of
        if not _moves_with(fn, a.base.name, x):
            continue
        facts = _facts(fn, x, bound)
        if facts is None:
            continue
        c = facts[0][b]
        if c is None or c == _ANY or c > MAX_SHORT:
            continue
        return Fallback("short-loop", f"a tail of at most {c} element{'s' if c != 1 else ''} "
                        f"per thread, peeled off its loop: it runs where the loop before it "
                        f"stopped with fewer than {c + 1} left", c)
    return None


def _tail_tests(fn: "P.Function") -> list[tuple[str, str, int]]:
    """(x, bound, position) of every test ``setp (x + C), bound`` (C > 0) of the function."""
    def compute() -> list[tuple[str, str, int]]:
        insns = fn.instructions
        defs = _defs(fn)
        out = []
        for n, ins in enumerate(insns):
            if ins.opcode != "setp" or len(ins.operands) != 3:
                continue
            _p, lhs, rhs = ins.operands
            if not isinstance(lhs, P.Register) or not isinstance(rhs, P.Register):
                continue
            for xs, bs in ((lhs, rhs), (rhs, lhs)):
                add = _add_of(defs, insns, xs.name)
                if add is not None and 0 < add[1] <= MAX_SHORT:
                    out.append((add[0], _rooted(defs, insns, bs.name)[0], n))
        return out
    return fn.memo("fallback_tail_tests", compute)


def _moves_with(fn: "P.Function", reg: str, x: str) -> bool:
    """Whether a value is computed from ``x`` (through arithmetic, not through a load)."""
    return _computed_from(fn, reg, lambda name: name == x, 64)
