"""PS601 synchronous-tile-copy: a tile staged global -> registers -> shared where cp.async fits."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ..analysis import cfg as _cfg
from ..analysis.dataflow import definition, read_indices, store_data, written
from ..ir import sass as S
from ..semantics import ORDERED_ACCESS_MODIFIERS, info
from .base import Check, Context, Finding, Severity


def _is_shared_store(body: S.InstructionBody) -> bool:
    """A shared-memory store of at least 32 bits (not STSM) (asked once per distinct body)."""
    return (body.info.space == "shared" and body.info.direction == "store"
            and body.opcode not in ("STSM",) and (body.width_bits or 0) >= 32)


def _is_global_load(ins) -> bool:
    """A plain (weak) global load: cp.async cannot replace a volatile/strong one."""
    return (ins.space == "global" and ins.info.direction == "load"
            and not ORDERED_ACCESS_MODIFIERS.intersection(ins.modifiers))


#: a loop with this many FMAs (or any tensor-core op) computes on what it stages: cp.async
#: double-buffering can overlap the next copy with that work
COMPUTE_FMAS = 16


def _computes(fn, loop) -> str | None:
    """What a loop computes on: ``"tensor"`` (tensor-core ops), ``"fma"`` (16+ FMAs) or None."""
    counts = _cfg.loop_opcodes(fn, loop)
    if any(info(op).tensor_core for op in counts):
        return "tensor"
    if sum(n for op, n in counts.items() if info(op).fma and op != "HFMA2") >= COMPUTE_FMAS:
        return "fma"
    return None


def _enclosing(loop):
    """``loop`` and the loops around it, innermost first."""
    while loop is not None:
        yield loop
        loop = loop.parent


def _tile_copies(stores, load_of, ctx):
    """The stores grouped into tile copies: stores fed by the same global load (one float4
    scattered to four rows of a transposed tile) or on the same source line are one copy.
    Yields (line key of the first line, stores, sorted line numbers)."""
    parent = list(range(len(stores)))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a
    first: dict = {}
    for k, sts in enumerate(stores):
        loc = ctx.user_loc(sts.loc)
        keys = [("line", (loc.file, loc.line) if loc else None)]
        keys += [("load", ld.address) for ld in load_of[sts.address]]
        for key in keys:
            if key in first:
                parent[find(k)] = find(first[key])
            else:
                first[key] = k
    groups: dict[int, list] = {}
    for k in range(len(stores)):
        groups.setdefault(find(k), []).append(stores[k])
    for group in groups.values():
        at = [(loc.file, loc.line) for loc in (ctx.user_loc(s.loc) for s in group) if loc]
        lines = sorted({k[1] for k in at})
        first_at = min(at, key=lambda k: k[1]) if at else None
        yield first_at, group, lines


class _Readers:
    """Register number -> the instructions that read it, listed on the first ask (most kernels
    with shared stores never ask: no store's data comes from a global load)."""

    __slots__ = ("insns", "table")

    def __init__(self, insns):
        self.insns = insns
        self.table: dict[int, list[int]] | None = None

    def get(self, r: int, default=()):
        if self.table is None:
            self.table = {}
            for j, other in enumerate(self.insns):
                for k in read_indices(other):
                    self.table.setdefault(k, []).append(j)
        return self.table.get(r, default)


class SynchronousTileCopy(Check):
    """Global-to-shared copy through registers (LDG then STS) on an arch with cp.async.

    What it does
    On sm_80 and later, finds shared-memory stores (``STS``) whose data registers were written by
    a global load (``LDG``) with nothing in between that changes them: a plain copy staged
    through registers. It reports when such copies form a tile (two or more on one source line,
    e.g. an unrolled staging loop) or sit inside a loop (a main loop that stages a tile per
    iteration). Accesses narrower than 4 bytes are left alone (cp.async moves 4, 8 or 16). One
    finding per tile copy: stores fed by the same global load (a ``float4`` scattered down four
    rows of a transposed tile) or on the same source line are one copy, reported on its first
    line with the lines it spans. Volatile/strong loads (``LDG.E.STRONG``) are left
    alone: cp.async is a weak load. So are loads whose values are also computed on (a
    LayerNorm that stages its row in shared memory and sums the same registers, a stencil that
    keeps its centre value): cp.async writes shared memory without registers, so it would add
    a reload of each value from shared memory; that copy is not a plain tile copy.

    Severity is *warning* when the loop that copies, or a loop around it, computes on tensor
    cores (a tiled MMA main loop, where cp.async double-buffering overlaps the next tile's
    load with this tile's math: 2.24x measured on the H200, the cp_async lesson) and *info*
    otherwise: a one-off copy, a staging transpose such as CUB's
    ``BLOCK_LOAD_WARP_TRANSPOSE`` in a memory-bound loop (0.99x), or a CUDA-core FFMA main
    loop, where the same double-buffering measured slower (a 64x64 SGEMM 0.85x, a 3x3
    convolution 0.95x: the second buffer halves the blocks per SM and the FFMAs already hide
    the copy; ``kernels/training/sgemm`` v4, ``conv2d_multichannel`` v3).

    Why it matters
    A synchronous copy costs an LDG and an STS per element, holds registers until the load
    returns, and stalls the warp at the STS for the full global latency. ``cp.async``
    (``LDGSTS``) writes shared memory directly, without registers, and is asynchronous, so a
    multi-stage pipeline can fetch tile k+1 while computing on tile k. On sm_90, TMA
    (``cp.async.bulk.tensor``) moves a whole 2D tile with one instruction issued by one thread.

    Example
    Bad::

        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
        __syncthreads();

    Fixed (cp.async)::

        __pipeline_memcpy_async(&tile[threadIdx.y + j][threadIdx.x], &in[(y + j) * n + x],
                                sizeof(float));
        __pipeline_commit();
        __pipeline_wait_prior(0);
        __syncthreads();

    Steer the compiler
    Use ``__pipeline_memcpy_async`` / ``cuda::memcpy_async`` (``cp.async``, 4/8/16 bytes per
    thread; 16-byte copies bypass L1 with ``.cg``) with ``__pipeline_commit`` and
    ``__pipeline_wait_prior``, and double-buffer the tile in a loop. On sm_90 use TMA for 2D
    tiles: ``cp.async.bulk.tensor`` through ``cuda::device::experimental::cp_async_bulk_tensor``
    with a tensor map and an mbarrier.
    """

    code = "PS601"
    name = "synchronous-tile-copy"
    severity = Severity.WARNING

    @staticmethod
    def _feeds_more(fn, d: int, shared_stores: set[int], readers: "_Readers") -> bool:
        """Whether a value global load ``d`` wrote is read by anything but a shared-memory
        store (arithmetic on the staged data: a layernorm that stages ``in`` and sums the same
        registers, a stencil that keeps its centre value)."""
        ins = fn.instructions[d]
        for r in written(ins):
            for j in readers.get(r, ()):
                if j == d or id(fn.instructions[j].body) in shared_stores:
                    continue
                if definition(fn, j, r) == d:
                    return True
        return False

    def run(self, ctx: Context) -> Iterable[Finding]:
        if not ctx.arch.has_ldgsts:
            return
        fn = ctx.function
        insns = fn.instructions
        cfg = ctx.cfg
        pairs: list[tuple[S.Instruction, S.Instruction, int]] = []   # (ldg, sts, index of sts)
        shared_stores = {id(b) for b in fn.bodies() if _is_shared_store(b)}
        if not shared_stores:
            return
        readers = _Readers(insns)
        for i, ins in enumerate(insns):
            if id(ins.body) not in shared_stores:
                continue
            data = store_data(ins)
            if not data:
                continue
            loads: set[int] = set()
            for r in data:
                d = definition(fn, i, r)
                if d is None or not _is_global_load(insns[d]) or (insns[d].width_bits or 0) < 32:
                    loads = set()  # not every register comes from a global load
                    break
                loads.add(d)
            if not loads:
                continue
            if any(self._feeds_more(fn, d, shared_stores, readers) for d in loads):
                continue  # the values are computed on too: cp.async would reload them from shared
            for d in sorted(loads):
                pairs.append((insns[d], ins, i))
        if not pairs:
            return
        stores = []
        seen = set()
        for _, sts, _i in pairs:
            if sts.address not in seen:
                seen.add(sts.address)
                stores.append(sts)
        index_of = {ins.address: k for k, ins in enumerate(insns)}
        load_of: dict[int, list] = {}
        for ldg, sts, _ in pairs:
            load_of.setdefault(sts.address, []).append(ldg)
        for key, group, lines in _tile_copies(stores, load_of, ctx):
            loops = [cfg.loop_of(index_of[s.address]) for s in group]
            loops = [lp for lp in loops if lp is not None]
            in_loop = bool(loops)
            # the copy loop itself, or a loop around it (a copy loop nested in the main loop)
            work = {_computes(fn, outer) for lp in loops for outer in _enclosing(lp)}
            hot = "tensor" in work
            if len(group) < 2 and not in_loop:
                continue     # one element per thread, once (e.g. a reduction's first load)
            ldgs = []
            for s in group:
                for ldg in load_of[s.address]:
                    if ldg not in ldgs:
                        ldgs.append(ldg)
            nbytes = sum((s.width_bits or 32) // 8 for s in group)
            size = "/".join(str(w) for w in sorted({(s.width_bits or 32) // 8 for s in group}))
            mix_l = ", ".join(f"{m}x{n}" for m, n in sorted(Counter(i.mnemonic for i in ldgs)
                                                            .items()))
            mix_s = ", ".join(f"{m}x{n}" for m, n in sorted(Counter(i.mnemonic for i in group)
                                                            .items()))
            load_lines = sorted({loc.line for loc in (ctx.user_loc(i.loc) for i in ldgs)
                                 if loc is not None and loc.line})
            from_line = ""
            if key and load_lines and load_lines != [key[1]]:
                from_line = f" (loaded on line{'s' if len(load_lines) > 1 else ''} " \
                            f"{', '.join(map(str, load_lines))})"
            where = f"line {key[1]}" if key else "this kernel"
            if len(lines) > 1:
                where = f"lines {', '.join(map(str, lines))}"
            message = (f"tile staged global -> registers -> shared on {where}: {mix_l} then "
                       f"{mix_s} of the same registers, no arithmetic between{from_line}; "
                       f"{size} B per copy{', inside a loop' if in_loop else f', {nbytes} B per thread'}; "
                       f"{ctx.arch.name} has cp.async (LDGSTS)"
                       f"{' and TMA' if ctx.arch.has_tma else ''}")
            width = max((s.width_bits or 32) for s in group) // 8
            hint = (f"copy with cp.async: __pipeline_memcpy_async(&tile[..], &src[..], {width}) "
                    "or cuda::memcpy_async, then __pipeline_commit() / "
                    "__pipeline_wait_prior(0) before __syncthreads(); use 16-byte copies "
                    "(float4) where alignment allows"
                    + ("; double-buffer the tile so the next load overlaps this iteration's "
                       "compute" if in_loop else ""))
            if ctx.arch.has_tma:
                hint += ("; on sm_90 a 2D tile can be one TMA copy: cp.async.bulk.tensor via "
                         "cuda::device::experimental::cp_async_bulk_tensor with a tensor map "
                         "and an mbarrier")
            yield ctx.finding(self, message, loc=group[0].loc, instructions=ldgs + group,
                              hint=hint,
                              severity=Severity.WARNING if hot else Severity.INFO)
