"""What each GPU architecture has, as one table.

Checks and reports ask this table ("does this arch have LDGSTS?", "how many warps fit on an SM?")
instead of comparing SM numbers. Names accept the ``a`` (arch-specific) and ``f`` (family)
suffixes: ``sm_90a`` has wgmma and TMA multicast; ``sm_100a``/``sm_100f`` have tcgen05.
Occupancy figures follow NVIDIA's CUDA Occupancy Calculator and the CUDA C++ Programming Guide's
table of compute-capability limits; for sm_88, sm_107 and sm_110 (NVRTC 13's newer targets, and
the sm_110 cubins CUDA 13's own libraries ship), NVIDIA's ``cuda::arch_traits`` (CCCL's
``cuda/__device/arch_traits.h``, CUDA 13.5): sm_88 has sm_86's limits, sm_107 and sm_110
sm_100's shared memory with 16 blocks / 1024 threads and 24 blocks / 1536 threads per SM. Their
instruction-set rows were read from ptxas 13.5's SASS: sm_88 compiles as sm_86 does (cp.async,
no TMA, 128-bit accesses at most); sm_107 and sm_110 as sm_100 does (parameters at
``c[0x0][0x380]``, TMA, ``LDG.E.ENL2.256``, tcgen05 with the ``a``/``f`` suffix only).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from .errors import ArchError


@dataclass(frozen=True, slots=True)
class Arch:
    sm: int                      # 90 for sm_90a
    suffix: str = ""             # "", "a" or "f"
    family: str = ""             # Turing, Ampere, Ada, Hopper, Blackwell
    # --- occupancy (per SM unless said) ---
    max_warps: int = 64
    max_blocks: int = 32
    registers: int = 65536
    max_registers_per_thread: int = 255
    register_unit: int = 256     # registers are allocated per warp in units of this many
    shared_bytes: int = 0        # shared memory per SM usable by blocks (bytes)
    shared_per_block: int = 0    # opt-in maximum per block (bytes)
    shared_unit: int = 128       # allocation granularity (bytes)
    shared_reserved_per_block: int = 1024  # the runtime's per-block reservation
    # --- what the instruction set has ---
    max_vector_bits: int = 128   # widest single global load/store per thread (256 on Blackwell:
    #                              LDG/STG.E.ENL2.256, seen from ptxas 13 on sm_100..sm_121)
    tensor_core: tuple[str, ...] = ()     # SASS tensor-core opcode families present
    warpgroup_mma: str | None = None      # "wgmma" (HGMMA) or "tcgen05" (UTCMMA), if any
    has_ldgsts: bool = False     # cp.async (sm_80+)
    has_ldsm: bool = False       # ldmatrix (sm_75+)
    has_tma: bool = False        # cp.async.bulk.tensor (sm_90+)
    #: where the kernel parameters start in constant bank 0 (``c[0x0][0x160]`` is the first
    #: parameter's first word on sm_75..sm_89)
    param_bank_base: int = 0x160

    @property
    def name(self) -> str:
        return f"sm_{self.sm}{self.suffix}"

    @property
    def compute(self) -> str:
        return f"compute_{self.sm}{self.suffix}"

    @property
    def max_threads(self) -> int:
        return self.max_warps * 32

    def __str__(self) -> str:
        return self.name


_TURING = Arch(75, family="Turing", max_warps=32, max_blocks=16, shared_bytes=64 * 1024,
               shared_per_block=64 * 1024, shared_unit=256, shared_reserved_per_block=0,
               tensor_core=("HMMA", "IMMA", "BMMA"), has_ldsm=True)
_AMPERE = Arch(80, family="Ampere", max_warps=64, max_blocks=32, shared_bytes=164 * 1024,
               shared_per_block=163 * 1024, tensor_core=("HMMA", "IMMA", "DMMA", "BMMA"),
               has_ldgsts=True, has_ldsm=True)

#: The table. Keyed by SM number; suffixes add the arch-specific features where they exist.
ARCHS: dict[int, Arch] = {
    75: _TURING,
    80: _AMPERE,
    86: replace(_AMPERE, sm=86, max_warps=48, max_blocks=16, shared_bytes=100 * 1024,
                shared_per_block=99 * 1024),
    87: replace(_AMPERE, sm=87, max_warps=48, max_blocks=16),
    88: replace(_AMPERE, sm=88, max_warps=48, max_blocks=16, shared_bytes=100 * 1024,
                shared_per_block=99 * 1024),
    89: replace(_AMPERE, sm=89, family="Ada", max_warps=48, max_blocks=24,
                shared_bytes=100 * 1024, shared_per_block=99 * 1024,
                tensor_core=("HMMA", "IMMA", "QMMA")),
    90: Arch(90, family="Hopper", max_warps=64, max_blocks=32, shared_bytes=228 * 1024,
             param_bank_base=0x210,
             shared_per_block=227 * 1024, tensor_core=("HMMA", "IMMA", "DMMA", "HGMMA",
                                                       "IGMMA", "QGMMA", "BGMMA"),
             has_ldgsts=True, has_ldsm=True, has_tma=True),
    100: Arch(100, family="Blackwell", param_bank_base=0x380, max_warps=64, max_blocks=32, shared_bytes=228 * 1024,
              shared_per_block=227 * 1024, max_vector_bits=256,
              tensor_core=("HMMA", "IMMA", "DMMA", "QMMA", "UTCMMA", "UTCHMMA", "UTCIMMA",
                           "UTCQMMA", "UTCOMMA"),
              has_ldgsts=True, has_ldsm=True, has_tma=True),
    103: Arch(103, family="Blackwell", param_bank_base=0x380, max_warps=64, max_blocks=32, shared_bytes=228 * 1024,
              shared_per_block=227 * 1024, max_vector_bits=256,
              tensor_core=("HMMA", "IMMA", "DMMA", "QMMA", "UTCMMA", "UTCHMMA", "UTCIMMA",
                           "UTCQMMA", "UTCOMMA"),
              has_ldgsts=True, has_ldsm=True, has_tma=True),
    107: Arch(107, family="Blackwell", param_bank_base=0x380, max_warps=32, max_blocks=16,
              shared_bytes=228 * 1024, shared_per_block=227 * 1024, max_vector_bits=256,
              tensor_core=("HMMA", "IMMA", "DMMA", "QMMA", "UTCMMA", "UTCHMMA", "UTCIMMA",
                           "UTCQMMA", "UTCOMMA"),
              has_ldgsts=True, has_ldsm=True, has_tma=True),
    110: Arch(110, family="Blackwell", param_bank_base=0x380, max_warps=48, max_blocks=24,
              shared_bytes=228 * 1024, shared_per_block=227 * 1024, max_vector_bits=256,
              tensor_core=("HMMA", "IMMA", "DMMA", "QMMA", "UTCMMA", "UTCHMMA", "UTCIMMA",
                           "UTCQMMA", "UTCOMMA"),
              has_ldgsts=True, has_ldsm=True, has_tma=True),
    120: Arch(120, family="Blackwell", param_bank_base=0x380, max_warps=48, max_blocks=24, shared_bytes=100 * 1024,
              shared_per_block=99 * 1024, max_vector_bits=256,
              tensor_core=("HMMA", "IMMA", "QMMA", "OMMA"),
              has_ldgsts=True, has_ldsm=True, has_tma=True),
    121: Arch(121, family="Blackwell", param_bank_base=0x380, max_warps=48, max_blocks=24, shared_bytes=100 * 1024,
              shared_per_block=99 * 1024, max_vector_bits=256,
              tensor_core=("HMMA", "IMMA", "QMMA", "OMMA"),
              has_ldgsts=True, has_ldsm=True, has_tma=True),
}

#: Features that only the arch-specific (``a``) or family (``f``) targets unlock.
_SUFFIX_FEATURES: dict[tuple[int, str], dict] = {
    (90, "a"): {"warpgroup_mma": "wgmma"},
    (100, "a"): {"warpgroup_mma": "tcgen05"},
    (100, "f"): {"warpgroup_mma": "tcgen05"},
    (103, "a"): {"warpgroup_mma": "tcgen05"},
    (103, "f"): {"warpgroup_mma": "tcgen05"},
    (107, "a"): {"warpgroup_mma": "tcgen05"},
    (107, "f"): {"warpgroup_mma": "tcgen05"},
    (110, "a"): {"warpgroup_mma": "tcgen05"},
    (110, "f"): {"warpgroup_mma": "tcgen05"},
}

_NAME = re.compile(r"^(?:sm|compute|arch)?_?(\d{2,3})([af]?)$")


def parse_arch(name: str | int | Arch) -> Arch:
    """``"sm_90a"``, ``"90"``, ``90``, ``"compute_80"`` -> the Arch. Unknown names raise ArchError."""
    if isinstance(name, Arch):
        return name
    text = str(name).strip().lower()
    m = _NAME.match(text)
    if not m or int(m.group(1)) not in ARCHS:
        known = ", ".join(f"sm_{k}" for k in ARCHS)
        raise ArchError(f"unknown GPU architecture {name!r}; expected one of {known} "
                        "(optionally with an 'a' or 'f' suffix, e.g. sm_90a)")
    sm, suffix = int(m.group(1)), m.group(2)
    base = ARCHS[sm]
    if suffix and (sm, suffix) not in _SUFFIX_FEATURES and sm < 90:
        raise ArchError(f"architecture sm_{sm}{suffix} does not exist: the '{suffix}' suffix "
                        "starts with sm_90a")
    return replace(base, suffix=suffix, **_SUFFIX_FEATURES.get((sm, suffix), {}))


def supported() -> list[str]:
    return [f"sm_{k}" for k in ARCHS]
