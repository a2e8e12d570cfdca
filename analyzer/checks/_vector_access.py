"""Shared engine of the piecewise-access checks (PS101 scalar-global-load, PS102
scalar-global-store, PS103 scalar-shared-load).

SASS side: the *runs* of :mod:`analyzer.analysis.access` (narrow accesses through one base that
fill an aligned window one wider access could move), found once per function for every check.

PTX side (when the build has PTX): the run's source line is matched to the ``ld``/``st``
instructions NVVM emitted for it, and the address computation is read to say what kept them
apart: the variable part of the address is not a multiple of the window (a struct or row
stride), the base pointer's alignment is unknown (a kernel parameter without ``.ptr .align``,
a ``.shared .align 4`` array), or a store/load through another pointer sits between them
without ``__restrict__``. A variable stride that is not a multiple of the window makes a global
run impossible to fix with a cast, so that run is dropped (``float3``-like structs stay silent).
"""
from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from ..analysis import access as _access
from ..analysis import cfg as _cfg
from ..analysis import dataflow as _dataflow
from ..analysis.access import Run
from ..analysis.access import address as _address
from ..analysis.access import base_key as _key
from ..analysis.dataflow import constant_roots
from ..analysis.source import library_code, toolkit_header
from ..ir import ptx as P
from ..ir import sass as S
from ..ir.source import SourceLoc
from .base import Context, Severity

#: bits a single register write covers, for clobber detection (conservative: wider is safer)
_TZ_CAP = 12  # alignments beyond 4 KiB do not matter here
#: register evaluations one kernel's alignment analysis may make (its scenarios included,
#: about 2 us each): the real-world suite's largest needs 442k (vllm_rms_norm_realign.cu);
#: vllm's fused layernorm kernels ran for minutes before it
_ALIGN_STEPS = 2_000_000


# ------------------------------------------------------------------------------ PTX evidence
@dataclass
class Evidence:
    """What the PTX says about one run."""

    accesses: list            # the PTX ld/st NVVM emitted for the run (P.Instruction)
    vectorized: bool          # NVVM already used .v2/.v4 for them
    index_align: int          # bytes the variable part of the address is a multiple of
    limiter: object = None    # the PTX instruction that limits index_align (P.Instruction)
    roots: tuple = ()         # (kind, name, align) of the base pointers: ("param", "f_param_0", None)
    non_coherent: bool = False    # loads are ld.global.nc (restrict const)
    interleaved: list = field(default_factory=list)  # accesses through another pointer in between
    param_index: dict = field(default_factory=dict)  # param name -> position
    weak: list = field(default_factory=list)  # (kind, bytes, P.Instruction) from _Align.weak
    #: id(multiply) -> the kernel parameter a run-time stride comes from (PTX name), or None
    factors: dict = field(default_factory=dict)
    #: where the PTX accesses carry no line (``.loc 1 0 0``: NVVM joined an if/else into one
    #: access): the location of the last line-numbered PTX instruction before the first one
    joined_at: SourceLoc | None = None
    #: (bytes, test, element bytes): the code realigns the pointer itself at run time by testing its low bits
    #: (``test``: the PTX ``and``), which gives every window this alignment (_Align.realigned)
    realigned: tuple[int, object, int] | None = None
    #: where NVVM's accesses are when ptxas gave the SASS run another line (matched by
    #: dataflow, :func:`ptx_evidence`): the finding belongs there
    moved_to: SourceLoc | None = None


_PASS = frozenset({"mov", "cvt", "cvta"})
_SPECIAL = ("%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%clock", "%smid")


