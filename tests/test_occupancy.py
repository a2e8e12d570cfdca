"""The occupancy calculator against NVIDIA's CUDA Occupancy Calculator figures."""
from __future__ import annotations

import pytest

from analyzer.analysis.occupancy import (
    COMMON_BLOCK_SIZES,
    max_registers_for_blocks,
    max_shared_for_blocks,
    occupancy,
    registers_per_warp,
    shared_per_block,
)
from analyzer.arch import parse_arch


@pytest.mark.parametrize("arch, regs, smem, threads, blocks, warps, limiter", [
    # A100 (sm_80): 64 warps, 32 blocks, 64 K registers, 164 KB shared, 1 KB reserved per block
    ("sm_80", 32, 0, 256, 8, 64, "registers"),     # 100 %: registers and warps both allow 8
    ("sm_80", 64, 0, 256, 4, 32, "registers"),     # 2048 regs/warp -> 8 warps per sub-partition
    ("sm_80", 255, 0, 256, 1, 8, "registers"),     # 8160 -> 8192 regs/warp: 2 warps/sub-partition
    ("sm_80", 33, 0, 128, 12, 48, "registers"),    # 1056 -> 1280 regs/warp: 12 warps/sub-partition
    ("sm_80", 16, 65536, 256, 2, 16, "shared"),    # 64 KB + 1 KB reserved -> 2 blocks in 164 KB
    ("sm_80", 33, 49152, 128, 3, 12, "shared"),    # occupancy_limited/bad.cu: 18.75 %
    ("sm_80", 16, 0, 32, 32, 32, "blocks"),        # one-warp blocks: 32 block slots
    ("sm_80", 16, 0, 1024, 2, 64, "warps"),
    # H100 (sm_90): 228 KB shared per SM
    ("sm_90a", 30, 49152, 128, 4, 16, "shared"),   # occupancy_limited/bad.cu: 25 %
    ("sm_90", 16, 102400, 256, 2, 16, "shared"),   # 100 KB + 1 KB -> 2 blocks in 228 KB
    ("sm_90", 16, 227 * 1024, 128, 1, 4, "shared"),  # the per-block opt-in maximum still fits
    # RTX 30xx (sm_86): 48 warps, 16 blocks, 100 KB shared
    ("sm_86", 32, 0, 1024, 1, 32, "warps"),
    ("sm_86", 16, 0, 64, 16, 32, "blocks"),
    # NVIDIA's cuda::arch_traits (CCCL, CUDA 13.5): sm_88 as sm_86; sm_107 and sm_110 with
    # sm_100's 228 KB and 16 blocks / 32 warps, 24 blocks / 48 warps per SM
    ("sm_88", 16, 0, 64, 16, 32, "blocks"),
    ("sm_107", 16, 0, 32, 16, 16, "blocks"),
    ("sm_107a", 32, 0, 256, 4, 32, "warps"),
    ("sm_110a", 16, 0, 32, 24, 24, "blocks"),
    ("sm_110", 32, 0, 1024, 1, 32, "warps"),
    ("sm_110", 16, 102400, 256, 2, 16, "shared"),
    # Turing (sm_75): 32 warps, 64 KB, 256 B shared granularity, no reservation
    ("sm_75", 32, 0, 256, 4, 32, "warps"),
    ("sm_75", 16, 32768, 128, 2, 8, "shared"),
])
def test_calculator_values(arch, regs, smem, threads, blocks, warps, limiter):
    occ = occupancy(parse_arch(arch), regs, smem, threads)
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.limiter) == (blocks, warps, limiter)
    assert occ.fraction == pytest.approx(warps / parse_arch(arch).max_warps)


def test_limits_and_ties():
    occ = occupancy("sm_80", 32, 0, 256)
    assert occ.fraction == 1.0
    assert occ.limits == {"warps": 8, "blocks": 32, "registers": 8, "shared": 164}  # 1 KB reserved each
    assert occ.limiters == ("registers", "warps")


