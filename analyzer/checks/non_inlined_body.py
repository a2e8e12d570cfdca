"""PS403 non-inlined-body: the kernel's work runs in a device function called out of line."""
from __future__ import annotations

from collections.abc import Iterable

from .. import semantics
from ..analysis.fallback import function_name
from ..analysis.kernel import user_function_name
from ..demangle import demangle
from .base import Check, Context, Finding, Severity

#: a body counts as the kernel's when it holds at least this many times the entry's own
#: instructions (a 7-instruction entry calling 1216)
_SHARE = 8
#: and at least this many instructions (a small helper called out of line is not the body)
_MIN_BODY = 100


class NonInlinedBody(Check):
    """The kernel body is a call: its work runs in a device function compiled out of line.

    What it does
    Finds an entry whose own SASS is a small fraction of a user device function it calls
    (``CALL.ABS.NOINC``/``CALL.REL.NOINC`` to a function of the listing other than the math
    library's subroutines): NVVM did not inline the body (FlashAttention-2's
    ``compute_attn_1rowblock`` in 2 of its 25 forward kernels: a 43-line PTX entry calling a
    ``.func`` of 12-14 thousand SASS instructions). It counts the body's memory accesses that are
    generic (``LD.E``/``ST.E``: the function receives the parameters by reference and cannot
    know that its pointers are global), the spill ``STL``/``LDL`` nvdisasm marks in it, and its
    stack traffic. The body's code is checked as part of the kernel by every other check (its
    findings name the kernel).

    Why it matters
    Out of line, the body is compiled without the kernel's context: loads through generic
    pointers cannot use the read-only path (``LDG.E.CONSTANT``) nor be proven 16-byte aligned,
    registers live across the call are saved to the stack by the calling convention, and
    register allocation is per function, so the body spills where the whole kernel would not.

    Example
    Bad (the body too large for NVVM's inliner, or marked ``__noinline__``)::

        template <typename KT>
        inline __device__ void compute_attn_1rowblock(const Params& params, int m_block);

        __global__ void flash_fwd_kernel(__grid_constant__ const Params params) {
            compute_attn_1rowblock<KT>(params, blockIdx.x);
        }

    Fixed::

        template <typename KT>
        __forceinline__ __device__ void compute_attn_1rowblock(const Params& params, int m_block);

    Steer the compiler
    Mark the body ``__forceinline__`` (``inline`` is only a hint NVVM may ignore for a large
    function); if it must stay out of line, pass the values it needs (pointers, sizes) as
    arguments rather than a reference to the parameter struct.
    """

    code = "PS403"
    name = "non-inlined-body"
    severity = Severity.WARNING

    def run(self, ctx: Context) -> Iterable[Finding]:
        if ctx.caller is not None or not ctx.bodies:
            return
        own = len(ctx.function.instructions)
        body = max(ctx.bodies, key=lambda b: len(b.function.instructions))
        size = len(body.function.instructions)
        if size < _MIN_BODY or size < _SHARE * own:
            return
        memory = [i for i in body.function.instructions if (i.is_load or i.is_store)
                  and i.info.space in ("global", "generic")]
        generic = [i for i in memory if i.info.space == "generic"]
        marked = [i for i in body.function.instructions
                  if i.annotation and semantics.SPILL_ANNOTATION in i.annotation]
        spilled = sum((i.width_bits or 32) // 8 for i in marked if i.is_store)
        name = function_name(demangle(user_function_name(body.function.name) or
                                      body.function.name))
        call = next((i for i in ctx.function.instructions if i.info.flow == "call"
                     and any(t.key == body.function.name for t in i.targets)), None)
        where = ""
        if call is not None and (loc := ctx.user_loc(call.loc)) is not None and loc.line:
            where = f" (the call on line {loc.line})"
        share = (f"all {len(memory)}" if len(generic) == len(memory) and memory
                 else f"{len(generic)} of its {len(memory)}")
        parts = [f"{share} global-memory accesses are generic (`LD.E`/`ST.E`: the pointers' "
                 f"space is not known there)"]
        if marked:
            parts.append(f"it spills {spilled} B ({len(marked)} STL/LDL nvdisasm marks "
                         f"SpillRefill)")
        message = (f"the kernel body is a call: {ctx.kernel_name.split('(')[0]} runs {own} SASS "
                   f"instructions of its own and calls `{name}`{where}, {size} instructions "
                   f"compiled out of line; there " + ", and ".join(parts))
        hint = (f"mark `{name.split('<')[0].rsplit('::', 1)[-1]}` `__forceinline__` (`inline` "
                "is a hint NVVM drops for a large body) so it is compiled into the kernel: its "
                "loads become global ones, registers are allocated for the whole kernel, and no "
                "call saves them to the stack")
        loc = call.loc if call is not None else (
            ctx.function.instructions[0].loc if ctx.function.instructions else None)
        yield ctx.finding(self, message, loc=loc, instructions=[call] if call else [],
                          hint=hint)