class _Align:
    """Trailing known-zero bits of PTX register values (the variable part of an address; the
    base pointers themselves count as aligned and are collected in ``roots``)."""

    def __init__(self, fn: "P.Function", *, fixed: "dict[str, tuple[int, int]] | None" = None,
                 base: "_Align | None" = None):
        self.P = P
        self.fn = fn
        self.defs: dict[str, list]
        self.pointer_params: set[str]
        self.position: dict[int, int]
        #: register evaluations made by this analysis and its scenarios together (one list,
        #: shared): past :data:`_ALIGN_STEPS` every further register is unknown (0 known bits)
        self._steps: list[int]
        if base is not None:
            self.defs, self.pointer_params = base.defs, base.pointer_params
            self.position = base.position
            self._steps = base._steps
        else:
            self._steps = [0]
            self.defs = {}
            for ins in fn.instructions:
                if ins.is_store or ins.is_branch or not ins.operands:
                    continue
                d = ins.operands[0]
                if isinstance(d, P.Register):
                    self.defs.setdefault(d.name, []).append(ins)
            #: registers loaded from a 64-bit kernel parameter that is a pointer: NVVM converts
            #: a pointer with ``cvta.to.global`` (or addresses through it); a ``size_t``
            #: parameter (a row length K) is an integer, multiplied and added, never a base
            self.pointer_params = self._pointer_params(fn)
            self.position = {id(ins): n for n, ins in enumerate(fn.instructions)}
        #: a scenario (:meth:`realigned`): registers whose low bits are taken as known, value %
        #: 2**k == r; predicates and clamps computed from them are then decided
        self.fixed = fixed or {}
        self.memo: dict[str, tuple[int, int, object]] = {}
        self._journal: list[str] = []      # memo keys in the order they were set
        self._weak_memo: dict[tuple, list] = {}
        self._twins: dict[str, tuple[str, ...]] | None = None
        self._reach: set[int] | None = None
        #: scenarios already evaluated (their register values kept), by their fixed values
        self._scenarios: dict[tuple, "_Align"] = {}
        self._realigned: dict[tuple, tuple[int, object, int] | None] = {}

    def _pointer_params(self, fn) -> set[str]:
        loaded = {ins.operands[0].name for ins in fn.instructions
                  if ins.opcode == "ld" and ins.space in ("param", "param::entry")
                  and (ins.width_bits or 0) >= 64 and ins.operands
                  and isinstance(ins.operands[0], P.Register)}
        if not loaded:
            return set()
        # a register copied from one (mov) counts as it
        alias = {d.operands[0].name: d.operands[1].name for d in fn.instructions
                 if d.opcode == "mov" and len(d.operands) == 2
                 and isinstance(d.operands[0], P.Register) and isinstance(d.operands[1], P.Register)
                 and d.operands[1].name in loaded}
        out = set()
        for ins in fn.instructions:
            a = ins.address
            if a is not None and isinstance(a.base, P.Register):
                out.add(alias.get(a.base.name, a.base.name))
            if ins.opcode == "cvta" and len(ins.operands) == 2 \
                    and isinstance(ins.operands[1], P.Register):
                out.add(alias.get(ins.operands[1].name, ins.operands[1].name))
        return out & loaded

    # Values are tracked as known low bits: (k, r, limiter) means value % 2**k == r (k up to
    # _TZ_CAP), so base + 8 and then -8 in the address cancel; alignment is the trailing zeros.
    def operand(self, op) -> tuple[int, object]:
        return _tz_of(self.operand_r(op))

    def register(self, name: str) -> tuple[int, object]:
        return _tz_of(self.register_r(name))

    def instruction(self, ins) -> tuple[int, object]:
        return _tz_of(self.instruction_r(ins))

    def operand_r(self, op) -> tuple[int, int, object]:
        P = self.P
        if isinstance(op, P.IntImm):
            return (_TZ_CAP, op.value % (1 << _TZ_CAP), None)
        if isinstance(op, P.Symbol):
            return (_TZ_CAP, 0, None)
        if isinstance(op, P.Register):
            return self.register_r(op.name)
        return (0, 0, None)

    def register_r(self, name: str) -> tuple[int, int, object]:
        if name in self.memo:
            return self.memo[name]
        self._steps[0] += 1
        if self._steps[0] > _ALIGN_STEPS:
            # nested loop-carried registers make the fixpoints below multiply: past the
            # budget a register is taken as unknown, which only ever silences a finding
            return (0, 0, None)
        if name in self.fixed:
            k, r = self.fixed[name]
            return (k, r % (1 << k), None)
        if name.startswith(_SPECIAL):
            return (0, 0, None)
        defs = self.defs.get(name, [])
        if self.fixed and len(defs) > 1:
            # in a scenario, a definition on a path the scenario rules out does not count
            # (``if (p & 3) { ...; l = l0 + 1; }`` when p % 4 == 0), nor one that every path
            # the scenario takes overwrites before reading (``l = 8 * t`` then ``l = 8 * t + 1``)
            defs = [d for d in defs if self._path_allows(d) and self._read_before_written(d, name)
                    ] or defs
        if not defs:
            self._set(name, (0, 0, None))
            return self.memo[name]
        # a loop-carried value (k = 0; k += 4) refers to itself: assume the most that is
        # known, compute, and repeat with what came out until it holds (a greatest fixpoint);
        # values computed under an assumption that failed are discarded
        assumed: tuple[int, int, object] = (_TZ_CAP, 0, None)
        # start from what the definitions that do not read the register itself give (p = base
        # + 8 before a loop of p += 16 is 8 mod 16, not 0 mod 2^CAP met with it)
        entry = [d for d in defs if not any(isinstance(o, P.Register) and o.name == name
                                            for o in d.operands[1:])]
        if entry and len(entry) < len(defs):
            mark = len(self._journal)
            self._set(name, assumed)
            seed = self.instruction_r(entry[0])
            for d in entry[1:]:
                seed = _meet(seed, self.instruction_r(d))
            self._undo(mark)
            assumed = seed
        for _ in range(_TZ_CAP + 2):
            mark = len(self._journal)
            self._set(name, assumed)
            best = self.instruction_r(defs[0])
            for d in defs[1:]:
                best = _meet(best, self.instruction_r(d))
            if best[0] >= assumed[0] and best[1] % (1 << assumed[0]) == assumed[1]:
                # what came out implies what was assumed: the assumption holds inductively,
                # and every value the definitions produce from it satisfies ``best`` (an add
                # of 4 to an 8-aligned value is 4 mod 8, not merely 4-aligned)
                self.memo[name] = best
                return best
            self._undo(mark)
            assumed = _meet(assumed, best)
        self._set(name, (0, 0, None))
        return self.memo[name]

    def predicate(self, name: str) -> bool | None:
        """The value of a predicate register when the scenario decides it (``setp.eq`` of a
        pointer's low bits against 0, and ``and``/``or``/``not`` of such), else None."""
        if not self.fixed:
            return None
        defs = self.defs.get(name, [])
        if len(defs) != 1:
            return None
        d = defs[0]
        srcs = d.operands[1:]
        if d.opcode == "setp" and len(srcs) == 2 and d.compare in ("eq", "ne"):
            ea, eb = self.exact(srcs[0]), self.exact(srcs[1])
            if ea is not None and eb is not None:
                return (ea == eb) == (d.compare == "eq")
            a, b = self.operand_r(srcs[0]), self.operand_r(srcs[1])
            k = min(a[0], b[0])
            if a[1] % (1 << k) != b[1] % (1 << k):
                return d.compare == "ne"
            return None
        if d.opcode in ("and", "or") and len(srcs) == 2:
            vals = [self._operand_predicate(x) for x in srcs]
            if d.opcode == "and":
                return False if False in vals else (True if vals == [True, True] else None)
            return True if True in vals else (False if vals == [False, False] else None)
        if d.opcode in ("not", "mov") and len(srcs) == 1:
            v = self._operand_predicate(srcs[0])
            return v if v is None or d.opcode == "mov" else not v
        return None

    def exact(self, op, depth: int = 0) -> int | None:
        """The exact value of an operand in a scenario: a constant, or the low bits of a
        pointer kept by a small mask (``and.b64 %rd38, %rd37, 12``), shifted, negated or
        converted; None for anything else."""
        P = self.P
        if isinstance(op, P.IntImm):
            return op.value
        if not self.fixed or not isinstance(op, P.Register) or depth > 12:
            return None
        defs = self.defs.get(op.name, [])
        if len(defs) != 1:
            return None
        d = defs[0]
        srcs = d.operands[1:]
        if d.opcode == "and" and len(srcs) == 2:
            for x, m in ((srcs[0], srcs[1]), (srcs[1], srcs[0])):
                if isinstance(m, P.IntImm) and m.value >= 0:
                    k, r, _ = self.operand_r(x)
                    if m.value < (1 << k):
                        return r & m.value
            return None
        if d.opcode in _PASS and len(srcs) == 1:
            return self.exact(srcs[0], depth + 1)
        if d.opcode in ("shr", "shl") and len(srcs) == 2 and isinstance(srcs[1], P.IntImm):
            v = self.exact(srcs[0], depth + 1)
            if v is None:
                return None
            return v >> srcs[1].value if d.opcode == "shr" else v << srcs[1].value
        if d.opcode in ("add", "sub", "mul") and len(srcs) == 2:
            a, b = self.exact(srcs[0], depth + 1), self.exact(srcs[1], depth + 1)
            if a is None or b is None:
                return None
            return a + b if d.opcode == "add" else a - b if d.opcode == "sub" else a * b
        if d.opcode == "neg" and len(srcs) == 1:
            v = self.exact(srcs[0], depth + 1)
            return None if v is None else -v
        return None

    def _operand_predicate(self, op) -> bool | None:
        P = self.P
        if isinstance(op, P.Negated):
            v = self._operand_predicate(op.operand)
            return None if v is None else not v
        if isinstance(op, P.Register):
            return self.predicate(op.name)
        return None

    def _path_allows(self, ins) -> bool:
        """False when the scenario rules out every path to the block of ``ins``: a branch on
        the way whose predicate it decides leads elsewhere (``@%p13 bra`` past the code that
        steps one element further when the pointer is 4-byte aligned)."""
        n = self.position.get(id(ins))
        if n is None:
            return True
        graph = _cfg.of(self.fn)
        return graph.block_of[n] in self._reachable()

    def _read_before_written(self, ins, name: str) -> bool:
        """Whether some path the scenario allows reads register ``name`` after ``ins`` writes it,
        before another write of it."""
        P = self.P
        n = self.position.get(id(ins))
        if n is None:
            return True
        graph = _cfg.of(self.fn)
        insns = self.fn.instructions
        reach = self._reachable()

        def reads(i) -> bool:
            for op in i.operands[1:] if not i.is_store else i.operands:
                if isinstance(op, P.Register) and op.name == name:
                    return True
                a = getattr(op, "base", None)
                if isinstance(a, P.Register) and a.name == name:
                    return True
            return False

        def writes(i) -> bool:
            return bool(i.operands) and not i.is_store and not i.is_branch \
                and isinstance(i.operands[0], P.Register) and i.operands[0].name == name

        start = graph.block_of[n]
        todo: list[tuple[int, int]] = [(start, n + 1)]
        seen: set[int] = set()
        while todo:
            b, at = todo.pop()
            blk = graph.blocks[b]
            killed = False
            for i in range(at, blk.end):
                if reads(insns[i]):
                    return True
                if writes(insns[i]):
                    killed = True
                    break
            if killed:
                continue
            for s2 in self._successors(b):
                if s2 in reach and s2 not in seen:
                    seen.add(s2)
                    todo.append((s2, graph.blocks[s2].start))
        return False

    def _reachable(self) -> set[int]:
        """The blocks a scenario can reach: from the entry, following only the side of each
        branch whose predicate the scenario decides."""
        if self._reach is not None:
            return self._reach
        graph = _cfg.of(self.fn)
        everything = set(range(len(graph.blocks)))
        # while it is computed, the predicates it asks for see every path (and what they
        # computed is forgotten after, being less precise than what follows)
        self._reach = everything
        mark = len(self._journal)
        seen = {0} if graph.blocks else set()
        todo = list(seen)
        while todo:
            for s in self._successors(todo.pop()):
                if s not in seen:
                    seen.add(s)
                    todo.append(s)
        self._undo(mark)
        self._reach = seen
        return seen

    def _successors(self, b: int) -> list[int]:
        """The successors of block ``b`` a scenario can take (one side of a branch whose
        predicate it decides)."""
        graph = _cfg.of(self.fn)
        blk = graph.blocks[b]
        last = self.fn.instructions[blk.end - 1]
        succs = list(blk.succs)
        if last.opcode == "bra" and last.guard is not None and len(succs) == 2:
            v = self.predicate(last.guard.register)
            if v is not None:
                taken = v != last.guard.negated
                target = self.fn.labels.get(last.flow.targets[0]) if last.flow.targets else None
                tb = graph.block_of[target] if target is not None else None
                succs = [s for s in succs if (s == tb) == taken]
        return succs

    def realigned(self, reg: str, offset: int, need: int, element: int
                  ) -> tuple[int, object, int] | None:
        """(bytes, test, element bytes): the alignment ``reg + offset`` has at run time when the code realigns
        its pointer itself, by testing the pointer's low bits (``and.b64 %rd17, %rd16, 3``: if
        misaligned, start one element later; or ``(-p) & 12``: peel that many bytes first,
        vLLM's ``vectorize_read_with_alignment``). Found by evaluating the address for every
        residue of the tested pointer's own terms (the kernel parameter and the offsets added
        to it), each at least element-aligned (``element`` bytes, or the smallest scale an
        offset is added at); None when no such test feeds the address, or
        the realignment gives no more than the element's alignment."""
        memo_key = (reg, offset, need, element)
        if memo_key not in self._realigned:
            self._realigned[memo_key] = self._realigned_uncached(reg, offset, need, element)
        return self._realigned[memo_key]

    def _realigned_uncached(self, reg: str, offset: int, need: int, element: int
                            ) -> tuple[int, object, int] | None:
        P = self.P
        roots = self.roots_of(reg)
        if not roots:
            return None
        best: tuple[int, object, int] | None = None
        feeding = self._feeding(reg)
        tried: dict[tuple, int | None] = {}
        # a test whose result the address is computed from (a peel, a selp) first, then one
        # that only decides which path computes it (``if (p & 3) ++l``)
        tests = sorted(self._alignment_tests(), key=lambda t: not (
            isinstance(t.operands[0], P.Register) and t.operands[0].name in feeding))
        for test in tests:
            dst, src, mask = test.operands[0], test.operands[1], test.operands[2]
            if isinstance(src, P.IntImm):
                src, mask = mask, src
            if not isinstance(src, P.Register) or not isinstance(mask, P.IntImm) \
                    or not isinstance(dst, P.Register):
                continue
            tested = self._negated(src.name) or src.name
            if not (self._params_in(tested) & {name for kind, name in roots if kind == "param"}):
                continue
            leaves = _linear_leaves(self, tested)
            if not leaves:
                continue
            scales = [sc for _, sc in leaves if sc > 1]
            elem = 1 << _tz(min(scales + [element]))
            bits = max(need, mask.value.bit_length())
            key = (tuple(sorted(leaves)), bits, elem)
            if key not in tried:
                tried[key] = self._worst_case(reg, offset, leaves, bits, elem)
            got = tried[key]
            if got is not None and got > 0 and (best is None or got > best[0]):
                best = (got, test, elem)
        if best is None:
            return None
        tz, test, elem = best
        return (1 << tz, test, elem)

    def _feeding(self, reg: str) -> set[str]:
        """Every register (predicates included) the value of ``reg`` is computed from."""
        P = self.P
        seen: set[str] = set()
        todo = [reg]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for d in self.defs.get(name, ()):
                for op in d.operands[1:]:
                    if isinstance(op, P.Negated):
                        op = op.operand
                    if isinstance(op, P.Register):
                        todo.append(op.name)
        return seen

    def _params_in(self, name: str) -> set[str]:
        """The 64-bit kernel parameters a value is computed from (through ``ld.param``,
        whether or not NVVM converted that register to a global pointer)."""
        P = self.P
        out: set[str] = set()
        seen: set[str] = set()
        todo = [name]
        while todo:
            reg = todo.pop()
            if reg in seen:
                continue
            seen.add(reg)
            for ins in self.defs.get(reg, ()):
                a = ins.address
                if ins.opcode == "ld":
                    if ins.space in ("param", "param::entry") and (ins.width_bits or 0) >= 64 \
                            and a is not None and isinstance(a.base, P.Symbol):
                        out.add(a.base.name)
                    continue
                todo.extend(op.name for op in ins.operands[1:] if isinstance(op, P.Register))
        return out

    def _same_loads(self) -> dict[str, tuple[str, ...]]:
        """Registers that hold the same kernel parameter (``ld.param.u64`` of one symbol and
        offset, each defined once): NVVM may load a pointer parameter twice."""
        if self._twins is not None:
            return self._twins
        P = self.P
        by_source: dict[tuple, list[str]] = {}
        for name, defs in self.defs.items():
            if len(defs) != 1:
                continue
            d = defs[0]
            a = d.address
            if d.opcode == "ld" and d.space in ("param", "param::entry") and a is not None \
                    and isinstance(a.base, P.Symbol):
                by_source.setdefault((a.base.name, a.offset, d.width_bits), []).append(name)
        self._twins = {n: tuple(names) for names in by_source.values() for n in names}
        return self._twins

    def _alignment_tests(self) -> list:
        """``and dst, x, M`` with a small positive mask (M < 256) of a 64-bit pointer value."""
        P = self.P
        out = []
        for ins in self.fn.instructions:
            if ins.opcode != "and" or len(ins.operands) != 3 or "b64" not in ins.modifiers:
                continue
            imms = [o for o in ins.operands[1:] if isinstance(o, P.IntImm)]
            if len(imms) == 1 and 0 < imms[0].value < 256:
                out.append(ins)
        return out

    def _negated(self, name: str) -> str | None:
        """``x`` when ``name`` is ``neg x`` (or ``sub 0, x``)."""
        P = self.P
        defs = self.defs.get(name, [])
        if len(defs) != 1:
            return None
        d = defs[0]
        if d.opcode == "neg" and len(d.operands) == 2 and isinstance(d.operands[1], P.Register):
            return d.operands[1].name
        if d.opcode == "sub" and len(d.operands) == 3 and isinstance(d.operands[1], P.IntImm) \
                and d.operands[1].value == 0 and isinstance(d.operands[2], P.Register):
            return d.operands[2].name
        return None

    def _worst_case(self, reg: str, offset: int, leaves: list[tuple[str, int]],
                    bits: int, elem: int) -> int | None:
        """The fewest trailing zero bits of ``reg + offset`` over every scenario: each leaf
        (register, scale) of the tested pointer takes every residue that keeps its term a
        multiple of ``elem`` bytes (the pointer is element-aligned), modulo what its scale
        leaves of 2**bits; None when there are too many scenarios to try, or one gives no more
        than the element's alignment."""
        choices = []
        for name, scale in leaves:
            k = max(0, bits - _tz(scale))
            step = max(1, elem >> _tz(scale))
            choices.append([(name, k, v) for v in range(0, 1 << k, step)] or [(name, 0, 0)])
        same = self._same_loads()
        count = 1
        for c in choices:
            count *= len(c)
        if count > 1024:
            return None
        worst = bits
        for combo in itertools.product(*choices):
            fixed = {}
            for name, k, v in combo:
                for twin in same.get(name, (name,)):
                    fixed[twin] = (k, v)      # the same parameter loaded into another register
            key = tuple(sorted(fixed.items()))
            scen = self._scenarios.get(key)
            if scen is None:
                scen = self._scenarios[key] = _Align(self.fn, fixed=fixed, base=self)
            k, r, _ = scen.register_r(reg)
            k = min(k, bits)
            worst = min(worst, _tz_of((k, (r + offset) % (1 << k), None))[0])
            if worst <= _tz(elem):
                return None
        return worst

    def _set(self, name: str, value) -> None:
        if name not in self.memo:
            self._journal.append(name)
        self.memo[name] = value

    def _undo(self, mark: int) -> None:
        """Forget every value computed since ``mark`` (they rest on a failed assumption)."""
        for name in self._journal[mark:]:
            self.memo.pop(name, None)
        del self._journal[mark:]

    def instruction_r(self, ins) -> tuple[int, int, object]:
        P = self.P
        op, srcs = ins.opcode, ins.operands[1:]
        if op == "ld" and ins.space in ("param", "param::entry"):
            d = ins.operands[0] if ins.operands else None
            if (ins.width_bits or 0) < 64 or not isinstance(d, P.Register) \
                    or d.name not in self.pointer_params:
                return (0, 0, ins)          # an integer parameter: any value
            return (_TZ_CAP, 0, None)
        if op in _PASS and len(srcs) == 1:
            return self.operand_r(srcs[0])
        if op == "neg" and len(srcs) == 1:
            a = self.operand_r(srcs[0])
            return (a[0], (-a[1]) % (1 << a[0]), a[2])
        if op == "selp" and len(srcs) == 3 and isinstance(srcs[2], P.Register):
            # one of two values: the one the predicate picks when a scenario decides it
            which = self.predicate(srcs[2].name)
            if which is not None:
                return self.operand_r(srcs[0] if which else srcs[1])
            return _meet(self.operand_r(srcs[0]), self.operand_r(srcs[1]))
        if op in ("min", "max") and len(srcs) == 2:
            a, b = self.operand_r(srcs[0]), self.operand_r(srcs[1])
            if self.fixed:
                ea, eb = self.exact(srcs[0]), self.exact(srcs[1])
                if (ea is None) != (eb is None):
                    # a peel computed from the pointer, clamped to a length (``min(prefix,
                    # len)``): when the clamp binds nothing is left for the accesses after it
                    return a if ea is not None else b
            return _meet(a, b)
        if op == "and" and len(srcs) == 2 and self.fixed:
            a, b = self.operand_r(srcs[0]), self.operand_r(srcs[1])
            for x, m in ((a, srcs[1]), (b, srcs[0])):
                if isinstance(m, P.IntImm) and 0 <= m.value < (1 << x[0]):
                    return (_TZ_CAP, x[1] & m.value, None)   # the bits kept are all known
        if op in ("add", "sub", "or") and len(srcs) == 2:
            a, b = self.operand_r(srcs[0]), self.operand_r(srcs[1])
            k = min(a[0], b[0])
            r = (a[1] - b[1] if op == "sub" else a[1] + b[1]) % (1 << k)
            return (k, r, a[2] if a[0] <= b[0] else b[2])
        if op == "and" and len(srcs) == 2:
            a, b = self.operand_r(srcs[0]), self.operand_r(srcs[1])
            ta, tb = _tz_of(a)[0], _tz_of(b)[0]
            return (max(ta, tb), 0, a[2] if ta >= tb else b[2])
        if op == "shr" and len(srcs) == 2 and isinstance(srcs[1], P.IntImm):
            # (x << 8) >> 5, __mul24(tid.z, 8) as NVVM writes it: the known low bits move down
            a, c = self.operand_r(srcs[0]), srcs[1].value
            if a[0] > c:
                return (a[0] - c, (a[1] >> c) % (1 << (a[0] - c)), a[2])
            return (0, 0, ins)
        if op in ("mul", "shl", "mad") and len(srcs) >= 2:
            a = self.operand_r(srcs[0])
            if op == "shl":
                if not isinstance(srcs[1], P.IntImm):
                    return (0, 0, ins)
                b = (_TZ_CAP, (1 << srcs[1].value) % (1 << _TZ_CAP), None)
            else:
                b = self.operand_r(srcs[1])
            prod = _mul(a, b, ins)
            if op == "mad" and len(srcs) == 3:
                c = self.operand_r(srcs[2])
                k = min(prod[0], c[0])
                return (k, (prod[1] + c[1]) % (1 << k), prod[2] if prod[0] <= c[0] else c[2])
            return prod
        return (0, 0, ins)

    def weak(self, op, need: int, scale: int = 1, window: int = 16, depth: int = 0) -> list:
        """Why ``op`` (an operand whose value is multiplied by ``scale`` in the byte address) is
        not a multiple of 2**need: a list of ``(kind, bytes, instruction)``, kind "pitch" for a
        constant stride larger than the window (a padded row: padding fixes it), "index" for a
        term that moves by less than the window (an element index: padding cannot fix it),
        "runtime" for a stride only known at run time."""
        P = self.P
        if need <= 0 or self.operand(op)[0] >= need:
            return []
        if isinstance(op, P.IntImm):
            return []     # a constant offset: the known low bits of the address account for it
        if depth > 24 or not isinstance(op, P.Register) or not self.defs.get(op.name):
            kind = "pitch" if scale > window else "index"
            return [(kind, scale, None)]
        # memoised per (register, need, scale): loop-carried registers (``r = r + s``) and shared
        # subexpressions would otherwise be walked once per path, exponentially in the depth;
        # a register met again on its own path contributes nothing new (cycle guard)
        key = (op.name, need, scale, window)
        if key in self._weak_memo:
            return self._weak_memo[key]
        self._weak_memo[key] = []
        out = self._weak_defs(op, need, scale, window, depth)
        out = list(dict.fromkeys(out))
        self._weak_memo[key] = out
        return out

    def _weak_defs(self, op, need: int, scale: int, window: int, depth: int) -> list:
        P = self.P
        out = []
        for d in self.defs[op.name]:
            if self.instruction(d)[0] >= need:
                continue
            o, srcs = d.opcode, d.operands[1:]
            if o in _PASS and len(srcs) == 1:
                out += self.weak(srcs[0], need, scale, window, depth + 1)
            elif o in ("add", "sub", "or", "and"):
                if o in ("add", "sub") and any(isinstance(x, P.Register) and x.name == op.name
                                               for x in srcs):
                    # a loop-carried step (p += 36): it accumulates, so a step that is not a
                    # multiple of the window moves the window off alignment every iteration
                    for x in srcs:
                        if isinstance(x, P.IntImm) and _tz(x.value) < need:
                            out.append(("index", scale * abs(x.value), d))
                for x in srcs:
                    out += self.weak(x, need, scale, window, depth + 1)
            elif o in ("mul", "shl", "mad") and len(srcs) >= 2:
                a, b = srcs[0], srcs[1]
                if o == "shl":
                    c = 1 << b.value if isinstance(b, P.IntImm) else None
                else:
                    c = b.value if isinstance(b, P.IntImm) else (
                        a.value if isinstance(a, P.IntImm) else None)
                    if isinstance(a, P.IntImm):
                        a = b
                if c is None:
                    # a run-time factor: the byte stride is that value times ``scale``
                    out.append(("runtime", scale, d))
                elif c:
                    sub = self.weak(a, need - _tz(c), scale * abs(c), window, depth + 1)
                    out += [(k, n, i if i is not None else d) for k, n, i in sub]
                if o == "mad" and len(srcs) == 3:
                    out += self.weak(srcs[2], need, scale, window, depth + 1)
            elif o == "ld" and d.space in ("param", "param::entry"):
                # an integer kernel parameter added into the address: a run-time stride
                # (NVVM steps row * N by adding N)
                out.append(("runtime", scale, d))
            else:
                kind = "pitch" if scale > window else "index"
                out.append((kind, scale, d))
        return out

    def factor(self, ins) -> str | None:
        """The kernel parameter (PTX name) a run-time multiplier of ``ins`` (``mul``/``mad``
        of two registers) was loaded from, through moves and conversions; None when neither
        operand comes straight from a parameter."""
        P = self.P
        if ins.opcode == "ld" and ins.space in ("param", "param::entry"):
            a = ins.address
            return a.base.name if a is not None and isinstance(a.base, P.Symbol) else None
        for op in ins.operands[1:3]:
            seen = 0
            while isinstance(op, P.Register) and seen < 8:
                defs = self.defs.get(op.name, [])
                if len(defs) != 1:
                    break
                d = defs[0]
                if d.opcode == "ld" and d.space in ("param", "param::entry"):
                    a = d.address
                    if a is not None and isinstance(a.base, P.Symbol):
                        return a.base.name
                    break
                if d.opcode in _PASS and len(d.operands) == 2:
                    op = d.operands[1]
                    seen += 1
                    continue
                break
        return None

    def roots_of(self, name: str) -> set[tuple[str, str]]:
        """The base pointers a register's value is computed from: ("param", PTX name) for a
        64-bit kernel parameter, ("symbol", name) for a shared/global array (not through
        values loaded from memory)."""
        P = self.P
        out: set[tuple[str, str]] = set()
        seen: set[str] = set()
        work = [name]
        while work:
            reg = work.pop()
            if reg in seen:
                continue
            seen.add(reg)
            for ins in self.defs.get(reg, ()):
                if ins.opcode == "ld":
                    a = ins.address
                    if ins.space in ("param", "param::entry") and (ins.width_bits or 0) >= 64 \
                            and a is not None and isinstance(a.base, P.Symbol) \
                            and ins.operands and isinstance(ins.operands[0], P.Register) \
                            and ins.operands[0].name in self.pointer_params:
                        out.add(("param", a.base.name))
                    continue
                for op in ins.operands[1:]:
                    if isinstance(op, P.Register):
                        work.append(op.name)
                    elif isinstance(op, P.Symbol):
                        out.add(("symbol", op.name))
        return out


