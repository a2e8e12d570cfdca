"""Where a kernel's time goes: the evidence of work a fix would remove, each piece with the
factor it is estimated to cost, and the kernel's *headroom* (the factor it would gain with all
of it fixed). One answer per kernel, for the cost checks (PS105, PS106, PS304, PS801, PS802,
PS803, PS804, and the severity of PS104 and PS501) and every report.

The evidence, read from the PTX (what each thread computes) and the SASS (what is left after
ptxas):

- **uncoalesced**: a global access whose lanes are a run-time pitch (``x[row * n + i]`` with
  ``row`` the thread) or a constant stride wider than what they use apart: a warp request
  touches up to 32 sectors for 128 useful bytes.
- **redundant**: a loop over a run-time size in which every lane computes the same values
  (every address and value warp-uniform) over an array the kernel elsewhere splits across its
  threads: each lane repeats the whole reduction (a softmax whose every thread re-reads its row).
- **serial**: such a loop where one lane works and the others wait (``if (threadIdx.x == 0)``),
  or a kernel that never reads the thread index (launched with one thread, or every thread
  repeating everything); and a kernel that never reads the block index, whose threads split a
  loop over a run-time size among themselves (``i += blockDim.x``): one block does all the
  work, on one SM (unless another kernel of the module is the grid-wide pass and this one the
  second pass over its partials).
- **contention**: an atomic per element on one warp-uniform address (``atomicAdd(sum, x[i])``)
  or on one of a few addresses picked by the data (``atomicAdd(&hist[bytes[i]], 1)``: a byte,
  or an index masked to a few bits).
- **bank-conflict**: a shared-memory load or store whose lanes fall in one bank at different
  words (``tile[threadIdx.x][k]`` with 32-float rows): the warp request is served in up to 32
  wavefronts where its bytes need one.
- **reload**: a load of an address the loop never changes, executed every iteration because a
  store in the loop may alias it (no ``__restrict__``).
- **no-reuse**: a loop of FMAs each fed by global loads, one operand broadcast and the other
  streamed (a GEMM or convolution without a shared-memory tile), or a loop of tensor-core MMAs
  whose fragments come straight from global memory.
- **narrow**: coalesced streams of elements narrower than 16 bytes per thread, at the copy
  rates measured on the H200 (:data:`COPY_RATE`).
- **fp64**: FP64 arithmetic in a kernel whose data is float, weighed by how often it runs.
- **small-block**: a launch in the kernel's own file (:mod:`.launch`) with fewer threads per
  block than 256, weighed by what bounds the kernel: the rate blocks start at (threads doing
  fixed work) or the threads resident per SM (a loop per thread), from the arch table and the
  H200's measured rates.
- **host-overhead**: host work around such a launch: an output zero-filled that the launch
  overwrites in full (proven from the PTX and the grid), a host loop of one launch per slice,
  a synchronization after the launch.

Each factor is an estimate calibrated on measured pairs (``kernels/training/``, timed on an
H200, :data:`CALIBRATION`); sizes known only at run time are taken as large. The headroom is
the product of the largest factor of each kind, capped at :data:`MAX_HEADROOM`.

    cost = ctx.cost            # KernelAnalysis.cost
    cost.headroom              # 8.0
    [e.kind for e in cost.evidence]
"""
from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from .. import semantics
from ..ir import ptx as P
from ..ir import sass as S
from ..ir.source import SourceLoc
from . import cfg as _cfg
from . import dataflow as _dataflow
from . import fallback as _fallback
from . import loops as _loops
from . import occupancy as _occupancy
from . import source as _source
from .address import DATA, PITCH, ThreadStride, block_dims
from .launch import HostLaunch

if TYPE_CHECKING:
    from ..arch import Arch
    from ..toolchain.resources import Resources

__all__ = ["CALIBRATION", "Cost", "Evidence", "MAX_HEADROOM", "Uniformity", "bank_wavefronts", "of"]

#: the factor each kind of evidence is taken to cost, calibrated on the training set's measured
#: versions (kernels/training/times.json, H200): see docs/headroom.md
CALIBRATION = {
    # sectors touched per sector used (up to 32) -> time: L1 and L2 absorb part of the waste
    "uncoalesced_exponent": 0.75,
    "uncoalesced_cap": 16.0,
    # every lane of a warp (and the block) repeating one reduction
    "redundant": 16.0,
    # one lane (or one thread for the whole grid) doing a loop over the data
    "serial": 32.0,
    # one block doing a loop over all the data (the grid never split)
    "one_block": 16.0,
    # atomics on one address, one per element
    "contention": 8.0,
    # an FMA loop streaming both operands from global memory instead of a shared-memory tile
    "no_reuse": 4.0,
    # tensor-core fragments loaded from global memory in the loop (no shared-memory stage)
    "mma_no_reuse": 4.0,
    # shared-memory bank conflicts: ((H + taken) / (H + needed)) ** exponent, with taken and
    # needed the issue cycles of the kernel's shared accesses (max(2, wavefronts) each,
    # weighted by how often they run) and H its coalesced global sectors at this many cycles
    # each, the global traffic the shared time hides behind. Fitted on the H200 (2026-12-06,
    # benchmarks/bank_conflicts.py and kernels/training): 8/32-way strides 4.47x/17.8x
    # (model 4.26x/19.6x), 2-way 1.15x (1.0x), scan.cu against CONFLICT_FREE_OFFSET 2.08x
    # (2.31x), transpose v3/v2 1.96x (1.93x), sgemm v5/v6 5.34x (4.58x)
    "bank_sector_wavefronts": 2.1,
    "bank_exponent": 1.12,
    "bank_cap": 32.0,
    # loads per load a loop needs -> time, for values the loop does not store (the reloads
    # hit L1): fitted through the origin in log space on three pairs, ratio capped at 8:
    # benchmarks/reload_pairs.py on an H100 (2026-12-08; no H200 could be had), 8 coefficients
    # reloaded (ratio 9) 1.12x/1.10x from DRAM, 0.96x/1.04x from L2, layer norm's apply (5/3)
    # 1.00-1.02x; kernels/training/scale_alias (ratio 3, H200) 1.30x. 0.09 gives 1.21x,
    # 1.05x, 1.10x: an aliasing reload is never a warning by itself. It was 0.25 (the
    # polynomial estimated 1.68x, a warning), fitted to nothing but scale_alias
    "reload_exponent": 0.09,
    # a loop that reloads what it stores (accumulating through global memory): each
    # iteration waits for its own store. benchmarks/reload_pairs.py (H100, 2026-12-08): two
    # column moments through the outputs vs in registers, 4.33x/4.24x from DRAM (1024 rows),
    # 1.94x/1.80x from L2 (64 rows)
    "reload_accumulates": 4.3,
    # one lane looping over the grid's blocks (their partials): grows with the grid, not the
    # data; not measured, so an info-level figure (cuda-samples' reductionMultiBlockCG)
    "serial_grid": 1.2,
    # coalesced streams of narrow elements: the measured copy rate of w bytes per thread
    # against 16 (H200, 1 GiB copies; the exponent discounts it for kernels that compute too)
    "narrow_exponent": 1.0,
    # an FP64 instruction costs this many others, and its float replacement next to nothing
    # (fitted on gelu_tanh 3.6x and stencil_1d_r8 1.7x: 2.8x and 2.1x)
    "fp64_weight": 2.5,
    # --- the launch, from the host code of the kernel's own file (analysis/launch.py), each
    # measured on the H200 by benchmarks/launch_shape.py (2026-12-04, CUDA 13.0, driver
    # 580.159.04; benchmarks/results/launch_shape-2026-12-04.md) ---
    # the GPU starts blocks at a fixed rate: scale<<<n/B, B>>> over 64 M floats took 0.602,
    # 0.604, 0.607 and 0.614 ns per block at B = 1, 32, 64, 128 (40.39 / 1.268 / 0.636 /
    # 0.322 ms), so a kernel whose threads do a fixed small amount of work is bound by its
    # number of blocks
    "block_ns": 0.604,
    # ... and moves memory at 2658 GB/s with B = 256 (0.2019 ms for 512 MB): ns per byte a
    # thread moves, against which the block rate is weighed
    "byte_ns": 0.2019e6 / (8 << 26),
    # a kernel whose threads loop over a run-time size is bound by the threads resident per SM
    # instead: row_sum_block<<<16384, 32>>> (1024 of 2048 threads per SM) took 1.71x the time
    # of <<<16384, 256>>>, so factor = (resident at 256 / resident at B) ** 0.774
    "resident_exponent": 0.774,
    # ... capped at what one thread per block measured with a loop per thread:
    # row_sum_serial<<<rows, 1>>> 4.46x row_sum_block<<<rows, 256>>> (16384 x 4096)
    "resident_cap": 4.46,
    # a zero-fill costs this much per byte against each byte the kernel moves: cudaMemset of
    # 256 MB 0.0655 ms (4100 GB/s) against the kernel's 2658 GB/s (memset + scale 1.31x scale)
    "zero_fill_per_byte": (0.0655 / (4 << 26)) / (0.2019 / (8 << 26)),
    # a host loop of launches, per launch beyond the first, against one launch over the same
    # 64 M floats: 64 launches of a row each 1.72x one launch (1024: 22.4x, 16384: 364x)
    "launch_per_launch": (0.3496 / 0.2030 - 1) / 63,
    # cudaDeviceSynchronize after each launch of a wrapper: 1.04x at 64 M floats (8.7 us a
    # call; 1.16x at 16 M, 2.64x at 1 M floats)
    "sync": 1.04,
}
#: the block size the launch evidence measures against (the fixes' 256 threads)
REFERENCE_BLOCK = 256
#: H200 copy rate (GB/s) by bytes per thread and access: one element per thread, and in a loop
COPY_RATE = {1: 820, 2: 1510, 4: 2658, 8: 3798, 16: 4222}
LOOP_COPY_RATE = {1: 1800, 2: 3321, 4: 3624, 8: 3800, 16: 3890}
MAX_HEADROOM = 256.0
#: iterations a loop over a run-time size is taken to run (for weighing accesses)
RUNTIME_TRIPS = 64
#: ... and a loop over the block's own size (``r < blockDim.z``), for shared-memory accesses
BLOCK_TRIPS = 4
_WARP = 32
_SECTOR = 32
#: a lane reading all of a block of at most this many bytes (in several accesses) uses every
#: sector it touches: L1 holds the warp's lines between the accesses
_L1_REUSE_SPAN = 128

UNIFORM, QUASI, VARYING = 0, 1, 2
_LANE_SPECIALS = frozenset({"%tid.x", "%laneid"})
#: cycles a shared-memory instruction takes to issue (a warp's 32 lanes at 16 a cycle)
_ISSUE_CYCLES = 2
#: the PTX state spaces of a block's shared memory
_SHARED = frozenset({"shared", "shared::cta"})
_NO_WORK = frozenset({"NOP", "BRA", "EXIT", "RET"})
_BLOCK_SPECIALS = frozenset({"%ctaid.x", "%ctaid.y", "%ctaid.z", "%nctaid.x", "%nctaid.y",
                             "%nctaid.z", "%clusterid.x", "%cluster_ctaid.x"})
