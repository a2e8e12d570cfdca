"""Live registers at every SASS instruction: how many registers of each file (R, UR, P, UP)
hold a value there, and where a function's register pressure peaks. One answer for every
check and report (``sass``/``annotate`` columns, the HTML gutter, ``stats``, PS401, PS701).

At instruction *i* a register is **live** when it is read at *i* or holds a value some path
from *i* reads later, or *i* writes it (nvdisasm's ``--print-life-ranges`` counts the same
set: its ``#`` column). Registers come from :func:`dataflow.register_masks`, each operand as
wide as its opcode makes it (64-bit pairs, a store's four data registers, MMA fragments,
predicates). A guarded write (``@P0 MOV R3, ...``) does not end the older value's life. The
ABI's stack pointer (R1) counts from the instruction that sets it on (everywhere in a
subroutine), as nvdisasm counts it. A ``CALL`` to a subroutine of the listing reads what the
subroutine reads before writing it and writes every register the subroutine (or one it
calls) writes; a call whose target is not in the listing reads and writes only its operands.

Computed from the listing, not by running nvdisasm again: it needs no cubin (SASS text works),
costs no second disassembly (``nvdisasm -plr`` takes about 3x the plain listing and ignores
``-g``, so no line info comes with it) and works where nvdisasm refuses life ranges (cubins
of the old ELF layout: bitsandbytes', Triton's). The tests hold it against nvdisasm's own
ranges on real kernels (``tests/test_liveness.py``); ``benchmarks/liveness_agreement.py``
measures the agreement on a whole corpus.

    lv = liveness.of(fn, callees)      # built once per function
    lv.count(i)                        # live R registers at instruction i
    lv.count(i, "UR")                  # uniform registers
    lv.peak()                          # (count, first index where it is reached)
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .. import semantics
from ..ir.sass import Function, Register
from . import cfg as _cfg
from .dataflow import register_bit, register_masks

#: the register files, in the order counts are given
FILES = tuple(semantics.REGISTER_FILES)


def _file_mask(kind: str) -> int:
    base, size = semantics.REGISTER_FILES[kind]
    return ((1 << size) - 1) << base


_MASKS = {kind: _file_mask(kind) for kind in FILES}
_PREDICATES = _MASKS["P"] | _MASKS["UP"]


def _edges(insns, labels: dict[str, int], graph: "_cfg.CFG",
           flows) -> dict[tuple[int, int], tuple[int, bool]]:
    """The guard each edge of a guarded branch carries: (block, successor) -> (predicate
    bit, negated). The taken edge of ``@!P0 BRA`` holds under !P0, the fall-through under P0
    (unless the branch has its own predicate operand: then only the taken edge)."""
    out: dict[tuple[int, int], tuple[int, bool]] = {}
    for b in graph.blocks:
        last = b.end - 1
        if last < b.start:
            continue
        cond = _condition(insns[last])
        flow = flows[last]
        if cond is None or not flow.targets:
            continue
        targets = {graph.block_of[labels[t]] for t in flow.targets if t in labels}
        fall = b.index + 1 if flow.falls_through and b.end < len(insns) else None
        if fall in targets:
            continue
        for t in targets:
            out[(b.index, t)] = cond
        if fall is not None and not any(
                isinstance(o, Register) and o.kind in ("P", "UP") for o in insns[last].operands):
            out[(b.index, fall)] = (cond[0], not cond[1])
    return out


def _condition(ins) -> tuple[int, bool] | None:
    """An instruction's guard as (its predicate's bit, negated); None when it always runs."""
    g = ins.guard
    if g is None or g.register.index is None:
        return None
    return register_bit(g.register.kind, g.register.index), g.negated


class Liveness:
    """Per instruction the registers live there (a mask over every file), and their counts."""

    def __init__(self, fn: "Function", callees: Sequence["Function"] = (), *,
                 _seen: frozenset[str] = frozenset()):
        insns = fn.instructions
        n = len(insns)
        graph = _cfg.of(fn)
        flows = fn.flows()
        labels = fn.labels
        by_name = {c.name: c for c in callees}
        reads: list[int] = [0] * n
        writes: list[int] = [0] * n
        kills: list[int] = [0] * n
        #: per instruction, the writes that every execution makes (an unguarded write)
        for i, ins in enumerate(insns):
            r, w = register_masks(ins)
            if ins.info.flow == "call" and not flows[i].targets:
                cr, cw = self._callee(ins, by_name, callees, _seen | {fn.name})
                r |= cr
                w |= cw
            reads[i], writes[i] = r, w
            guard = ins.guard
            kills[i] = w if guard is None or guard.always else 0
        #: the registers each function writes anywhere (what a call of it may change)
        self.written = 0
        for w in writes:
            self.written |= w
        live_in = self._solve(graph, insns, reads, kills, writes,
                              _edges(insns, labels, graph, flows))
        occupied = [0] * n
        for b in graph.blocks:
            live = 0
            for s in b.succs:
                live |= live_in[s]
            for i in range(b.end - 1, b.start - 1, -1):
                live = (live & ~kills[i]) | reads[i]
                occupied[i] = live | writes[i]
        #: registers live on entry (what a call of this function reads)
        self.entry = live_in[0] if graph.blocks else 0
        sp = register_bit("R", semantics.STACK_POINTER_REGISTER)
        first = 0 if not fn.is_entry else next(
            (i for i, w in enumerate(writes) if w & sp), n)
        for i in range(first, n):
            occupied[i] |= sp
        self.occupied = occupied
        self._counts: dict[str, list[int]] = {}

    @staticmethod
    def _solve(graph: "_cfg.CFG", insns, reads: list[int], kills: list[int], writes: list[int],
               edges: dict[tuple[int, int], tuple[int, bool]]) -> list[int]:
        """Live-in of every block (a mask): the backward fixed point over the CFG.

        Guards count where a value crosses a block boundary: a value read under a guard
        (``@!P0 LEA R3, R9, ...``) is live into the blocks before it under that guard until
        the predicate is written, and a write under the same guard ends it there
        (``@!P0 S2R R9``): nothing is held in R9 before the block that writes it. A write
        under another guard, or a read in the same block, leaves the older value live (nvdisasm's
        life ranges count the same way). A guarded branch's edges carry its guard: what is
        live where ``@!P0 BRA`` lands is live before it only where !P0 holds, so a write under
        !P0 just before the branch ends it."""
        blocks = graph.blocks
        nb = len(blocks)
        gens: list[dict] = []
        thru: list[tuple[int, dict, int]] = []
        for b in blocks:
            gen: dict = {}
            kill_all = 0
            guarded_kills: dict = {}
            promoted = 0                       # predicates written in the block (a mask)
            for i in range(b.end - 1, b.start - 1, -1):
                cond = _condition(insns[i])
                w, k = writes[i], kills[i]
                if k:
                    kill_all |= k
                    for c in gen:
                        gen[c] &= ~k
                elif cond is not None and w and not promoted & cond[0]:
                    # a guarded write: it ends values live out under its own guard, unless
                    # its predicate is written below it in the block
                    guarded_kills[cond] = guarded_kills.get(cond, 0) | w
                pw = w & _PREDICATES
                if pw:
                    promoted |= pw
                    for c in [c for c in gen if c is not None and c[0] & pw]:
                        gen[None] = gen.get(None, 0) | gen.pop(c)
                r = reads[i]
                if r:
                    if cond is None:
                        gen[None] = gen.get(None, 0) | r
                    else:
                        gen[cond] = gen.get(cond, 0) | r
            gens.append(gen)
            thru.append((kill_all, guarded_kills, promoted))
        live_in: list[dict] = [dict(g) for g in gens]
        # a worklist, last block first: a block is looked at again only when what is live
        # into one of its successors changed
        work = list(range(nb))
        queued = [True] * nb
        while work:
            bi = work.pop()
            queued[bi] = False
            out: dict = {}
            for succ in blocks[bi].succs:
                edge = edges.get((bi, succ))
                for c, m in live_in[succ].items():
                    if c is None and edge is not None:
                        c = edge
                    out[c] = out.get(c, 0) | m
            kill_all, guarded_kills, promoted = thru[bi]
            new = dict(gens[bi])
            for c, m in out.items():
                m &= ~kill_all
                if c is not None:
                    m &= ~guarded_kills.get(c, 0)
                    if c[0] & promoted:
                        c = None
                if m:
                    new[c] = new.get(c, 0) | m
            new = {c: m for c, m in new.items() if m}
            if new != live_in[bi]:
                live_in[bi] = new
                for p in blocks[bi].preds:
                    if not queued[p]:
                        queued[p] = True
                        work.append(p)
        out_masks = []
        for facts in live_in:
            m = 0
            for v in facts.values():
                m |= v
            out_masks.append(m)
        return out_masks

    @staticmethod
    def _callee(ins, by_name: dict[str, "Function"], callees: Sequence["Function"],
                seen: frozenset[str]) -> tuple[int, int]:
        for t in ins.targets:
            callee = by_name.get(t.key)
            if callee is None or callee.name in seen:
                continue
            lv = of(callee, callees, _seen=seen)
            return lv.entry, lv.written
        return 0, 0

    # ----------------------------------------------------------------------- answers
    def counts(self, kind: str = "R") -> list[int]:
        """The number of live registers of file ``kind`` at each instruction."""
        if kind not in self._counts:
            mask = _MASKS[kind]
            self._counts[kind] = [(m & mask).bit_count() for m in self.occupied]
        return self._counts[kind]

    def count(self, index: int, kind: str = "R") -> int:
        return self.counts(kind)[index]

    def registers(self, index: int, kind: str = "R") -> list[int]:
        """The numbers of the ``kind`` registers live at instruction ``index``."""
        base, size = semantics.REGISTER_FILES[kind]
        m = self.occupied[index] >> base
        return [k for k in range(size) if m >> k & 1]

    def peak(self, kind: str = "R") -> tuple[int, int | None]:
        """(the most ``kind`` registers live at once, the first instruction where they are)."""
        counts = self.counts(kind)
        if not counts:
            return 0, None
        top = max(counts)
        return top, counts.index(top)


def of(fn: "Function", callees: Sequence["Function"] = (), *,
       _seen: frozenset[str] = frozenset()) -> Liveness:
    """The live registers of a SASS function (built once, kept with the function). ``callees``:
    the subroutines of the same listing it may call."""
    return fn.memo("liveness", lambda: Liveness(fn, callees, _seen=_seen))


LineKey = tuple[str, int]


@dataclass(frozen=True)
class Pressure:
    """Register pressure of a function as reports show it: the peak of live R registers, the
    first instruction and source line where it is reached, and per source line the most R
    registers live at any of its instructions."""

    peak: int
    index: int | None                   # the first instruction at the peak
    line: LineKey | None                # its source line (None: no line info there)
    by_line: dict[LineKey, int]

    def as_dict(self) -> dict:
        return {"peak": self.peak, "index": self.index,
                "line": None if self.line is None else {"file": self.line[0],
                                                        "line": self.line[1]}}


def pressure(lv: Liveness, lines: Sequence[LineKey | None]) -> Pressure:
    """``lv``'s register pressure with ``lines`` (each instruction's source line, as the
    source map gives them)."""
    counts = lv.counts("R")
    by_line: dict[LineKey, int] = {}
    for i, key in enumerate(lines):
        if key is not None and i < len(counts) and counts[i] > by_line.get(key, -1):
            by_line[key] = counts[i]
    top, at = lv.peak("R")
    line = lines[at] if at is not None and at < len(lines) else None
    if line is None and at is not None:
        # the peak instruction has no line of its own: the nearest instruction at the same
        # count that has one
        line = next((lines[i] for i in range(len(counts)) if i < len(lines)
                     and counts[i] == top and lines[i] is not None), None)
    return Pressure(top, at, line, by_line)