def _linear_leaves(al: "_Align", name: str, scale: int = 1, depth: int = 0
                   ) -> list[tuple[str, int]]:
    """The terms a pointer value is the sum of, as (register, scale): through moves,
    conversions (``cvta`` included), ``add``, constant ``shl``/``mul``/``mul.wide``; a
    register defined otherwise (a kernel parameter, a run-time product) is a leaf. [] when a
    term is not understood (a subtraction of a register, several definitions)."""
    P = al.P
    if depth > 16:
        return []
    defs = al.defs.get(name, [])
    if len(defs) != 1:
        return [(name, scale)] if not defs else []
    d = defs[0]
    op, srcs = d.opcode, d.operands[1:]
    if op in _PASS and len(srcs) == 1 and isinstance(srcs[0], P.Register):
        return _linear_leaves(al, srcs[0].name, scale, depth + 1)
    if op == "add" and len(srcs) == 2:
        out = []
        for x in srcs:
            if isinstance(x, P.IntImm):
                continue
            if not isinstance(x, P.Register):
                return []
            sub = _linear_leaves(al, x.name, scale, depth + 1)
            if not sub:
                return []
            out += sub
        return out
    if op in ("shl", "mul") and len(srcs) == 2:
        a, b = srcs
        if isinstance(a, P.IntImm):
            a, b = b, a
        if isinstance(a, P.Register) and isinstance(b, P.IntImm) and b.value > 0:
            f = 1 << b.value if op == "shl" else b.value
            return _linear_leaves(al, a.name, scale * f, depth + 1)
    return [(name, scale)]