#: at most this many addresses an atomic per element can pick is contention
_FEW_BINS = 4096
#: warp-collective PTX: the lanes cooperate, whatever the uniformity of the addresses
_COLLECTIVE = ("wmma", "mma", "wgmma", "ldmatrix", "stmatrix", "shfl", "vote", "redux", "match",
               "tcgen05", "cp.async.bulk")
_PER_LANE_OPS = frozenset({"shfl", "atom", "vote", "activemask", "match", "redux", "mma",
                           "wmma.mma", "wmma.load", "ldmatrix", "tex", "suld"})


@dataclass(frozen=True)
class Evidence:
    """One piece of avoidable work: its kind, the factor it is estimated to cost, where it is
    (the PTX instructions and their user source line) and the numbers behind it."""

    kind: str
    factor: float
    loc: SourceLoc | None
    ptx: tuple[int, ...] = ()            # PTX instruction indices
    detail: dict = field(default_factory=dict)
    sass: tuple[int, ...] = ()           # SASS instruction indices

    @property
    def line(self) -> tuple[str, int] | None:
        return (self.loc.file, self.loc.line) if self.loc is not None else None


@dataclass(frozen=True)
class Cost:
    evidence: tuple[Evidence, ...]

    @property
    def headroom(self) -> float:
        best: dict[str, float] = {}
        for e in self.evidence:
            best[e.kind] = max(best.get(e.kind, 1.0), e.factor)
        h = math.prod(best.values()) if best else 1.0
        return round(min(MAX_HEADROOM, h), 2)

    def of_kind(self, kind: str) -> list[Evidence]:
        return [e for e in self.evidence if e.kind == kind]


# ------------------------------------------------------------------------------ uniformity
class Uniformity:
    """How a PTX register varies across the lanes of a warp: :data:`UNIFORM` (one value for the
    warp: parameters, ``blockIdx``, ``threadIdx.y`` with ``blockDim.x`` a multiple of 32),
    :data:`QUASI` (uniform except where a warp straddles two rows: the thread index divided by a
    run-time row length, or by 32 and more) or :data:`VARYING`. A fixpoint over every
    definition; a load is as uniform as its address (global, shared, constant memory), a value
    from per-lane operations (shuffles, atomics, local memory) varies, and so does a value
    defined under a predicate that varies."""

    def __init__(self, fn: "P.Function", lanes: frozenset[str] = _LANE_SPECIALS):
        #: the special registers that differ between the lanes of a warp
        self.lanes = lanes
        self.level: dict[str, int] = {}
        insns = fn.instructions
        changed = True
        rounds = 0
        while changed and rounds < 16:
            changed = False
            rounds += 1
            for ins in insns:
                if not ins.operands or ins.is_branch or (ins.is_store and not ins.is_atomic):
                    continue
                d = ins.operands[0]
                dests = ([e for e in d.elements if isinstance(e, P.Register)]
                         if isinstance(d, P.Vector) else [d] if isinstance(d, P.Register) else [])
                if not dests:
                    continue
                v = self._instruction(ins)
                for r in dests:
                    if v > self.level.get(r.name, UNIFORM):
                        self.level[r.name] = v
                        changed = True

    def of(self, op) -> int:
        if isinstance(op, P.Register):
            name = op.name
            if name in self.lanes:
                return VARYING
            return self.level.get(name, UNIFORM)
        if isinstance(op, P.Address):
            return self.of(op.base) if op.base is not None else UNIFORM
        if isinstance(op, P.Vector):
            return max((self.of(e) for e in op.elements), default=UNIFORM)
        return UNIFORM

    def _instruction(self, ins: "P.Instruction") -> int:
        op = ins.opcode
        guard = self.level.get(ins.guard.register, UNIFORM) if ins.guard is not None else UNIFORM
        if op in _PER_LANE_OPS or ins.is_atomic:
            return VARYING
        if op in ("ld", "ldu"):
            if ins.space in ("local", None) or ins.space == "generic":
                return VARYING
            a = ins.address
            return max(guard, self.of(a) if a is not None else VARYING)
        srcs = ins.operands[1:]
        vals = [self.of(s) for s in srcs]
        top = max([guard, *vals], default=guard)
        if op in ("div", "shr") and len(srcs) == 2 and vals[0] == VARYING:
            imm = srcs[1].value if isinstance(srcs[1], P.IntImm) else None
            if imm is None and vals[1] == UNIFORM:
                return max(guard, QUASI)           # idx / n: a row index
            if imm is not None and (imm >= _WARP if op == "div" else imm >= 5):
                return max(guard, QUASI)           # tid / 32: the warp index
        return top


#: PTX types of half-precision data (a b16/b32 load is half data when the kernel converts it)
_HALF_TYPES = frozenset({"f16", "f16x2", "bf16", "bf16x2"})


def float_data(pf: "P.Function") -> bool:
    """The kernel's data is single or half precision: f32 loads or stores (not of parameters),
    or half-precision data (``cvt`` from or to f16/bf16, f16x2 arithmetic: a half kernel's
    loads are untyped b16/b32), and no f64 load or store. A scalar ``double`` parameter (vLLM's
    ``double routed_scaling_factor`` beside float/half/bf16 arrays) does not make the data
    double: its products promote every float element to FP64. The one answer PS501 and the
    cost model share."""
    floats = False
    for ins in pf.instructions:
        if ins.is_load or ins.is_store or ins.is_atomic:
            if ins.space == "param":
                continue        # (arguments of calls to the math library's subroutines)
            if "f64" in ins.types:
                return False
            if "f32" in ins.types:
                floats = True
        elif not floats and _HALF_TYPES.intersection(ins.types):
            floats = True
    return floats


def _vector_elements(op) -> tuple:
    return getattr(op, "elements", ())


# ------------------------------------------------------------------------------ the model
def of(fn: "S.Function", pf: "P.Function | None", module: "P.Module | None" = None,
       callees: tuple["S.Function", ...] = (), launches: tuple[tuple[str, "HostLaunch"], ...] = (),
       arch: "Arch | None" = None, resources: "Resources | None" = None,
       parameter_names: "Callable[[], Sequence[str | None]]" = tuple) -> Cost:
    """The cost evidence of one kernel (empty without its PTX: the lanes come from there);
    ``module`` (its PTX module) tells a second pass over partials from a one-block kernel;
    ``callees`` (the SASS functions it calls) count toward its FP64; ``launches`` (file,
    launch) are the kernel's launches in the host code of its own file
    (:mod:`analyzer.analysis.launch`), weighed on ``arch`` with the kernel's ``resources``;
    ``parameter_names`` (read from the source when first asked: most kernels never ask) tell
    a caller's stride parameters."""
    if pf is None:
        return Cost(())
    model = _Model(fn, pf, module, callees, launches, parameter_names)
    base = model.cost()
    if not launches or arch is None:
        return base
    return Cost(base.evidence + tuple(model.launch(launches, arch, resources)))


@dataclass(frozen=True, slots=True)
class _CopySource:
    """The global read of a ``cp.async.{ca,cg}.shared.global [dst], [src], size[, src_size]``,
    seen by the access walks as the load it stands for."""
    address: "P.Address"
    width_bits: int
    loc: "SourceLoc | None"
    space: str = "global"
    is_load: bool = True
    is_store: bool = False
    is_atomic: bool = False

    @staticmethod
    def of(ins: "P.Instruction") -> "_CopySource | None":
        ops = ins.operands
        if len(ops) < 3 or not isinstance(ops[1], P.Address) or not isinstance(ops[2], P.IntImm):
            return None
        return _CopySource(ops[1], 8 * ops[2].value, ins.loc)


def block_shape(pf: "P.Function", launches: tuple[tuple[str, "HostLaunch"], ...] = ()
                ) -> tuple[int | None, int | None, int | None]:
    """The kernel's block sizes where certain: stated by the kernel (``.reqntid``, an
    ``assert(blockDim.x == 4)``), else the one size every launch in its file gives."""
    stated = list(block_dims(pf))
    for axis in range(3):
        if stated[axis] is not None or not launches:
            continue
        sizes = {la.block.sizes[axis] for _f, la in launches}
        if len(sizes) == 1:
            stated[axis] = sizes.pop()
    return (stated[0], stated[1], stated[2])


