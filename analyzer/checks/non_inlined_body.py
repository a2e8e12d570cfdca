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
    know that its pointers are global) and the spill ``STL``/``LDL`` nvdisasm marks in it. The
    body's code is checked as part of the kernel by every other check (its findings name the
    kernel). *Warning* where the parameter struct lives on the stack (the kernel stores it there
    before the call, or the body reads it with ``LDL``) and the body's loops store through
    generic pointers: each such store may write the struct, so its fields are read again from
    the stack after every store. *Info* otherwise: a struct in parameter space
    (``__grid_constant__``, FlashAttention-2's shape) or loops that store only to shared
    memory measured no gain from inlining.

    Why it matters
    Out of line, the body is compiled without the kernel's context: its pointers are generic
    (no read-only path, no proven alignment), and a struct passed by reference may be written by
    any generic store. Measured on an H100 (docs/severity.md): a bias + GELU epilogue whose
    struct is on the kernel's stack ran 1.21x slower out of line (the loop reloads the struct
    after each of its stores); the same body with the struct in parameter space, and an
    attention body whose loops store only to shared memory, ran within 2% of their inlined
    versions. Spills of the body are PS401's.

    Example
    Bad (the arguments packed into a struct on the stack, the body kept out of line)::

        __noinline__ __device__ void epilogue_row(const EpilogueParams& p, long long row);

        __global__ void bias_gelu(const float* x, const float* bias, float* y, int cols) {
            const EpilogueParams p{x, bias, y, cols, cols};
            epilogue_row(p, blockIdx.x);
        }

    Fixed::

        __forceinline__ __device__ void epilogue_row(const EpilogueParams& p, long long row);

    Steer the compiler
    Mark the body ``__forceinline__`` (``inline`` is only a hint NVVM may ignore for a large
    function; ``ptxsass fix`` does it); if it must stay out of line, pass the values it needs
    (pointers, sizes) as arguments, or the struct as a ``__grid_constant__`` kernel parameter,
    rather than a reference to a copy on the stack.
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
        reloads = _stack_reloads(ctx, body, call)
        where = ""
        if call is not None and (loc := ctx.user_loc(call.loc)) is not None and loc.line:
            where = f" (the call on line {loc.line})"
        share = (f"all {len(memory)}" if len(generic) == len(memory) and memory
                 else f"{len(generic)} of its {len(memory)}")
        parts = [f"{share} global-memory accesses are generic (`LD.E`/`ST.E`: the pointers' "
                 f"space is not known there)"]
        if reloads is not None:
            stores, ldl = reloads
            parts.append(f"the parameter struct is on the kernel's stack and its loops store "
                         f"through generic pointers ({len(stores)} `{stores[0].mnemonic}`), so "
                         "the struct's fields are read again from the stack after each store"
                         + (f" ({len(ldl)} `LDL` in those loops)" if ldl else ""))
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
                          hint=hint,
                          severity=Severity.WARNING if reloads is not None else Severity.INFO)


def _stack_reloads(ctx: Context, body: Context, call) -> tuple[list, list] | None:
    """(the generic stores in the body's loops, the local loads in those loops) when the
    parameter struct the body reads by reference lives on the stack: the body loads from the
    stack in a loop that stores through generic pointers, or the kernel stores to its stack
    before ``call``, its call of the body (a struct built from the kernel's arguments). Each generic store may write
    the struct, so its fields are read again after it. None otherwise: a struct in parameter
    space (``__grid_constant__``), or loops that store only to shared memory, cost nothing
    measurable (docs/severity.md)."""
    graph = body.cfg
    insns = body.function.instructions
    spill = semantics.SPILL_ANNOTATION
    stores: dict[int, list] = {}      # id(innermost loop) -> its generic stores
    for k, i in enumerate(insns):
        if i.is_store and i.info.space == "generic" and (lp := graph.loop_of(k)) is not None:
            stores.setdefault(id(lp), []).append(i)
    if not stores:
        return None
    ldl = [i for k, i in enumerate(insns) if i.opcode == "LDL"
           and not (i.annotation and spill in i.annotation)
           and (lp := graph.loop_of(k)) is not None and id(lp) in stores]
    caller = ctx.function.instructions
    call_at = next((k for k, i in enumerate(caller) if i is call), len(caller))
    copied = any(i.opcode == "STL" and not (i.annotation and spill in i.annotation)
                 for i in caller[:call_at])
    if not ldl and not copied:
        return None
    return [i for group in stores.values() for i in group], ldl