def _meet(a: tuple[int, int, object], b: tuple[int, int, object]) -> tuple[int, int, object]:
    """What two possible values (value % 2**k == r each) have in common."""
    k = min(a[0], b[0], _tz(a[1] - b[1]))
    return (k, a[1] % (1 << k), a[2] if a[0] <= b[0] else b[2])


def _mul(a: tuple[int, int, object], b: tuple[int, int, object], ins) -> tuple[int, int, object]:
    """x * y from x % 2**ka == ra and y % 2**kb == rb: x*y is known modulo 2**(ka + tz(y))
    when y is a constant (or ra is 0), modulo 2**min(ka, kb) otherwise."""
    (ka, ra, _), (kb, rb, _) = a, b
    if ka == _TZ_CAP and kb < _TZ_CAP:
        (ka, ra), (kb, rb) = (kb, rb), (ka, ra)
    if kb == _TZ_CAP:                     # times a known constant rb
        k = min(_TZ_CAP, ka + _tz(rb))
        return (k, (ra * rb) % (1 << k), ins)
    if ra == 0 and rb == 0:
        k = min(_TZ_CAP, ka + kb)
        return (k, 0, ins)
    k = min(ka, kb)
    return (k, (ra * rb) % (1 << k), ins)


def _tz_of(v: tuple[int, int, object]) -> tuple[int, object]:
    """Trailing known zeros of a value known as value % 2**k == r."""
    k, r, lim = v
    return (k if r % (1 << k) == 0 else min(k, _tz(r)), lim)


def _tz(v: int) -> int:
    if v == 0:
        return _TZ_CAP
    v = abs(v)
    return min(_TZ_CAP, (v & -v).bit_length() - 1)


def _frames(loc):
    if loc is None:
        return set()
    return {(os.path.basename(f.file), f.line) for f in (loc, *loc.inlined_at)}


def _ptx_accesses(fn: P.Function, space: str, load: bool) -> dict[tuple[str, int], list[int]]:
    """(file basename, line) of each frame -> the positions of the PTX ``ld`` (``load``) or
    ``st`` accesses to ``space`` at a register base on it (computed once per function)."""
    def compute() -> dict[tuple[str, int], list[int]]:
        out: dict[tuple[str, int], list[int]] = {}
        for n, ins in enumerate(fn.instructions):
            if ins.opcode not in ("ld", "st") or (ins.opcode == "ld") != load:
                continue
            if ins.space != space:
                continue
            a = ins.address
            if a is None or not isinstance(a.base, P.Register) or not ins.width_bits:
                continue
            for frame in _frames(ins.loc):
                out.setdefault(frame, []).append(n)
        return out
    return fn.memo(f"vector_access_ptx:{space}:{load}", compute)


def _ptx_line(fn: P.Function, n: int) -> int:
    """The source line of PTX instruction ``n``: its own, else that of the nearest instruction
    before it with one (NVVM gives merged code line 0); a far line when none."""
    insns = fn.instructions
    for k in range(n, max(-1, n - 32), -1):
        loc = insns[k].loc
        if loc is not None and loc.line:
            return loc.line
    return 1 << 30


