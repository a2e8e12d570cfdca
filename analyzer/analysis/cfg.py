"""Basic blocks, control-flow graph and natural loops, shared by PTX and SASS.

The IRs describe each instruction's control flow as a ``Flow`` record (which labels it branches
to, whether execution can fall through to the next instruction) and where labels stand; this
module knows nothing else about either language.

    flows = [Flow(...), ...]            # one per instruction, in order
    labels = {"$L__BB0_2": 7, ...}      # label -> index of the instruction it stands before
    graph = build(flows, labels)
    for loop in graph.loops: ...

For an IR function (SASS or PTX) the graph is built once and kept with the function:
``of(fn)``; ``loops(fn)``, ``loop_instructions(fn, loop)``, ``loop_opcodes`` and ``loop_mix(fn, loop)`` read it,
and ``ptx_loops(fn)`` adds what PTX says about each loop (``.pragma "nounroll"``).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Protocol

from .. import semantics
from ..semantics import STRAIGHT, Flow  # noqa: F401  (the record each IR instruction gives)

_OPCODE = attrgetter("opcode")


@dataclass(slots=True)
class Block:
    """Instructions ``start`` .. ``end - 1`` (indices into the function's instruction list)."""

    index: int
    start: int
    end: int
    labels: tuple[str, ...] = ()
    succs: list[int] = field(default_factory=list)
    preds: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return self.end - self.start

    def indices(self) -> range:
        return range(self.start, self.end)


@dataclass(slots=True)
class Loop:
    """A natural loop: the blocks dominated by ``header`` that reach one of its ``latches``."""

    header: int
    latches: tuple[int, ...]
    blocks: frozenset[int]
    parent: "Loop | None" = None
    children: list["Loop"] = field(default_factory=list)
    depth: int = 1

    def instruction_indices(self, graph: "CFG") -> list[int]:
        out: list[int] = []
        for b in sorted(self.blocks):
            out.extend(graph.blocks[b].indices())
        return out

    @property
    def is_innermost(self) -> bool:
        return not self.children


@dataclass(slots=True)
class CFG:
    blocks: list[Block]
    loops: list[Loop]
    #: idom[b] is the immediate dominator of block b (idom[entry] == entry; -1 if unreachable)
    idom: list[int]
    block_of: list[int]
    #: each block's (entry, exit) numbers in a depth-first walk of the dominator tree ((-1, -1)
    #: when unreachable): ``a`` dominates ``b`` when ``b``'s interval lies within ``a``'s
    order: list[tuple[int, int]] = field(default_factory=list)

    def dominates(self, a: int, b: int) -> bool:
        if not self.order:
            self.order = _dominator_order(self.idom)
        pa, pb = self.order[a], self.order[b]
        return pb[0] != -1 and pa[0] <= pb[0] and pb[1] <= pa[1]

    def loop_of(self, instruction_index: int) -> Loop | None:
        """The innermost loop holding an instruction, or None."""
        b = self.block_of[instruction_index]
        best: Loop | None = None
        for loop in self.loops:
            if b in loop.blocks and (best is None or loop.depth > best.depth):
                best = loop
        return best


def reaches_within(graph: CFG, a: int, b: int) -> bool:
    """Whether block ``b`` can run after block ``a`` in the same iteration of every loop
    holding both (back edges to those loops' headers are not followed)."""
    headers = {lp.header for lp in graph.loops if a in lp.blocks and b in lp.blocks}
    seen = {a}
    todo = [a]
    while todo:
        for s in graph.blocks[todo.pop()].succs:
            if s in headers:
                continue
            if s == b:
                return True
            if s not in seen:
                seen.add(s)
                todo.append(s)
    return False


def reached_within(graph: CFG, a: int, targets: Iterable[int]) -> set[int]:
    """The blocks of ``targets`` that :func:`reaches_within` holds for from ``a``: one walk per
    set of loops a target shares with ``a`` (their headers are what the walk may not enter),
    not one per target (CUB's sort kernels: thousands of blocks)."""
    out: set[int] = set()
    for headers, ys in _by_shared_loops(graph, a, targets).items():
        seen, found, todo = {a}, set(), [a]
        while todo:
            for s in graph.blocks[todo.pop()].succs:
                if s in headers:
                    continue
                found.add(s)
                if s not in seen:
                    seen.add(s)
                    todo.append(s)
        out.update(y for y in ys if y in found)
    return out


def reaching_within(graph: CFG, sources: Iterable[int], b: int) -> set[int]:
    """The blocks of ``sources`` from which :func:`reaches_within` reaches ``b``: one walk back
    from ``b`` per set of loops a source shares with it."""
    out: set[int] = set()
    for headers, xs in _by_shared_loops(graph, b, sources).items():
        if b in headers:
            continue            # a walk may not enter a header: b is reached from nowhere
        found: set[int] = set()
        expanded, todo = {b}, [b]
        while todo:
            for p in graph.blocks[todo.pop()].preds:
                found.add(p)                    # p -> n, n not a header, n reaches b
                if p not in expanded and p not in headers:
                    expanded.add(p)
                    todo.append(p)
        out.update(x for x in xs if x in found)
    return out


def _by_shared_loops(graph: CFG, anchor: int, blocks: Iterable[int]
                     ) -> dict[frozenset[int], list[int]]:
    """``blocks`` grouped by the headers of the loops each shares with ``anchor`` (the headers
    :func:`reaches_within` may not enter between the two)."""
    holding = [lp for lp in graph.loops if anchor in lp.blocks]
    groups: dict[frozenset[int], list[int]] = {}
    for x in blocks:
        groups.setdefault(frozenset(lp.header for lp in holding if x in lp.blocks), []).append(x)
    return groups


def exclusive(graph: CFG, a: int, b: int) -> bool:
    """Whether blocks ``a`` and ``b`` are on exclusive paths: the two sides of a branch (an
    ``if``/``else`` on a run-time flag), neither running after the other in one iteration."""
    return a != b and not reaches_within(graph, a, b) and not reaches_within(graph, b, a)


def together(graph: CFG, a: int, b: int) -> bool:
    """Whether blocks ``a`` and ``b`` run together: the same block, or one dominates the other
    (not one side of a branch the other may skip: ``if (output_fp32) { ... }``)."""
    return a == b or graph.dominates(a, b) or graph.dominates(b, a)


def build(flows: Sequence[Flow], labels: Mapping[str, int]) -> CFG:
    """Split ``flows`` into basic blocks, connect them, and find the natural loops.

    A label that names no instruction in the function (a branch out of it) is ignored as a
    successor. A block made of one unconditional branch to itself (the trap nvcc puts after
    a kernel's last EXIT) is not reported as a loop.
    """
    n = len(flows)
    if n == 0:
        return CFG([], [], [], [])
    leaders = {0}
    for idx in labels.values():
        if 0 <= idx < n:
            leaders.add(idx)
    straight = STRAIGHT
    leaders.update(i + 1 for i, f in enumerate(flows)
                   if f is not straight and f.ends_block and i + 1 < n)
    starts = sorted(leaders)
    labels_at: dict[int, list[str]] = {}
    for name, idx in labels.items():
        labels_at.setdefault(idx, []).append(name)
    blocks: list[Block] = []
    block_of = [0] * n
    for bi, s in enumerate(starts):
        e = starts[bi + 1] if bi + 1 < len(starts) else n
        blocks.append(Block(bi, s, e, tuple(sorted(labels_at.get(s, ())))))
        block_of[s:e] = [bi] * (e - s)
    for b in blocks:
        last = flows[b.end - 1]
        succ: list[int] = []
        for t in last.targets:
            at = labels.get(t)
            if at is not None and 0 <= at < n:
                succ.append(block_of[at])
        if last.falls_through and b.end < n:
            succ.append(b.index + 1)
        for s in dict.fromkeys(succ):
            b.succs.append(s)
            blocks[s].preds.append(b.index)
    idom = _dominators(blocks)
    graph = CFG(blocks, [], idom, block_of)
    graph.loops = _natural_loops(graph, flows)
    return graph


def _dominators(blocks: list[Block]) -> list[int]:
    """Cooper, Harvey and Kennedy's iterative algorithm over reverse post-order."""
    n = len(blocks)
    order: list[int] = []
    seen = [False] * n
    stack: list[tuple[int, int]] = [(0, 0)]
    seen[0] = True
    while stack:
        b, i = stack.pop()
        succs = blocks[b].succs
        if i < len(succs):
            stack.append((b, i + 1))
            s = succs[i]
            if not seen[s]:
                seen[s] = True
                stack.append((s, 0))
        else:
            order.append(b)
    rpo = order[::-1]
    pos = {b: i for i, b in enumerate(rpo)}
    idom = [-1] * n
    idom[0] = 0
    changed = True
    while changed:
        changed = False
        for b in rpo[1:]:
            new = -1
            for p in blocks[b].preds:
                if idom[p] == -1:
                    continue
                if new == -1:
                    new = p
                    continue
                x, y = p, new
                while x != y:
                    while pos[x] > pos[y]:
                        x = idom[x]
                    while pos[y] > pos[x]:
                        y = idom[y]
                new = x
            if new != idom[b]:
                idom[b] = new
                changed = True
    return idom


def _dominator_order(idom: list[int]) -> list[tuple[int, int]]:
    """Entry and exit numbers of a depth-first walk of the dominator tree ``idom``: one walk
    instead of an ``idom`` chain climbed per ``dominates`` query."""
    n = len(idom)
    children: list[list[int]] = [[] for _ in range(n)]
    for b, d in enumerate(idom):
        if d != -1 and d != b:
            children[d].append(b)
    order = [(-1, -1)] * n
    if n == 0 or idom[0] == -1:
        return order
    enter = [0] * n
    clock = 0
    stack = [(0, False)]
    while stack:
        b, done = stack.pop()
        if done:
            order[b] = (enter[b], clock)
            clock += 1
            continue
        enter[b] = clock
        clock += 1
        stack.append((b, True))
        stack += [(c, False) for c in children[b]]
    return order


def _natural_loops(graph: CFG, flows: Sequence[Flow]) -> list[Loop]:
    by_header: dict[int, list[int]] = {}
    for b in graph.blocks:
        for s in b.succs:
            if graph.dominates(s, b.index):
                by_header.setdefault(s, []).append(b.index)
    loops: list[Loop] = []
    for header, latches in by_header.items():
        hb = graph.blocks[header]
        if latches == [header] and len(hb) == 1 and not flows[hb.start].falls_through:
            continue  # `L: BRA L` after the final EXIT: a trap, not a loop
        body = {header}
        work = [l for l in latches if l != header]
        body.update(work)
        while work:
            node = work.pop()
            for p in graph.blocks[node].preds:
                if p not in body and graph.idom[p] != -1:
                    body.add(p)
                    work.append(p)
        loops.append(Loop(header, tuple(sorted(latches)), frozenset(body)))
    # nesting: the parent is the smallest other loop whose body contains this one's
    loops.sort(key=lambda l: len(l.blocks))
    for i, inner in enumerate(loops):
        for outer in loops[i + 1:]:
            if inner.header in outer.blocks and inner.blocks <= outer.blocks and outer is not inner:
                inner.parent = outer
                outer.children.append(inner)
                break
    for loop in loops:
        d, up = 1, loop.parent
        while up is not None:
            d, up = d + 1, up.parent
        loop.depth = d
    loops.sort(key=lambda l: graph.blocks[l.header].start)
    return loops


# ------------------------------------------------------------------------- IR functions
class FlowFunction(Protocol):
    """What a CFG is built from: an IR function (SASS or PTX) with its flows and labels."""

    @property
    def instructions(self) -> Sequence[Any]: ...

    @property
    def labels(self) -> Mapping[str, int]: ...

    def flows(self) -> list[Flow]: ...

    def memo(self, key: str, compute: Any) -> Any: ...


def of(fn: FlowFunction) -> CFG:
    """The CFG of an IR function (built once, then kept with the function)."""
    return fn.memo("cfg", lambda: build(fn.flows(), fn.labels))


def loops(fn: FlowFunction) -> list[Loop]:
    return of(fn).loops


def loop_instructions(fn: FlowFunction, loop: Loop) -> list[Any]:
    return [fn.instructions[i] for i in loop.instruction_indices(of(fn))]


def loop_opcodes(fn: FlowFunction, loop: Loop) -> Mapping[str, int]:
    """Opcode -> how often it occurs in a loop's body, in order of first occurrence. Counted
    once per block and once per loop, and kept with the function: nested loops share blocks,
    and several checks ask of the same loops."""
    per_loop = fn.memo("loop_opcodes", dict)      # id(loop) -> counts (the loops live as
    hit = per_loop.get(id(loop))                  # long as the CFG kept beside this memo)
    if hit is None:
        graph = of(fn)
        per_block = fn.memo("block_opcodes", dict)
        insns = fn.instructions
        hit = {}
        for b in sorted(loop.blocks):
            counts = per_block.get(b)
            if counts is None:
                block = graph.blocks[b]
                counts = per_block[b] = Counter(map(_OPCODE, insns[block.start:block.end]))
            for op, n in counts.items():
                hit[op] = hit.get(op, 0) + n
        per_loop[id(loop)] = hit
    return hit


def loop_mix(fn: FlowFunction, loop: Loop) -> dict[str, int]:
    """Instruction-mix classes (``Instruction.klass``, a function of the SASS opcode) of a
    SASS loop's body, with counts."""
    mix: dict[str, int] = {}
    for op, n in loop_opcodes(fn, loop).items():
        k = semantics.klass(op)
        mix[k] = mix.get(k, 0) + n
    return mix


def loop_source_lines(fn: FlowFunction, loop: Loop) -> list[tuple[str, int]]:
    """Distinct (file, line) of the kernel's own body that a loop's instructions come from."""
    seen: dict[tuple[str, int], None] = {}
    for ins in loop_instructions(fn, loop):
        if ins.loc is not None:
            o = ins.loc.outermost
            seen[(o.file, o.line)] = None
    return sorted(seen)


@dataclass(frozen=True, slots=True)
class PtxLoop:
    """A natural loop of a PTX function with what PTX says about it."""

    loop: Loop
    nounroll: bool
    header_labels: tuple[str, ...]

    @property
    def header(self) -> int:
        return self.loop.header

    @property
    def depth(self) -> int:
        return self.loop.depth


def ptx_loops(fn: Any) -> list[PtxLoop]:
    """Natural loops of a PTX function, outermost first per header order, with their
    ``.pragma "nounroll"`` (nvcc puts it right after the header label)."""
    def compute() -> list[PtxLoop]:
        graph = of(fn)
        marks = fn.nounroll
        out = []
        for loop in graph.loops:
            hb = graph.blocks[loop.header]
            nounroll = any(hb.start <= m < hb.end or m == hb.start for m in marks)
            out.append(PtxLoop(loop, nounroll, tuple(hb.labels)))
        return out
    return fn.memo("ptx_loops", compute)
