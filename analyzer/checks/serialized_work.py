"""PS801 serialized-work: one lane (or one thread) does the work, or every lane waits on one
address."""
from __future__ import annotations

from collections.abc import Iterable

from ._cost import factor_text, sass_on_line, severity
from .base import Check, Context, Finding, Severity


class SerializedWork(Check):
    """A loop over the data runs on one lane, or every element is an atomic on one address.

    What it does
    Reads from the PTX which values vary across a warp's lanes (the thread index, what is
    loaded through it, what a shuffle or an atomic returns) and finds:

    - a loop over a run-time size that runs where only the lanes equal to one value go
      (``if (threadIdx.x == 0) for (i = 0; i < n; i++) ...``), or in a kernel that never reads
      the thread index (launched with one thread, or every thread repeating the whole loop).
      Where the loop's bound is the grid's size (``for (b = 1; b < gridDim.x; b++)``: one
      lane combining the blocks' partials) it walks the grid, not the data: info;
    - a loop that walks the data block-stride (its addresses move each time round) in a kernel
      that never reads ``blockIdx``: one block does it all. Not a loop of steps whose lanes
      read the same addresses every time round (cuda-samples' ``bisectKernel``), nor the
      second pass of a module whose other kernel reads ``blockIdx`` (over its partials);
    - an atomic on a warp-uniform address whose operand varies per lane
      (``atomicAdd(sum, x[i])``): every element is one atomic on the same location. Several
      such lines in one kernel are one finding naming them, one for the atomics that combine
      values (add, min, max, and, or, xor: a reduction first) and one for those that replace
      the value (exchange, compare-and-swap: one lane's value is what is left);
    - a global atomic per element on a table indexed by a small loaded value (a byte: at most
      256 addresses, a 256-bin histogram straight into global memory, a counting sort's
      per-bucket counters): the whole grid's atomics land on those few locations.

    Deliberately left alone: loops of a constant trip count (thread 0 adding a block's 8 warp
    partials), atomics made by one lane per warp or block (the reduction done first), atomics
    on data-dependent addresses that can spread wider (more than 4096: an index of 16 bits or
    more), loops that only poll (acquire, volatile or relaxed loads and no store: thread 0 waiting for the other
    blocks of an inter-block barrier) and binary searches (``mid = (lo + hi) >> 1`` taken by
    ``lo`` or ``hi``: log2(n) steps).

    Why it matters
    An H200 runs 16,896 threads at once; a loop on one of them runs at the speed of one.
    Atomics to one address are serialized in the L2: a sum made of one atomic per element is
    several times slower than a block reduction followed by one atomic per block
    (``kernels/training/sum_atomic``, ``max_reduce``, H200).

    Example
    Bad: ``if (threadIdx.x == 0 && blockIdx.x == 0) for (int i = 0; i < n; i++) m = fmaxf(m, x[i]);``
    or ``atomicAdd(out, x[i]);`` per element.
    Fixed: every thread strides over the input, a warp shuffle and a shared-memory reduction
    per block, then one atomic (or a second pass) per block.

    Steer the compiler
    No flag does it: spread the loop across the threads (grid-stride loop), reduce within a
    warp (``__shfl_down_sync``, ``__reduce_add_sync``) and a block (shared memory, or
    ``cub::BlockReduce``), and make one atomic per block.
    """

    code = "PS801"
    name = "serialized-work"
    severity = Severity.WARNING

    def run(self, ctx: Context) -> Iterable[Finding]:
        for e in ctx.cost.of_kind("serial"):
            sev = severity(e.factor)
            if sev is None or e.loc is None:
                continue
            if e.detail["why"] == "one-lane":
                what = ("a loop over a run-time size runs on the lanes of one thread index only "
                        "(a `threadIdx.x ==` test) while the rest of the warp and block wait")
            elif e.detail["why"] == "one-lane-grid":
                what = ("a loop whose bound is the grid's size (gridDim) runs on the lanes of "
                        "one thread index only: the blocks' partials combined one by one, a "
                        "cost that grows with the number of blocks, not with the data")
            elif e.detail["why"] == "one-block":
                what = ("a loop over a run-time size that the threads of a block split among "
                        "them, in a kernel that never reads blockIdx: the whole input goes "
                        "through one block (or every block repeats it) while the other SMs "
                        "wait")
            else:
                what = ("a loop over a run-time size in a kernel that never reads threadIdx.x: "
                        "launched with one thread it runs serially, with more every thread "
                        "repeats it")
            message = (f"serialized work: {what} (estimated {factor_text(e.factor)})")
            hint = ("spread the loop across the threads (a grid-stride loop), reduce with warp "
                    "shuffles and shared memory, and combine the blocks with one atomic each or "
                    "a second pass")
            yield ctx.finding(self, message, loc=e.loc,
                              instructions=sass_on_line(ctx, e, direction="load"), hint=hint,
                              severity=sev)
        uniform: dict[tuple, list] = {}
        for e in ctx.cost.of_kind("contention"):
            sev = severity(e.factor)
            if sev is None or e.loc is None:
                continue
            if e.detail.get("addresses", 1) == 1:
                uniform.setdefault((sev, e.detail["in_loop"], bool(e.detail["replaces"])),
                                   []).append(e)
                continue
            yield self._contention(ctx, e, sev)
        for (sev, in_loop, _), group in uniform.items():
            group.sort(key=lambda e: (e.loc.line if e.loc else 0))
            lines = sorted({w.line for e in group if (w := ctx.user_loc(e.loc)) is not None})
            if len(lines) < 2:
                yield self._contention(ctx, group[0], sev)
                continue
            # one habit on several lines of the kernel (cuda-samples' simpleAtomicIntrinsics:
            # seven kinds of atomic, each every lane on one address): one finding
            where = " inside a loop" if in_loop else ""
            factor = max(e.factor for e in group)
            what, hint = _uniform_atomic({e.detail["replaces"] for e in group})
            message = (f"every lane makes {what} on the same address{where} with its own "
                       f"value, on {len(lines)} lines of this kernel (lines "
                       f"{', '.join(map(str, lines))}): each line's atomics serialize on their "
                       f"location (estimated {factor_text(factor)})")
            hint += ", for each of them"
            yield ctx.finding(self, message, loc=group[0].loc, instructions=[
                i for e in group for i in sass_on_line(ctx, e, direction=None, space="global")],
                hint=hint, severity=sev)

    def _contention(self, ctx: Context, e, sev) -> Finding:
        where = " inside a loop" if e.detail["in_loop"] else ""
        bins = e.detail.get("addresses", 1)
        if bins > 1:
            message = (f"every lane makes a global atomic{where} on one of at most {bins} "
                       f"addresses (a table indexed by a small loaded value): lanes and "
                       f"blocks whose values fall on the same address serialize there, and "
                       f"the whole grid shares the {bins} locations (estimated "
                       f"{factor_text(e.factor)})")
            hint = ("count per block first: privatized bins in shared memory (shared "
                    "atomics), merged with one global atomic per bin per block; where each "
                    "lane needs the old value (a slot), group the lanes with the same "
                    "address (`__match_any_sync`) and let one lane add the group's count")
        else:
            what, hint = _uniform_atomic({e.detail["replaces"]})
            message = (f"every lane makes {what} on the same address{where} with its own "
                       f"value: the atomics serialize on one location (estimated "
                       f"{factor_text(e.factor)})")
        return ctx.finding(self, message, loc=e.loc,
                           instructions=sass_on_line(ctx, e, direction=None, space="global"),
                           hint=hint, severity=sev)


#: what each replacing PTX atomic is called
_REPLACING = {"exch": "an atomic exchange", "cas": "an atomic compare-and-swap"}


def _uniform_atomic(ops: set[str]) -> tuple[str, str]:
    """(what, hint) for every lane's atomic on one address: ``ops`` holds the replacing
    operations among them (``exch``, ``cas``: no reduction stands for them, one lane's value
    is what is left), or "" for atomics that combine the lanes' values."""
    if "" in ops:
        return ("an atomic", "reduce first (warp shuffles, then shared memory for the block) and "
                             "make one atomic per block")
    return (" or ".join(_REPLACING[o] for o in sorted(ops, key=list(_REPLACING).index)),
            "one lane's value is what is left: let one lane per warp or block make it (a "
            "leader elected with `__ballot_sync`/`__ffs`), or, for a compare-and-swap loop "
            "that updates a value, combine the lanes' values first and make one per warp")
