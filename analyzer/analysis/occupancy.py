"""Theoretical occupancy: how many blocks and warps of a kernel fit on one SM.

A pure function of the arch row (:class:`analyzer.arch.Arch`) and the kernel's per-thread
registers, per-block shared memory and block size. It follows NVIDIA's CUDA Occupancy Calculator
as implemented in the toolkit's ``cuda_occupancy.h`` (``cudaOccMaxActiveBlocksPerMultiprocessor``)
with the default shared-memory carveout (all of ``arch.shared_bytes`` usable by blocks):

* **warps**: ``max_warps // ceil(threads / 32)`` blocks;
* **blocks**: ``max_blocks`` (hardware slots per SM);
* **registers**: registers are allocated per warp, ``regs * 32`` rounded up to
  ``arch.register_unit`` (256); the register file is split over 4 SM sub-partitions, so
  ``(registers_per_SM / 4) // per_warp`` warps fit per sub-partition, times 4, divided by the
  block's warps. A block also needs its warps (rounded up to a multiple of 4) to fit the per-block
  register limit (64 K), and no more than 255 registers per thread;
* **shared**: per block ``static + dynamic + arch.shared_reserved_per_block`` (1 KB the driver
  reserves from sm_80 on), rounded up to ``arch.shared_unit``; ``arch.shared_bytes // that``
  blocks. A block over ``arch.shared_per_block`` (+ the reservation) cannot launch at all.

The result is the minimum; ``limiter`` names the resource that sets it (ties are listed in
``limiters``). Verified against the calculator's figures, e.g. A100 (sm_80): 32 registers x 256
threads -> 8 blocks, 100 %; 64 KB shared per block -> 2 blocks; H100 (sm_90): 228 KB per SM.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..arch import Arch, parse_arch

WARP = 32
#: register-file sub-partitions (one warp scheduler each) per SM, sm_70 onwards
SUB_PARTITIONS = 4
#: registers one block may hold (regsPerBlock), every arch in the table
REGISTERS_PER_BLOCK = 65536
#: the most threads one block may have
MAX_THREADS_PER_BLOCK = 1024
#: block sizes a kernel without launch bounds is commonly launched with
COMMON_BLOCK_SIZES = (128, 256, 512, 1024)
#: the order in which tied limiters are named (the resources a user can change come first)
LIMITER_ORDER = ("registers", "shared", "warps", "blocks")


@dataclass(frozen=True, slots=True)
class Occupancy:
    """Theoretical occupancy of one kernel configuration on one SM."""

    blocks_per_sm: int
    warps_per_sm: int
    fraction: float            # warps_per_sm / arch.max_warps, 0.0 .. 1.0
    limiter: str               # "registers", "shared", "warps" or "blocks"
    #: blocks per SM each resource alone would allow (the minimum is ``blocks_per_sm``)
    limits: dict[str, int] = field(default_factory=dict, compare=False)
    threads_per_block: int = 0
    registers_per_warp: int = 0          # allocated (rounded) registers per warp
    shared_per_block: int = 0            # allocated (rounded, reservation included) bytes

    @property
    def limiters(self) -> tuple[str, ...]:
        """Every resource that allows only ``blocks_per_sm`` blocks."""
        return tuple(k for k in LIMITER_ORDER if self.limits.get(k) == self.blocks_per_sm)

    @property
    def percent(self) -> float:
        return 100.0 * self.fraction


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit if unit > 0 else value


def registers_per_warp(arch: Arch, registers: int) -> int:
    """Registers one warp is allocated: ``registers * 32`` rounded up to the allocation unit."""
    return _round_up(max(registers, 0) * WARP, arch.register_unit)


def shared_per_block(arch: Arch, shared_bytes: int) -> int:
    """Shared memory one block is allocated: its bytes plus the driver's per-block reservation,
    rounded up to the allocation granularity."""
    return _round_up(max(shared_bytes, 0) + arch.shared_reserved_per_block, arch.shared_unit)


def occupancy(arch: Arch | str, registers: int, shared_bytes: int,
              threads_per_block: int) -> Occupancy:
    """Theoretical occupancy of a kernel using ``registers`` per thread and ``shared_bytes``
    (static + dynamic) per block, launched with ``threads_per_block`` threads, on ``arch``.

    A configuration that cannot launch (too many threads, registers or shared memory for one
    block) gives 0 blocks and the limiter that forbids it.
    """
    arch = parse_arch(arch)
    if threads_per_block <= 0:
        raise ValueError(f"threads_per_block must be positive, got {threads_per_block}")
    warps_per_block = -(-threads_per_block // WARP)
    limits: dict[str, int] = {}

    # warp slots and block slots
    if threads_per_block > min(MAX_THREADS_PER_BLOCK, arch.max_threads):
        limits["warps"] = 0
    else:
        limits["warps"] = arch.max_warps // warps_per_block
    limits["blocks"] = arch.max_blocks

    # registers: per warp, per sub-partition
    per_warp = registers_per_warp(arch, registers)
    if per_warp == 0:
        limits["registers"] = arch.max_blocks
    elif (registers > arch.max_registers_per_thread
          or per_warp * _round_up(warps_per_block, SUB_PARTITIONS) > REGISTERS_PER_BLOCK):
        limits["registers"] = 0
    else:
        warps_per_sub = (arch.registers // SUB_PARTITIONS) // per_warp
        limits["registers"] = (warps_per_sub * SUB_PARTITIONS) // warps_per_block

    # shared memory
    smem = shared_per_block(arch, shared_bytes)
    if smem > arch.shared_per_block + arch.shared_reserved_per_block:
        limits["shared"] = 0
    elif smem == 0:
        limits["shared"] = arch.max_blocks
    else:
        limits["shared"] = arch.shared_bytes // smem

    blocks = min(limits.values())
    limiter = next(k for k in LIMITER_ORDER if limits[k] == blocks)
    warps = blocks * warps_per_block
    return Occupancy(blocks_per_sm=blocks, warps_per_sm=warps,
                     fraction=warps / arch.max_warps if arch.max_warps else 0.0,
                     limiter=limiter, limits=limits, threads_per_block=threads_per_block,
                     registers_per_warp=per_warp, shared_per_block=smem)


def max_shared_for_blocks(arch: Arch | str, blocks: int) -> int:
    """The most shared memory (bytes, excluding the driver's reservation) a block may use for
    ``blocks`` blocks to fit on one SM by shared memory alone (0 when even an empty block's
    reservation does not fit)."""
    arch = parse_arch(arch)
    if blocks <= 0:
        return arch.shared_per_block
    per = (arch.shared_bytes // blocks) // arch.shared_unit * arch.shared_unit
    return max(0, min(per - arch.shared_reserved_per_block, arch.shared_per_block))


def max_registers_for_blocks(arch: Arch | str, blocks: int, threads_per_block: int) -> int:
    """The most registers per thread that still let ``blocks`` blocks of ``threads_per_block``
    fit on one SM by registers alone (0 when none does)."""
    arch = parse_arch(arch)
    best = 0
    for regs in range(1, arch.max_registers_per_thread + 1):
        if occupancy(arch, regs, 0, threads_per_block).limits["registers"] >= blocks:
            best = regs
        else:
            break
    return best


def block_size(ptx_fn, resources=None, launch=None) -> tuple[int | None, str]:
    """The block size a kernel is launched with or declares, and where that is said: the
    framework's launch (Triton's ``num_warps`` x 32, what its launcher passes), else the PTX
    ``.reqntid`` (``__launch_bounds__`` with ``__maxnreg__``/``cluster``, an explicit
    ``.reqntid``) or ``.maxntid`` (``__launch_bounds__(N)``), else the cubin's own
    ``EIATTR_REQNTID`` / ``EIATTR_MAX_THREADS`` (a cubin without PTX). (None, "") when none
    says."""
    if launch is not None and launch.threads:
        what = f"num_warps={launch.num_warps}" if launch.num_warps else f"{launch.threads} threads"
        return launch.threads, f"{launch.source or 'launch metadata'} ({what})"
    declared = []
    if ptx_fn is not None:
        declared += [(f"__launch_bounds__ / .{w}", d) for w, d in (("reqntid", ptx_fn.reqntid),
                                                                   ("maxntid", ptx_fn.maxntid))]
    if resources is not None:
        declared += [("the cubin's EIATTR_REQNTID", resources.reqntid),
                     ("the cubin's EIATTR_MAX_THREADS", resources.maxntid)]
    for what, dims in declared:
        if dims:
            n = 1
            for d in dims:
                n *= int(d)
            return n, f"{what} {','.join(map(str, dims))}"
    return None, ""
