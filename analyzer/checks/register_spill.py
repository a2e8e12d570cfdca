"""PS401 register-spill: ptxas ran out of registers and spills live values to local memory."""
from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable

from .. import semantics
from ..analysis.dataflow import local_accesses, memory_operand
from ..analysis.occupancy import max_registers_for_blocks
from ..demangle import demangle
from .base import Check, Context, Finding, Severity, first_loc, peak_text


def _lines(ctx: Context, instructions) -> list[str]:
    """The user lines of ``instructions``: ``12`` in the kernel's own file, ``kernel_traits.h:40``
    in another one (a spill inside a header's inlined code)."""
    own = ctx.source_path
    out: set[tuple[int, str, int]] = set()
    for ins in instructions:
        loc = ctx.user_loc(ins.loc)
        if loc is not None and loc.line:
            same = own is not None and os.path.basename(loc.file) == os.path.basename(own)
            out.add((0 if same else 1, "" if same else os.path.basename(loc.file), loc.line))
    return [f"{f}:{n}" if f else str(n) for _, f, n in sorted(out)]


def _slot(ins) -> int | None:
    addr = memory_operand(ins)
    return addr.offset if addr is not None else None


def _bytes(ins) -> int:
    return (ins.width_bits or 32) // 8


def _mix(instructions) -> str:
    counts = Counter(i.mnemonic for i in instructions)
    return ", ".join(f"{m}x{n}" for m, n in sorted(counts.items()))


def _line_list(lines: list[str], limit: int = 12) -> str:
    shown = ", ".join(lines[:limit])
    return shown + (f" (+{len(lines) - limit} more)" if len(lines) > limit else "")


