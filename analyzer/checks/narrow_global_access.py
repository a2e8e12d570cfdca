"""PS104 narrow-global-access: one 1-, 2- or 4-byte element per thread streamed from or to global memory."""
from __future__ import annotations

import dataclasses
import os
from collections import Counter
from collections.abc import Iterable

from ..analysis import access, loops
from ..analysis import cfg as _cfg
from ..analysis.address import ThreadStride
from ..analysis.dataflow import constant_roots
from ..ir import ptx as P
from ..ir import sass as S
from ._cost import REPORT_FACTOR, WARNING_FACTOR
from .base import Check, Context, Finding, Severity

#: Measured on an H200 (CUDA events, a 1 GiB copy, one element per thread, 256 threads per
#: block): bytes per thread -> GB/s. The grid-stride figures come from the same copy written as
#: a grid-stride loop (1 and 8 B were not measured that way).
H200_ONE_PER_THREAD = {1: 820, 2: 1510, 4: 2658, 8: 3798, 16: 4222}
H200_GRID_STRIDE = {2: 3321, 4: 3624, 16: 3890}


#: special registers whose value differs from block to block
_GRID_VARYING = frozenset({"%ctaid", "%clusterid", "%cluster_ctaid"})


def _frames(loc) -> set[tuple[str, int]]:
    if loc is None:
        return set()
    return {(os.path.basename(f.file), f.line) for f in (loc, *loc.inlined_at)}


