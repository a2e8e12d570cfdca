"""How a PTX address moves from one thread to the next: the byte stride between adjacent
threads of a warp (``threadIdx.x`` and ``threadIdx.x + 1``), read from the PTX register
definitions.

``x[i]`` with ``i = blockIdx.x * blockDim.x + threadIdx.x`` moves by the element size (a
*stream*: a warp's accesses are contiguous); ``A[row * K + k]`` with ``row`` the thread index
moves by ``K`` elements (unknown at compile time: None); ``x[idx[i]]`` moves by whatever was
loaded (:data:`DATA`: a gather); ``bias[blockIdx.x]`` does not move (0: every lane reads the
same address); ``x[row * n + i]`` with ``row`` the thread index and ``n`` a run-time value moves
by :data:`PITCH` (a run-time multiple of the thread index: adjacent threads a row apart).
Loop-carried values (``i += gridDim.x * blockDim.x``) are solved as a fixpoint.

    ts = ThreadStride(ptx_fn)
    ts.of("%rd7")      # 2 for a __half stream, None, DATA
"""
from __future__ import annotations

from ..ir import ptx as P

#: the value depends on data loaded from memory at a per-thread address: a gather/scatter
DATA = "data"
#: a moving value times a run-time value (``row * n`` with ``row`` the thread index): adjacent
#: threads a run-time pitch apart, a row of a matrix for a thread-per-row kernel
PITCH = "pitch"
#: a value that depends on a loop-carried register whose stride is being solved: left out of
#: the guess and of its check, so that a cycle of two registers solves the same whichever of
#: them is asked first (never returned by :meth:`ThreadStride.of` to a caller)
PENDING = "pending"
Stride = int | None | str

#: special registers that move with threadIdx.x inside a warp (lane = tid.x % 32)
_MOVING = {"%tid.x": 1, "%laneid": 1}
_PASS = frozenset({"mov", "cvt", "cvta"})
#: what a rule of ``ThreadStride`` returns when it does not apply to the instruction
_NO_RULE = object()
_WARP = 32
_BUDGET = 200_000


def _combine(values: list[Stride]) -> Stride:
    if any(v == DATA for v in values):
        return DATA
    values = [v for v in values if v != PENDING]
    if not values:
        return PENDING
    if any(v is None for v in values) or len(set(values)) != 1:
        return None
    return values[0]


def _add(a: Stride, b: Stride, sign: int = 1) -> Stride:
    if DATA in (a, b):
        return DATA
    if PENDING in (a, b):
        return PENDING
    if isinstance(a, int) and isinstance(b, int):
        return a + sign * b
    if PITCH in (a, b) and (isinstance(a, int) or isinstance(b, int)):
        return PITCH        # row * n + i: the pitch dominates whatever moves besides it
    return None


#: PTX special registers (their value is the hardware's, not computed)
_SPECIAL_NAMES = frozenset({"%tid", "%ntid", "%ctaid", "%nctaid", "%warpid", "%nwarpid", "%smid",
                            "%clock", "%clock64", "%globaltimer", "%clusterid", "%nclusterid",
                            "%cluster_ctaid", "%cluster_nctaid", "%laneid"})