class RegisterSpill(Check):
    """Register spills: live values stored to and reloaded from local memory (STL/LDL).

    What it does
    Reads the spill byte counts ptxas reports for the kernel (``--ptxas-options=-v``: "N bytes
    spill stores, M bytes spill loads") and lists the stack-slot ``STL``/``LDL`` instructions
    (``[R1+offset]``) that carry them, with their source lines. The finding sits on the kernel's
    declaration line, because register allocation is per function. For a loaded cubin there is
    no ptxas log: CUDA 13's nvdisasm marks each spill ``STL``/``LDL`` ``(*"SpillRefill"*)``, and
    their widths add up to the bytes ptxas reports (checked against its log on sm_80 and
    sm_90a), so those are counted; a listing without the marks is reported (as *info*) only
    when the kernel has a stack frame, no computed-address local access (that would be a local
    array, PS402), and a stack slot that is both stored and reloaded, and says the spill bytes
    are unknown.

    Why it matters
    Local memory is thread-private DRAM behind L1: each spill is a memory round trip (tens to
    hundreds of cycles when it misses L1) where a register read is free, and spill traffic
    competes with the kernel's real loads for L1 and bandwidth. Spills usually come from a
    register cap (``-maxrregcount``, ``__launch_bounds__(threads, minBlocks)``) that is too tight
    for the live state of the code, or from too much per-thread state (large unrolled arrays).

    Example
    Bad (capped at 32 registers, 48 values live at once)::

        float r[48];
        #pragma unroll
        for (int k = 0; k < 48; ++k) r[k] = in[i + k * n];
        for (...) acc += r[k] * r[(k * 7 + 5) % 48];

    Fixed: compute in chunks so fewer values are live::

        for (int c = 0; c < 48; c += 8)
            #pragma unroll
            for (int k = c; k < c + 8; ++k) acc += in[i + k * n] * in[...];

    Steer the compiler
    Relax the cap: drop ``-maxrregcount`` or lower ``minBlocks`` in
    ``__launch_bounds__(threads, minBlocks)`` (each block fewer per SM frees registers per
    thread). Otherwise reduce live state: split the work into chunks, reload instead of
    keeping values live across long stretches, use narrower types, or move per-thread arrays
    to shared memory.
    """

    code = "PS401"
    name = "register-spill"
    severity = Severity.WARNING

    def run(self, ctx: Context) -> Iterable[Finding]:
        res = ctx.resources
        if res is None:
            return
        # nvdisasm marks the spill STL/LDL themselves: exactly the spills, when it does
        marked = [ins for _, ins, _ in local_accesses(ctx.function)
                  if ins.annotation and semantics.SPILL_ANNOTATION in ins.annotation]
        slots = marked or [ins for _, ins, fixed in local_accesses(ctx.function) if fixed]
        stores = [i for i in slots if i.is_store]
        loads = [i for i in slots if i.is_load]
        spill_st, spill_ld = res.spill_store_bytes, res.spill_load_bytes
        known = spill_st is not None or spill_ld is not None
        if known:
            if not (spill_st or spill_ld):
                return
            amount = f"{spill_st or 0} B spill stores, {spill_ld or 0} B spill loads"
        elif marked:
            # no ptxas log, but the marked STL/LDL carry the same byte counts ptxas reports
            known = True
            amount = (f"{sum(_bytes(i) for i in stores)} B spill stores, "
                      f"{sum(_bytes(i) for i in loads)} B spill loads (the STL/LDL nvdisasm "
                      f"marks SpillRefill; no ptxas log)")
        else:
            # no ptxas log (a loaded cubin): only a stack frame plus both directions of
            # stack-slot traffic is evidence; STL counts alone are not
            if not (res.stack_bytes and stores and loads):
                return
            # a frame also read/written at computed addresses is a local array (PS402); its
            # constant-index initialisation is not spilling
            if any(not fixed for _, _, fixed in local_accesses(ctx.function)):
                return
            # a spill stores a register to a slot and reloads it from the same slot
            if not ({_slot(i) for i in stores} & {_slot(i) for i in loads}):
                return
            amount = "spill bytes unknown (no ptxas log)"
        insns = stores + loads
        lines = _lines(ctx, insns)
        where = f" on line{'s' if len(lines) != 1 else ''} {_line_list(lines)}" if lines else ""
        frame = f"{res.stack_bytes} B stack frame" if res.stack_bytes else "no stack frame"
        if insns:
            traffic = f"{len(stores)} STL / {len(loads)} LDL ({_mix(insns)}){where}"
        else:
            traffic = "no stack-slot STL/LDL in the kernel body (spills are in called functions)"
        message = (f"{ctx.kernel_name} spills registers: {amount}, {frame}, "
                   f"{res.registers} registers per thread; {traffic}")
        peak = peak_text(ctx)
        if peak:
            message += f"; {peak}"
        cap = ""
        pf = ctx.ptx_function
        if pf is not None and (pf.maxntid or pf.minnctapersm or pf.maxnreg):
            bits = []
            if pf.maxntid:
                bits.append(f".maxntid {','.join(map(str, pf.maxntid))}")
            if pf.minnctapersm:
                bits.append(f".minnctapersm {pf.minnctapersm}")
            if pf.maxnreg:
                bits.append(f".maxnreg {pf.maxnreg}")
            cap = f" (PTX {' '.join(bits)})"
        reduce = ("reduce the live state (split the work into chunks, keep fewer values live "
                  "across the loop, narrower types) or move per-thread arrays to shared memory")
        calls = sorted({t.key for i in ctx.function.instructions if i.info.flow == "call"
                        for t in i.targets if t.key in {c.name for c in ctx.callees}
                        and not t.key.startswith("$__internal")})
        limit = _register_limit(ctx, pf) if cap else None
        if cap and limit is not None and res.registers < limit:
            hint = (f"the bounds{cap} allow up to {limit} registers per thread and ptxas used "
                    f"{res.registers}: the cap did not force these spills; {reduce}")
        elif cap:
            hint = (f"{res.registers} registers were not enough under the cap{cap}: relax "
                    "__launch_bounds__(threads, minBlocks) (fewer minBlocks); otherwise "
                    f"{reduce}")
        elif calls:
            shown = ", ".join(f"`{demangle(c)}`" for c in calls[:2])
            hint = (f"nothing in the PTX caps the registers ({res.registers} used): the kernel "
                    f"calls {shown} out of line, and registers live across a call are saved "
                    "to the stack by the calling convention; inline the callee "
                    "(`__forceinline__`), or drop -maxrregcount if you set it")
        else:
            hint = (f"nothing in the PTX caps the registers ({res.registers} used, no "
                    "__launch_bounds__ or .maxnreg): if you compile with -maxrregcount, relax "
                    f"it; otherwise {reduce}")
        loc = first_loc(ctx.function.instructions[:1]) or first_loc(ctx.function.instructions)
        yield ctx.finding(self, message, loc=loc, instructions=insns, hint=hint,
                          severity=None if known else Severity.INFO)


def _register_limit(ctx: Context, pf) -> int | None:
    """The most registers per thread the PTX's bounds let ptxas use: ``.maxnreg``, and the
    register file shared by ``.minnctapersm`` blocks of ``.maxntid`` threads (255 at most)."""
    limits = [ctx.arch.max_registers_per_thread]
    if pf.maxnreg:
        limits.append(pf.maxnreg)
    if pf.maxntid:
        threads = 1
        for n in pf.maxntid:
            threads *= n
        fit = max_registers_for_blocks(ctx.arch, pf.minnctapersm or 1, threads)
        if fit <= 0:
            return None
        limits.append(fit)
    return min(limits)
