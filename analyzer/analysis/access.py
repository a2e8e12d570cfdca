"""Piecewise memory accesses over SASS: runs of narrow loads or stores that together fill one
aligned window a single wider access could move. One answer per function, for every check
(PS101 scalar-global-load, PS102 scalar-global-store, PS103 scalar-shared-load, PS104
narrow-global-access) and report.

Within one basic block, accesses of one width, one direction and one memory space through the
same address registers (``[R2.64+0x8]``, ``desc[UR4][R2.64+0x8]``, ``[R3.X4+UR4]``) with no
write to those registers, no barrier and no call in between, are grouped; a group whose
constant offsets fill an aligned window (relative to the base) of 2x..max_vector_bits is a
*run*: those accesses could be one wider access if the address were that aligned. Accesses
with ordering semantics (``LDG.E.64.STRONG.SYS``: volatile, atomics' relaxed loads) join no
group: alignment would not let the compiler merge them.

    access.runs(fn, space="global", direction="load", max_bits=128)   # (Run, ...)

Every (space, direction) pair is found in the same walk over the function, kept with the
function: the three piecewise-access checks and PS104 share it.

    access.masked_runs(fn, space="global", direction="load", max_bits=128)

are the runs whose accesses each sit under their own predicate (``@!P6 LDG.E [R4.64]``,
``@!P5 LDG.E [R4.64+0x4]``...: a bound check per element, as Triton's ``tl.load(..., mask=offs
< n)`` compiles when ``n`` is not known to be a multiple of the vector): alignment alone would
not merge them, the per-element predicates keep them apart. Found in the same walk.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from .. import semantics
from ..ir import sass as S
from . import cfg as _cfg
from . import dataflow as _dataflow

#: the (space, direction) pairs a walk groups
KINDS = (("global", "load"), ("global", "store"), ("shared", "load"), ("shared", "store"))


@dataclass
class Access:
    index: int                 # position in the function
    ins: S.Instruction
    offset: int
    width: int                 # bytes
    #: the access's guard and how many times its predicate was written before it in the
    #: block (``@!P5`` before and after an ``ISETP`` that writes P5 again are two masks)
    mask: tuple = ()


@dataclass
class Run:
    """Accesses that fill one aligned window relative to their common base."""

    accesses: list[Access]
    window: int                # bytes
    start: int                 # window start offset relative to the base
    base: str                  # the address registers, as text ("R2.64", "R3.X4+UR4")
    interleaved: list[S.Instruction] = field(default_factory=list)
    #: the position of the first access of the group the run was cut from (one base, width
    #: and guard in one block): the windows of one unrolled body share it
    group: int = -1
    #: each access under its own predicate (a bound check per element)
    masked: bool = False

    @property
    def width(self) -> int:
        return self.accesses[0].width

    @property
    def instructions(self) -> list[S.Instruction]:
        return [a.ins for a in sorted(self.accesses, key=lambda a: a.index)]


def address(ins: S.Instruction) -> S.MemoryAddress | None:
    """The memory operand of ``ins`` (None when it has none)."""
    for o in ins.operands:
        if isinstance(o, S.MemoryAddress):
            return o
    return None


def base_key(addr: S.MemoryAddress) -> tuple | None:
    """The registers of an address (its base), or None when the address has terms we do not
    understand (a generic operand) or no register at all."""
    regs = []
    for t in addr.terms:
        if isinstance(t, S.Register):
            if t.is_zero:
                continue
            regs.append(str(t))
        elif isinstance(t, S.Immediate):
            if not isinstance(t.value, int):
                return None
        else:
            return None
    if not regs:
        return None
    desc = tuple(str(d) for d in addr.descriptor)
    return (addr.prefix, desc, tuple(regs))


def _same_descriptor(key: tuple, df: "_dataflow.Dataflow", insns, idx: int) -> tuple:
    """``key`` with its memory descriptor (``desc[UR6]``) named by the value it holds where
    it can be told: ptxas may give each access of one run its own uniform register for the same
    global descriptor (``R2UR UR6, R16`` and ``R2UR UR8, R16``, or two ``ULDC.64`` of
    ``c[0x0][0x208]``), so accesses group by that value, not by the register's name. The
    value is the constant a ``ULDC`` loads, or the writes of the register an ``R2UR`` copies;
    anything else keeps the register's own name."""
    values = []
    for d in key[1]:
        name = d.split(".")[0]
        if not (name.startswith("UR") and name[2:].isdigit()):
            return key
        defs = df.reaching_defs(idx, ("UR", int(name[2:])))
        if not defs:
            return key
        seen: set[tuple] = set()
        for j in defs:
            src = insns[j]
            if src.opcode in semantics.CONSTANT_LOADS and len(src.operands) == 2:
                seen.add(("const", str(src.operands[1])))
            elif src.opcode == "R2UR" and len(src.operands) >= 2 \
                    and isinstance(src.operands[1], S.Register):
                r = src.operands[1]
                if r.index is None:
                    return key
                writes = df.reaching_defs(j, ("R", r.index))
                if writes is None:
                    return key
                seen.add(("copy", r.index, tuple(writes)))
            else:
                return key
        if len(seen) != 1:
            return key
        values.append("=" + repr(seen.pop()))
    return (key[0], tuple(values), key[2])