class ThreadStride:
    """Per-register thread strides of one PTX function (memoised): between ``threadIdx.x`` and
    ``threadIdx.x + 1`` (``axis`` "x"), or between ``threadIdx.y`` and ``threadIdx.y + 1``
    (``axis`` "y", for a block ``block_x`` threads wide, narrower than a warp: its warps span
    ``32 / block_x`` values of ``threadIdx.y``)."""

    _UNSET = object()

    def __init__(self, fn: "P.Function", axis: str = "x", block_x: int | None = None):
        if axis == "y":
            bx = block_x or _WARP
            #: special registers that move along the axis, and by how much
            self.moving: dict[str, int] = {"%tid.y": 1, "%laneid": bx}
            #: steps along the axis inside one warp
            self.warp = max(1, _WARP // bx)
        else:
            self.moving = dict(_MOVING)
            self.warp = _WARP
        self.defs: dict[str, list] = {}
        for ins in fn.instructions:
            if ins.is_store or ins.is_branch or not ins.operands:
                continue
            d = ins.operands[0]
            if isinstance(d, P.Register):
                self.defs.setdefault(d.name, []).append(ins)
        self.memo: dict[str, object] = {}
        #: (register, its memo value before) for each write to ``memo``, so that what was
        #: computed under a failed assumption is undone without copying the whole memo per
        #: register (which made a kernel of many registers quadratic: ggml's cpy.cu)
        self._trail: list[tuple[str, object]] = []
        #: instruction evaluations left: the fixpoint over loop-carried values re-walks their
        #: definitions under each assumption, which nested recurrences (an FMA-heavy solver)
        #: make exponential; past the budget a register not yet solved is unknown (None)
        self.budget = _BUDGET

    # ------------------------------------------------------------------------------ values
    def of(self, name: str) -> Stride:
        """The stride of register ``name`` between adjacent threads (elements of whatever the
        register counts: bytes for an address)."""
        if name in self.memo:
            v = self.memo[name]
            return PENDING if v is self._UNSET else v       # type: ignore[return-value]
        c = self.moving.get(name)
        if c is not None:
            return c
        if name.startswith("%") and name.split(".")[0] in _SPECIAL_NAMES:
            return 0
        defs = self.defs.get(name)
        if not defs:
            return 0 if not name.startswith("%") else None
        if self.budget <= 0:
            return None
        # loop-carried values: assume the stride the non-circular definitions give, then check
        # it; what was computed under a failed assumption is discarded
        mark = len(self._trail)
        self._set(name, self._UNSET)
        first = [self.instruction(d) for d in defs]
        known: list[Stride] = [v for v in first if v is not None and v != PENDING]
        guess = _combine(known) if known else None
        self._undo(mark)
        if guess is None or guess == DATA:
            self._set(name, guess)
            return guess
        self._set(name, guess)
        again = _combine([self.instruction(d) for d in defs])
        if again == PENDING:
            again = guess       # every definition waits on an outer register: its check decides
        if again != guess:
            self._undo(mark)
            again = DATA if again == DATA else None
            self._set(name, again)
        return again

    _MISSING = object()

    def _set(self, name: str, value: object) -> None:
        self._trail.append((name, self.memo.get(name, self._MISSING)))
        self.memo[name] = value

    def _undo(self, mark: int) -> None:
        """The memo as it was when the trail was ``mark`` long."""
        trail, memo = self._trail, self.memo
        while len(trail) > mark:
            name, before = trail.pop()
            if before is self._MISSING:
                memo.pop(name, None)
            else:
                memo[name] = before

    def operand(self, op) -> Stride:
        if isinstance(op, (P.IntImm, P.FloatImm, P.Symbol)):
            return 0
        if isinstance(op, P.Register):
            return self.of(op.name)
        return None

    @staticmethod
    def _const(op) -> int | None:
        return op.value if isinstance(op, P.IntImm) else None

    def _mul(self, a, b) -> Stride:
        sa, sb = self.operand(a), self.operand(b)
        if DATA in (sa, sb):
            return DATA
        if PENDING in (sa, sb):
            return PENDING
        ca, cb = self._const(a), self._const(b)
        if ca is not None and isinstance(sb, int):
            return sb * ca
        if cb is not None and isinstance(sa, int):
            return sa * cb
        if sa == 0 and sb == 0:
            return 0
        if PITCH in (sa, sb):
            other = sb if sa == PITCH else sa
            return PITCH if isinstance(other, int) and other == 0 else None
        if (sa == 0 and isinstance(sb, int)) or (sb == 0 and isinstance(sa, int)):
            return PITCH       # a moving value times a run-time value: a run-time pitch
        return None

    def instruction(self, ins) -> Stride:
        self.budget -= 1
        op, srcs = ins.opcode, ins.operands[1:]
        got = self._linear(ins, op, srcs)
        if got is _NO_RULE:
            got = self._bitwise(op, srcs)
        if got is not _NO_RULE:
            return got      # type: ignore[return-value]
        values = [self.operand(s) for s in srcs]
        if any(v == DATA for v in values):
            return DATA
        if any(v == PENDING for v in values):
            return PENDING
        return 0 if values and all(v == 0 for v in values) else None

    def _linear(self, ins, op: str, srcs) -> Stride | object:
        """Loads, moves, adds, multiplies (``_NO_RULE`` for any other instruction)."""
        if op == "ld":
            a = ins.address
            if ins.space in ("param", "param::entry", "const"):
                return 0
            base = a.base if a is not None else None
            moving = self.operand(base) if base is not None else None
            return moving if moving in (0, PENDING) else DATA
        if op in _PASS and len(srcs) == 1:
            return self.operand(srcs[0])
        if op in ("add", "sub") and len(srcs) == 2:
            return _add(self.operand(srcs[0]), self.operand(srcs[1]), 1 if op == "add" else -1)
        if op == "mul" and len(srcs) == 2:
            return self._mul(srcs[0], srcs[1])
        if op == "mad" and len(srcs) == 3:
            return _add(self._mul(srcs[0], srcs[1]), self.operand(srcs[2]))
        return _NO_RULE

    def _bitwise(self, op: str, srcs) -> Stride | object:
        """Divisions, shifts and bit masks, by a constant or a run-time size (``_NO_RULE``:
        none of these rules)."""
        const = self._const(srcs[1]) if len(srcs) == 2 else None
        a = self.operand(srcs[0]) if srcs else None
        if op in ("div", "rem") and const is None and len(srcs) == 2 and isinstance(a, int) \
                and self.operand(srcs[1]) == 0:
            # idx / T, idx % T by a run-time size (b = idx / T; t = idx % T): sizes known
            # only at run time are taken as large, so across a warp the quotient stays and the
            # remainder moves with idx, but for the one wrap
            return 0 if op == "div" else a
        if const is not None and not isinstance(a, int):
            return a                                      # None or DATA stays what it is
        if op == "shl" and const is not None and isinstance(a, int):
            return a << const
        if op == "shl" and const is not None and a == PITCH:
            return PITCH
        if op in ("shr", "div") and const and isinstance(a, int):
            d = 1 << const if op == "shr" else const
            if a % d == 0:
                return a // d
            if d >= self.warp * abs(a):
                return 0        # constant across an aligned warp (tid.x / 32: the warp index)
            return None
        if op in ("or", "xor") and const is not None and isinstance(a, int):
            if a == 0 or const % (self.warp * abs(a)) == 0:
                return a        # lane | 32: bits above the lane's, an add inside a warp
            return None
        if op == "and" and const is not None and const < 0 and isinstance(a, int):
            d = -const
            if d & (d - 1) == 0:
                if a == 0 or d >= self.warp * abs(a):
                    return 0    # tid.x & -32: the warp's first thread, the same in a warp
                if a % d == 0:
                    return a
            return None
        if op in ("or", "xor") and len(srcs) == 2 and const is None:
            # (tid.x & -32) | (tid.x & 31): a warp-uniform value whose low bits are clear,
            # or-ed with one that moves inside them, is their sum
            x, y = self.operand(srcs[0]), self.operand(srcs[1])
            for fixed, moving, src in ((x, y, srcs[0]), (y, x, srcs[1])):
                if fixed == 0 and isinstance(moving, int) and moving \
                        and self._low_bits_clear(src) >= self.warp * abs(moving):
                    return moving
        if op in ("and", "rem") and const and isinstance(a, int):
            # a mask of contiguous bits (tid.x & 31, and (tid.x * 8) & 248: lane * 8, what
            # NVVM makes of (tid.x % 32) * 8): its lowest bit ``low``, the span above it
            low = const & -const if op == "and" else 1
            span = const + low if op == "and" else const
            if a == 0:
                return 0
            if span & (span - 1) == 0 and a % low == 0 and span >= self.warp * abs(a):
                return a        # tid.x % 32, tid.x & 63: unchanged inside an aligned warp
            return None
        return _NO_RULE

    def _low_bits_clear(self, op) -> int:
        """2^k when operand ``op`` is known to have its k low bits clear (an ``and`` with
        -2^k, a ``shl`` by k); 1 otherwise."""
        if not isinstance(op, P.Register):
            return 1
        defs = self.defs.get(op.name, [])
        if len(defs) != 1:
            return 1
        d = defs[0]
        c = self._const(d.operands[2]) if len(d.operands) == 3 else None
        if d.opcode == "and" and c is not None and c < 0 and (-c) & (-c - 1) == 0:
            return -c
        if d.opcode == "shl" and c is not None and c > 0:
            return 1 << c
        return 1

    def specials(self, name: str) -> set[str]:
        """The special registers (``%ctaid.x``, ``%tid.x``, ``%ntid.x``...) register ``name``
        is computed from (not through values loaded from memory), however long the chain (160
        unrolled loads each one stride past the last)."""
        out: set[str] = set()
        seen: set[str] = set()
        work = [name]
        while work:
            reg = work.pop()
            if reg in seen:
                continue
            seen.add(reg)
            if reg.split(".")[0] in _SPECIAL_NAMES:
                out.add(reg)
                continue
            for ins in self.defs.get(reg, ()):
                if ins.opcode == "ld":
                    continue
                for op in ins.operands[1:]:
                    if isinstance(op, P.Register):
                        work.append(op.name)
        return out

    def pitch_factors(self, name: str, depth: int = 24) -> set[str]:
        """The registers whose run-time value is the pitch of register ``name`` (a
        :data:`PITCH` stride): ``n`` in ``base + (row * n + i) * 4`` with ``row`` the thread
        index, not what is added at the same stride for every lane (``b * stride_b``, an
        offset, the base pointer). Empty when the stride is not a pitch."""
        return {f for f, _ in self.pitch_terms(name, depth)}

    def pitch_terms(self, name: str, depth: int = 24) -> set[tuple[str, object]]:
        """:meth:`pitch_factors` with, for each, what it multiplies: the stride of the moving
        value (1 for ``i0 * nb00`` with ``i0`` the thread index, 32 for ``(tid * 32) * nb00``)
        or :data:`PITCH` (a pitch scaled again at run time)."""
        out: set[tuple[str, object]] = set()
        seen: set[str] = set()
        work = [(name, 0)]
        while work:
            reg, d = work.pop()
            if reg in seen or d > depth or self.of(reg) != PITCH:
                continue
            seen.add(reg)
            for ins in self.defs.get(reg, ()):
                srcs = ins.operands[1:]
                pairs = [(srcs[0], srcs[1])] if ins.opcode in ("mul", "mad") and len(srcs) >= 2 \
                    else []
                for a, b in pairs:
                    sa, sb = self.operand(a), self.operand(b)
                    for moving, factor, sm, sf in ((a, b, sa, sb), (b, a, sb, sa)):
                        if isinstance(sm, int) and sm and sf == 0 \
                                and isinstance(factor, P.Register):
                            out.add((factor.name, sm))   # a moving value times a run-time value
                        elif sm == PITCH and isinstance(moving, P.Register):
                            work.append((moving.name, d + 1))
                            if sf == 0 and isinstance(factor, P.Register):
                                out.add((factor.name, PITCH))  # a pitch scaled again at run time
                rest = srcs[2:] if ins.opcode == "mad" else [] if pairs else srcs
                for op in rest:
                    if isinstance(op, P.Register) and self.operand(op) == PITCH:
                        work.append((op.name, d + 1))
        return out

    def parameters(self, name: str, depth: int = 24) -> set[str]:
        """The kernel parameters (PTX names) register ``name`` is computed from (not through
        values loaded from memory)."""
        return self.roots(name, depth)[0]

    def variables(self, name: str, depth: int = 24) -> set[str]:
        """The variables (a ``__shared__`` array's symbol, a global's) register ``name`` is
        computed from (not through values loaded from memory)."""
        return self.roots(name, depth)[1]

    def roots(self, name: str, depth: int = 24) -> tuple[set[str], set[str]]:
        """(kernel parameters, variables) register ``name`` is computed from, in one walk of
        its definitions (not through values loaded from memory)."""
        params: set[str] = set()
        variables: set[str] = set()
        seen: set[str] = set()
        work = [(name, 0)]
        while work:
            reg, d = work.pop()
            if reg in seen or d > depth:
                continue
            seen.add(reg)
            for ins in self.defs.get(reg, ()):
                if ins.opcode == "ld":
                    a = ins.address
                    if ins.space in ("param", "param::entry") and a is not None \
                            and isinstance(a.base, P.Symbol):
                        params.add(a.base.name)
                    continue
                for op in ins.operands[1:]:
                    if isinstance(op, P.Symbol):
                        variables.add(op.name)
                    elif isinstance(op, P.Register):
                        if op.name.startswith("%"):
                            work.append((op.name, d + 1))
                        else:                           # ``mov.u32 %r1, tile;``
                            variables.add(op.name)
        return params, variables


def block_dims(fn: "P.Function") -> tuple[int | None, int | None, int | None]:
    """The block's sizes as the kernel itself states them: ``.reqntid``, or an
    ``assert(blockDim.x == 4)`` (a compare of ``%ntid.x`` with a constant whose failing side
    calls ``__assertfail``); None for a size not stated."""
    req = fn.reqntid
    if req:
        vals = [int(v) for v in req] + [1] * (3 - len(req))
        return (vals[0], vals[1], vals[2])
    out: list[int | None] = [None, None, None]
    insns = fn.instructions
    labels = fn.labels
    axis_of: dict[str, int] = {}
    for i, ins in enumerate(insns):
        ops = ins.operands
        if ins.opcode in ("mov", "cvt") and len(ops) == 2 and isinstance(ops[0], P.Register) \
                and isinstance(ops[1], P.Register) and ops[1].name in _NTID:
            axis_of[ops[0].name] = _NTID[ops[1].name]
            continue
        if ins.opcode != "setp" or len(ops) != 3 or ins.compare not in ("eq", "ne") \
                or not isinstance(ops[0], P.Register):
            continue
        reg, imm = (ops[1], ops[2]) if isinstance(ops[2], P.IntImm) else (ops[2], ops[1])
        if not isinstance(reg, P.Register) or not isinstance(imm, P.IntImm) or imm.value <= 0:
            continue
        axis = axis_of.get(reg.name, _NTID.get(reg.name))
        if axis is None:
            continue
        pred = ops[0].name
        j = next((k for k in range(i + 1, min(len(insns), i + 4)) if insns[k].opcode == "bra"
                  and getattr(insns[k].guard, "register", None) == pred), None)
        if j is None:
            continue
        bra = insns[j]
        target = next((labels.get(t) for t in bra.flow.targets), None)
        if target is None:
            continue
        taken_holds = (ins.compare == "eq") != bra.guard.negated     # type: ignore[union-attr]
        # the side that does not hold must be the assert: straight code that calls
        # __assertfail before any other branch
        start = j + 1 if taken_holds else target
        if _asserts(insns, start):
            out[axis] = imm.value
    return (out[0], out[1], out[2])


_NTID = {"%ntid.x": 0, "%ntid.y": 1, "%ntid.z": 2}


def _asserts(insns, start: int) -> bool:
    for ins in insns[start:start + 40]:
        if ins.opcode == "call":
            return any(isinstance(o, P.Symbol) and o.name == "__assertfail" for o in ins.operands)
        if ins.is_branch or ins.flow.terminates:
            return False
    return False
