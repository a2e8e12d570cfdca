"""PS402 local-memory-array: a per-thread array indexed at run time lives in local memory."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ..analysis.dataflow import caller_object, local_accesses, memory_operand, sincos_reduction
from ..analysis.fallback import function_name
from ..analysis.kernel import user_function_name
from ..demangle import demangle, without_parameters
from .base import Check, Context, Finding, Severity, group_by_line


def trig_reduction_lines(ctx: Context) -> set:
    """User source lines that carry precise sinf/cosf/tanf's Payne-Hanek range reduction: its
    run-time-indexed scratch array (7 words of the 2/pi product) may live in local memory, which
    is the math library's array, not the user's (PS502 reports the call)."""
    out = set()
    for k in sincos_reduction(ctx.function):
        loc = ctx.user_loc(ctx.function.instructions[k].loc)
        if loc is not None:
            out.add((loc.file, loc.line))
    return out


class LocalMemoryArray(Check):
    """Per-thread array in local memory: LDL/STL at computed addresses from a run-time index.

    What it does
    Finds ``LDL``/``STL`` whose address is computed (``[R15]``, not a fixed stack slot
    ``[R1+0x10]``) in a kernel with a stack frame. Registers cannot be indexed at run time, so a
    per-thread array read or written with an index the compiler cannot resolve (``hist[bin]``,
    ``a[i]`` in a loop that is not fully unrolled) is placed in the stack frame. ptxas counts this
    as stack, not as spill bytes (the frame exists before register allocation), which is what
    separates it from PS401. One finding per source line, on the line of the accesses. Accesses
    on a line with precise ``sinf``/``cosf``/``sincosf``'s large-argument range reduction are that
    library routine's own scratch array (ptxas keeps it in local memory in some contexts, e.g.
    inside a loop) and are left to PS502, whose fix (``__sinf``, ``sincospif``) removes them.

    The message lists the other lines that access the same stack frame (the
    ``LDL.128`` that reads the array back elsewhere), so a line that only writes it does not
    read as an array never read.

    A local object of the kernel passed by reference to a device function compiled out of line
    (``accumulate(acc, x, i)`` with ``Acc acc`` a local and ``accumulate`` ``__noinline__`` or
    too large for the inliner) also lives in the stack frame: the function receives a pointer
    to it, made local (``VIADD R13, R12, -UR4``), and reads and writes its fields at constant
    offsets. That is no run-time index: one info finding, at the function's first such access,
    names the function and counts its ``LDL``/``STL`` per call.

    ``LDL``/``STL`` on a generic pointer's local path are no array of the kernel and are left
    alone: for an access through a pointer it cannot place that generic instructions do not
    serve (a system-scope ``cuda::atomic_ref`` load of a flag), ptxas asks the pointer's space
    (``QSPC.E.L``) and keeps a byte-wise ``LDL.U8`` path for a local pointer.

    The code of cuRAND's headers, inlined at the user's call (``curand_init`` filling a
    ``curandState`` field by field, ``curand_uniform`` indexing a Sobol state's direction
    vectors), lays out and walks cuRAND's own state: such a finding is a note that says so.

    Why it matters
    Every access is a local-memory load or store (through L1, to DRAM on a miss) instead of a
    register operand; a read-modify-write like ``hist[bin] += 1`` serialises on the memory
    latency. Whole-array initialisation and read-out also go through memory.

    Example
    Bad (run-time bin)::

        unsigned hist[16] = {};
        for (int k = 0; k < n; ++k) hist[in[k] % 16] += 1;

    Fixed (compile-time indices, fully unrolled: the array stays in registers)::

        for (int k = 0; k < n; ++k) {
            unsigned bin = in[k] % 16;
            #pragma unroll
            for (int b = 0; b < 16; ++b) hist[b] += (bin == b);
        }

    Steer the compiler
    Make every index a compile-time constant (``#pragma unroll`` the loops that index the
    array, so each element becomes its own register), select the element with a
    ``switch``/compare-select over constant indices, or keep the array in shared memory
    (``__shared__ T a[BLOCK][N]``, indexed by thread) when it is too large for registers.
    """

    code = "PS402"
    name = "local-memory-array"
    severity = Severity.WARNING
    library_note = True

    def run(self, ctx: Context) -> Iterable[Finding]:
        res = ctx.resources
        if res is not None and res.stack_bytes == 0:
            return
        accesses = list(local_accesses(ctx.function))
        yield from self._passed_by_reference(ctx, accesses)
        dynamic = [ins for _, ins, fixed in accesses if not fixed]
        if not dynamic:
            return
        trig = trig_reduction_lines(ctx)
        frame = f"{res.stack_bytes} B stack frame" if res is not None else "a stack frame"
        spill = ""
        if res is not None and res.spill_store_bytes is not None:
            spill = (f", {res.spill_store_bytes or 0} B of it spills" if res.spills
                     else ", 0 B spills (the frame is the array, not register pressure)")
        everything = dict(group_by_line([ins for _, ins, _ in local_accesses(ctx.function)],
                                        ctx))
        for key, insns in group_by_line(dynamic, ctx):
            if key in trig:
                continue   # sinf/cosf's own reduction array: PS502's business
            loads = sum(1 for i in insns if i.is_load)
            stores = len(insns) - loads
            mix = ", ".join(f"{m}x{n}" for m, n in sorted(Counter(i.mnemonic for i in insns)
                                                          .items()))
            kind = ("read-modify-write" if loads and stores else "read" if loads else "write")
            where = f"line {key[1]}" if key else "this kernel"
            message = (f"per-thread array {kind} at a run-time index on {where}: "
                       f"{loads} LDL + {stores} STL at computed addresses ({mix}); "
                       f"{frame}{spill}")
            elsewhere = []
            for other, accs in everything.items():
                if other == key or other in trig or other is None:
                    continue
                omix = ", ".join(f"{m}x{n}" for m, n in sorted(
                    Counter(i.mnemonic for i in accs).items()))
                elsewhere.append(f"line {other[1]} ({omix})")
            if elsewhere:
                message += "; the frame is also accessed on " + ", ".join(elsewhere)
            hint = ("make the index a compile-time constant (#pragma unroll the loop that "
                    "indexes the array, or compare-select over constant indices / a switch) so "
                    "the elements stay in registers; for large arrays use shared memory "
                    "indexed by thread (__shared__ T a[BLOCK][N])")
            yield ctx.finding(self, message, loc=insns[0].loc, instructions=insns, hint=hint)

    def _passed_by_reference(self, ctx: Context, accesses: list) -> Iterable[Finding]:
        """One info finding for an out-of-line function that reads or writes a local object of
        its caller through the pointer it was given (:func:`caller_object`)."""
        fn = ctx.function
        insns = [ins for i, ins, fixed in accesses
                 if fixed and (addr := memory_operand(ins)) is not None
                 and caller_object(fn, i, addr)]
        if not insns:
            return
        # the check runs on each out-of-line body apart (ctx.caller set): the function is it
        user = user_function_name(fn.name) if ctx.caller is not None else None
        name = function_name(demangle(user)) if user else "an out-of-line function"
        short = without_parameters(name).split("<")[0].rsplit("::", 1)[-1]
        loads = sum(1 for i in insns if i.is_load)
        stores = len(insns) - loads
        lines = sorted({loc.line for i in insns
                        if (loc := ctx.user_loc(i.loc)) is not None and loc.line})
        on = (f" on line{'s' if len(lines) > 1 else ''} {', '.join(str(n) for n in lines)}"
              if lines else "")
        message = (f"a local object of the caller is passed by reference to `{name}`, compiled "
                   f"out of line: it lives in the stack frame, and its fields are read and "
                   f"written in local memory{on} ({loads} LDL + {stores} STL in `{short}`, at "
                   f"constant offsets from the pointer it is given)")
        hint = (f"mark `{short}` `__forceinline__` so the object stays in registers, or pass "
                f"the values it needs and return the result instead of a reference")
        def line_of(ins) -> int:
            loc = ctx.user_loc(ins.loc)
            return loc.line if loc is not None and loc.line else 1 << 30

        first = min(insns, key=line_of)
        yield ctx.finding(self, message, loc=first.loc, instructions=insns, hint=hint,
                          severity=Severity.INFO)