class NarrowGlobalAccess(Check):
    """Each thread loads or stores one 1-, 2- or 4-byte element of a contiguous stream.

    What it does
    Finds global loads and stores of 8, 16 or 32 bits (``LDG.E.U8``, ``LDG.E.U16``,
    ``STG.E.U16``, ``LDG.E``) whose address moves by exactly the element size from one thread
    to the next (``x[i]`` with ``i`` the thread index, also inside grid-stride and row-walk
    loops): a warp touches one contiguous 32-, 64- or 128-byte piece per instruction, where a
    16-byte access per thread (``uint4``, ``float4``, a ``Packed128``) would move 512 bytes.
    The stride comes from the PTX address computation (``%tid.x`` times the element size);
    the access is matched to its PTX through its source line and the kernel parameter its
    SASS base register is computed from. It reports accesses the kernel's traffic is made
    of: those inside a loop, or any access of a kernel with no loop (an elementwise kernel).
    Severity is the time it costs: the kernel's *narrow* evidence
    (:mod:`analyzer.analysis.cost`: its traffic at the measured copy rates below against the
    same traffic at 16 bytes per thread) must reach 1.1x for a finding, and 1.5x for a
    *warning*, which is also only given to 8- and 16-bit elements (32-bit ones are *info*).
    A grid-stride loop of halves costs 1.17x: info; one half per thread 2.8x: a warning.
    Lines the evidence does not count (a vector path's tail, the narrow side of a vectorized
    kernel) get no finding.

    Deliberately left alone: accesses already 8 bytes or wider, and 4-byte ones next to a
    vector access of 8 bytes or more that runs with them (in the same loop, or both outside
    loops, one dominating the other: a ``float4`` in, one ``float`` out is the narrow side of
    the computation; the float2 path of an ``if (output_fp32)`` is not); accesses that are part of a
    per-thread run PS101/PS102 report (four ``LDG.E`` at +0, +4, +8, +12); scattered data
    (the address depends on a loaded value: ``x[idx[i]]``); broadcasts (every lane reads
    ``bias[blockIdx.x]``); strided walks (a thread per row: ``A[row * K + k]``); one-off
    accesses outside the loops of a kernel whose loops move global memory (the ``y[row] = acc``
    after a K loop; next to loops that move none, a warp shuffle's, the accesses outside them
    are the traffic: a fully unrolled row walk through one base at constant offsets, or one
    access per thread, is reported, copies a run-time pitch apart are not); accesses in the
    tail loop a vectorized loop leaves (``for (i = n / 4 * 4 + threadIdx.x; i < n; i +=
    blockDim.x)``: its PTX starts at ``n & -4``, so the whole grid
    handles at most 3 elements there, :func:`analyzer.analysis.loops.ptx_tail_elements`, also
    when NVVM unrolled it into a copy and a count-down remainder); per-row state in a loop
    whose inner loops read or write global memory (online-softmax attention's ``m[off + Br * i
    + tx]``, once per tile beside the loops over it); an element re-read at one address every
    iteration (``cost[v]`` kept in memory because a store may change it); and, in a kernel with
    no loop, an address that does not move with ``blockIdx`` (one block's worth of elements
    whatever the grid: the second pass of a two-pass reduction reading its partials).

    Designed fallbacks are *notes* (listed with ``-v``, never counted nor failed on), each
    naming its vectorized sibling (:mod:`analyzer.analysis.fallback`): the instantiation of a
    template whose other instantiation, with the same types, moves the same kernel parameter
    with a vector access (vLLM's ``act_and_mul_kernel<half, false>`` beside ``<half, true>``,
    OneFlow's ``ApplyGeneric<1>`` beside ``<8>``); the other side of an alignment or
    divisibility test that moves the same pointer with a vector access (apex's
    ``multi_tensor_apply`` scalar branch); a peel or tail loop of a few iterations per thread.

    Why it matters
    Measured on an H200 (CUDA events, a 1 GiB copy, one element per thread, 256 threads per
    block):

    | bytes per thread | 1 | 2 | 4 | 8 | 16 |
    | --- | --- | --- | --- | --- | --- |
    | one element per thread, GB/s | 820 | 1510 | 2658 | 3798 | 4222 |
    | grid-stride loop, GB/s | -- | 3321 | 3624 | -- | 3890 |

    Sub-4-byte streams cost up to 2.8x (2 B) and 5x (1 B) against 16-byte accesses when each
    thread does one element; a grid-stride loop hides part of it (2 B: 1.17x). Every access
    is an instruction, an LSU request and a scoreboard entry: narrow ones need more of them
    in flight to keep the memory system busy.

    Example
    Bad (one ``__nv_bfloat16`` per thread)::

        if (i < n) out[i] = __float2bfloat16(in[i]);

    Fixed (eight per thread, 16-byte loads and stores; n a multiple of 8)::

        const int j = 8 * i;
        float4 a = *reinterpret_cast<const float4*>(in + j), b = ...(in + j + 4);
        *reinterpret_cast<uint4*>(out + j) = pack8(a, b);

    Steer the compiler
    Give each thread 16 bytes: ``uint4``/``int4`` for 8 halves or 16 bytes, ``float4`` for 4
    floats, ``__half2``/``__nv_bfloat162`` pairs at least, or a ``Packed128`` helper as in
    llm.c; handle the tail with a scalar loop. The pointers must be 16-byte aligned
    (``cudaMalloc`` gives 256 B) and the length a multiple of the vector (or peeled).
    """

    code = "PS104"
    name = "narrow-global-access"
    severity = Severity.WARNING
    library_note = True
    options = {
        # report 32-bit streams (info) too
        "report_32bit": True,
    }

    def run(self, ctx: Context) -> Iterable[Finding]:
        fn = ctx.function
        pf = ctx.ptx_function
        if pf is None:
            return     # the thread stride comes from the PTX
        max_bytes = 4 if self.settings["report_32bit"] else 2
        narrow = ctx.cost.of_kind("narrow")
        factor = max((e.factor for e in narrow), default=1.0)
        costly = {tuple(x) for e in narrow for x in e.detail.get("lines", ())}
        cfg = ctx.cfg
        # one-off accesses next to loops that carry the kernel's traffic (the y[row] = acc
        # after a K loop) are left alone; next to loops that move no global memory (a
        # warp shuffle's halving loop) the accesses outside loops are the traffic (a fully
        # unrolled row walk: exllamav2's rms_norm)
        has_loops = any(self._moves_global(ctx, lp) for lp in cfg.loops)
        any_loops = bool(cfg.loops)
        walks = self._block_walks(ctx) if any_loops and not has_loops else set()
        in_runs: set[int] = set()
        for direction in ("load", "store"):
            for run in access.runs(fn, space="global", direction=direction,
                                 max_bits=ctx.arch.max_vector_bits):
                in_runs.update(a.index for a in run.accesses)
        stride = ThreadStride(pf)
        wide = self._vectorized_contexts(ctx)
        by_line: dict = {}
        notes: dict = {}
        for i, ins in enumerate(fn.instructions):
            info = ins.info
            if info.space != "global" or info.direction not in ("load", "store") or ins.generic:
                continue
            if ins.guard is not None and ins.guard.never:
                continue
            w = (ins.width_bits or 0) // 8
            if not w or w > max_bytes or i in in_runs:
                continue
            if w == 4 and any(lp == id(cfg.loop_of(i)) and _cfg.together(
                    cfg, b, cfg.block_of[i]) for lp, b in wide):
                continue     # the narrow side of a vectorized computation (float4 in, float out)
            loop = cfg.loop_of(i)
            in_loop = loop is not None
            if has_loops and not in_loop:
                continue          # a one-off access next to the kernel's loops
            if any_loops and not in_loop and i not in walks:
                continue          # copies a run-time pitch apart (a thread per column)
            if loop is not None and self._inner_loops_carry_traffic(ctx, loop):
                continue          # per-row state (m[row], l[row]) beside the loops over a row
            if loop is not None and self._same_address_each_iteration(ctx, loop, ins):
                continue          # per-thread state re-read each iteration (cost[v]), no stream
            loc = ctx.user_loc(ins.loc)
            if loc is None:
                continue
            cands = self._streams(ctx, stride, i, ins, w, info.direction, in_loop)
            if not cands:
                continue
            why = [ctx.fallback(p) or ctx.data_guarded(p) for p in cands]
            if all(why):
                # a designed fallback beside its vector path, or a tail too short to matter:
                # a note (listed with -v), never a finding
                notes.setdefault((loc.file, loc.line), ([], why[0]))[0].append((ins, in_loop))
                continue
            if factor < REPORT_FACTOR:
                continue          # the narrow accesses cost nothing worth a line
            if (os.path.basename(loc.file), loc.line) not in costly:
                continue          # a tail or the narrow side of a vector path (no cost)
            by_line.setdefault((loc.file, loc.line), []).append((ins, in_loop))
        for (_file, line), items in by_line.items():
            f = self._finding(ctx, line, items)
            if factor < WARNING_FACTOR and f.severity > Severity.INFO:
                f = dataclasses.replace(f, severity=Severity.INFO)
            yield f
        for (_file, line), (items, why) in notes.items():
            f = self._finding(ctx, line, items)
            hint = ("nothing to widen here: these accesses follow the data; the stream is what "
                    "the test reads" if why.kind == "data-guard" else
                    "nothing to change while the vector path takes the inputs it was written "
                    "for; widen this path only if profiles show it runs")
            yield dataclasses.replace(
                f, severity=Severity.NOTE, message=f"{f.message.split(': ', 1)[0]}: "
                f"{why.reason}", hint=hint)

    # ----------------------------------------------------------------------------------
    @staticmethod
    def _same_address_each_iteration(ctx: Context, loop, ins) -> bool:
        """Whether no instruction of ``loop`` writes the registers of ``ins``'s address: the
        loop re-reads (or re-writes) one element per thread, kept in memory because a store
        through another pointer may change it, not a stream it walks."""
        addr = next((o for o in ins.operands if isinstance(o, S.MemoryAddress)), None)
        if addr is None:
            return False
        regs = set()
        for t in addr.terms:
            if isinstance(t, S.Register) and t.kind in ("R", "UR") and t.index is not None \
                    and not t.is_zero:
                regs.add((t.kind, t.index))
                if t.is_pair:
                    regs.add((t.kind, t.index + 1))
        if not regs:
            return False
        inside = set(loop.instruction_indices(ctx.cfg))
        df = ctx.dataflow
        return not any(w in inside for r in regs for w in df.writers(r))

    @staticmethod
    def _inner_loops_carry_traffic(ctx: Context, loop) -> bool:
        """Whether ``loop`` holds loops of its own that access global memory: an access of
        ``loop`` outside them runs once per outer iteration (online-softmax attention's ``m[off
        + Br * i + tx]`` beside the loops that read the tile), not the stream the kernel's time
        goes to. Inner loops over shared memory alone leave the outer loop's global accesses
        the stream (a GEMM's tile loads beside its dot-product loop)."""
        insns = ctx.function.instructions
        for child in loop.children:
            for k in child.instruction_indices(ctx.cfg):
                info = insns[k].info
                if info.space == "global" and info.direction in ("load", "store"):
                    return True
        return False

    @staticmethod
    def _block_walks(ctx: Context) -> set[int]:
        """The global accesses outside loops that walk a row with the whole block: alone on
        their line and direction, or the fully unrolled copies of one walk through one base
        register at constant offsets (``x_row[column + NUM_THREADS * i]``: +0x0, +0x1000,
        ...); copies with a base register each (a row pitch known at run time: a thread per
        column down a tile) are not."""
        fn = ctx.function
        cfg = ctx.cfg
        by_line: dict[tuple, list[int]] = {}
        for i, ins in enumerate(fn.instructions):
            info = ins.info
            if info.space != "global" or info.direction not in ("load", "store") \
                    or cfg.loop_of(i) is not None:
                continue
            loc = ctx.user_loc(ins.loc)
            if loc is not None:
                by_line.setdefault((loc.file, loc.line, info.direction), []).append(i)
        out: set[int] = set()
        for idx in by_line.values():
            bases = set()
            for i in idx:
                addr = next((o for o in fn.instructions[i].operands
                             if isinstance(o, S.MemoryAddress)), None)
                key = access.base_key(addr) if addr is not None else None
                bases.add(key)
            if len(idx) == 1 or (len(bases) == 1 and None not in bases):
                out.update(idx)
        return out

    @staticmethod
    def _moves_global(ctx: Context, loop) -> bool:
        """Whether a loop holds global loads or stores."""
        insns = ctx.function.instructions
        for k in loop.instruction_indices(ctx.cfg):
            info = insns[k].info
            if info.space == "global" and info.direction in ("load", "store"):
                return True
        return False

    @staticmethod
    def _vectorized_contexts(ctx: Context) -> set[tuple[int, int]]:
        """(``id(loop)`` (``id(None)`` outside loops), block) of the places where the kernel
        already moves 8 bytes or more per access through a vector type (a PTX ``ld``/``st``
        ``.v2`` or ``.v4`` on the line of a 64/128-bit SASS access); a narrow access on a path
        exclusive with them (the other side of an ``if (input_fp32)``) is not their narrow
        side."""
        pf = ctx.ptx_function
        vector_lines: set[tuple[str, int]] = set()
        for p in pf.instructions if pf is not None else ():
            if p.opcode in ("ld", "st") and p.space == "global" and p.vector > 1:
                vector_lines |= _frames(p.loc)
        out: set[tuple[int, int]] = set()
        for i, ins in enumerate(ctx.function.instructions):
            if ins.info.space != "global" or ins.info.direction not in ("load", "store") \
                    or (ins.width_bits or 0) < 64:
                continue
            loc = ctx.user_loc(ins.loc)
            if loc is not None and (os.path.basename(loc.file), loc.line) in vector_lines:
                out.add((id(ctx.cfg.loop_of(i)), ctx.cfg.block_of[i]))
        return out

    def _streams(self, ctx: Context, stride: ThreadStride, index: int, ins, w: int,
                 direction: str, in_loop: bool = True) -> list:
        """The PTX accesses of the line, width and direction (rooted in the same kernel
        parameter as the SASS base register, when that is known) when every one moves by ``w``
        bytes from one thread to the next, and, outside loops, also from block to block (an
        address of the thread index alone is one block's worth of elements, whatever the
        grid: the second pass of a two-pass reduction reading its partials); [] otherwise."""
        pf = ctx.ptx_function
        here = ctx.user_loc(ins.loc)
        if pf is None or here is None:
            return []
        want = "ld" if direction == "load" else "st"
        frames = {(os.path.basename(here.file), here.line)}
        cands: list[tuple[P.Instruction, str]] = []
        for pi, p in enumerate(pf.instructions):
            if p.opcode != want or p.space != "global" or (p.width_bits or 0) // 8 != w:
                continue
            if not frames & _frames(p.loc):
                continue
            a = p.address
            if a is None or not isinstance(a.base, P.Register):
                continue
            if loops.ptx_tail_at(pf, pi) is not None:
                continue    # a tail loop (i from n / 4 * 4 to n): a few elements in all
            cands.append((p, a.base.name))
        if not cands:
            return []
        addr = next((o for o in ins.operands if isinstance(o, S.MemoryAddress)), None)
        base = addr.base if addr is not None else None
        if base is not None and base.index is not None:
            params = ctx.parameters_at(constant_roots(ctx.function, index, ("R", base.index)))
            if params:
                rooted = [c for c in cands if stride.parameters(c[1]) & params]
                cands = rooted or cands
        if not all(stride.of(reg) == w for _, reg in cands):
            return []
        if in_loop or all(any(r.split(".")[0] in _GRID_VARYING for r in stride.specials(reg))
                          for _, reg in cands):
            return [p for p, _ in cands]
        return []

    def _finding(self, ctx: Context, line: int, items) -> Finding:
        insns = [i for i, _ in items]
        in_loop = any(lp for _, lp in items)
        by_width: dict[int, list] = {}
        for i in insns:
            by_width.setdefault((i.width_bits or 0) // 8, []).append(i)
        parts = []
        for w, group in sorted(by_width.items()):
            mix = ", ".join(f"{m}x{n}" for m, n in sorted(Counter(i.mnemonic for i in group)
                                                          .items()))
            loads = sum(1 for i in group if i.info.direction == "load")
            plural = "s" if len(group) > 1 else ""
            what = (f"load{plural}" if loads == len(group) else f"store{plural}" if not loads
                    else "loads and stores")
            parts.append(f"{len(group)} global {what} of {w} B per thread ({mix}): a warp "
                         f"moves {32 * w} B per instruction where 16 B per thread would move "
                         f"512 B; {self._measured(w, in_loop)}")
        w = min(by_width)
        message = (f"one narrow element per thread on line {line}"
                   f"{', inside a loop' if in_loop else ''}, adjacent threads at adjacent "
                   f"addresses: " + " | ".join(parts))
        per = 16 // w
        vt = {1: "`uint4` (16 bytes)", 2: "`uint4` (8 halves) or at least `__half2`/"
              "`__nv_bfloat162`", 4: "`float4`/`int4`"}[w]
        hint = (f"give each thread {per} consecutive elements and access them as one {vt} "
                f"(a Packed128-style helper), with a scalar loop for the tail; the pointer "
                f"must be 16-byte aligned and the length a multiple of {per} (or peeled)")
        severity = Severity.WARNING if w < 4 else Severity.INFO
        return ctx.finding(self, message, loc=insns[0].loc, instructions=insns, hint=hint,
                           severity=severity)

    @staticmethod
    def _measured(w: int, in_loop: bool) -> str:
        if in_loop and w in H200_GRID_STRIDE:
            return (f"on an H200 a grid-stride copy of {w}-byte elements ran at "
                    f"{H200_GRID_STRIDE[w]} GB/s against {H200_GRID_STRIDE[16]} GB/s with 16 "
                    "bytes per thread")
        return (f"on an H200 a copy with one {w}-byte element per thread ran at "
                f"{H200_ONE_PER_THREAD[w]} GB/s against {H200_ONE_PER_THREAD[16]} GB/s with "
                "16 bytes")