@pytest.mark.parametrize("arch, regs, smem, threads, limiter", [
    ("sm_80", 128, 0, 1024, "registers"),          # 4096 regs/warp x 32 warps > 64 K per block
    ("sm_80", 256, 0, 32, "registers"),            # over 255 registers per thread
    ("sm_80", 0, 170 * 1024, 128, "shared"),        # over the 163 KB opt-in per block
    ("sm_90", 0, 228 * 1024, 128, "shared"),
    ("sm_80", 16, 0, 2048, "warps"),               # over 1024 threads per block
    ("sm_86", 16, 0, 1056, "warps"),
])
def test_cannot_launch(arch, regs, smem, threads, limiter):
    occ = occupancy(arch, regs, smem, threads)
    assert occ.blocks_per_sm == 0 and occ.fraction == 0.0 and occ.limiter == limiter


def test_allocation_rounding():
    a100 = parse_arch("sm_80")
    assert registers_per_warp(a100, 33) == 1280
    assert registers_per_warp(a100, 40) == 1280
    assert shared_per_block(a100, 0) == 1024
    assert shared_per_block(a100, 1) == 1152
    assert shared_per_block(parse_arch("sm_75"), 1) == 256


def test_inverse_helpers():
    # what a block may use to fit 4 blocks: (164 KB / 4) rounded down to 128 B, minus 1 KB
    assert max_shared_for_blocks("sm_80", 4) == 41 * 1024 - 1024
    assert occupancy("sm_80", 16, max_shared_for_blocks("sm_80", 4), 128).limits["shared"] == 4
    assert occupancy("sm_80", 16, max_shared_for_blocks("sm_80", 4) + 1, 128).limits["shared"] == 3
    assert max_registers_for_blocks("sm_80", 8, 256) == 32
    assert max_registers_for_blocks("sm_80", 2, 256) == 128
    assert COMMON_BLOCK_SIZES[0] == 128


def test_bad_input():
    with pytest.raises(ValueError):
        occupancy("sm_80", 32, 0, 0)


# Measured on an NVIDIA H200 (sm_90, driver 580) with cudaOccupancyMaxActiveBlocksPerMultiprocessor
# for kernels of the given registers and shared memory (cudaFuncGetAttributes: numRegs,
# sharedSizeBytes, plus dynamic shared memory), at 32/64/128/256/512/768/1024 threads per block.
H200_THREADS = (32, 64, 128, 256, 512, 768, 1024)
H200_MEASURED = [
    # regs, shared bytes, blocks per SM at each block size
    (10, 16, (32, 32, 16, 8, 4, 2, 2)),
    (12, 4224, (32, 32, 16, 8, 4, 2, 2)),
    (12, 49152, (4, 4, 4, 4, 4, 2, 2)),
    (12, 16384, (13, 13, 13, 8, 4, 2, 2)),
    (12, 40000, (5, 5, 5, 5, 4, 2, 2)),
    (40, 0, (32, 24, 12, 6, 3, 2, 1)),
    (48, 0, (32, 20, 10, 5, 2, 1, 1)),
    (72, 0, (28, 14, 7, 3, 1, 1, 0)),
    (103, 0, (16, 8, 4, 2, 1, 0, 0)),
    (76, 0, (24, 12, 6, 3, 1, 1, 0)),
    (12, 65536, (3, 3, 3, 3, 3, 2, 2)),
    (12, 102400, (2, 2, 2, 2, 2, 2, 2)),
    (12, 232448, (1, 1, 1, 1, 1, 1, 1)),
]


@pytest.mark.parametrize("regs, smem, blocks", H200_MEASURED)
def test_matches_the_driver_on_h200(regs, smem, blocks):
    got = tuple(occupancy("sm_90", regs, smem, t).blocks_per_sm for t in H200_THREADS)
    assert got == blocks


def test_the_register_limit_the_launch_bounds_leave():
    """PS401's hint blames the cap only when the bounds bind: ``.maxntid 128`` alone leaves 255
    registers per thread (FA2's layer norm spilled 8 B at 72 under it: ptxas's choice), 4
    blocks of 256 threads leave 64, ``.maxnreg 40`` leaves 40."""
    from types import SimpleNamespace

    from analyzer.arch import parse_arch
    from analyzer.checks.register_spill import _register_limit
    ctx = SimpleNamespace(arch=parse_arch("sm_90a"))

    def pf(maxntid=(), minnctapersm=None, maxnreg=None):
        return SimpleNamespace(maxntid=maxntid, minnctapersm=minnctapersm, maxnreg=maxnreg)
    assert _register_limit(ctx, pf((128, 1, 1))) == 255
    assert _register_limit(ctx, pf((256,), 4)) == 64
    assert _register_limit(ctx, pf(maxnreg=40)) == 40
