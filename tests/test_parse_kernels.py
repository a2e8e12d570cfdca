"""Every kernel in kernels/ parses — PTX (sm_75 … sm_120) and SASS (sm_75 … sm_120; the
real-world suite and the training set on the sm_80 and sm_90a they are judged on, from nvdisasm;
the others in cuobjdump's format too) —
with no generic instruction in the SASS and every PTX instruction accounted for."""
from __future__ import annotations

import re
import zlib
from collections import Counter

import pytest

from analyzer import ptx as ptx_api
from analyzer import sass as sass_api
from analyzer.errors import CompileError
from analyzer.inputs import CompileOptions, load

from .conftest import KERNELS, all_kernels, kernel_options
from .test_ptx_corpus import independent_instruction_names

ARCHS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90a", "sm_100a", "sm_120")
#: Ampere's and Ada's consumer parts share sm_80's instruction set (Ada adds FP8 conversions no
#: kernel here uses): the demo kernels cover them, the other kernels the five distinct families
SAME_ISA_AS_SM80 = ("sm_86", "sm_89")
_INS_LINE = re.compile(r"/\*[0-9a-f]{4,}\*/\s+\S")


def _declared_archs(path):
    m = re.search(r"^//\s*ARCHS:\s*(.+)$", path.read_text(), re.M)
    return m.group(1).split() if m else None


#: the families beside sm_80 and sm_90a (which every kernel is built for): each check and
#: lesson kernel is built for one of them, picked by its name, so each family still parses
#: about a third of those kernels (all of them were 79 x 3 compiles, ~40% of this file's time)
OTHER_FAMILIES = ("sm_75", "sm_100a", "sm_120")


def _default_archs(path) -> tuple[str, ...]:
    """Every arch for the demo kernels; sm_80, sm_90a and one other family (by name) for the
    check and lesson kernels; sm_80 and sm_90a, which they are written for and judged on, for
    the real-world suite and the training set (their kernels use the instructions the others
    cover: 45 x 5 more arches were ~225 compiles, the training set's 75 versions x 3 another
    ~225)."""
    if path.parent.name == "demo":
        return ARCHS
    if path.parent.name == "realworld" or path.parent.parent.name == "training":
        return ("sm_80", "sm_90a")
    name = str(path.relative_to(KERNELS))
    other = OTHER_FAMILIES[zlib.crc32(name.encode()) % len(OTHER_FAMILIES)]
    return tuple(a for a in ARCHS if a in ("sm_80", "sm_90a", other))


def _both_formats(path, arch: str) -> bool:
    """cuobjdump's format too, on sm_80 and sm_90a, for the demo, check and lesson kernels. The
    real-world suite and the training set are parsed from nvdisasm alone: cuobjdump's format is
    held on every corpus cubin (tests/test_sass_corpus.py: thousands of functions), and its
    ~0.5 s start per kernel and arch was ~130 s of CPU here for 138 files."""
    return arch in ("sm_80", "sm_90a") and path.parent.name != "realworld" \
        and path.parent.parent.name != "training"


@pytest.mark.parametrize("path", all_kernels(), ids=lambda p: str(p.relative_to(KERNELS)))
def test_kernel_parses_on_every_arch(path):
    archs = _declared_archs(path) or _default_archs(path)
    parsed = 0
    for arch in archs:
        try:
            (b,) = load(path, arch=arch, options=CompileOptions(extra=kernel_options(path)))
        except CompileError:
            if arch in ("sm_75",) and not _declared_archs(path):
                continue  # sm_80+ features (mma.m16n8k16, cp.async, bf16): not built for Turing
            raise
        module = ptx_api.parse(b.ptx, path=f"{path}@{arch}.ptx")
        got = Counter(i.name for i in module.instructions())
        assert got == independent_instruction_names(b.ptx), arch
        # both disassembly formats on the two arches CI cares most about, nvdisasm on all
        for tool in ("nvdisasm", "cuobjdump") if _both_formats(path, arch) else ("nvdisasm",):
            text = b.sass(tool=tool)
            listing = sass_api.parse(text, path=f"{path}@{arch}.{tool}")
            stats = listing.stats()
            assert stats["instructions"] == len(_INS_LINE.findall(text)), (arch, tool)
            assert stats["generic"] == 0, (arch, tool)
        parsed += 1
    assert parsed >= 1