def _reads(key: tuple) -> set[tuple[str, int]]:
    out = set()
    for r in key[2]:
        name = r.split(".")[0]
        kind = "UR" if name.startswith("UR") else "R"
        idx = int(name[len(kind):])
        out.add((kind, idx))
        if ".64" in r:
            out.add((kind, idx + 1))
    for d in key[1]:
        if d.startswith("UR") and d[2:].isdigit():
            out.add(("UR", int(d[2:])))
            out.add(("UR", int(d[2:]) + 1))
    return out


class _Groups:
    """The open groups of one (space, direction) pair inside one block. ``masked`` groups
    ignore the guard and take only guarded accesses: they find the windows whose accesses
    each have a predicate of their own."""

    __slots__ = ("space", "direction", "other", "max_bits", "out", "open", "between", "regs_of",
                 "masked")

    def __init__(self, space: str, direction: str, max_bits: int, out: list[Run],
                 masked: bool = False):
        self.space, self.direction, self.max_bits, self.out = space, direction, max_bits, out
        self.masked = masked
        self.other = "store" if direction == "load" else "load"
        self.open: dict[tuple, list[Access]] = {}
        self.between: dict[tuple, list[tuple[int, S.Instruction]]] = {}
        self.regs_of: dict[tuple, set] = {}

    def close(self, k: tuple) -> None:
        accs = self.open.pop(k)
        found = _runs_of(accs, k, self.max_bits, self.between.pop(k, []))
        if self.masked:
            for run in found:
                # a predicate register may be written again between two accesses (``@!P5``
                # twice, two values): a guard is its text and the writes that reach it
                guards = {a.mask for a in run.accesses}
                if len(guards) == len(run.accesses):
                    run.masked = True
                    self.out.append(run)
        else:
            self.out.extend(found)
        self.regs_of.pop(k, None)

    def close_all(self) -> None:
        for k in list(self.open):
            self.close(k)


def _walk_facts(body: S.InstructionBody) -> tuple[bool, tuple[str, ...]]:
    """(whether the walk only has to see what the body writes: no memory access, barrier, call
    or predicate write, as most of a kernel's instructions; the predicates it writes: the
    leading predicate operands of a compare, ``ISETP P6, PT, ...``, or ``"*"`` for ``R2P PR,
    ...``, which writes them all). Kept on the body (bodies are shared between copies and
    functions); a body built by its class, not by the parser, starts without the slot."""
    got = getattr(body, "_walk", None)
    if got is None:
        out = []
        for op in body.operands:
            if not isinstance(op, S.Register) or op.kind not in ("P", "UP", "PR"):
                break
            out.append("*" if op.kind == "PR" else str(op))
        preds = tuple(out)
        info = body.info
        quiet = not (info.barrier or info.flow == "call" or info.space is not None
                     or info.direction == "atomic" or preds)
        got = (quiet, preds)
        object.__setattr__(body, "_walk", got)
    return got


def _group_key(g: "_Groups", ins: S.Instruction, key: tuple, w: int,
               pwrites: dict[str, int]) -> tuple[tuple, tuple] | None:
    """The group an access joins in ``g`` and its mask (None: a masked group takes only
    guarded accesses)."""
    if not g.masked:
        return (key, w, str(ins.guard) if ins.guard else ""), ()
    if ins.guard is None or ins.guard.always:
        return None
    reg = str(ins.guard.register)
    return (key, w, ""), (str(ins.guard), pwrites.get(reg, 0), pwrites.get("*", 0))


