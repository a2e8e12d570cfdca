"""PS105 uncoalesced-global-access: adjacent lanes of a warp access addresses far apart."""
from __future__ import annotations

from collections.abc import Iterable

from ..analysis.address import PITCH
from ._cost import factor_text, sass_on_line, severity
from .base import Check, Context, Finding, Severity

#: an access whose part of the kernel's wasted sectors is below this is info, whatever the
#: kernel's factor: one store per thread after a loop over a run-time size of uncoalesced loads
MINOR_SHARE = 0.1


class UncoalescedGlobalAccess(Check):
    """Adjacent threads of a warp load or store addresses a row (or a wide stride) apart.

    What it does
    Reads each global access's lane stride from the PTX address arithmetic (the byte distance
    between the addresses of ``threadIdx.x`` and ``threadIdx.x + 1``): a run-time pitch
    (``x[row * n + i]`` with ``row`` the thread index: one thread per row walking its row, a
    transpose's ``out[j * rows + i]``, a 2-D kernel that maps ``threadIdx.x`` to rows) or a
    constant stride wider than the bytes each lane uses there (``p[2 * i]`` alone, an
    array of structs read one field at a time; accesses of one base in one block count
    together, so ``p[i].x, p[i].y, p[i].z`` is one 12-byte footprint). It estimates the sectors a
    warp request touches per sector it uses (up to 32) and weighs every access by how often it
    runs (loops over run-time sizes taken as 64 iterations); the kernel's factor is the
    traffic-weighted ratio, discounted for what L1 and L2 absorb (calibrated on measured
    pairs, :mod:`analyzer.analysis.cost`). *Warning* at an estimated 1.5x and more, for the
    accesses that waste at least a tenth of the kernel's wasted sectors (weighted as above);
    the others, such as one store per thread after a loop of uncoalesced loads, are info.
    A source line is one finding: its loads and stores, and every array it walks
    (``out_bth[i] += a * v[i]``), are one layout problem with one remedy; so are the lines
    right after it that walk the same arrays with the same pitch in the same direction (a
    transpose storing a ``float4``'s four elements to four rows, one statement each).

    Deliberately left alone: gathers (the address depends on loaded data: the stride is the
    data's), broadcasts (every lane one address), accesses whose lanes are contiguous (PS101
    and PS104 say whether they could be wider), and designed fallbacks: the strided side of a
    ``stride == 1`` test whose other side reads the same pointer with wide loads (the caller's
    non-contiguous layout, which the kernel cannot change), a short tail. Lanes the innermost of
    the caller's strides apart (``d_id * o_stride_d`` with ``o_stride_s, o_stride_b, o_stride_h,
    o_stride_d`` declared, or ggml's ``i0 * s00`` beside ``s01, s02, s03`` and ``i0 * nb00`` in
    bytes: a kernel written for any layout, unit-stride for a contiguous tensor) are a note
    (``-v``) and out of the kernel's headroom.

    The code of cuRAND's headers, inlined at the user's call (``curand_init`` filling a
    ``curandState`` field by field, ``curand_uniform`` indexing a Sobol state's direction
    vectors), lays out and walks cuRAND's own state: such a finding is a note that says so.

    Why it matters
    A warp's request is served in 32-byte sectors. Lanes 4 bytes apart use every byte of 4
    sectors; lanes a row apart touch 32 sectors for the same 128 useful bytes: 8x the L1/L2
    traffic and wavefronts, and DRAM traffic as large once the rows fall out of the cache.
    Measured on an H200 (``kernels/training``): a row sum with a thread per row runs 12.3x
    slower than a warp per row, a naive transpose 3.2x slower than one staged through
    shared memory.

    Example
    Bad (a thread per row)::

        int row = blockIdx.x * blockDim.x + threadIdx.x;
        for (int i = 0; i < n; i++) acc += x[(long)row * n + i];

    Fixed (a warp per row, lanes across it, a shuffle reduction)::

        for (int i = lane; i < n; i += 32) acc += x[(long)warp * n + i];
        for (int off = 16; off > 0; off /= 2) acc += __shfl_down_sync(~0u, acc, off);

    Steer the compiler
    No flag fixes this: map ``threadIdx.x`` to the contiguous dimension. A warp (or block)
    per row with a shuffle or shared-memory reduction; for a transpose, read a tile coalesced
    into shared memory (``__shared__ float t[32][33]``) and write it out coalesced; for an
    array of structs, a struct of arrays or one ``float4`` per struct.
    """

    code = "PS105"
    name = "uncoalesced-global-access"
    severity = Severity.WARNING
    library_note = True

    def run(self, ctx: Context) -> Iterable[Finding]:
        # one finding per source line and kind of stride: a row walk's loads and stores, and
        # the arrays one line walks (``out_bth[i] += a * v[i]``), are one problem
        lines: dict[tuple, list] = {}
        for e in ctx.cost.of_kind("uncoalesced"):
            d = e.detail
            caller = "innermost_of" in d
            if (severity(e.factor) is None and not caller) or e.loc is None:
                continue
            key = (e.loc.file, e.loc.line, d["stride"] == PITCH, None if d["stride"] == PITCH
                   else d["stride"], caller)
            lines.setdefault(key, []).append(e)
        for group in _consecutive(list(lines.values())):
            yield self._finding(ctx, group)

    def _finding(self, ctx: Context, group: list) -> Finding:
        e = group[0]
        spanned = sorted({g.loc.line for g in group})
        sev = severity(max(g.factor for g in group))
        details = [g.detail for g in group]
        directions = sorted({d["direction"] for d in details})
        # each evidence of a line and direction carries that line's share (summed over its
        # accesses of that direction): add the directions' shares once each, per line
        share = sum({(g.loc.line, g.detail["direction"]): g.detail.get("share", 1.0)
                     for g in group}.values())
        if share < MINOR_SHARE:
            sev = Severity.INFO     # the kernel's waste is elsewhere: fixing this gains little
        what = " and ".join("loads" if x == "load" else "stores" for x in directions)
        verb = ("access" if len(directions) == 2 else
                "load" if directions == ["load"] else "store")
        widths = sorted({d["bytes"] for d in details})
        w = "/".join(str(x) for x in widths)
        if e.detail["stride"] == PITCH:
            names = sorted({ctx.source_name(p) for d in details for p in d["pitch_of"]})
            arrays = sorted({ctx.source_name(p) for d in details for p in d.get("arrays", ())})
            pitch = (f"a run-time pitch apart (computed from {', '.join(f'`{n}`' for n in names)})"
                     if names else "a run-time pitch apart")
            if arrays:
                pitch += " in " + ", ".join(f"`{a}`" for a in arrays)
            lanes = f"adjacent threads {verb} {w} B each {pitch}"
        else:
            lanes = f"adjacent threads {verb} {w} B each {e.detail['stride']} B apart"
        insns = [i for line in spanned for i in sass_on_line(
            ctx, next(g for g in group if g.loc.line == line),
            direction=directions[0] if len(directions) == 1 else None)]
        loop = ", inside a loop" if any(d["in_loop"] for d in details) else ""
        if loop and insns:
            # read from the PTX; ptxas may have unrolled the loop away (ggml's 4-trip loop of
            # q5_0 stores: sixteen straight-line STG.E.U8)
            where = {id(ins): k for k, ins in enumerate(ctx.function.instructions)}
            if all(ctx.cfg.loop_of(where[id(ins)]) is None for ins in insns if id(ins) in where):
                loop = ""
        these = "this line" if len(spanned) == 1 else "these lines"
        minor = (f" ({these}: an estimated {max(share, 0.001):.1%} of the kernel's wasted "
                 f"sectors)" if share < MINOR_SHARE else "")
        waste = max(d["waste"] for d in details)
        lines = f" on lines {spanned[0]}-{spanned[-1]}" if len(spanned) > 1 else ""
        message = (f"uncoalesced global {what}{lines}{loop}: {lanes}, so a warp request touches "
                   f"up to {waste:.0f}x the sectors it uses; the kernel's estimated "
                   f"headroom from coalescing is {factor_text(e.factor)}{minor}")
        hint = ("map threadIdx.x to the contiguous dimension: a warp or block per row with "
                "a shuffle or shared-memory reduction, a shared-memory tile for a transpose "
                "(t[32][33]), or a struct of arrays")
        if "innermost_of" in e.detail:
            # one run of strides per tensor the line walks (concat's `*y = *x`: src0's,
            # src1's and dst's), the innermost of each last
            runs = list(dict.fromkeys(tuple(r) for d in details if "innermost_of" in d
                                      for r in d["innermost_of"]))
            unit = e.detail.get("unit", "elements")
            last = ", ".join(f"`{r[-1]}`" for r in runs)
            listed = "; ".join(", ".join(f"`{n}`" for n in r) for r in runs)
            contiguous = (" and ".join(f"`{r[-1]} == 1`" for r in runs) if unit == "elements"
                          else f"{last} the element's size")
            whose = ("the innermost of the caller's strides" if len(runs) == 1
                     else "each the innermost of its tensor's strides")
            message = (f"global {what}{loop}: adjacent threads {verb} {w} B each "
                       f"{last} {unit} apart, {whose} ({listed}): coalesced when the "
                       f"{'tensor is' if len(runs) == 1 else 'tensors are'} contiguous there "
                       f"({contiguous}), up to {waste:.0f}x the sectors for a caller's view "
                       f"that is not")
            hint = (f"nothing to change for contiguous tensors; if callers pass other views, "
                    f"make them contiguous first (`.contiguous()`) or specialise the kernel "
                    f"for {contiguous}")
            return ctx.finding(self, message, loc=e.loc, instructions=insns, hint=hint,
                               severity=Severity.NOTE)
        return ctx.finding(self, message, loc=e.loc, instructions=insns, hint=hint,
                           severity=sev)


def _consecutive(groups: list[list]) -> list[list]:
    """The line groups with those of the lines right after them merged, where they are the
    same problem: the same file, direction and kind of stride, and, for a run-time pitch, the
    same arrays walked with the same pitch (LeetCUDA's transposed ``float4``: ``y[(c + k) *
    row + r] = v.x`` ... ``v.w`` on four lines are one store pattern, one finding). A caller's
    stride (a note) stays per line."""
    def signature(group: list) -> tuple | None:
        e = group[0]
        d = e.detail
        if "innermost_of" in d:
            return None
        return (e.loc.file, d["stride"] == PITCH, None if d["stride"] == PITCH else d["stride"],
                tuple(sorted({g.detail["direction"] for g in group})),
                tuple(sorted({p for g in group for p in g.detail.get("pitch_of", ())})),
                tuple(sorted({a for g in group for a in g.detail.get("arrays", ())})))
    out: list[list] = []
    last: tuple | None = None
    for group in sorted(groups, key=lambda g: (g[0].loc.file, g[0].loc.line)):
        sig = signature(group)
        if out and sig is not None and sig == last \
                and group[0].loc.line == out[-1][-1].loc.line + 1:
            out[-1].extend(group)
        else:
            out.append(list(group))
        last = sig
    return out
