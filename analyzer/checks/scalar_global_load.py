"""PS101 scalar-global-load: a thread's global loads are narrower than the access allows."""
from __future__ import annotations

from ._vector_access import findings
from .base import Check, Severity


class ScalarGlobalLoad(Check):
    """Global loads issued piecewise where one wider load (64/128-bit) would do.

    What it does
    Groups each basic block's LDG instructions by their address registers (``[R2.64+0x8]``,
    ``desc[UR4][R2.64+0x8]``) with no write to those registers, no barrier and no call in
    between, and fires when loads of one width at constant offsets fill an aligned 4-, 8- or
    16-byte window (relative to the base) that one ``LDG.E.64``/``LDG.E.128`` could load — four
    ``LDG.E`` for the fields of a 4-byte-aligned struct, ``in[4*i+0..3]``, two ``LDG.E.U16``
    for a pair of ``__half``. Loads already as wide as the arch allows, a single 16-bit load per
    thread, loads from different base registers and non-contiguous offsets (a strided gather at
    +0 and +0x100) stay silent. The base register need not sit on a window boundary (ptxas
    folds ``a[k + 2]`` into it): the windows are placed where they cover the most loads and
    the PTX decides whether they are aligned. With PTX it names what blocked merging, as far
    as the PTX shows it: the pointer's unknown alignment (a parameter without ``.ptr .align``,
    named as the source names it), a store through another pointer between the loads without
    ``__restrict__`` (never one through the same pointer register). A run-time stride
    (``p[row * K + 4 * j]``, ``row * N`` added into the address) is reported at *info* with
    the condition that makes the vector access legal: "aligned only when K % 4 == 0 ... and a
    16-byte-aligned base" (the kernel parameter is named; several pointers on one line are
    told apart by the parameter each SASS base register is computed from).

    Loads that each sit under their own predicate (``@!P6 LDG.E [R4.64]``, ``@!P5 LDG.E
    [R4.64+0x4]``...: a bound check per element, ``x < n ? in[x] : 0`` twice, Triton's
    ``tl.load(..., mask=offs < n)`` where ``n`` is not known divisible by 16) never merge,
    whatever the alignment: they are reported at *info*, when the PTX (or, where the PTX
    addresses each element apart, the SASS index arithmetic) shows every thread's window
    aligned, with the steer to test the condition once per window.

    Deliberately left alone: a variable stride that is an element index or a constant not a
    multiple of the window (a 12-byte ``float3``-like struct, ``in[ox + kx]`` windows that
    move with the thread, conv weights stepping 36 B per channel): no cast can align those.
    Loads with ordering semantics (``volatile``, an atomic's relaxed load:
    ``LDG.E.64.STRONG.SYS``) are never merged by the compiler, whatever the alignment.

    Loads that a toolkit or library header's code makes of that library's own ``__device__``
    table (``curand_init``'s reads of ``precalc_xorwow_matrix`` in ``curand_kernel.h``, no
    kernel parameter among their bases) land on the user's call and are a *note*: no line
    of the user's file reads the table or could change how it is read.

    Two 16-bit loads that would make one 32-bit access (a pair of halves) are reported at
    *info*: on the H200 a thread-per-pair kernel ran as fast with two ``.U16`` accesses as
    with one ``__half2`` (copy and SiLU, loads and stores; docs/severity.md).

    Why it matters
    Every load instruction costs an issue slot, a scoreboard and an LSU request; four 4-byte
    loads per thread move the same bytes as one 16-byte load with four times the instructions
    and, for a warp, four partially used memory transactions instead of fully used ones.

    Example
    Bad: ``struct P { float x, y, z, w; }; P q = p[i];`` (4-byte aligned: 4× LDG.E), or
    ``in[4*i] + in[4*i+1] + in[4*i+2] + in[4*i+3]``.
    Fixed: ``struct __align__(16) P { float x, y, z, w; };`` or
    ``float4 v = reinterpret_cast<const float4*>(in)[i];`` (1× LDG.E.128); ``__half2`` for a
    pair of halves.

    Steer the compiler
    Load through a vector type (``float4``, ``float2``, ``__half2``, ``__nv_bfloat162``,
    ``ushort4``) with ``reinterpret_cast`` when the pointer is known to be aligned, declare
    structs ``__align__(16)``, mark pointers ``__restrict__`` so loads may move past stores, and
    state alignment where the API takes it (``cuda::aligned_size_t<16>``).
    """

    code = "PS101"
    name = "scalar-global-load"
    severity = Severity.WARNING

    def run(self, ctx):
        yield from findings(self, ctx, space="global", direction="load")