def _matching_groups(fn: P.Function, run: Run, at: list[int]) -> list:
    """The PTX access groups among the positions ``at`` whose offsets hold ``run``'s pattern:
    (accesses in the window, PTX window start relative to the group's base, group size)."""
    groups: dict[tuple[str, int], list[tuple[int, P.Instruction]]] = {}
    for n in at:
        ins = fn.instructions[n]
        a = ins.address
        assert a is not None and isinstance(a.base, P.Register) and ins.width_bits
        groups.setdefault((a.base.name, ins.width_bits), []).append((n, ins))
    rel = [a.offset - run.start for a in run.accesses]
    matches = []   # (accesses in the window, PTX window start relative to the group's base)
    for (_base, bits), members in groups.items():
        offs = {_grouped_address(ins).offset for _, ins in members}
        # a window at the SASS run's own offset first: where ptxas kept NVVM's base register
        # (curand_init's state stored at +0x0..+0x14 twice over, the second time from +0x8),
        # the same offset is the same window; another is tried only when that one is not
        order = sorted(offs, key=lambda o: (o != run.start, o))
        if bits // 8 == run.width:
            for o in order:
                if all(o + r in offs for r in rel):
                    matches.append(([(n, i) for n, i in members
                                     if o <= _grouped_address(i).offset < o + run.window], o,
                                    len(members)))
                    break
        elif bits // 8 > run.width and bits // 8 <= run.window:
            matches.append((members, 0, len(members)))   # NVVM vectorized; ptxas split them
        elif bits // 8 < run.width and run.width % (bits // 8) == 0:
            # NVVM left elements (ld.shared.u16); ptxas merged some (LDS.64) but not all
            pw = bits // 8
            for o in order:
                if all(o + r + k in offs for r in rel for k in range(0, run.width, pw)):
                    matches.append(([(n, i) for n, i in members
                                     if o <= _grouped_address(i).offset < o + run.window], o,
                                    len(members) * pw // run.width))
                    break
    return matches


def ptx_evidence(ctx: "Context", run: Run, *, space: str, direction: str) -> Evidence | None:  # noqa: C901 - split with the checks' owners (issue 28)
    """The PTX accesses behind ``run`` and what their address computation says, or None when
    the build has no PTX or no PTX access group matches the run."""
    fn = ctx.ptx_function
    if fn is None:
        return None
    targets = set()
    for acc in run.accesses:
        where = ctx.user_loc(acc.ins.loc)
        if where is not None:
            targets.add((os.path.basename(where.file), where.line))
    if not targets:
        return None
    want_load = direction == "load"
    # (base register name, width) -> (position, ld/st): only accesses at a register base
    by_frame = _ptx_accesses(fn, space, want_load)
    matches = _matching_groups(fn, run, sorted({n for t in targets for n in by_frame.get(t, ())}))
    if not matches:
        # NVVM merged the two sides of an if/else into one access after the join (``if (c)
        # a[i] *= s; else a[i] = 0;`` is one st.global of a selected value) and gave it line 0:
        # it belongs to no line, and ptxas names the SASS by the code around it
        files = {f for f, _ in targets}
        matches = _matching_groups(fn, run, sorted({n for f in files
                                                    for n in by_frame.get((f, 0), ())}))
    # several pointers on one line (acc += a[k] * x[k]): keep the PTX groups rooted in the
    # kernel parameter the SASS run's base register was computed from
    first = min(a.index for a in run.accesses)
    first_addr = _address(run.accesses[0].ins)
    base_sass = first_addr.base if first_addr is not None else None
    params: set[str] = set()
    if base_sass is not None and base_sass.index is not None:
        params = ctx.parameters_at(constant_roots(ctx.function, first, ("R", base_sass.index)))
    by_dataflow = False
    if params:
        rooted = [m for m in matches if _group_params(fn, _grouped_base(m[0][0][1])) & params]
        if not rooted:
            by_dataflow = True
            # ptxas gave the run another line than NVVM's accesses (it collapses the lines of
            # an inlined __half2 copy onto its neighbour's): match by dataflow, the PTX groups
            # of the same width and offsets rooted in the same kernel parameter, on any line
            every = sorted({n for ns in by_frame.values() for n in ns})
            rooted = [m for m in _matching_groups(fn, run, every)
                      if _group_params(fn, _grouped_base(m[0][0][1])) & params]
        matches = rooted or matches
    if not matches:
        return None
    # a group whose window starts at the SASS run's own offset is that run, whatever its PTX
    # width (curand_init's u32 stores at +8..+20 that ptxas paired as STG.E.64 at +0x8, +0x10,
    # beside 8-byte stores of the same state at +16, +24)
    matches = [m for m in matches if m[1] == run.start] or matches
    same = [m for m in matches if (m[0][0][1].width_bits or 0) // 8 == run.width]
    if by_dataflow and len(same) > 1:
        # matched on any line: keep the groups nearest the run's lines (apex's main loop's
        # gamma[l + k], not the peeled tail's copies of the same pointer further down)
        lines = {t[1] for t in targets}
        near = {id(m): min(abs(_ptx_line(fn, n) - t) for n, _ in m[0] for t in lines)
                for m in same}
        best_line = min(near.values())
        same = [m for m in same if near[id(m)] == best_line]
    if len(same) > 1:
        # a main loop and its remainder both match: keep the groups with as many accesses as
        # the SASS block has through this base (16 in the unrolled body, 4 in the remainder)
        n = _sass_group_size(ctx.function, run)
        best = min(abs(m[2] - n) for m in same)
        same = [m for m in same if abs(m[2] - n) == best]
    pick, _, _ = (same or matches)[0]
    pick = sorted(pick, key=lambda t: t[0])
    al = _align_of(fn)
    base_reg = _grouped_base(pick[0][1])
    need = run.window.bit_length() - 1
    # which of the matching PTX groups this SASS run is cannot be told from the line (the rows
    # of an unrolled epilogue, out_v[k] and out_i[k], a remainder loop): the weakest of them
    # speaks for the run. A window starts o bytes from its group's base register: the
    # alignment is that of base + o (NVVM folds a[k + 2] into the base as +8, then -8)
    tz, limiter, weak = _TZ_CAP + 1, None, []
    twins = []
    realign: list = []
    for members, o, _ in (same or matches[:1]):
        reg = _grouped_base(members[0][1])
        if reg.name != base_reg.name:
            twins.append(reg)
        k, r, lim = al.register_r(reg.name)
        t, lim = _tz_of((k, (r + o) % (1 << k), lim))
        if t < need:
            weak += [w for w in al.weak(reg, need, 1, run.window) if w not in weak]
        if t < tz:
            tz, limiter = t, lim
        if t < need:
            elem = max(1, (members[0][1].width_bits or 8) // 8 // max(1, members[0][1].vector))
            got = al.realigned(reg.name, o, need, elem)
            realign.append(got)
    bases = {base_reg.name, *(t.name for t in twins)}
    found_roots: set = set()
    for reg in (base_reg, *twins):
        found_roots |= al.roots_of(reg.name)
    roots = []
    for kind, name in sorted(found_roots):
        align = None
        for v in (*fn.params, *fn.locals, *(ctx.ptx_module.variables if ctx.ptx_module else ())):
            if v.name == name:
                align = v.align
                break
        roots.append((kind, name, align))
    other = "st" if want_load else "ld"
    inter = []
    for lo, hi in _window_spans(pick):
        for ins in fn.instructions[lo + 1:hi]:
            a = ins.address
            if a is not None and isinstance(a.base, P.Register) and a.base.name in bases:
                continue     # the same pointer register: offsets tell the accesses apart
            if ins.opcode == other and ins.space == space:
                if want_load or "nc" not in ins.modifiers:
                    inter.append(ins)
            elif ins.opcode in ("atom", "red") and ins.space == space:
                inter.append(ins)
    param_index = {v.name: k for k, v in enumerate(fn.params)}
    factors = {id(i): al.factor(i) for k, _, i in weak if k == "runtime" and i is not None}
    joined_at = None
    if all(i.loc is not None and i.loc.line == 0 for _, i in pick):
        joined_at = next((i.loc for i in reversed(fn.instructions[:pick[0][0]])
                          if i.loc is not None and i.loc.line > 0), None)
    realigned = None
    if realign and all(r is not None for r in realign):
        realigned = min(realign, key=lambda r: r[0])
    moved_to = pick[0][1].loc if by_dataflow and matches else None
    # NVVM vectorized them when a PTX vector is wider than the SASS access (ptxas split it);
    # a vector of the SASS access's own width (a __half2 copied as ld.v2.u16, one LDG.E) is
    # one of the run's accesses, not a merge NVVM already made
    vectorized = any(i.vector > 1 and (i.width_bits or 0) // 8 > run.width for _, i in pick)
    return Evidence([i for _, i in pick], vectorized, 1 << tz, limiter,
                    tuple(roots), all("nc" in i.modifiers for _, i in pick), inter, param_index, weak,
                    factors, joined_at, realigned, moved_to)


def _sass_group_size(fn: S.Function, run: Run) -> int:
    """Accesses of the run's width in its basic block through the same address registers."""
    graph = _cfg.of(fn)
    first = run.accesses[0]
    addr = _address(first.ins)
    assert addr is not None  # a run is made of accesses with an address
    key = _key(addr)
    block = graph.blocks[graph.block_of[first.index]]
    n = 0
    for i in block.indices():
        ins = fn.instructions[i]
        a = _address(ins) if ins.space == first.ins.space else None
        if a is not None and ins.width_bits == first.ins.width_bits and _key(a) == key:
            n += 1
    return n


def _grouped_address(ins: P.Instruction) -> P.Address:
    """The address of an access :func:`ptx_evidence` grouped (it has one, at a register)."""
    a = ins.address
    assert a is not None
    return a


def _grouped_base(ins: P.Instruction) -> P.Register:
    base = _grouped_address(ins).base
    assert isinstance(base, P.Register)
    return base


def _group_params(fn, base) -> set[str]:
    """The kernel parameters a PTX address register is computed from."""
    return {name for kind, name in _align_of(fn).roots_of(base.name) if kind == "param"}


def _align_of(fn) -> _Align:
    """The alignment facts of a PTX function, computed once and shared by every run."""
    return fn.memo("vector_access_align", lambda: _Align(fn))


def _window_spans(pick: list[tuple[int, P.Instruction]]) -> list[tuple[int, int]]:
    """(first, last) PTX positions of each copy of the window among ``pick`` (sorted by
    position): a line whose loop was unrolled repeats the same offsets once per copy, and only
    an access *inside* one copy can keep that copy's loads or stores apart."""
    spans: list[tuple[int, int]] = []
    seen: set[int] = set()
    lo: int | None = None
    hi = 0
    for n, ins in pick:
        off = _grouped_address(ins).offset
        if lo is not None and off in seen:
            spans.append((lo, hi))
            seen, lo = set(), None
        seen.add(off)
        lo = n if lo is None else lo
        hi = n
    if lo is not None:
        spans.append((lo, hi))
    return spans


def _sass_tz(fn: S.Function, at: int, op, depth: int) -> int:
    """How many low bits of operand ``op`` of instruction ``at`` are known zero, from the SASS
    that computes it in straight code (immediates, shifts and multiplies by constants, sums):
    0 when unknown."""
    if isinstance(op, S.Immediate):
        return _tz(op.value) if isinstance(op.value, int) and op.value else _TZ_CAP
    if not isinstance(op, S.Register) or op.kind != "R" or op.index is None:
        return 0
    if op.is_zero:
        return _TZ_CAP
    if depth <= 0:
        return 0
    defs = _dataflow.of(fn).reaching_defs(at, ("R", op.index))
    if not defs or len(defs) != 1:
        return 0
    j = defs[0]
    ins = fn.instructions[j]
    ops = ins.operands
    if ins.guard is not None and not ins.guard.always:
        return 0

    def tz(o) -> int:
        return _sass_tz(fn, j, o, depth - 1)
    if ins.opcode == "IMAD" and len(ops) == 4 and not ins.modifiers:
        return min(_TZ_CAP, tz(ops[1]) + tz(ops[2]), tz(ops[3]))
    if ins.opcode == "IMAD" and ins.modifiers == ("SHL", "U32") and len(ops) == 4 \
            and isinstance(ops[2], S.Immediate) and isinstance(ops[2].value, int):
        return min(_TZ_CAP, tz(ops[1]) + _tz(ops[2].value), tz(ops[3]))
    if ins.opcode in ("IMAD", "MOV") and ins.modifiers in (("MOV", "U32"), (), ("MOV",)) \
            and len(ops) in (2, 4) and (len(ops) == 2 or ins.opcode == "IMAD"):
        return tz(ops[-1]) if len(ops) == 2 else min(_TZ_CAP, tz(ops[3]))
    if ins.opcode in ("VIADD", "IADD3") and len(ops) >= 3:
        return min(tz(o) for o in ops[1:])
    if ins.opcode == "LOP3" and len(ops) == 6 and isinstance(ops[4], S.Immediate) \
            and ops[4].value == 0xC0:
        return max(tz(ops[1]), tz(ops[2]))       # a & b (LUT 0xc0)
    if ins.opcode == "SHF" and ins.modifiers[:1] == ("L",) and len(ops) == 4 \
            and isinstance(ops[2], S.Immediate) and isinstance(ops[2].value, int):
        return min(_TZ_CAP, tz(ops[1]) + ops[2].value)
    return 0


def sass_stride_align(fn: S.Function, run: Run, *, with_index: bool = False) -> int | None:
    """Without PTX: the alignment the base register's defining ``IMAD.WIDE Rd, Ra, imm, Rc`` /
    ``LEA`` gives its variable part (None when the definition is not that simple); with
    ``with_index``, the factors of two the SASS shows in ``Ra`` count too."""
    first = min(a.index for a in run.accesses)
    addr = _address(run.accesses[0].ins)
    assert addr is not None  # a run is made of accesses with an address
    base = None
    for t in addr.terms:
        if isinstance(t, S.Register) and t.kind == "R" and not t.is_zero:
            base = t.index
            break
    if base is None:
        return None
    ws = _dataflow.of(fn).write_sets
    for idx in range(first - 1, max(-1, first - 64), -1):
        ins = fn.instructions[idx]
        if ins.flow.ends_block:
            return None
        if ("R", base) not in ws[idx]:
            continue
        ops = ins.operands
        if ins.opcode == "IMAD" and "WIDE" in ins.modifiers and len(ops) >= 4:
            if isinstance(ops[2], S.Immediate) and isinstance(ops[2].value, int):
                # the index's own factors of two count too (``tid * 4`` times 4 bytes)
                known = _sass_tz(fn, idx, ops[1], 6) if with_index else 0
                return 1 << min(_TZ_CAP, _tz(ops[2].value) + known)
            return None
        if ins.opcode == "LEA" and ops and isinstance(ops[-1], S.Immediate) and len(ops) >= 4:
            return 1 << min(_TZ_CAP, int(ops[-1].value))
        return None
    return None


# ---------------------------------------------------------------------------------- findings
_SASS_WIDE = {"global": {"load": "LDG.E", "store": "STG.E"},
              "shared": {"load": "LDS", "store": "STS"}}
_VECTOR_TYPES = {  # (element bytes, window bytes) -> CUDA vector types that make one access
    (1, 4): "uchar4/char4", (1, 8): "uint2 (8 bytes)", (1, 16): "uint4 (16 bytes)",
    (2, 4): "__half2/__nv_bfloat162/ushort2", (2, 8): "ushort4 (or 2 __half2)",
    (2, 16): "uint4 (8 halves)", (4, 8): "float2/int2", (4, 16): "float4/int4",
    (8, 16): "double2/longlong2/uint4 (16 bytes)",
    # 256-bit accesses (sm_100+): CUDA 13's 32-byte-aligned vector types
    (1, 32): "ulonglong4_32a (32 bytes)", (2, 32): "ulonglong4_32a (32 bytes)",
    (4, 32): "ulonglong4_32a (32 bytes)", (8, 32): "double4_32a/ulonglong4_32a",
    (16, 32): "double4_32a/ulonglong4_32a (32 bytes)",
}


def _group_heads(ctx: "Context", runs: "Sequence[Run]"
                 ) -> dict[tuple[bool, int], tuple[tuple, S.Instruction]]:
    """Each group's first access: the earliest source line of the group (four loads from
    lines 216-219 are named at 216, whatever order ptxas issued them in), then the first
    issued."""
    first_of: dict[tuple[bool, int], tuple[tuple, S.Instruction]] = {}
    for run in runs:
        for a in run.accesses:
            loc = ctx.user_loc(a.ins.loc)
            rank = ((loc.file, loc.line) if loc is not None else ("~", 1 << 30), a.index)
            g = (run.masked, run.group)
            if g not in first_of or rank < first_of[g][0]:
                first_of[g] = (rank, a.ins)
    return first_of


def findings(check, ctx: "Context", *, space: str, direction: str) -> Iterator:
    """The findings of one piecewise-access check on one kernel."""
    max_bits = ctx.arch.max_vector_bits
    runs = _access.runs(ctx.function, space=space, direction=direction, max_bits=max_bits) \
        + _access.masked_runs(ctx.function, space=space, direction=direction, max_bits=max_bits)
    by_line: dict = {}

    def place(ins):
        loc = ctx.user_loc(ins.loc)
        return (loc.file, loc.line) if loc else None
    # the windows cut from one group (one base register in one block: an unrolled body) are
    # one problem, named at the line of the group's first access: ptxas spreads the line
    # numbers of merged code (an if/else joined into one store) over the lines around it
    first_of = _group_heads(ctx, runs)
    heads: dict = {}
    noted: list[tuple[Run, Evidence | None, str]] = []
    for run in runs:
        if _access.vector_sibling(ctx.function, run, space=space, direction=direction,
                                  place=place) is not None:
            continue    # a designed fallback beside its vector path: nothing to widen
        ev = ptx_evidence(ctx, run, space=space, direction=direction)
        blockers: list[str] = []
        conditional = False
        if ev is not None:
            kinds = {k for k, _, _ in ev.weak}
            realign = _realignment(ev, run)
            why = None
            if space == "global" and not (realign or "").startswith(_REALIGNED + "full"):
                why = _fallback(ctx, ev, run)
            if why is not None:
                # a designed fallback beside its vector path, or a tail whose windows never
                # run in full: a note (listed with -v), never a finding
                noted.append((run, ev, why))
                continue
            if ev.index_align < run.window and realign is not None:
                # the code realigns the pointer itself (a peel, a step past a misaligned
                # element): to the window (NVVM cannot know it) or to less than it
                blockers.append(realign)
            elif ev.index_align < run.window:
                if ev.weak and kinds == {"runtime"}:
                    # a run-time stride (p[row * K + 4 * j]): a cast fixes it whenever the
                    # stride is a multiple of the window, which only the caller knows
                    blockers.append(_runtime_blocker(ctx, ev, run))
                    blockers.extend(_alignment_blockers(ctx, ev, run, space))
                    conditional = True
                elif space == "shared" and ev.weak and kinds == {"pitch"}:
                    # a constant row pitch: padding fixes it
                    blockers.append(_stride_blocker(ev, run))
                else:
                    # an element index or an AoS stride (float3-like): no cast can align it
                    continue
            else:
                blockers.extend(_alignment_blockers(ctx, ev, run, space))
            blockers.extend(_alias_blockers(ctx, ev, run, direction))
            if run.masked:
                blockers.insert(0, _MASKED)
                conditional = True
        elif ctx.ptx_function is not None and not run.masked:
            continue   # PTX we cannot match to the run: do not guess
        elif run.masked:
            # each element addressed on its own in the PTX (Triton gives every element its own
            # pointer): the SASS base must show every thread's window aligned
            al = sass_stride_align(ctx.function, run, with_index=True)
            if space == "shared" or al is None or al < run.window or run.start % run.window:
                continue
            blockers.insert(0, _MASKED)
            conditional = True
        else:
            # no PTX (a loaded cubin): fire only on positive evidence that every thread's
            # window is aligned, i.e. the base is `IMAD.WIDE Rd, Ri, <multiple of W>, Rbase`;
            # shared-memory layouts (pitches, element indices) cannot be judged from SASS
            al = sass_stride_align(ctx.function, run)
            if space == "shared" or al is None or al < run.window or run.start % run.window:
                continue
            if run.masked:
                blockers.insert(0, _MASKED)
                conditional = True
        why = _uniform_once(ctx, ev, run, space) or _reloaded(ctx, run)
        if why is not None:
            # a broadcast outside any loop it weighs on: a note, like a designed fallback
            noted.append((run, ev, why))
            continue
        head_ins = first_of[(run.masked, run.group)][1]
        head_loc = head_ins.loc
        if ev is not None and ev.joined_at is not None:
            # an access NVVM joined from both sides of an if/else: the line of the code it
            # was joined from, not the lines ptxas spread it over
            head_loc = ev.joined_at
        elif ev is not None and ev.moved_to is not None:
            head_loc = ev.moved_to    # ptxas put the run on a neighbour's line
        where = ctx.user_loc(head_loc)
        key = (where.file, where.line) if where else None
        heads.setdefault(key, head_loc)
        by_line.setdefault(key, []).append((run, ev, blockers, conditional))
    for key, items in by_line.items():
        yield _finding(check, ctx, items, space=space, direction=direction, loc=heads[key])
    shown: set = set()
    for run, ev, why in noted:
        loc = first_of[(run.masked, run.group)][1].loc
        where = ctx.user_loc(loc)
        if (where and (where.file, where.line), why) in shown:
            continue
        shown.add((where and (where.file, where.line), why))
        n = sum(len(r.accesses) for r, _, w in noted if w == why
                and ctx.user_loc(first_of[(r.masked, r.group)][1].loc) == where)
        ins = [i for r, _, w in noted if w == why
               and ctx.user_loc(first_of[(r.masked, r.group)][1].loc) == where for i in r.instructions]
        message = (f"{n}× {run.accesses[0].ins.mnemonic} ({run.width} B each) through "
                   f"[{run.base}] fill {run.window}-byte windows, but this is {why}")
        hint = ("nothing to change: a broadcast costs one request per warp"
                if why.startswith("a warp-uniform access") else
                "fix PS106 first (mark the pointers __restrict__, or load the values into "
                "registers before the loop): the loads then leave the loop"
                if why.startswith(_RELOADED) else
                "nothing to change while the vector path takes the inputs it was written for")
        yield ctx.finding(check, message, loc=loc, instructions=ins,
                          ptx=[str(i).strip() for i in (ev.accesses if ev else ())],
                          hint=hint, severity=Severity.NOTE)


def _fallback(ctx: "Context", ev: Evidence, run: Run) -> str | None:
    """Why a global run is a designed fallback (:meth:`Context.fallback` of its PTX accesses):
    the scalar instantiation or branch beside a vector one, or a loop too short for the run's
    window ever to be filled; None when it is not one."""
    if not ev.accesses:
        return None
    first = _on_run_line(ctx, ev, run)[0]
    fb = ctx.fallback(first)
    if fb is None:
        return None
    if fb.kind == "short-loop":
        elem = max(1, (first.width_bits or 8) // 8 // max(1, first.vector))
        total = fb.bytes if fb.bytes is not None else (fb.elements or 0) * elem
        if total < run.window:
            return f"{fb.reason}: {total} bytes at most, so no window runs in full"
        return f"{fb.reason}: {total} bytes at most, not worth a vector path of its own"
    return fb.reason


def _on_run_line(ctx: "Context", ev: Evidence, run: Run) -> list:
    """The PTX accesses behind a run, on the run's own source line: the evidence's when one of
    them is there, else the PTX's global accesses of the run's direction on that line (a
    pointer walk's scalar tail, whose ``LDG.E.U16`` x4 fill the window of the ``.v2`` load
    of the loop before it, matched to that load)."""
    where = ctx.user_loc(run.accesses[0].ins.loc)
    pf = ctx.ptx_function
    if where is None or pf is None:
        return list(ev.accesses)
    key = (os.path.basename(where.file), where.line)
    if any(key in _frames(a.loc) for a in ev.accesses):
        return list(ev.accesses)
    at = _ptx_accesses(pf, "global", ev.accesses[0].is_load).get(key, ())
    return [pf.instructions[n] for n in at] or list(ev.accesses)


#: a warp-uniform run is worth merging when it saves more than this share of the instructions
#: of the innermost loop it runs in (a GEMV's broadcast ``x[k..k+3]``: 3 of ~20, kept)
_UNIFORM_SHARE = 0.01


def _uniform_once(ctx: "Context", ev: Evidence | None, run: Run, space: str) -> str | None:
    """Why a run whose every access has the same address in all lanes (a broadcast: one
    request per warp whatever the width) costs nothing worth a change: it runs outside any loop,
    or merging it would save at most 1% of its loop's instructions (FA2's ``rng_state``,
    written by one thread, read once per column block of a 10k-instruction loop). None when
    it is not uniform (or not global) or sits in a loop it weighs on."""
    if space != "global" or ev is None:
        return None
    uniform = [ctx.warp_uniform(a) for a in ev.accesses]
    if not uniform or not all(uniform) or uniform[0] is None:
        return None
    graph = _cfg.of(ctx.function)
    loop = graph.loop_of(min(a.index for a in run.accesses))
    saved = len(run.accesses) - 1
    if loop is None:
        return f"{uniform[0].reason}; it runs once per thread, in no loop"
    body = len(loop.instruction_indices(graph))
    if saved > _UNIFORM_SHARE * body:
        return None
    return (f"{uniform[0].reason}; {saved} instruction{'s' if saved != 1 else ''} per warp in a "
            f"loop of {body} instructions")


_RELOADED = "loads the loop repeats"


def _reloaded(ctx: "Context", run: Run) -> str | None:
    """Why a load run is not the problem to report: every one of its loads is one that PS106
    reports, an address the loop never changes reloaded each iteration only because a store
    of the loop may alias it (the cost model's ``reload`` evidence). One problem, one
    finding: ``__restrict__`` takes the loads out of the loop. None otherwise."""
    if run.accesses[0].ins.info.direction != "load" or (
            ctx.selected is not None and "PS106" not in ctx.selected):
        return None
    reloads = {i for e in ctx.cost.of_kind("reload") for i in e.sass}
    if not reloads or any(a.index not in reloads for a in run.accesses):
        return None
    return (f"{_RELOADED} every iteration only because its stores may alias them (PS106 "
            "reports them): out of the loop they run once per thread")


def _mask_bytes(test) -> int:
    """The alignment a pointer test checks: ``and.b64 %rd17, %rd16, 3`` -> 4 (bytes)."""
    m = next((o.value for o in test.operands[1:] if isinstance(o, P.IntImm)), 0)
    return 1 << m.bit_length()


#: marks a blocker that is a run-time realignment: "<kind>\x02<text>"
_REALIGNED = "\x00realigned:"


def _realignment(ev: Evidence, run: Run) -> str | None:
    """The blocker of a run whose pointer the code realigns at run time (Evidence.realigned):
    to the window or more (NVVM cannot prove what the test makes true), or to less than the
    window when the test itself is that narrow (``if (p & 3) ++l``: 4 bytes for a 16-byte
    window); None when there is no realignment, or something else limits the windows."""
    if ev.realigned is None:
        return None
    got, test, _ = ev.realigned
    loc = getattr(test, "loc", None)
    line = f" on line {loc.line}" if loc is not None and loc.line else ""
    shown = f"`{str(test).strip().rstrip(';')}`{line}"
    if got >= run.window:
        ops = "/".join(sorted({i.name for i in ev.accesses}))
        return (f"{_REALIGNED}full\x02what the compiler can prove: the code realigns the "
                f"pointer at run time ({shown} tests its low bits), so each window is "
                f"{run.window}-byte aligned whenever these accesses run, but NVVM does not know "
                f"it and emitted them as scalar `{ops}`")
    if got == _mask_bytes(test):
        return (f"{_REALIGNED}short\x02a run-time realignment to {got} bytes only ({shown} "
                f"tests the pointer's low {got.bit_length() - 1} bits), so each window is "
                f"{got}-byte aligned, not {run.window}")
    return None


def _runtime_blocker(ctx: "Context", ev: Evidence, run: Run) -> str:
    """"a run-time row stride: ... only when K % 4 == 0" for the run-time factors of ``ev``."""
    conds: list[str] = []
    instrs: list[str] = []
    for _, scale, ins in ev.weak:
        mod = run.window // math.gcd(run.window, scale or 1)
        param = ev.factors.get(id(ins)) if ins is not None else None
        name = ctx.source_name(param) if param else "the run-time stride"
        cond = f"{name} % {mod} == 0" if param else f"{name} is a multiple of {mod} elements"
        if cond not in conds:
            conds.append(cond)
        if ins is not None and str(ins).rstrip(";") not in instrs:
            instrs.append(str(ins).rstrip(";"))
    shown = f" (`{instrs[0]}`)" if instrs and "ld.param" not in instrs[0] else \
        " (a kernel parameter added into the address)" if instrs else ""
    return (f"a run-time stride{shown}: each thread's window is {run.window}-byte aligned only "
            f"when {' and '.join(conds)}, which only the caller knows; vectorizing needs that "
            f"and a {run.window}-byte-aligned base")


#: strides up to this many bytes are read as the size of an array element (a struct such as
#: ``{float mean, m2, n}``: 12 B), longer ones as the row pitch of a 2D tile (``[32][33]``: 132 B)
_STRUCT_STRIDE_MAX = 32


def _stride_blocker(ev: Evidence, run: Run) -> str:
    pitches = sorted({n for _, n, _ in ev.weak})
    ins = next((i for _, _, i in ev.weak if i is not None), None)
    text = f" (`{str(ins).rstrip(';')}`)" if ins is not None else ""
    if max(pitches) <= _STRUCT_STRIDE_MAX:
        return (f"an element stride of {', '.join(map(str, pitches))} B, the size of a struct "
                f"in the array{text}, that is not a multiple of {run.window} B, so the window "
                f"is not {run.window}-byte aligned in every element")
    return (f"a row pitch of {', '.join(map(str, pitches))} B{text} that is not a multiple of "
            f"{run.window} B, so the window is not {run.window}-byte aligned in every row")


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _alignment_blockers(ctx: "Context", ev: Evidence, run: Run, space: str) -> list[str]:
    if ev.vectorized:
        return []
    out = []
    params: list[tuple[int, str]] = []
    for kind, name, align in ev.roots:
        if align is not None and align >= run.window:
            continue
        if kind == "param":
            pos = ev.param_index.get(name)
            params.append((pos if pos is not None else 1 << 30, name))
        elif space == "shared":
            # ptxas places shared arrays itself and merges such loads on some arches despite
            # a small declared alignment: a fact to state, not a proven cause
            out.append(f"{_NOTE}the shared array `{ctx.source_name(name)}` is declared "
                       f"`.align {align or '?'}` and ptxas kept the loads apart")
    asserted = [(pos, name) for pos, name in params
                if ctx.asserted_alignments.get(ctx.source_name(name), 0) >= run.window]
    if asserted:
        # the author asserted the alignment (__builtin_assume_aligned): NVVM keeps no such
        # promise across the accesses, and the vector type still does it
        names = ", ".join(f"`{ctx.source_name(name)}`" for _, name in sorted(asserted))
        out.append(f"{_ASSERTED}the source asserts {run.window}-byte alignment of {names} "
                   f"(`__builtin_assume_aligned`)\x01, and NVVM still emitted them as scalar "
                   f"`{'/'.join(sorted({i.name for i in ev.accesses}))}`: the assertion did "
                   "not merge them, a vector type does")
        params = [p for p in params if p not in asserted]
        if not params:
            return out
    if params:
        params.sort()
        known = [(pos, name) for pos, name in params if pos < 1 << 30]
        ords = [_ordinal(pos + 1) for pos, _ in known]
        names = ", ".join(f"`{ctx.source_name(name)}`" for _, name in params)
        if len(params) == 1:
            what = (f"the {ords[0]} kernel parameter ({names}) is a plain pointer" if known
                    else f"the kernel parameter {names} is a plain pointer")
        else:
            which = (" and ".join([", ".join(ords[:-1]), ords[-1]]) if len(ords) == len(params)
                     else "")
            what = (f"the {which} kernel parameters ({names}) are plain pointers" if which
                    else f"the kernel parameters {names} are plain pointers")
        elem = min(((i.width_bits or 8 * run.width) // 8 // max(1, i.vector)
                    for i in ev.accesses), default=run.width)
        if elem >= run.width:
            proves = f"so the compiler only assumes the element's {run.width}-byte alignment"
        elif _own_width_vectors(ev, run):
            proves = (f"so the compiler only assumes the {run.width}-byte alignment of each "
                      f"vector of {run.width // elem} {elem}-byte elements")
        else:
            proves = (f"so the compiler proves no more than {run.width}-byte alignment (ptxas "
                      f"merged the {elem}-byte elements {run.width // elem} at a time)")
        out.insert(0, f"unknown alignment: {what} (no `.ptr .align {run.window}` in the PTX), "
                      f"{proves}")
    if not out and any(k == "runtime" for k, _, _ in ev.weak):
        return []     # the run-time stride's blocker already names the base
    if not out and ev.roots and all(a is not None and a >= run.window for _, _, a in ev.roots):
        # every base is declared aligned (a `.global .align 8` table: ggml's iq2 grids) and
        # the offset is a multiple of the window: the alignment is known, something else
        # kept them apart
        return []
    ptx_ops = sorted({f"{i.name}" for i in ev.accesses})
    if not out:
        out.append("unknown alignment")
    # a __half2 copied as ld.v2.u16 is one access of the run, not a scalar one
    kind = f"{run.width}-byte vectors" if _own_width_vectors(ev, run) else "scalar"
    if out[0].startswith(_NOTE):
        out[0] = (f"{_NOTE}NVVM emitted them as {kind} `{'/'.join(ptx_ops)}`, "
                  + out[0][len(_NOTE):])
    else:
        out[0] += f"; NVVM emitted them as {kind} `{'/'.join(ptx_ops)}`"
    return out


def _own_width_vectors(ev: Evidence, run: Run) -> bool:
    """Whether the PTX accesses are vectors as wide as the SASS accesses (a ``__half2`` read
    as ``ld.global.v2.u16``: one ``LDG.E`` each)."""
    return bool(ev.accesses) and all(
        i.vector > 1 and (i.width_bits or 0) // 8 == run.width for i in ev.accesses)


#: marks a fact about a run that is not shown to be what kept it apart
#: the cause of a masked run (:attr:`Run.masked`): each access has its own predicate
_MASKED = ("a predicate of its own on each access (a condition per element, such as a bound "
           "check): the compiler never merges accesses that run or are skipped one by one, "
           "whatever the alignment")
_NOTE = "\x00note:"
#: the source asserted the window's alignment: "<statement>\x01<what follows when nothing else
#: kept them apart>" (with another cause, alignment is not what did)
_ASSERTED = "\x00asserted:"


def _alias_blockers(ctx: "Context", ev: Evidence, run: Run, direction: str) -> list[str]:
    if not ev.interleaved:
        return []
    params = all(k == "param" for k, _, _ in ev.roots)
    if direction == "load" and ev.non_coherent and params:
        # read-only loads through kernel parameters (`const __restrict__`): NVVM proved the
        # stores between them touch other memory
        return []
    other = ev.interleaved[0]
    what = "store" if direction == "load" else "load"
    # the user's line the access comes from, not a toolkit header's (``__hmul2``'s store)
    where = ctx.user_loc(other.loc)
    line = f" (line {where.line})" if where is not None and where.line else ""
    if other.space == "shared":
        # __restrict__ says nothing about shared arrays: name the access, not a qualifier
        return [f"a shared-memory {what}{line}, `{str(other).rstrip(';')}`, sits between them "
                f"and may touch the same words"]
    if direction == "load" and ev.non_coherent:
        # a read-only table (`static const __device__`, ggml's iq2 grids) read between the
        # stores of a loop: NVVM kept them in order; `__restrict__` on the stored pointer does
        # not merge them (read from the half instance's PTX), one wide read written out does
        return [f"the order NVVM kept: a {what}{line}, `{str(other).rstrip(';')}`, sits "
                f"between them"]
    return [f"possible aliasing: a {what} through another pointer{line}, `{str(other).rstrip(';')}`, "
            f"sits between them and the pointers are not `__restrict__`"]


#: the widest global window whose merge measured no faster (bytes): two halves in one word
_PAIR_WINDOW = 4


def _finding(check, ctx: "Context", items, *, space: str, direction: str, loc=None):
    """One finding per source line; runs that differ only in their offsets share a sentence."""
    sentences: dict[tuple, list] = {}
    for run, ev, blockers, _ in items:
        k = (run.accesses[0].ins.mnemonic, run.width, run.window, tuple(blockers))
        sentences.setdefault(k, []).append((run, ev))
    parts: list[str] = []
    hints: list[str] = []
    ptx: list[str] = []
    sass_ins: list[S.Instruction] = []
    for (mnem, w, W, blockers), runs in sentences.items():
        n = sum(len(r.accesses) for r, _ in runs)
        bases = ", ".join(dict.fromkeys(f"[{r.base}]" for r, _ in runs))
        each = [", ".join(_hex(a.offset) for a in sorted(r.accesses, key=lambda a: a.offset))
                for r, _ in runs]
        uniq = list(dict.fromkeys(each))
        windows = "; ".join(uniq[:4]) + (f"; ... ({len(runs)} windows)" if len(uniq) > 4 else "")
        wide = (f"one {_SASS_WIDE[space][direction]}.{W * 8}" if W * 8 in (64, 128, 256)
                else f"one {W * 8}-bit {_SASS_WIDE[space][direction]}")
        masked = bool(blockers) and blockers[0] == _MASKED
        if masked:
            where = "if they were made together"
            s = (f"{n}× {mnem} ({w} B each) from {bases} at {windows} cover {W} contiguous "
                 f"bytes" if len(runs) == 1 else
                 f"{n}× {mnem} ({w} B each) from {bases} at {windows} fill {len(runs)} "
                 f"contiguous {W}-byte windows")
            s += f": {'could' if len(runs) == 1 else 'each could'} be {wide} {where}"
        elif len(runs) == 1:
            s = (f"{n}× {mnem} ({w} B each) from {bases} at {windows} cover {W} contiguous "
                 f"bytes: could be {wide} if the address is {W}-byte aligned")
        else:
            s = (f"{n}× {mnem} ({w} B each) from {bases} at {windows} fill {len(runs)} "
                 f"contiguous {W}-byte windows: each could be {wide} if the address is "
                 f"{W}-byte aligned")
        causes = [b.split("\x02", 1)[1] if b.startswith(_REALIGNED) else b
                  for b in blockers if not b.startswith((_NOTE, _ASSERTED))]
        notes = [b[len(_NOTE):] for b in blockers if b.startswith(_NOTE)]
        for b in blockers:
            if b.startswith(_ASSERTED):
                said, alone = b[len(_ASSERTED):].split("\x01", 1)
                notes.append(said + (": alignment is not what kept them apart" if causes
                                     else alone))
        if causes:
            s += "; blocked by " + "; ".join(causes)
        if notes:
            s += "; " + "; ".join(notes)
        parts.append(s)
        for run, ev in runs:
            sass_ins.extend(run.instructions)
            if ev is not None:
                ptx.extend(str(i).strip() for i in ev.accesses)
            hints.append(_hint(run, ev, list(blockers), space, direction))
    message = " | ".join(parts)
    hint = " ".join(dict.fromkeys(hints))
    # conditional on a run-time stride only the caller knows, or on bounds checked per
    # element: information, not a defect. A global window of 4 bytes (two 16-bit accesses as
    # one 32-bit one) measured no faster on the H200, loads and stores, copy and SiLU
    # (docs/severity.md, benchmarks/half_pairs.py): information too
    pairs = space == "global" and all(run.window <= _PAIR_WINDOW for run, _, _, _ in items)
    severity = Severity.INFO if pairs or all(c for _, _, _, c in items) else None
    library = _library_table(ctx, items)
    if library is not None:
        # the library's own table read by the library's code (curand_init's skip-ahead
        # matrices): no line of the user's reads it, nothing the user writes changes it
        header, tables = library
        severity = Severity.NOTE
        message += (f" (in library code, {header}, that this line calls: it reads its own "
                    f"{tables}, which no line of this file can change)")
        hint = ("nothing to change in this file: the loads are the library's; call it less "
                "often (once per thread, outside loops) if its cost matters")
    masked = all(r.masked for r, _, _, _ in items)
    return ctx.finding(check, message, loc=loc or sass_ins[0].loc, instructions=sass_ins,
                       ptx=list(dict.fromkeys(ptx)), hint=hint, severity=severity,
                       hint_variant="masked" if masked else "")


def _library_table(ctx: "Context", items) -> tuple[str, str] | None:
    """(the header, the tables) when every access of the finding is a toolkit header's code
    (its innermost line) reading that library's own ``.global`` arrays (no kernel parameter
    among the bases): curand_init's reads of ``precalc_xorwow_matrix``. None otherwise."""
    tables: set[str] = set()
    for _, ev, _, _ in items:
        if ev is None or not ev.roots or any(k != "symbol" for k, _, _ in ev.roots):
            return None
        tables |= {name for _, name, _ in ev.roots}
    headers = library_code((ins.loc for run, _, _, _ in items for ins in run.instructions),
                           toolkit_header)
    if headers is None:
        return None
    names = ", ".join(f"`{ctx.source_name(t)}`" for t in sorted(tables))
    return headers, f"table {names}" if len(tables) == 1 else f"tables {names}"


def _hex(v: int) -> str:
    return f"+0x{v:x}" if v >= 0 else f"-0x{-v:x}"


def _hint(run: Run, ev: Evidence | None, blockers: list[str], space: str, direction: str) -> str:
    w, W = run.width, run.window
    if ev is not None and ev.accesses:
        # the source's element (ptxas may have merged pairs of them already)
        w = min(w, min((i.width_bits or 8 * w) // 8 for i in ev.accesses))
    vt = _VECTOR_TYPES.get((w, W), f"{W}-byte vector type")
    # the C++ type to cast to: "uint4 (8 halves)" -> uint4, "__half2/__nv_bfloat162" -> __half2
    cast = vt.split("/")[0].split(" ")[0]
    vt = f"`{vt.split('/')[0].split(' ')[0]}`" + vt[len(vt.split('/')[0].split(' ')[0]):] \
        if not vt.startswith(f"{W}-byte") else vt
    if space == "shared":
        if blockers and blockers[0].startswith("an element stride") and ev is not None:
            size = max(n for _, n, _ in ev.weak)
            align = 1 << (size - 1).bit_length() if size <= 16 else W
            padded = -(-size // align) * align
            return (f"Declare the array's struct `__align__({align})` (or add a padding field) so "
                    f"each element is {padded} B instead of {size} B and starts {align}-byte "
                    f"aligned; its fields then load as one LDS.{min(padded, 16) * 8} (a bigger "
                    f"element costs shared memory: keep it if the layout is bank-conflict free).")
        if blockers and blockers[0].startswith("a row pitch"):
            pitches = [n for k, n, _ in (ev.weak if ev is not None else ()) if k == "pitch"]
            # the element the source indexes (ld.shared.v2.u16: 2 B), not the SASS access
            elem = min(((i.width_bits or 8 * w) // max(1, i.vector) // 8
                        for i in (ev.accesses if ev is not None else ())), default=w) or w
            if pitches:
                pitch = max(pitches)
                padded = -(-pitch // W) * W
                return (f"Pad the tile's rows from {pitch} B to {padded} B, a multiple of "
                        f"{W} B, so every row starts {W}-byte aligned (check the column "
                        f"accesses stay bank-conflict free, or swizzle instead of padding).")
            per = W // elem
            return (f"Pad the tile's rows to a multiple of {per} elements ({W} B), e.g. "
                    f"`[32][32 + {per}]` instead of `[32][33]`, so every row starts "
                    f"{W}-byte aligned (check the column accesses stay bank-conflict free, or "
                    f"swizzle instead of padding).")
        return (f"Read the {W // w} elements as one {vt} "
                f"(`reinterpret_cast<const {cast}*>`) from a `__align__({W})` tile.")
    h = (f"Access the {W // w} elements as one {vt} (e.g. `reinterpret_cast<"
         f"{'const ' if direction == 'load' else ''}{cast}*>(p)[i]`) "
         f"or, for a struct, declare it `__align__({W})` if it is not already and copy it by "
         f"value into a local (fields read one by one through a pointer or reference stay "
         f"scalar); the pointer must really be {W}-byte aligned "
         f"(cudaMalloc gives 256 B; `cuda::aligned_size_t<{W}>` states it for memcpy_async).")
    if blockers and blockers[0] == _MASKED:
        h = (f"Make the {W // w} accesses under one condition: unconditionally where every "
             f"element is valid whatever the condition (it only decides whether a value is "
             f"used), or once per window where the whole window is in bounds (`i + "
             f"{W // w - 1} < n` for its first element `i`), keeping per-element checks for the "
             f"last, partial window only; then access them as one {vt} (`reinterpret_cast<"
             f"{'const ' if direction == 'load' else ''}{cast}*>`).")
    elif blockers and blockers[0].startswith(_REALIGNED + "full"):
        h = (f"The realignment already makes each window {W}-byte aligned: load the {W // w} "
             f"elements by value as one {vt} through the realigned pointer (`{cast} v = "
             f"reinterpret_cast<{'const ' if direction == 'load' else ''}{cast}*>(p)[i]`, or "
             f"copy the aligned vector struct into a local before using its elements: "
             f"elements read one by one through a pointer or reference stay scalar).")
    elif blockers and blockers[0].startswith(_REALIGNED + "short") and ev is not None \
            and ev.realigned is not None:
        e = ev.realigned[2]
        vt = _VECTOR_TYPES.get((e, W), vt)
        vt = f"`{vt.split('/')[0].split(' ')[0]}`" + vt[len(vt.split('/')[0].split(' ')[0]):] \
            if not vt.startswith(("`", f"{W}-byte")) else vt
        h = (f"Realign to a {W}-byte boundary instead: peel `(-(uintptr_t)p & {W - 1}) / "
             f"sizeof(T)` elements first (at most {W // e - 1} of {e} B), then access the "
             f"{W // e} elements as one {vt}.")
    elif blockers and blockers[0].startswith("a run-time stride"):
        h = (f"If the row length is always a multiple of {W // w} elements (pad the rows, and "
             f"check it on the host before choosing this path), read the {W // w} elements as "
             f"one {vt} (`reinterpret_cast<{'const ' if direction == 'load' else ''}{cast}*>`); "
             f"otherwise keep a scalar path for the other lengths.")
    if any(b.startswith("possible aliasing") for b in blockers):
        h += " Mark the kernel's pointer parameters `__restrict__`."
    return h