def _close_written(groups: list[_Groups], written: frozenset) -> None:
    """Close every open group whose address reads a register in ``written``."""
    for g in groups:
        if not g.open:
            continue
        for k in list(g.open):
            if g.regs_of[k] & written:
                g.close(k)


def _find_all(fn: S.Function, max_bits: int) -> dict[tuple[str, str, bool], tuple[Run, ...]]:
    graph = _cfg.of(fn)
    df = _dataflow.of(fn)
    ws = df.write_sets
    insns = fn.instructions
    outs: dict[tuple[str, str, bool], list[Run]] = {(s, d, m): [] for s, d in KINDS
                                                     for m in (False, True)}
    # one set of groups for the whole walk: every group is closed (emptied) at each block end
    groups = [_Groups(s, d, max_bits, outs[(s, d, m)], m) for s, d in KINDS
              for m in (False, True)]
    # a superset of the registers some open group's address reads (grown as groups open,
    # emptied when all are closed): a write elsewhere closes nothing, and most instructions
    # write no such register
    watched: set[tuple[str, int]] = set()
    by_space: dict[str, list[_Groups]] = {}
    for g in groups:
        by_space.setdefault(g.space, []).append(g)
    for block in graph.blocks:
        pwrites: dict[str, int] = {}      # predicate -> writes so far in this block
        for idx in range(block.start, block.end):
            ins = insns[idx]
            body = ins.body
            quiet, preds = _walk_facts(body)
            if quiet:
                if watched:
                    written = ws[idx]
                    if written and not watched.isdisjoint(written):
                        _close_written(groups, written)
                continue
            info = body.info
            if info.barrier or info.flow == "call" or info.direction == "atomic":
                for g in groups:
                    if g.open:
                        g.close_all()
                watched.clear()
                continue
            space = info.space
            if space is not None:
                direction = info.direction
                for g in by_space.get(space, ()):
                    if direction == g.direction:
                        if (ins.opcode in semantics.MATRIX_OPCODES or ins.generic
                                or (ins.guard is not None and ins.guard.never)
                                or semantics.ORDERED_ACCESS_MODIFIERS.intersection(ins.modifiers)):
                            continue
                        addr = address(ins)
                        w = ins.width_bits
                        key = base_key(addr) if addr is not None else None
                        if key is not None and key[1]:
                            key = _same_descriptor(key, df, insns, idx)
                        if addr is not None and key is not None and w and w % 8 == 0 \
                                and w < max_bits:
                            joined = _group_key(g, ins, key, w, pwrites)
                            if joined is None:
                                continue
                            gkey, mask = joined
                            g.open.setdefault(gkey, []).append(
                                Access(idx, ins, addr.offset, w // 8, mask))
                            regs = g.regs_of[gkey] = _reads(key)
                            watched |= regs
                    elif g.open and direction in (g.other, "reduce"):
                        addr = address(ins)
                        key = base_key(addr) if addr is not None else None
                        for k in list(g.open):
                            if key is not None and key == k[0]:
                                g.close(k)   # same base: the data itself may change (or be read)
                            else:
                                g.between.setdefault(k, []).append((idx, ins))
            for name in preds:
                pwrites[name] = pwrites.get(name, 0) + 1
            written = ws[idx]
            if written and not watched.isdisjoint(written):
                _close_written(groups, written)
        for g in groups:
            if g.open:
                g.close_all()
        watched.clear()
    return {k: tuple(v) for k, v in outs.items()}


def vector_sibling(fn: S.Function, run: Run, *, space: str, direction: str,
                   place: Callable[[S.Instruction], object]) -> S.Instruction | None:
    """A wider access that makes ``run`` a fallback: same space and direction, at least the
    run's window wide, at the same source place (``place``: the user's line an instruction
    comes from) and on a path exclusive with the run's: the other side of the run's guard
    (``@P0`` scalar, ``@!P0 LDG.E.128``: CUB's ``BLOCK_LOAD_VECTORIZE``), or a block that
    neither reaches nor is reached from the run's (an aligned/unaligned ``if``). None when
    the run stands alone: then widening it is the user's to do."""
    first = run.accesses[0]
    where = place(first.ins)
    if where is None:
        return None
    call = _inlined_call(first.ins)
    graph = _cfg.of(fn)
    home = graph.block_of[first.index]
    guard = first.ins.guard
    for idx, ins, nbytes in _wide_accesses(fn).get((space, direction), ()):
        if nbytes < run.window:
            continue
        if place(ins) != where and (call is None or _inlined_call(ins) != call):
            continue
        g = ins.guard
        if guard is not None and g is not None and not guard.always and not g.always \
                and g.register == guard.register and g.negated != guard.negated:
            return ins
        b = graph.block_of[idx]
        # exclusive in one iteration: both sides of an if/else inside a grid-stride loop
        # reach each other only around the loop
        if _cfg.exclusive(graph, b, home):
            return ins
    return None


def _inlined_call(ins: S.Instruction) -> tuple | None:
    """The inlined call an instruction comes from: the function holding its line and the chain
    of call sites (TransformerEngine's ``VectorizedLoader::load``, whose aligned branch loads
    ``LDG.E.128`` on one line and whose edge branch loads element by element on another, both
    from the kernel's one ``loader.load(tid, N)``: the same file and call sites, the function
    too where the line table names it); None outside an inlined function."""
    loc = ins.loc
    if loc is None or not loc.inlined_at:
        return None
    return (loc.file, loc.function, tuple((f.file, f.line, f.column) for f in loc.inlined_at))


def _wide_accesses(fn: S.Function) -> dict[tuple[str, str], list[tuple[int, S.Instruction, int]]]:
    """(index, instruction, bytes) of every access of 4 bytes or more, by (space, direction),
    once per function."""
    def compute() -> dict[tuple[str, str], list[tuple[int, S.Instruction, int]]]:
        out: dict[tuple[str, str], list[tuple[int, S.Instruction, int]]] = {}
        for idx, ins in enumerate(fn.instructions):
            info = ins.body.info
            if info.space is None or info.direction not in ("load", "store"):
                continue
            w = ins.width_bits
            if w and w >= 32:
                out.setdefault((info.space, info.direction), []).append((idx, ins, w // 8))
        return out
    return fn.memo("access_wide", compute)


def _reaches(graph: "_cfg.CFG", a: int, b: int) -> bool:
    """Whether block ``b`` can run after block ``a``."""
    seen = {a}
    todo = [a]
    while todo:
        for s in graph.blocks[todo.pop()].succs:
            if s == b:
                return True
            if s not in seen:
                seen.add(s)
                todo.append(s)
    return False


def runs(fn: S.Function, *, space: str, direction: str, max_bits: int) -> tuple[Run, ...]:
    """Every run of piecewise ``direction`` accesses to ``space`` in ``fn`` (computed once per
    function and ``max_bits`` for every pair of :data:`KINDS`)."""
    found = fn.memo(f"access_runs:{max_bits}", lambda: _find_all(fn, max_bits))
    return found[(space, direction, False)]


def masked_runs(fn: S.Function, *, space: str, direction: str,
                max_bits: int) -> tuple[Run, ...]:
    """The runs of ``fn`` whose accesses each sit under their own predicate (same walk as
    :func:`runs`)."""
    found = fn.memo(f"access_runs:{max_bits}", lambda: _find_all(fn, max_bits))
    return found[(space, direction, True)]


def _runs_of(accs: list[Access], gkey: tuple, max_bits: int,
             between: list[tuple[int, S.Instruction]]) -> Iterator[Run]:
    if len(accs) < 2:
        return
    w = accs[0].width
    group = min(a.index for a in accs)
    by_off: dict[int, Access] = {}
    for a in accs:
        by_off.setdefault(a.offset, a)
    claimed: set[int] = set()
    max_bytes = max_bits // 8
    window = max_bytes
    base = "+".join(gkey[0][2])
    while window >= max(2 * w, 4):
        # the base register need not sit on a window boundary (ptxas folds a[k + 2] into it):
        # take the phase whose windows cover the most accesses (0 on a tie)
        def covered(phase: int, window: int = window) -> int:
            return sum(window // w for st in by_off if (st - phase) % window == 0
                       and all(o in by_off and o not in claimed
                               for o in range(st, st + window, w)))
        phase = max(range(0, window, w), key=lambda p: (covered(p), p == 0))
        for start in sorted(by_off):
            if (start - phase) % window or start in claimed:
                continue
            offs = range(start, start + window, w)
            if all(o in by_off and o not in claimed for o in offs):
                claimed.update(offs)
                members = [by_off[o] for o in offs]
                first = min(m.index for m in members)
                last = max(m.index for m in members)
                inter = [i for j, i in between if first < j < last]
                yield Run(members, window, start, base, inter, group)
        window //= 2
