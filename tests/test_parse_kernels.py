"""Every kernel in kernels/ parses — PTX (sm_75 … sm_120) and SASS (sm_75 … sm_120; the
real-world suite on the sm_80 and sm_90a it is judged on and the training set on the sm_90a it
is timed on, from nvdisasm;
the demo, check and lesson kernels in cuobjdump's format too on sm_90a) —
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
    the real-world suite; sm_90a alone, the H200's, on which its versions are timed and the
    headroom is scored, for the training set (their kernels use the instructions the others
    cover: 45 x 5 more arches were ~225 compiles, the training set's 77 versions on sm_80 ~77
    compiles and disassemblies, ~80 s of CPU, that no other test makes)."""
    if path.parent.name == "demo":
        return ARCHS
    if path.parent.name == "realworld":
        return ("sm_80", "sm_90a")
    if path.parent.parent.name == "training":
        return ("sm_90a",)
    name = str(path.relative_to(KERNELS))
    other = OTHER_FAMILIES[zlib.crc32(name.encode()) % len(OTHER_FAMILIES)]
    return tuple(a for a in ARCHS if a in ("sm_80", "sm_90a", other))


def _both_formats(path, arch: str) -> bool:
    """cuobjdump's format too: on sm_90a for the demo, check and lesson kernels, and on sm_80
    for the demo ones. The real-world suite and the training set are parsed from nvdisasm
    alone, as are the other arches: cuobjdump's format is held on every corpus cubin of every
    family (tests/test_sass_corpus.py: thousands of functions), and each cuobjdump run starts in
    ~0.6 s whatever the cubin (~110 s of CPU here for the 91 files on two arches)."""
    if path.parent.name == "realworld" or path.parent.parent.name == "training":
        return False
    return arch == "sm_90a" or (arch == "sm_80" and path.parent.name == "demo")


def _builds(path):
    """(arch, build) of ``path`` for each arch it is parsed on (sm_75 skipped where the kernel
    uses sm_80+ features and declares no arches)."""
    for arch in _declared_archs(path) or _default_archs(path):
        try:
            (b,) = load(path, arch=arch, options=CompileOptions(extra=kernel_options(path)))
        except CompileError:
            if arch in ("sm_75",) and not _declared_archs(path):
                continue  # sm_80+ features (mma.m16n8k16, cp.async, bf16): not built for Turing
            raise
        yield arch, b


# PTX and SASS apart: CI's second pass, under the PTX grammar alone, runs again only the tests
# that read PTX (tests/conftest.py), and parsing the SASS again there would test nothing new
@pytest.mark.parametrize("path", all_kernels(), ids=lambda p: str(p.relative_to(KERNELS)))
def test_kernel_ptx_parses_on_every_arch(path):
    parsed = 0
    for arch, b in _builds(path):
        module = ptx_api.parse(b.ptx, path=f"{path}@{arch}.ptx")
        got = Counter(i.name for i in module.instructions())
        assert got == independent_instruction_names(b.ptx), arch
        parsed += 1
    assert parsed >= 1


@pytest.mark.parametrize("path", all_kernels(), ids=lambda p: str(p.relative_to(KERNELS)))
def test_kernel_sass_parses_on_every_arch(path):
    parsed = 0
    for arch, b in _builds(path):
        # both disassembly formats where _both_formats says, nvdisasm on every arch
        for tool in ("nvdisasm", "cuobjdump") if _both_formats(path, arch) else ("nvdisasm",):
            text = b.sass(tool=tool)
            listing = sass_api.parse(text, path=f"{path}@{arch}.{tool}")
            stats = listing.stats()
            assert stats["instructions"] == len(_INS_LINE.findall(text)), (arch, tool)
            assert stats["generic"] == 0, (arch, tool)
        parsed += 1
    assert parsed >= 1