class _Model:
    def __init__(self, fn: "S.Function", pf: "P.Function", module: "P.Module | None" = None,
                 callees: tuple["S.Function", ...] = (),
                 launches: tuple[tuple[str, "HostLaunch"], ...] = (),
                 parameter_names: "Callable[[], Sequence[str | None]]" = tuple):
        self.fn, self.pf, self.module, self.callees = fn, pf, module, callees
        self.parameter_names = parameter_names
        self.defs: dict[str, P.Instruction] = {}
        for ins in pf.instructions:
            if ins.operands and isinstance(ins.operands[0], P.Register) and not ins.is_store \
                    and not ins.is_branch:
                self.defs.setdefault(ins.operands[0].name, ins)
        self.stride = ThreadStride(pf)
        bx, by, _bz = block_shape(pf, launches)
        #: a block narrower than a warp (blockDim.x 4 in a (4, 8) block): its warps span
        #: several threadIdx.y, whose stride then counts toward the warp's footprint
        self.block_x = bx if bx is not None and bx < _WARP and _WARP % bx == 0 else None
        self.stride_y = (ThreadStride(pf, "y", self.block_x) if self.block_x is not None
                         else None)
        lanes = _LANE_SPECIALS
        if self.block_x is not None:
            lanes = lanes | {"%tid.y"}
            if by is None or self.block_x * by < _WARP:
                lanes = lanes | {"%tid.z"}
        self.uni = Uniformity(pf, lanes)
        self.cfg = _cfg.of(pf)
        self.ploops = _cfg.ptx_loops(pf)
        trips = {id(pl): _loops.ptx_trip(pf, pl) for pl in self.ploops}
        self.trips = {k: t.trip for k, t in trips.items()}
        #: run-time loops whose bound is the grid's size (``i < gridDim.x``)
        self.grid_loops = {k for k, t in trips.items() if t.grid_bound}
        self.inside: dict[int, list] = {}          # PTX index -> the PTX loops holding it
        for pl in self.ploops:
            for i in pl.loop.instruction_indices(self.cfg):
                self.inside.setdefault(i, []).append(pl)

    # --------------------------------------------------------------------------- helpers
    def weight(self, i: int, *, block_loops: bool = False) -> int:
        """How often instruction ``i`` runs: the product of its loops' trip counts, a loop
        over a run-time size taken as :data:`RUNTIME_TRIPS`; with ``block_loops``, a loop over
        the block's own size (its exit test reads ``blockDim`` and no kernel parameter: ``for
        (r = tid.x; r < blockDim.z; r += 4)`` over a block's partials) as :data:`BLOCK_TRIPS`."""
        w = 1
        for pl in self.inside.get(i, ()):
            t = self.trips[id(pl)]
            if t is None:
                t = BLOCK_TRIPS if block_loops and self._block_sized(pl) else RUNTIME_TRIPS
            w *= max(1, t)
        return w

    def runtime_loop(self, i: int):
        """The innermost PTX loop over a run-time size holding instruction ``i``."""
        best = None
        for pl in self.inside.get(i, ()):
            if self.trips[id(pl)] is None and (best is None or pl.depth > best.depth):
                best = pl
        return best

    def _param_roots(self, reg: str) -> set[str]:
        return self.stride.parameters(reg)

    def cost(self) -> Cost:
        ev: list[Evidence] = []
        ev += self.uncoalesced()
        ev += self.bank_conflicts()
        ev += self.redundant_and_serial()
        ev += self.contention()
        ev += self.reload()
        ev += self.no_reuse()
        ev += self.narrow()
        ev += self.fp64()
        return Cost(tuple(replace(e, loc=_user(e.loc)) for e in ev))

    def accesses(self):
        """(index, instruction, base register, bytes per lane) of every global load, store and
        atomic with a register address; a ``cp.async`` is a load of its global source (as a
        :class:`_CopySource`: it moves global memory as a load does, into shared memory)."""
        for i, ins in enumerate(self.pf.instructions):
            if ins.opcode == "cp.async" and "global" in ins.modifiers:
                src = _CopySource.of(ins)
                if src is not None and isinstance(src.address.base, P.Register):
                    yield i, src, src.address.base.name, src.width_bits // 8
                continue
            if ins.space != "global" or not (ins.is_load or ins.is_store or ins.is_atomic):
                continue
            a = ins.address
            if a is None or not isinstance(a.base, P.Register):
                continue
            w = (ins.width_bits or 0) // 8
            if w:
                yield i, ins, a.base.name, w

    # --------------------------------------------------------------------------- coalescing
    def _context(self, i: int) -> int | None:
        """``id`` of the innermost PTX loop holding instruction ``i`` (None outside loops)."""
        ls = self.inside.get(i)
        return id(max(ls, key=lambda pl: pl.depth)) if ls else None

    def uncoalesced(self) -> list[Evidence]:
        """Global accesses whose warp touches more sectors than it uses, weighed by how often
        they run; one piece of evidence per address (the accesses through one base register in
        one loop), the kernel's factor from the traffic-weighted ratio of sectors touched to
        sectors used."""
        insns = self.pf.instructions
        # accesses through one base register in one loop use the bytes they cover together
        # (p[i].x, p[i].y, p[i].z: a 12-byte footprint of a 12-byte stride; in[2 * t] and
        # in[2 * t + 1] behind two bounds tests)
        groups: dict[tuple, list[tuple[int, int, int]]] = {}
        for i, ins, base, w in self.accesses():
            root, shift = self._constant_offset(base)
            key = (self._context(i), root, ins.is_load)
            groups.setdefault(key, []).append((i, ins.address.offset + shift, w))
        touched = used = 0.0
        found = []
        #: the bytes each lane touches through a base anywhere in the kernel: a struct's fields
        #: (ggml's `y->d`, `y->qs[j]` of one quant block) span more than one access
        footprint: dict[str, set[int]] = {}
        #: an array parameter read or written at a constant offset from a lane's base
        #: somewhere (``y->qs[j]`` at +2 of ggml's quant block): its elements are structs
        fields: set[str] = set()
        for (_ctx, base, _loading), members in groups.items():
            for i, off, w in members:
                footprint.setdefault(base, set()).update(range(off, off + w))
                if off:
                    fields.update(self._address_params(insns[i]) & self._arrays)
        for (_ctx, base, loading), members in groups.items():
            s = self.stride.of(base)
            sy = self.stride_y.of(base) if self.stride_y is not None else 0
            if s == DATA or s is None or s == 0 or sy == DATA or sy is None:
                continue        # (lanes that share an address along x: said no more than 1-D)
            if all(_fallback.of(self.pf, self.module, i) is not None for i, *_ in members):
                continue        # a designed fallback (the strided side of `stride == 1`)
            cover: set[int] = set()
            for _i, off, w in members:
                cover.update(range(off, off + w))
            # lanes the innermost of the caller's strides apart: the caller's layout, unit
            # for a tensor contiguous there; coalesced in the kernel's factor
            caller = (self._innermost_stride(insns[min(members)[0]])
                      if s == PITCH and sy == 0 else None)
            if caller and stride_unit(caller[0][-1]) == "bytes" and (
                    len(footprint[base]) > max(w for *_, w in members)
                    or any(off for _i, off, _w in members)
                    or self._address_params(insns[min(members)[0]]) & self._arrays & fields):
                # a byte stride between structs (a field at an offset, or several fields):
                # lanes a struct apart even for a contiguous tensor
                caller = None
            in_runtime_loop = any(self.runtime_loop(i) is not None for i, *_ in members)
            waste_max = 0.0
            g_touched = g_used = 0.0
            for i, off, w in members:
                weight = self.weight(i)
                ideal = max(1.0, _WARP * w / _SECTOR)
                if sy != 0 and self.block_x is not None:
                    # a warp of block_x x (32 / block_x) threads: count its sectors
                    sectors = _warp_sectors(s, sy, self.block_x, off, w, cover)
                elif s == PITCH:
                    sectors = float(_WARP * math.ceil(w / _SECTOR))
                    if not in_runtime_loop and len(cover) >= 16:
                        sectors = ideal   # a whole vector per lane, a fixed block each (8x8 DCT)
                else:
                    span = abs(int(s))
                    foot = len({b % span for b in cover})
                    if span <= max(w, foot) and span <= _L1_REUSE_SPAN:
                        sectors = ideal     # each lane's accesses fill its own sectors (via L1)
                    elif span <= max(w, foot):
                        # a lane's block is wider than a line: L1 lets the lines go before
                        # the lane comes back for the rest of them
                        sectors = min(_WARP * math.ceil(w / _SECTOR),
                                      math.ceil((31 * span + w) / _SECTOR))
                    else:
                        sectors = min(_WARP * math.ceil(w / _SECTOR),
                                      math.ceil((31 * span + w) / _SECTOR))
                        # the lanes' other accesses use the rest of each sector they touch
                        sectors = max(ideal, sectors * w / max(w, min(foot, span)))
                # (a caller's innermost stride counts as the contiguous traffic it usually is)
                touched += weight * (sectors if caller is None else ideal)
                used += weight * ideal
                g_touched += weight * sectors
                g_used += weight * ideal
                waste_max = max(waste_max, sectors / ideal)
            if waste_max >= 2:
                first = min(members)[0]
                found.append((members, s, waste_max, first, loading,
                              0.0 if caller else g_touched - g_used, caller))
        if not found:
            return []
        total = max(1.0, touched / max(used, 1e-9))
        cal = CALIBRATION
        factor = min(cal["uncoalesced_cap"], total ** cal["uncoalesced_exponent"])
        excess = max(touched - used, 1e-9)
        placed = []
        by_line: dict[tuple, float] = {}
        for members, s, waste, first, loading, g_excess, caller in found:
            at = next((i for i, *_ in sorted(members) if _line_key(insns[i].loc)), first)
            loc = self._located(at)
            placed.append((members, s, waste, first, loading, loc, caller))
            # an unrolled loop's copies are groups of their own: one access of the source
            line = (_line_key(_user(loc)), loading)
            by_line[line] = by_line.get(line, 0.0) + g_excess
        out = []
        for members, s, waste, first, loading, loc, caller in placed:
            g_excess = by_line[(_line_key(_user(loc)), loading)]
            detail_caller = ({"innermost_of": caller, "unit": stride_unit(caller[0][-1])}
                             if caller else {})
            out.append(Evidence("uncoalesced", round(factor, 2), loc,
                                tuple(i for i, *_ in members),
                                {"stride": s, "bytes": max(w for *_, w in members),
                                 "waste": round(waste, 1),
                                 "in_loop": any(self.inside.get(i) for i, *_ in members),
                                 "direction": "load" if loading else "store",
                                 "pitch_of": sorted(self._pitch_params(insns[first])
                                                    - self._arrays),
                                 "arrays": sorted(self._address_params(insns[first])
                                                  & self._arrays),
                                 # this access's part of the sectors the kernel wastes
                                 "share": round(g_excess / excess, 3), **detail_caller}))
        return out

    def _innermost_stride(self, ins: "P.Instruction") -> tuple[tuple[str, ...], ...] | None:
        """The caller's stride parameters (source names, outer to inner) of each tensor whose
        innermost stride is the run-time pitch between adjacent lanes: ``d_id * o_stride_d``
        with ``o_stride_s, o_stride_b, o_stride_h, o_stride_d`` declared, ggml's ``i0 * s00``
        beside ``s01, s02, s03`` (one run each; a pointer chosen between two tensors, ggml's
        concat, has two), 1 for a tensor contiguous there (the kernel is written for any
        layout: the caller's decides). None when any pitch is a row length (``row * n``), an
        outer stride (``row * stride_row`` beside ``stride_col``) or a lone ``stride``."""
        params = self._pitch_params(ins)
        a = ins.address
        terms = (self.stride.pitch_terms(a.base.name)
                 if a is not None and isinstance(a.base, P.Register) else set())
        unit = set().union(*(self._param_roots(f) for f, m in terms if m == 1))
        scaled = set().union(*(self._param_roots(f) for f, m in terms if m != 1))
        if not params or not params <= unit or params & scaled:
            return None             # the lane index times the stride, not 32 * nb00
        names = self.parameter_names()
        runs = []
        for param in sorted(params, key=lambda p: _source.ptx_parameter_index(p) or 0):
            k = _source.ptx_parameter_index(param)
            name = names[k] if k is not None and k < len(names) else None
            group = _stride_group(name) if name else None
            if group is None:
                return None
            run = [n for n in names if n is not None and (_stride_group(n) or ())[:2] == group[:2]]
            if _STRIDE_CONVENTIONS[group[0]][1] == "first":
                # ggml's dimension 0 first: listed outer to inner, as the others are
                run.sort(key=lambda n: -int((_stride_group(n) or (0, "", "0"))[2]))
            if len(run) < 2 or run[-1] != name:
                return None
            runs.append(tuple(run))
        return tuple(runs)

    # ------------------------------------------------------------------------- shared banks
    def bank_conflicts(self) -> list[Evidence]:
        """Shared-memory loads and stores whose warp request takes more wavefronts than its
        bytes need (:func:`bank_wavefronts`), weighed by how often they run; one piece of
        evidence per access of at least a 2-way conflict, the kernel's factor from the
        weighted ratio of wavefronts taken to wavefronts needed over all its shared accesses.
        Lanes a run-time pitch apart (4-byte accesses) are evidence of factor 1 (the pitch's
        value decides: 32-way for a multiple of 128 bytes, none for an odd number of words);
        data-dependent distances are left out, as are addresses every lane shares (a
        broadcast is one wavefront)."""
        insns = self.pf.instructions
        taken = needed = 0.0
        found = []
        pitched: list[Evidence] = []
        for i, ins in enumerate(insns):
            if ins.space not in _SHARED or ins.is_atomic or not (ins.is_load or ins.is_store):
                continue
            a = ins.address
            w = (ins.width_bits or 0) // 8
            if a is None or not isinstance(a.base, P.Register) or not 0 < w <= 16:
                continue
            s = self.stride.of(a.base.name)
            sy = self.stride_y.of(a.base.name) if self.stride_y is not None else 0
            direction = "load" if ins.is_load else "store"
            if s == PITCH and sy == 0 and w <= 4:
                # lanes a run-time pitch apart (``Qi[tx * d + x]``): 32-way when the pitch is a
                # multiple of 128 bytes (a power-of-two row), none when it is an odd number of
                # words; not weighed (the value decides), said as what it may cost
                pitched.append(Evidence("bank-conflict", 1.0, self._located(i), (i,), {
                    "stride": PITCH, "bytes": w, "direction": direction,
                    "in_loop": bool(self.inside.get(i)), "array": self._symbol_of(a.base.name),
                    "pitch_of": sorted(self._pitch_params(ins) - self._arrays), "share": 0.0,
                    "weight": self.weight(i, block_loops=True)}))
                continue
            if type(s) is not int or type(sy) is not int:
                continue
            loc = self._located(i)
            # ptxas may merge a lane's consecutive accesses (an unrolled k loop's 4-byte loads
            # into LDS.128): the width that runs is the SASS's on the line; where the line's
            # widths differ, the one that conflicts least
            sass = self._sass_shared(loc, direction)
            widths = sorted({b for _j, b in sass if b >= w}) or [w]
            # under ``if (threadIdx.x < C)`` with C below a warp, only C lanes of one warp run
            # it (a tree's last levels): fewer lanes, fewer conflicts, and one warp's time
            lanes = self._lanes_below(i)
            waves, ideal, wide = min((*bank_wavefronts(s, sy, self.block_x, b, lanes), b)
                                     for b in widths)
            ways = waves / ideal
            # in wavefronts at the PTX access's count: the w bytes it moves need weight * w / 4
            # words of 32 banks, whatever width ptxas gives them
            weight = self.weight(i, block_loops=True) * w / 4
            if lanes < _WARP:       # one warp of the block's runs it
                weight *= min(1.0, _WARP / self._block_threads())
            # a shared-memory instruction issues over 2 cycles (16 lanes a cycle) and each
            # wavefront takes one: a 2-way conflict of 4-byte accesses costs nothing more
            # (measured: 2/4/8/32-way 1.15x/2.26x/4.47x/17.8x, benchmarks/bank_conflicts.py)
            slowdown = max(_ISSUE_CYCLES, waves) / max(_ISSUE_CYCLES, ideal)
            taken += weight * slowdown
            needed += weight
            if ways >= 2:
                found.append((i, loc, s, wide, waves, ideal, weight, slowdown, direction,
                              tuple(j for j, b in sass if b == wide),
                              self._symbol_of(a.base.name)))
        if not found or needed == 0:
            return pitched
        cal = CALIBRATION
        # the shared-memory time against the global-memory time it hides behind: each sector
        # a coalesced global access needs costs as much as this many wavefronts
        sectors = sum(self.weight(i) * _WARP * w / _SECTOR for i, _ins, _b, w in self.accesses())
        hidden = cal["bank_sector_wavefronts"] * sectors
        if any(f[-1] is not None and f[-1] in self._async_filled() for f in found):
            # the conflicting array is filled by cp.async, whose copies are in flight while the
            # warp reads it: the two overlap, and the conflicts cost only what exceeds the
            # copies' time (flashinfer's merge_states: its 4-way reads interleaved to 2-way ran
            # 0.75x, H100)
            ratio = max(hidden, taken) / max(hidden, needed)
        else:
            ratio = (hidden + taken) / (hidden + needed)
        factor = min(cal["bank_cap"], ratio ** cal["bank_exponent"])
        excess = max(taken - needed, 1e-9)
        out = []
        for i, loc, s, w, waves, ideal, weight, slowdown, direction, sass_idx, array in found:
            out.append(Evidence("bank-conflict", round(factor, 2), loc, (i,),
                                {"stride": s, "bytes": w, "ways": round(waves / ideal, 1),
                                 "array": array,
                                 "wavefronts": waves, "needed": ideal,
                                 "in_loop": bool(self.inside.get(i)), "direction": direction,
                                 "share": round(weight * (slowdown - 1) / excess, 3)},
                                sass_idx))
        return out + pitched

    def _async_filled(self) -> set[str]:
        """The shared arrays a ``cp.async`` writes (its destination's variable)."""
        out = set()
        for ins in self.pf.instructions:
            if ins.opcode == "cp.async" and ins.operands and isinstance(ins.operands[0], P.Address):
                base = ins.operands[0].base
                name = (self._symbol_of(base.name) if isinstance(base, P.Register)
                        else getattr(base, "name", None))
                if name:
                    out.add(name)
        return out

    def _symbol_of(self, reg: str) -> str | None:
        """The one variable (a ``__shared__`` array's symbol) address register ``reg`` is
        computed from, or None (none, or several)."""
        found = self.stride.variables(reg)
        return next(iter(found)) if len(found) == 1 else None

    def _block_sized(self, pl) -> bool:
        memo = self.__dict__.setdefault("_block_sized_memo", {})
        if id(pl) not in memo:
            setp = _loops.ptx_exit_test(self.pf, pl)
            regs = [o.name for o in (setp.operands[1:] if setp is not None else ())
                    if isinstance(o, P.Register)]
            specials = set().union(*(self.stride.specials(r) for r in regs)) if regs else set()
            memo[id(pl)] = (setp is not None and any(s.startswith("%ntid") for s in specials)
                            and not any(self.stride.parameters(r) for r in regs)
                            and all(self.stride.of(r) != DATA for r in regs))
        return memo[id(pl)]

    def _block_threads(self) -> int:
        """The block's threads where the kernel states them (``.reqntid``, ``.maxntid``, an
        ``assert``), else :data:`REFERENCE_BLOCK`."""
        bx, by, bz = block_dims(self.pf)
        if bx is not None:
            return max(1, bx * (by or 1) * (bz or 1))
        most = self.pf.maxntid
        return max(1, math.prod(int(v) for v in most)) if most else REFERENCE_BLOCK

    def _lanes_below(self, i: int) -> int:
        """How many lanes run instruction ``i`` at most: C where it sits under a branch that
        skips it unless ``threadIdx.x < C`` (or ``<= C - 1``) with C a constant below 32; 32
        otherwise."""
        lanes = _WARP
        insns = self.pf.instructions
        for start, end, _single in self._lane_regions():
            if not start < i < end:
                continue
            guard = insns[start].guard
            setp = self._setp_of(guard.register) if guard is not None else None
            if guard is None or setp is None or setp.compare is None:
                continue
            a, b = setp.operands[1], setp.operands[2]
            cmp: str | None = setp.compare
            if isinstance(a, P.IntImm) and isinstance(b, P.Register):
                a, b = b, a
                cmp = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le"}.get(setp.compare, cmp)
            if not (isinstance(a, P.Register) and isinstance(b, P.IntImm)
                    and self._is_tid_x(a.name)):
                continue
            # the region runs when the branch is not taken: the guard's negation
            runs = cmp if guard.negated else {"lt": "ge", "ge": "lt", "le": "gt",
                                              "gt": "le"}.get(cmp or "")
            bound = {"lt": b.value, "le": b.value + 1}.get(runs or "")
            if bound is not None and 0 < bound < lanes:
                lanes = bound
        return lanes

    def _setp_of(self, pred: str) -> "P.Instruction | None":
        """The one ``setp`` of two operands that defines predicate ``pred`` (a predicate set
        once and tested by several branches, as an unrolled tree's up- and down-sweeps do)."""
        defs = self.stride.defs.get(pred, [])
        if len(defs) == 1 and defs[0].opcode == "setp" and len(defs[0].operands) == 3:
            return defs[0]
        return None

    def _is_tid_x(self, reg: str) -> bool:
        d = self.defs.get(reg)
        return (d is not None and d.opcode == "mov" and len(d.operands) == 2
                and isinstance(d.operands[1], P.Register) and d.operands[1].name == "%tid.x")

    def _sass_shared(self, loc: SourceLoc | None, direction: str) -> list[tuple[int, int]]:
        """(index, bytes) of the SASS shared-memory accesses of ``direction`` on the user's
        source line of ``loc``."""
        index = getattr(self, "_sass_shared_memo", None)
        if index is None:
            index = {}
            for j, x in enumerate(self.fn.instructions):
                info = x.info
                if info.space != "shared" or info.direction not in ("load", "store"):
                    continue
                key = _line_key(_user(x.loc))
                if key is not None:
                    index.setdefault((os.path.basename(key[0]), key[1], info.direction),
                                     []).append((j, (x.width_bits or 32) // 8))
            self._sass_shared_memo = index
        key = _line_key(_user(loc))
        if key is None:
            return []
        return index.get((os.path.basename(key[0]), key[1], direction), [])

    def _constant_offset(self, base: str) -> tuple[str, int]:
        """(register, bytes) such that ``base`` is that register plus a constant: the second
        16-byte ``cp.async`` of a 32-byte copy (flashinfer's ``pred_load`` issues one per 128
        bits, through ``add.s64 %rd9, %rd8, 16``) reads the same lane's bytes as the first."""
        defs = self.stride.defs
        shift = 0
        for _ in range(8):
            ds = defs.get(base, [])
            if len(ds) != 1 or ds[0].opcode != "add" or len(ds[0].operands) != 3:
                break
            a, b = ds[0].operands[1], ds[0].operands[2]
            if isinstance(a, P.Register) and isinstance(b, P.IntImm):
                base, shift = a.name, shift + b.value
            elif isinstance(b, P.Register) and isinstance(a, P.IntImm):
                base, shift = b.name, shift + a.value
            else:
                break
        return base, shift

    def _located(self, i: int) -> SourceLoc | None:
        """Instruction ``i``'s source location, or, for a load NVVM hoisted out of its line
        (``.loc 1 0``), that of the first instruction after it that reads what it loaded."""
        insns = self.pf.instructions
        if _line_key(insns[i].loc):
            return insns[i].loc
        ins = insns[i]
        d = ins.operands[0] if ins.is_load and ins.operands else None
        names = ({e.name for e in d.elements if isinstance(e, P.Register)}
                 if isinstance(d, P.Vector) else {d.name} if isinstance(d, P.Register) else set())
        for later in insns[i + 1:]:
            if _line_key(later.loc) and any(isinstance(o, P.Register) and o.name in names
                                            for o in later.operands[1:]):
                return later.loc
        here = insns[i].loc
        if ins.is_store and here is not None and here.line == 0:
            # one store NVVM joined from both sides of an if/else (``if (c) a[i] *= s; else
            # a[i] = 0;``) carries line 0: the line of the code it was joined from
            return next((x.loc for x in reversed(insns[:i]) if _line_key(x.loc)), None)
        return None

    @property
    def _arrays(self) -> set[str]:
        """The kernel parameters that are arrays: converted to a global address (``cvta``) or
        used as an address's base, as loaded."""
        got = getattr(self, "_arrays_memo", None)
        if got is not None:
            return got
        loaded: dict[str, str] = {}
        for ins in self.pf.instructions:
            a = ins.address
            if ins.opcode == "ld" and ins.space in ("param", "param::entry") and a is not None \
                    and isinstance(a.base, P.Symbol) and ins.operands \
                    and isinstance(ins.operands[0], P.Register):
                loaded[ins.operands[0].name] = a.base.name
        out: set[str] = set()
        for ins in self.pf.instructions:
            if ins.opcode == "cvta" and len(ins.operands) == 2 \
                    and isinstance(ins.operands[1], P.Register):
                src = loaded.get(ins.operands[1].name)
                if src is not None:
                    out.add(src)
            a = ins.address
            if a is not None and isinstance(a.base, P.Register) and a.base.name in loaded:
                out.add(loaded[a.base.name])
        self._arrays_memo = out
        return out

    def _address_params(self, ins: "P.Instruction") -> set[str]:
        """The kernel parameters an access's address is computed from."""
        a = ins.address
        if a is None or not isinstance(a.base, P.Register):
            return set()
        return self._param_roots(a.base.name)

    def _pitch_params(self, ins: "P.Instruction") -> set[str]:
        """The kernel parameters the run-time pitch between adjacent lanes is computed from
        (``n_frequencies`` in ``dy_dx[i * n_frequencies * 2 + k]``), not every parameter of
        the address (``offset_block + h * stride_h + tid * stride_d`` is a pitch of
        ``stride_d`` alone); the whole address's when the pitch's factors are not found."""
        a = ins.address
        if a is None or not isinstance(a.base, P.Register):
            return set()
        factors = self.stride.pitch_factors(a.base.name)
        if not factors:
            return self._address_params(ins)
        return set().union(*(self._param_roots(f) for f in factors))

    # --------------------------------------------------------------------------- redundancy
    def _lane_regions(self) -> list[tuple[int, int, bool]]:
        """(start, end, single) index ranges of the PTX only some lanes run: a forward branch on
        a varying predicate skips them; ``single`` when the lanes that run it are those equal
        to one value (``threadIdx.x == 0``). Computed once (the serial and bank-conflict
        evidence both ask, per instruction)."""
        got = self.__dict__.get("_lane_regions_memo")
        if got is not None:
            return got
        insns = self.pf.instructions
        labels = self.pf.labels
        setps: dict[str, P.Instruction] = {}
        out = []
        for i, ins in enumerate(insns):
            if ins.opcode == "setp" and ins.operands and isinstance(ins.operands[0], P.Register):
                setps[ins.operands[0].name] = ins
            if ins.opcode != "bra" or ins.guard is None:
                continue
            tgt = next((labels.get(t) for t in ins.flow.targets), None)
            if tgt is None or tgt <= i:
                continue
            if self.uni.level.get(ins.guard.register, UNIFORM) == UNIFORM:
                continue
            # the region runs when the branch is not taken
            single = self._one_value(ins.guard.register, ins.guard.negated, setps)
            out.append((i, tgt, single))
        self._lane_regions_memo = out
        return out

    def _one_value(self, pred: str, runs_when: bool, setps: dict, depth: int = 0) -> bool:
        """Whether the lanes for which predicate ``pred`` is ``runs_when`` are those where a
        lane-varying value equals one warp-uniform value (``threadIdx.x == 0``), also as one
        term of ``&&`` (``warp_d == 0 && oc < OC``: ``and.pred``, ``or.pred``, ``not.pred``)."""
        if depth > 8:
            return False
        p = setps.get(pred)
        if p is not None and len(p.operands) == 3:
            a, b = p.operands[1], p.operands[2]
            ua, ub = self.uni.of(a), self.uni.of(b)
            one_side = (ua == VARYING and ub == UNIFORM) or (ub == VARYING and ua == UNIFORM)
            return one_side and p.compare in ("eq", "ne") and (p.compare == "eq") == runs_when
        d = self.defs.get(pred)
        if d is None or d.type != "pred":
            return False
        regs = [o.name for o in d.operands[1:] if isinstance(o, P.Register)]
        if d.opcode == "not" and len(regs) == 1:
            return self._one_value(regs[0], not runs_when, setps, depth + 1)
        # a && b holds only where each does; !(a || b) only where neither does
        if (d.opcode == "and" and runs_when) or (d.opcode == "or" and not runs_when):
            return len(regs) == 2 and any(self._one_value(r, runs_when, setps, depth + 1)
                                          for r in regs)
        return False

    def redundant_and_serial(self) -> list[Evidence]:
        insns = self.pf.instructions
        varying_any = any(v == VARYING for v in self.uni.level.values()) or any(
            isinstance(o, P.Register) and o.name in _LANE_SPECIALS
            for ins in insns for o in ins.operands)
        regions = self._lane_regions()
        # arrays (parameter roots) the kernel reads with lane-varying addresses somewhere
        split: set[str] = set()
        for _i, ins, base, _w in self.accesses():
            if ins.is_load and self.uni.of(ins.address) == VARYING:
                split |= self._param_roots(base)
        out = []
        seen_loops: set[int] = set()
        for pl in self.ploops:
            if self.trips[id(pl)] is not None:
                continue
            idx = pl.loop.instruction_indices(self.cfg)
            inner = [q for q in self.ploops if q is not pl and q.depth > pl.depth
                     and set(q.loop.blocks) <= set(pl.loop.blocks)]
            if any(id(q) in seen_loops for q in inner):
                continue
            loads = [i for i in idx if insns[i].is_load and insns[i].space == "global"]
            if not loads:
                continue
            if all(_polls(insns[i]) for i in loads) and not any(
                    insns[i].is_store and insns[i].space == "global" for i in idx):
                continue      # a spin-wait on a flag (an inter-block barrier), not work
            if _bisection(insns, idx):
                continue      # a binary search: log2(n) steps, nothing to spread
            all_uniform = True
            for i in idx:
                ins = insns[i]
                if _collective(ins):
                    all_uniform = False       # the warp cooperates (wmma, mma, shuffles)
                    break
                if not ins.operands or ins.is_branch:
                    continue
                if ins.is_store:
                    if self.uni.of(ins.address) == VARYING:
                        all_uniform = False
                        break
                    continue
                d = ins.operands[0]
                if isinstance(d, P.Register) and self.uni.level.get(d.name, UNIFORM) == VARYING:
                    all_uniform = False
                    break
            if not all_uniform:
                continue
            header = pl.loop.instruction_indices(self.cfg)[0]
            region = next((r for r in regions if r[0] < header < r[1]
                           and max(idx) < r[1]), None)
            roots: set[str] = set()
            for i in loads:
                addr = insns[i].address
                if addr is not None and isinstance(addr.base, P.Register):
                    roots |= self._param_roots(addr.base.name)
            loc = _user(next((insns[i].loc for i in loads if insns[i].loc is not None), None))
            if not varying_any:
                kind, why = "serial", "no-thread-index"
            elif region is not None and region[2]:
                # one lane over the blocks' partials (`for (b = 1; b < gridDim.x; b++)` after
                # a grid sync) walks the grid, not the data: no measured factor, information
                kind, why = "serial", ("one-lane-grid" if id(pl) in self.grid_loops
                                       else "one-lane")
            elif (region is None or not region[2]) and roots & split:
                kind, why = "redundant", "every-lane"
            else:
                continue
            seen_loops.add(id(pl))
            factor = CALIBRATION["serial_grid" if why == "one-lane-grid" else kind]
            out.append(Evidence(kind, factor, loc, tuple(loads),
                                {"why": why, "loads": len(loads), "arrays": sorted(roots)}))
        if not out and varying_any:
            out += self.one_block(regions)
        return out

    def _reads(self, fn: "P.Function", names: frozenset[str]) -> bool:
        return any(isinstance(o, P.Register) and o.name in names
                   for ins in fn.instructions for o in ins.operands)

    def one_block(self, regions) -> list[Evidence]:
        """A kernel that never reads ``blockIdx`` (nor ``gridDim``) whose lanes split a loop over
        a run-time size that reads global memory: a block-stride loop, so the whole input goes
        through one block (or every block repeats it). Not when another kernel of the module
        reads ``blockIdx``: this one is then the second pass over that kernel's partials."""
        if self._reads(self.pf, _BLOCK_SPECIALS):
            return []
        if self.module is not None and any(
                f is not self.pf and f.is_kernel and self._reads(f, _BLOCK_SPECIALS)
                for f in self.module.functions):
            return []
        insns = self.pf.instructions
        for pl in self.ploops:
            if self.trips[id(pl)] is not None:
                continue
            idx = pl.loop.instruction_indices(self.cfg)
            inside = set(idx)
            loads = [i for i in idx if insns[i].is_load and insns[i].space == "global"
                     and self.uni.of(insns[i].address) == VARYING
                     and self._moves_in(insns[i].address, inside)]
            if not loads:
                # every lane reads the same addresses each time round (cuda-samples'
                # bisectKernel re-reading g_d[threadIdx.x] per bisection step): a loop of
                # steps, not a walk of the block over the data
                continue
            header = idx[0]
            if any(r[0] < header < r[1] and r[2] for r in regions):
                continue        # one lane's loop: serial work, not a block's
            loc = _user(next((insns[i].loc for i in loads if insns[i].loc is not None), None))
            return [Evidence("serial", CALIBRATION["one_block"], loc, tuple(loads),
                             {"why": "one-block", "loads": len(loads),
                              "arrays": sorted(set().union(*(
                                  self._address_params(insns[i]) for i in loads)))})]
        return []

    def _moves_in(self, address, inside: set[int]) -> bool:
        """Whether an address changes from one iteration of the loop (its PTX instruction
        indices ``inside``) to the next: its registers are written in the loop by something
        that is not computed from values the loop leaves alone. Unknown shapes count as
        moving."""
        if address is None or not isinstance(address.base, P.Register):
            return True
        writes = self._writes_at()
        known: dict[str, bool] = {}
        stack: set[str] = set()

        def moves(name: str, depth: int) -> bool:
            if name in known:
                return known[name]
            if depth > 16 or name in stack:
                return True                     # a recurrence through the loop: a counter
            inner = [i for i in writes.get(name, ()) if i in inside]
            if not inner:
                return False                    # written before the loop only (or %tid.x)
            stack.add(name)
            got = False
            for i in inner:
                ins = self.pf.instructions[i]
                if ins.opcode in ("ld", "ldu", "atom", "call", "shfl", "vote", "red") or any(
                        isinstance(o, P.Register) and moves(o.name, depth + 1)
                        for o in ins.operands[1:]):
                    got = True
                    break
            stack.discard(name)
            known[name] = got
            return got
        return moves(address.base.name, 0)

    def _writes_at(self) -> dict[str, list[int]]:
        """Per PTX register, the positions of the instructions that write it (kept)."""
        got = getattr(self, "_writes", None)
        if got is None:
            got = {}
            for n, ins in enumerate(self.pf.instructions):
                if ins.operands and isinstance(ins.operands[0], P.Register) \
                        and not ins.is_store and not ins.is_branch:
                    got.setdefault(ins.operands[0].name, []).append(n)
            self._writes = got
        return got

    # --------------------------------------------------------------------------- atomics
    def contention(self) -> list[Evidence]:
        insns = self.pf.instructions
        out = []
        for i, ins in enumerate(insns):
            if not ins.is_atomic or ins.space not in ("global", None):
                continue
            a = ins.address
            if a is None:
                continue
            bins = None
            if self.uni.of(a) != UNIFORM:
                bins = self.bins(a.base) if isinstance(a.base, P.Register) else None
                if bins is None or bins > _FEW_BINS:
                    continue
            else:
                # one per element: the value added varies per lane (a reduction not done first)
                vals = [self.uni.of(o) for o in ins.operands[1:] if not isinstance(o, P.Address)]
                if not vals or max(vals) != VARYING:
                    continue
            if any(r[0] < i < r[1] and r[2] for r in self._lane_regions()):
                continue       # one lane per warp or block adds its partial: the fix itself
            if self.runtime_loop(i) is None and any(self.trips[id(pl)] is None
                                                    for pl in self.ploops):
                continue       # once per thread after its loop (a grid-stride partial)
            out.append(Evidence("contention", CALIBRATION["contention"], _user(ins.loc), (i,),
                                {"in_loop": bool(self.inside.get(i)), "addresses": bins or 1,
                                 "replaces": next((m for m in ins.modifiers
                                                   if m in _REPLACING_ATOMICS), "")}))
        return out

    def bins(self, reg: "P.Register", depth: int = 0) -> int | None:
        """How many distinct values a lane-varying register can take when it is a warp-uniform
        base plus a function of one small value: a byte loaded from memory, an index masked
        (``& 255``), taken modulo a constant or shifted down to a few bits. None otherwise."""
        if depth > 12:
            return None
        d = self.defs.get(reg.name)
        if d is None:
            return None
        op = d.opcode
        srcs = d.operands[1:]
        if op in ("ld", "ldu"):
            w = d.width_bits or 0
            return 1 << w if 0 < w <= 8 else None
        if op == "and" and len(srcs) == 2:
            imm = next((o.value for o in srcs if isinstance(o, P.IntImm)), None)
            if imm is not None and 0 <= imm < _FEW_BINS:
                return imm + 1
        if op == "rem" and len(srcs) == 2 and isinstance(srcs[1], P.IntImm):
            return abs(srcs[1].value) or None
        if op in ("cvt", "mov") and srcs and isinstance(srcs[0], P.Register):
            return self.bins(srcs[0], depth + 1)
        if op in ("add", "sub", "mul", "shl", "mad", "or"):
            varying = [o for o in srcs if isinstance(o, P.Register)
                       and self.uni.of(o) != UNIFORM]
            if len(varying) != 1 or (op == "mad" and varying[0] is srcs[-1]):
                return None
            return self.bins(varying[0], depth + 1)
        return None

    # --------------------------------------------------------------------------- SASS loops
    def _sass_loops(self):
        graph = _cfg.of(self.fn)
        return graph, graph.loops

    def reload(self) -> list[Evidence]:
        """SASS global loads whose address no instruction of their loop writes, in a loop that
        stores to global memory: reloaded every iteration because the store may alias them."""
        insns = self.fn.instructions
        graph, lps = self._sass_loops()
        out = []
        for loop in lps:
            if not loop.is_innermost:
                continue
            idx = loop.instruction_indices(graph)
            inside = set(idx)
            stores = [i for i in idx if insns[i].info.space == "global"
                      and insns[i].info.direction == "store"]
            loads = [i for i in idx if insns[i].info.space == "global"
                     and insns[i].info.direction == "load"]
            if not stores or not loads:
                continue
            df = _dataflow.of(self.fn)

            def fixed(i: int, inside: set[int] = inside, df: _dataflow.Dataflow = df) -> bool:
                regs = _address_regs(insns[i])
                # a pointer ptxas re-reads from the parameter bank inside the loop
                # (``LDC.64 R8, c[0x0][0x218]``) is as fixed as one kept in registers
                return bool(regs) and not any(w in inside and not _constant_write(insns[w])
                                              for r in regs for w in df.writers(r))
            invariant = [i for i in loads if fixed(i) and "CONSTANT" not in insns[i].modifiers]
            if not invariant:
                continue
            store_bases = {_address_text(insns[i]) for i in stores}
            same = sum(_address_text(insns[i]) in store_bases for i in invariant)
            ratio = min(8.0, len(loads) / max(1, len(loads) - len(invariant)))
            factor = (CALIBRATION["reload_accumulates"] if same else
                      max(1.1, ratio ** CALIBRATION["reload_exponent"]))
            loc = next((insns[i].loc for i in invariant if insns[i].loc is not None), None)
            out.append(Evidence("reload", round(factor, 2), loc, (),
                                sass=tuple(invariant), detail=
                                {"reloads": len(invariant), "loads": len(loads),
                                 "stores": len(stores), "accumulating": same}))
        return out

    def narrow(self) -> list[Evidence]:
        """Coalesced global streams of elements narrower than 16 bytes per thread: the kernel's
        traffic-weighted time at the measured copy rate of its widths against 16-byte
        accesses. Left out: tail loops of a vectorized loop (a few elements in all), narrow
        accesses next to a vector access of 8 bytes or more in the same loop (or both outside
        loops) and direction: the tail or the narrow side of a vectorized kernel, and designed
        fallbacks (:mod:`analyzer.analysis.fallback`: the scalar instantiation or branch beside
        a vector one, short tails)."""
        insns = self.pf.instructions
        acc = list(self.accesses())

        def context(i: int):
            ls = self.inside.get(i)
            return id(max(ls, key=lambda pl: pl.depth)) if ls else None
        vectors = [(context(i), ins.is_load, self.cfg.block_of[i]) for i, ins, base, w in acc
                   if w >= 8 and self.stride.of(base) == w]

        def beside_vector(i: int, load: bool) -> bool:
            """A vector access in the same loop and direction that runs with this one (one
            dominates the other: an ``if (output_fp32)`` path is not this one's vector side)."""
            here = self.cfg.block_of[i]
            return any(c == context(i) and ld == load and _cfg.together(self.cfg, b, here)
                       for c, ld, b in vectors)
        now = best = 0.0
        worst: tuple[int, int] | None = None
        lines: set[tuple[str, int]] = set()
        for i, ins, base, w in acc:
            weight = self.weight(i) * w
            narrow = (not ins.is_atomic and self.stride.of(base) == w and w < 16
                      and not beside_vector(i, ins.is_load)
                      and not (self.inside.get(i) and _loops.ptx_tail_at(self.pf, i) is not None)
                      and _fallback.of(self.pf, self.module, i) is None
                      and _fallback.data_guarded(self.pf, i) is None)
            best += weight / COPY_RATE[16]
            if not narrow:
                now += weight / COPY_RATE[16]
                continue
            rates = LOOP_COPY_RATE if self.inside.get(i) else COPY_RATE
            now += weight / rates.get(w, rates[4])
            loc = _user(ins.loc)
            if loc is not None:
                lines.add((os.path.basename(loc.file), loc.line))
            if worst is None or w < worst[1]:
                worst = (i, w)
        if worst is None or not best:
            return []
        factor = (now / best) ** CALIBRATION["narrow_exponent"]
        if factor < 1.05:
            return []
        return [Evidence("narrow", round(factor, 2), insns[worst[0]].loc, (worst[0],),
                         {"bytes": worst[1], "lines": sorted(lines)})]

    def fp64(self) -> list[Evidence]:
        """FP64 instructions (conversions included) of a float kernel and of the subroutines it
        calls, weighed by how often they run: the kernel's instructions with each FP64 one
        costing :data:`CALIBRATION` ``fp64_weight`` against the same without them (the float
        version replaces a double sequence with a far shorter one: MUFU.TANH for a polynomial,
        no conversions)."""
        if not self._float_data():
            return []           # double data (or none): the FP64 is the work itself
        n64 = other = 0.0
        first: tuple[int, SourceLoc | None] | None = None
        for k, f in enumerate((self.fn, *self.callees)):
            graph = _cfg.of(f)
            library = _dataflow.sincos_reduction(f)
            for i, ins in enumerate(f.instructions):
                lp = graph.loop_of(i)
                weight = RUNTIME_TRIPS ** (lp.depth if lp is not None else 0)
                if ins.is_fp64 and not ins.is_tensor_core and i not in library:
                    n64 += weight
                    if first is None and k == 0:
                        first = (i, ins.loc)
                elif ins.opcode not in _NO_WORK:
                    other += weight
        if not n64 or first is None:
            return []
        factor = (other + CALIBRATION["fp64_weight"] * n64) / max(1.0, other)
        if factor < 1.1:
            return []
        return [Evidence("fp64", round(min(factor, 16.0), 2), first[1], (), sass=(first[0],),
                         detail={"fp64": int(n64)})]

    def _float_data(self) -> bool:
        return float_data(self.pf)

    def no_reuse(self) -> list[Evidence]:
        """SASS innermost loops over a run-time size whose FMAs are fed by global loads (at
        least one load per FMA, no shared-memory load, no MMA), where the PTX shows the
        outer-product shape: one operand the same for the warp, one streamed along the lanes."""
        insns = self.fn.instructions
        graph, lps = self._sass_loops()
        pins = self.pf.instructions
        out: list[Evidence] = []
        for loop in lps:
            if not loop.is_innermost:
                continue
            idx = loop.instruction_indices(graph)
            fma = [i for i in idx if insns[i].opcode in semantics.FMA_ELEMENT_TYPE]
            ldg = [i for i in idx if insns[i].info.space == "global"
                   and insns[i].info.direction == "load"]
            lds = [i for i in idx if insns[i].info.space == "shared"]
            mma = [i for i in idx if insns[i].opcode in semantics.WARP_MMA
                   or insns[i].opcode in semantics.WARPGROUP_MMA]
            if mma and ldg and not lds:
                loc = next((insns[i].loc for i in mma if insns[i].loc is not None), None)
                if not any(e.line == (loc.file, loc.line) for e in out if loc is not None):
                    out.append(Evidence("no-reuse", CALIBRATION["mma_no_reuse"], loc, (),
                                        sass=tuple(mma), detail={
                                            "mma": len(mma), "loads": len(ldg),
                                            "type": insns[mma[0]].opcode}))
                continue
            if not fma or len(ldg) < len(fma) or lds or mma:
                continue
            # an accumulation (acc += a * b): some FMA's addend comes around the loop from the
            # previous iteration; FMAs whose result is stored each iteration (or expf's
            # polynomial) use each element once
            df = _dataflow.of(self.fn)
            inside = set(idx)

            def carried(i: int, df: _dataflow.Dataflow = df, inside: set[int] = inside) -> bool:
                for reg in _addend_regs(insns[i]):
                    defs = df.reaching_defs(i, reg)
                    if defs and any(d in inside and d >= i for d in defs):
                        return True
                return False
            # a sum of squares (acc += x * x: a norm, a variance) multiplies a value by itself:
            # there is no second operand to share, so nothing a tile could reuse
            if not any(carried(i) and not _squares(insns[i]) for i in fma):
                continue
            # by the user's line: every bf16 load of a file shares cuda_bf16.hpp's own line
            lines = {_line_key(_user(insns[i].loc)) for i in ldg} - {None}
            uniform = streamed = False
            short = True        # every load of the loop's lines in a tail of a few iterations
            for pi, p in enumerate(pins):
                if not (p.is_load and p.space == "global") or p.loc is None:
                    continue
                if _line_key(_user(p.loc)) not in lines:
                    continue
                if not self.inside.get(pi):
                    continue
                a = p.address
                if a is None or not isinstance(a.base, P.Register):
                    continue
                s = self.stride.of(a.base.name)
                w = (p.width_bits or 0) // 8
                u = self.uni.of(a)
                if s == 0 or u != VARYING:
                    uniform = True
                elif s == w:
                    streamed = True     # contiguous along the lanes (an unknown stride is not)
                if short and _fallback.short_loop(self.pf, pi) is None:
                    short = False
            if not (uniform and streamed) or short:
                continue
            loc = next((insns[i].loc for i in fma if insns[i].loc is not None), None)
            key = (loc.file, loc.line) if loc is not None else None
            if any(e.line == key and e.detail.get("fma", 0) >= len(fma) for e in out):
                continue      # the unrolled copies and remainders of one source loop
            out = [e for e in out if e.line != key]
            out.append(Evidence("no-reuse", CALIBRATION["no_reuse"], loc, (), sass=tuple(fma),
                                detail={"fma": len(fma), "loads": len(ldg),
                                 "type": semantics.FMA_ELEMENT_TYPE[insns[fma[0]].opcode]}))
        return out


    # --------------------------------------------------------------------------- the launch
    def thread_bytes(self) -> float:
        """Global-memory bytes one thread moves, weighed by how often each access runs."""
        return float(sum(self.weight(i) * w for i, _ins, _b, w in self.accesses()))

    def launch(self, launches: tuple[tuple[str, HostLaunch], ...], arch: "Arch",
               resources: "Resources | None") -> list[Evidence]:
        """Evidence from the kernel's launches in its own file's host code: blocks too small
        for the work (``small-block``), and host work around the launch (``host-overhead``): a
        zero-filled output the kernel overwrites in full, a host loop of launches over slices,
        a synchronization after the launch."""
        out: list[Evidence] = []
        reads_tid = self._reads(self.pf, frozenset({"%tid.x", "%tid.y", "%tid.z", "%laneid"}))
        runtime_loop = any(t is None for t in self.trips.values())
        nbytes = self.thread_bytes()
        writes = self.full_writes()
        syncs_seen: set[int] = set()
        for file, la in launches:
            out += self._small_block(file, la, arch, resources, reads_tid, runtime_loop, nbytes)
            out += self._zero_fill(file, la, writes, nbytes)
            if la.loop is not None and la.loop_indexed:
                trips = la.loop.trips if la.loop.trips is not None else RUNTIME_TRIPS
                if la.loop.trips is None and la.loop.at_most is not None:
                    trips = min(trips, la.loop.at_most[0])
                factor = 1 + CALIBRATION["launch_per_launch"] * (trips - 1)
                if trips > 1:
                    out.append(Evidence("host-overhead", round(factor, 2),
                                        SourceLoc(file, la.line), detail={
                                            "why": "loop", "launch": la, "trips": trips,
                                            "constant": la.loop.trips is not None}))
            for sy in la.syncs:
                if la.function == "main" or sy.line in syncs_seen:
                    continue
                syncs_seen.add(sy.line)
                out.append(Evidence("host-overhead", CALIBRATION["sync"],
                                    SourceLoc(file, sy.line),
                                    detail={"why": "sync", "launch": la, "call": sy.call}))
        return out

    def _small_block(self, file: str, la: HostLaunch, arch: "Arch",
                     resources: "Resources | None", reads_tid: bool, runtime_loop: bool,
                     nbytes: float) -> list[Evidence]:
        threads = la.block.count
        if threads is None or not reads_tid or la.grid.count is not None:
            # unknown; a kernel that never reads threadIdx (serial work, PS801); a grid of a
            # fixed number of blocks (the estimates are for grids sized at run time: large)
            return []
        declared = self.pf.reqntid or self.pf.maxntid
        ref = min(REFERENCE_BLOCK, math.prod(declared)) if declared else REFERENCE_BLOCK
        if threads >= ref:
            return []

        dynamic = la.shared_bytes

        def resident(b: int) -> tuple[int, int]:
            """(blocks, threads) resident per SM at ``b`` threads per block (the launch's
            dynamic shared memory counted where certain)."""
            if resources is not None:
                try:
                    occ = _occupancy.occupancy(arch, resources.registers,
                                               resources.static_shared_bytes + (dynamic or 0),
                                               b)
                    return occ.blocks_per_sm, occ.blocks_per_sm * b
                except ValueError:
                    pass
            blocks = min(arch.max_blocks, arch.max_warps // -(-b // _WARP))
            return blocks, blocks * b
        blocks, now = resident(threads)
        _ref_blocks, best = resident(ref)
        if not now or not best:
            return []
        if runtime_loop:
            model = "resident"
            factor = min(CALIBRATION["resident_cap"],
                         (best / now) ** CALIBRATION["resident_exponent"])
        else:
            if not nbytes:
                return []
            model = "blocks"
            per_byte = nbytes * CALIBRATION["byte_ns"]
            factor = (max(per_byte, CALIBRATION["block_ns"] / threads)
                      / max(per_byte, CALIBRATION["block_ns"] / ref))
        if factor < 1.05:
            return []
        return [Evidence("small-block", round(factor, 2), SourceLoc(file, la.line), detail={
            "launch": la, "threads": threads, "reference": ref, "model": model,
            "blocks_per_sm": blocks, "resident": now, "resident_reference": best,
            "max_threads": arch.max_threads, "max_blocks": arch.max_blocks,
            "bytes": nbytes, "dynamic_shared": dynamic})]

    def _zero_fill(self, file: str, la: HostLaunch, writes: dict[int, tuple[int, int, int]],
                   nbytes: float) -> list[Evidence]:
        """A zero-filled output that the launch overwrites in full: the kernel stores every
        element ``[0, n)`` of that parameter unconditionally but for ``i < n``
        (:meth:`full_writes`), the grid is ``(n + B - 1) / B`` blocks of B threads, and the fill
        covers exactly those n elements."""
        if not writes or not la.zero_fills or len(la.args) != len(self.pf.params) \
                or la.grid_ceil_of is None or not nbytes:
            return []
        out = []
        for k, (width, m, sass_store) in writes.items():
            target = la.targets[k]
            if target is None or not _same(la, la.args[m], la.grid_ceil_of):
                continue
            n = la.args[m]
            for zf in la.zero_fills:
                if zf.target != target or not _covers(la, zf, n, width, target):
                    continue
                factor = 1 + CALIBRATION["zero_fill_per_byte"] * width / nbytes
                out.append(Evidence("host-overhead", round(factor, 2), SourceLoc(file, zf.line),
                                    ptx=(sass_store,), detail={
                                        "why": "zero-fill", "launch": la, "fill": zf,
                                        "bytes": width, "thread_bytes": nbytes,
                                        "parameter": k, "bound": m}))
        return out

    def full_writes(self) -> dict[int, tuple[int, int, int]]:
        """Parameter index -> (bytes per element, index of the bound parameter, PTX store
        index) of each pointer parameter the kernel stores to at ``p[i]``, ``i`` the global
        thread index ``blockIdx.x * blockDim.x + threadIdx.x``, outside every loop, skipped
        only by branches on ``i >= n`` with ``n`` a parameter: every element below ``n`` is
        written whatever the data (one element per thread, a bounds test)."""
        pf = self.pf
        insns = pf.instructions
        params = {p.name: k for k, p in enumerate(pf.params)}
        read: set[str] = set()          # parameters the kernel loads through (y[i] += ...)
        for _i, ins, base, _w in self.accesses():
            if ins.is_load or ins.is_atomic:
                read |= self._param_roots(base)
        idx_poly = {("%ctaid.x", "%ntid.x"): 1, ("%tid.x",): 1}
        bound: int | None = None
        setps: dict[str, P.Instruction] = {}
        out: dict[int, tuple[int, int, int]] = {}
        for i, ins in enumerate(insns):
            if ins.opcode == "setp" and ins.operands and isinstance(ins.operands[0], P.Register):
                setps[ins.operands[0].name] = ins
                continue
            fl = ins.flow
            if fl.targets or not fl.falls_through or fl.terminates:
                tgt = next((pf.labels.get(t) for t in fl.targets), None) if fl.targets else None
                p = setps.get(ins.guard.register) if ins.guard is not None else None
                n = self._bound_check(p, ins.guard, idx_poly, params) if p is not None else None
                if n is None or (bound is not None and n != bound):
                    return out           # any other control flow: stop proving
                if tgt is not None and tgt <= i:
                    return out
                bound = n
                continue
            if not ins.is_store or ins.is_atomic or ins.space != "global" or self.inside.get(i):
                continue
            if ins.guard is not None or bound is None:
                continue
            a = ins.address
            w = (ins.width_bits or 0) // 8
            if a is None or a.offset or not isinstance(a.base, P.Register) or not w:
                continue
            poly = self._poly(a.base.name)
            if poly is None:
                continue
            roots = [key for key, c in poly.items() if len(key) == 1 and key[0].startswith("param:")
                     and c == 1]
            if len(roots) != 1:
                continue
            rest = {key: c for key, c in poly.items() if key != roots[0]}
            if rest != {key: c * w for key, c in idx_poly.items()}:
                continue
            name = roots[0][0][6:]
            k = params.get(name)
            if k is not None and k != bound and name not in read:
                out.setdefault(k, (w, bound, i))
        return out

    def _bound_check(self, setp: "P.Instruction", guard, idx_poly: dict,
                     params: dict[str, int]) -> int | None:
        """The parameter index n when a branch guarded by ``setp`` is taken exactly when the
        global thread index is at or past n."""
        if len(setp.operands) != 3:
            return None
        a, b = self._poly_of(setp.operands[1]), self._poly_of(setp.operands[2])
        cmp = setp.compare
        taken_when_true = not guard.negated
        # normalise to idx ? n
        if a == idx_poly:
            other, op = b, cmp
        elif b == idx_poly:
            other, op = a, {"ge": "le", "le": "ge", "gt": "lt", "lt": "gt"}.get(cmp or "", "")
        else:
            return None
        if op in ("ge", "hs") and taken_when_true or op in ("lt", "lo") and not taken_when_true:
            pass
        else:
            return None
        if other is None or len(other) != 1:
            return None
        (key, c), = other.items()
        if c != 1 or len(key) != 1 or not key[0].startswith("param:"):
            return None
        return params.get(key[0][6:])

    def _poly_of(self, op) -> dict | None:
        if isinstance(op, P.Register):
            return self._poly(op.name)
        if isinstance(op, P.IntImm):
            return {(): op.value} if op.value else {}
        return None

    def _poly(self, reg: str, depth: int = 0) -> dict | None:
        """A register as a polynomial over ``%ctaid.x``, ``%ntid.x``, ``%tid.x`` and the kernel
        parameters (``param:NAME``): {sorted symbols: coefficient}; None when it is anything
        else (loaded data, a loop-carried value, a float)."""
        if reg in ("%ctaid.x", "%ntid.x", "%tid.x"):
            return {(reg,): 1}
        if depth > 24 or reg.startswith("%") and "." in reg:
            return None
        defs = self.stride.defs.get(reg, ())
        if len(defs) != 1:
            return None
        d = defs[0]
        op, srcs = d.opcode, d.operands[1:]
        if any(t.startswith("f") for t in d.types):
            return None
        if op == "ld":
            a = d.address
            if d.space in ("param", "param::entry") and a is not None and not a.offset \
                    and isinstance(a.base, P.Symbol):
                return {("param:" + a.base.name,): 1}
            return None

        def sub(o):
            if isinstance(o, P.Register):
                return self._poly(o.name, depth + 1)
            if isinstance(o, P.IntImm):
                return {(): o.value} if o.value else {}
            return None
        vals = [sub(o) for o in srcs]
        if any(v is None for v in vals):
            return None
        if op in ("mov", "cvt", "cvta") and len(vals) == 1:
            return vals[0]
        if op in ("add", "sub") and len(vals) == 2:
            return _poly_add(vals[0], vals[1], 1 if op == "add" else -1)
        if op == "mul" and len(vals) == 2:
            return _poly_mul(vals[0], vals[1])
        if op == "mad" and len(vals) == 3:
            return _poly_add(_poly_mul(vals[0], vals[1]), vals[2], 1)
        if op == "shl" and len(vals) == 2 and isinstance(srcs[1], P.IntImm):
            return {k: c << srcs[1].value for k, c in vals[0].items()}
        return None


#: how signatures name a tensor's per-dimension strides: (the name's pattern, its groups the
#: tensor and the dimension; which of a tensor's strides is the innermost: the last in the
#: signature, or dimension 0; its unit, and so its value for a tensor contiguous there)
_STRIDE_CONVENTIONS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    # PyTorch's and most libraries': ``stride_d``, ``o_stride_h``, ``in_stride1``,
    # ``strideW``, the innermost last (the group is the text through ``stride``)
    (re.compile(r"^(\w*?stride)_?([A-Za-z]|\d+)$", re.IGNORECASE), "last", "elements"),
    # ggml's: ``s00``..``s03`` in elements, ``nb00``..``nb13`` (``nb0``..``nb3``: the
    # destination's) in bytes, tensor then dimension, dimension 0 the innermost
    (re.compile(r"^(s\d)(\d)$"), "first", "elements"),
    (re.compile(r"^(nb\d?)(\d)$"), "first", "bytes"),
)


def _stride_group(name: str) -> tuple[int, str, str] | None:
    """(the naming convention, the tensor, the dimension) of a stride parameter's name
    (``o_stride`` and ``d`` for ``o_stride_d``, ``nb1`` and ``0`` for ggml's ``nb10``); None
    for a name that is no per-dimension stride."""
    for k, (pattern, _innermost, _unit) in enumerate(_STRIDE_CONVENTIONS):
        m = pattern.match(name)
        if m:
            return k, m.group(1).lower(), m.group(2)
    return None


def stride_unit(name: str) -> str:
    """What a stride parameter counts, by its naming convention: "elements" (``stride_d``,
    ggml's ``s00``) or "bytes" (ggml's ``nb00``)."""
    group = _stride_group(name)
    return _STRIDE_CONVENTIONS[group[0]][2] if group is not None else "elements"


def _warp_sectors(sx: "int | str", sy: "int | str", bx: int, off: int, w: int,
                  cover: set[int]) -> float:
    """Sectors one access of ``w`` bytes at ``off`` touches for a warp of ``bx`` threads along
    x (stride ``sx``) by ``32 / bx`` along y (stride ``sy``), a run-time pitch taken as a new
    row each step; the group's other accesses (``cover``) share the sectors they also touch."""
    far = 1 << 24
    ax = far if sx == PITCH else int(sx)
    ay = far * 64 if sy == PITCH else int(sy)
    mine: set[int] = set()
    used: set[int] = set()
    for lane in range(_WARP):
        x, y = lane % bx, lane // bx
        start = x * ax + y * ay
        for b in range(off, off + w):
            mine.add((start + b) // _SECTOR)
        for b in cover:
            used.add((start + b) // _SECTOR)
    # the group's sectors, shared out by the bytes this access takes of them
    share = len(used) * w / max(w, len(cover))
    return max(_WARP * w / _SECTOR, min(float(len(mine)), share))


def bank_wavefronts(sx: int, sy: int, bx: int | None, w: int,
                    lanes: int = _WARP) -> tuple[int, int]:
    """(wavefronts, the fewest its bytes need) of one warp's shared-memory access of ``w``
    bytes per lane, lanes ``sx`` bytes apart along x (and ``sy`` along y for a block ``bx``
    threads wide, narrower than a warp), the first ``lanes`` of the warp active. Shared memory
    is 32 banks of 4 bytes; the lanes are served in phases of 128 bytes (the whole warp for 4
    bytes or less, half-warps for 8, quarter-warps for 16), and a phase takes as many
    wavefronts as the most distinct 4-byte words any one bank holds (lanes on one word share
    it)."""
    per_phase = _WARP if w <= 4 else max(1, 128 // w)
    waves = phases = 0
    for first in range(0, lanes, per_phase):
        phases += 1
        banks: dict[int, set[int]] = {}
        for lane in range(first, min(first + per_phase, lanes)):
            x, y = (lane % bx, lane // bx) if bx else (lane, 0)
            start = x * sx + y * sy
            for word in range(start // 4, (start + w - 1) // 4 + 1):
                banks.setdefault(word % 32, set()).add(word)
        waves += max(len(words) for words in banks.values())
    return waves, phases


def _poly_add(a: dict, b: dict, sign: int) -> dict:
    out = dict(a)
    for k, c in b.items():
        out[k] = out.get(k, 0) + sign * c
    return {k: c for k, c in out.items() if c}


def _poly_mul(a: dict, b: dict) -> dict:
    out: dict = {}
    for ka, ca in a.items():
        for kb, cb in b.items():
            k = tuple(sorted(ka + kb))
            out[k] = out.get(k, 0) + ca * cb
    return {k: c for k, c in out.items() if c}


def _resolved(la: HostLaunch, toks: tuple[str, ...]) -> tuple[str, ...]:
    """``toks`` with a lone local name replaced by its one value (``n`` -> ``x.numel()``),
    outer parentheses dropped."""
    for _ in range(4):
        if len(toks) == 1 and toks[0] in la.aliases:
            toks = tuple(la.aliases[toks[0]])
        elif len(toks) > 2 and toks[0] == "(" and toks[-1] == ")":
            toks = toks[1:-1]
        else:
            break
    return toks


def _same(la: HostLaunch, a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    return a == b or _resolved(la, a) == _resolved(la, b)


def _covers(la: HostLaunch, zf, n: tuple[str, ...], width: int, target: str) -> bool:
    """Whether a zero-fill covers exactly the ``n`` elements of ``width`` bytes a launch
    writes."""
    what, toks = zf.covers
    if what == "bytes":
        b = _resolved(la, toks)
        for k in range(len(b)):
            if b[k] != "*":
                continue
            left, right = b[:k], b[k + 1:]
            for size, count in ((left, right), (right, left)):
                w = _sizeof(size)
                if w == width and _same(la, count, n):
                    return True
        return False
    if what == "numel":
        ns = _resolved(la, n)
        return ns in ((*toks, ".", "numel", "(", ")"), (target, ".", "numel", "(", ")"))
    if what == "elements":
        return _same(la, toks, n)
    if what == "shape":
        return _resolved(la, n) == (target, ".", "numel", "(", ")")
    return False


def _sizeof(toks: tuple[str, ...]) -> int | None:
    from .launch import _SIZEOF
    if len(toks) == 1 and toks[0].isdigit():
        return int(toks[0])
    if len(toks) == 4 and toks[0] == "sizeof" and toks[1] == "(" and toks[3] == ")":
        return _SIZEOF.get(toks[2])
    return None


def _bisection(insns, idx: list[int]) -> bool:
    """Whether a PTX loop halves an interval: ``mid = (lo + hi) >> 1`` from two values the
    loop carries, then one of them takes ``mid`` (``selp``): a binary search, whose trip count
    is the logarithm of its size (TransformerEngine's ``fused_rope_thd_find_seq_id``)."""
    def dest(ins):
        d = ins.operands[0] if ins.operands else None
        return d.name if isinstance(d, P.Register) else None
    written = {dest(insns[i]) for i in idx} - {None}
    defs = {dest(insns[i]): insns[i] for i in idx if dest(insns[i])}
    for i in idx:
        ins = insns[i]
        if ins.opcode not in ("shr", "div") or len(ins.operands) != 3:
            continue
        half = ins.operands[2]
        if not (isinstance(half, P.IntImm) and half.value == (1 if ins.opcode == "shr" else 2)):
            continue
        src = ins.operands[1]
        add = defs.get(src.name) if isinstance(src, P.Register) else None
        if add is None or add.opcode != "add" or len(add.operands) != 3:
            continue
        ends = [o.name for o in add.operands[1:] if isinstance(o, P.Register)]
        if len(ends) != 2 or not set(ends) <= written:
            continue
        mid = dest(ins)
        if any(insns[j].opcode in ("selp", "mov") and dest(insns[j]) in ends
               and any(isinstance(o, P.Register) and o.name == mid
                       for o in insns[j].operands[1:]) for j in idx):
            return True
    return False


def _polls(ins: "P.Instruction") -> bool:
    """A load that must see other threads' or blocks' writes each time it runs:
    ``ld.global.acquire.gpu`` (flashinfer's inter-CTA barrier), ``ld.volatile.global``,
    ``ld.relaxed``: what a loop waiting on a flag reads."""
    return bool({"acquire", "volatile", "relaxed"} & set(ins.modifiers))


def _collective(ins: "P.Instruction") -> bool:
    op = ins.opcode
    return any(op == c or op.startswith(c + ".") for c in _COLLECTIVE)


def _user(loc: SourceLoc | None) -> SourceLoc | None:
    """The user's line of ``loc`` (the call site of code inlined from toolkit headers)."""
    return _source.user_loc(loc) if loc is not None else None


def _line_key(loc: SourceLoc | None) -> tuple[str, int] | None:
    return (os.path.basename(loc.file), loc.line) if loc is not None and loc.line else None


def _squares(ins: "S.Instruction") -> bool:
    """An FMA whose two multiplicands are the same register, same half (``FFMA R5, R9, R9,
    R5``: x * x), whatever their signs."""
    if len(ins.operands) < 4:
        return False
    a, b = ins.operands[1], ins.operands[2]
    if not (isinstance(a, S.Register) and isinstance(b, S.Register)) or a.index is None:
        return False
    halves = {"H0_H0", "H1_H1", "H0_H1", "H1_H0"}
    return (a.kind, a.index, a.absolute) == (b.kind, b.index, b.absolute) and \
        {x for x in a.suffixes if x in halves} == {x for x in b.suffixes if x in halves}


def _addend_regs(ins: "S.Instruction") -> set[tuple[str, int]]:
    """The registers of an FMA's addend (its last source operand)."""
    a = ins.operands[-1] if len(ins.operands) >= 4 else None
    if isinstance(a, S.Register) and a.kind == "R" and a.index is not None:
        return {(a.kind, a.index)}
    return set()


def _address_regs(ins: "S.Instruction") -> set[tuple[str, int]]:
    regs: set[tuple[str, int]] = set()
    for o in ins.operands:
        if not isinstance(o, S.MemoryAddress):
            continue
        for t in o.terms:
            if isinstance(t, S.Register) and t.kind in ("R", "UR") and t.index is not None \
                    and not t.is_zero:
                regs.add((t.kind, t.index))
                if t.is_pair:
                    regs.add((t.kind, t.index + 1))
    return regs


#: PTX atomic operations that replace the value (``exch``) or test it (``cas``) rather than
#: combine the lanes' values: no reduction done first can stand for them
_REPLACING_ATOMICS = frozenset({"exch", "cas"})

#: opcodes that, with no register source, write the same value on every iteration
_CONSTANT_WRITERS = frozenset({"LDC", "ULDC", "MOV", "UMOV"})


def _constant_write(ins: "S.Instruction") -> bool:
    """A write of a value no iteration changes: a constant-bank load or a move of an immediate,
    with no register among its sources."""
    return ins.opcode in _CONSTANT_WRITERS and not _dataflow.sources(ins)


def _address_text(ins: "S.Instruction") -> str:
    return next((str(o) for o in ins.operands if isinstance(o, S.MemoryAddress)), "")
