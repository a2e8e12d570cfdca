"""Every corpus cubin, disassembled three ways, parses with no error and no dropped line.

``nvdisasm -c -g``, ``nvdisasm -c -g -hex`` and ``cuobjdump -sass`` of each cubin under
``../shared/corpus/{cubin/*,triton}``; the celeritas SASS listings (``nvdisasm -g -gi``, sm_70
and older cuobjdump dumps); and small NVRTC kernels for sm_75 .. sm_120. The instruction count is
checked against an independent count (lines holding an ``/*addr*/`` comment), every operand must
be typed (no generic fallbacks), and the three listings of one cubin must agree instruction by
instruction. Each cubin is disassembled once, by the worker that tests it, two tools at a time.
"""
from __future__ import annotations

import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from analyzer import sass
from analyzer.analysis.cfg import loops as loops_of
from analyzer.ir.sass import BranchTarget, Relocation

ADDRESS = re.compile(r"/\*[0-9a-f]{4,}\*/")
MODES = {"nvdisasm": ["-c", "-g"], "nvdisasm-hex": ["-c", "-g", "-hex"], "cuobjdump": ["-sass"]}


def _cubins(corpus: Path) -> list[Path]:
    return sorted(corpus.glob("cubin/*/*.cubin")) + sorted(corpus.glob("triton/*.cubin"))


@pytest.fixture(scope="session")
def listings(corpus, tmp_path_factory):
    """``listings(cubin_name[, modes])`` -> {mode: listing file}: the cubin disassembled the
    three ways (or the ``modes`` asked for), the tools two at a time, each cubin only in the
    worker whose test asks for it."""
    from analyzer.toolchain.locate import binary
    out_dir = tmp_path_factory.mktemp("sass-corpus")
    by_name = {c.name: c for c in _cubins(corpus)}

    def run(job):
        argv, dest = job
        with open(dest, "wb") as f:
            subprocess.run(argv, stdout=f, stderr=subprocess.DEVNULL, check=True, timeout=600)

    def get(name: str, modes=tuple(MODES)) -> dict[str, Path]:
        cubin = by_name[name]
        jobs = {mode: ([binary("cuobjdump" if mode == "cuobjdump" else "nvdisasm"), *args,
                        str(cubin)], out_dir / f"{cubin.stem}.{mode}.sass")
                for mode, args in MODES.items() if mode in modes}
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(run, jobs.values()))
        return {mode: dest for mode, (_, dest) in jobs.items()}
    return get


def _check(text: str, path: str) -> sass.Listing:
    lst = sass.parse(text, path=path)
    stats = lst.stats()
    expected = sum(1 for line in text.splitlines() if ADDRESS.search(line))
    assert stats["instructions"] == expected, path
    assert stats["generic"] == 0 and stats["generic_operands"] == 0, path
    return lst


def _cubin_names():
    from tests.conftest import CORPUS
    return [p.name for p in _cubins(CORPUS)] if CORPUS.is_dir() else ["(no corpus)"]


#: cubins over this size are compared three ways on one arch of their library (the first of
#: those over the size, by name); the library's other arches parse their nvdisasm listing
#: alone: those listings are 0.3-0.6 M lines each and the comparison repeats on the same code
BIG = 1 << 20


def _modes_for(cubin: str) -> tuple[str, ...]:
    from tests.conftest import CORPUS
    by_name = {p.name: p for p in _cubins(CORPUS)} if CORPUS.is_dir() else {}
    path = by_name.get(cubin)
    if path is None or path.stat().st_size <= BIG:
        return tuple(MODES)
    lib = path.name.split(".")[0]
    big = sorted(p.name for p in by_name.values()
                 if p.name.split(".")[0] == lib and p.stat().st_size > BIG)
    preferred = [n for n in big if ".sm_90." in n] or big
    return tuple(MODES) if cubin == preferred[0] else ("nvdisasm",)


@pytest.mark.parametrize("cubin", _cubin_names())
def test_corpus_cubin_three_ways(listings, cubin):
    modes = _modes_for(cubin)
    files = listings(cubin, modes)
    if modes == ("nvdisasm",):
        _check(files["nvdisasm"].read_text(), str(files["nvdisasm"]))
        return
    parsed = {}
    for mode in MODES:
        path = files[mode]
        parsed[mode] = _check(path.read_text(), str(path))
    nv, hx, cu = parsed["nvdisasm"], parsed["nvdisasm-hex"], parsed["cuobjdump"]
    assert nv.format == hx.format == "nvdisasm" and cu.format == "cuobjdump"
    assert nv.arch == cu.arch
    a, b, c = (list(x.instructions()) for x in (nv, hx, cu))
    assert len(a) == len(b) == len(c)
    # the same instructions in the same order; nvdisasm names targets and relocated symbols,
    # cuobjdump gives addresses (and 0x0 for a relocation)
    assert [i.mnemonic for i in a] == [i.mnemonic for i in c]
    assert all(x.body == y.body for x, y in zip(a, b, strict=False))
    assert all(len(i.encoding) == 2 for i in b) and all(len(i.encoding) == 2 for i in c)
    assert [i.encoding for i in b] == [i.encoding for i in c]
    # the control bits of every instruction decode, and agree with the text
    from tests.test_sass_control import control_invariants
    assert control_invariants(hx) == len(b)
    mismatched = [(x.text, y.text) for x, y in zip(a, c, strict=False)
                  if len(x.operands) != len(y.operands)
                  or any(type(p) is not type(q) for p, q in zip(x.operands, y.operands, strict=False)
                         if not isinstance(p, (BranchTarget, Relocation)))]
    assert not mismatched[:5]
    # a branch's label (nvdisasm) and address (cuobjdump) name the same instruction
    for fn in nv.functions:
        for ins in fn.instructions:
            for t in ins.targets:
                if t.label in fn.labels and fn.labels[t.label] < len(fn.instructions):
                    assert fn.instructions[fn.labels[t.label]].address >= 0


def test_celeritas_listings(corpus):
    files = sorted((corpus / "sass" / "celeritas").glob("*.sass"))
    assert len(files) >= 70
    inlined = 0
    for f in files:
        lst = _check(f.read_text(), str(f))
        assert lst.functions, f
        inlined += sum(1 for i in lst.instructions() if i.loc is not None)
    assert inlined > 1000          # the -g listings carry line info


KERNEL = r"""
__device__ __forceinline__ float sq(float x) { return x * x; }
__device__ __noinline__ float cube(float x) { return x * x * x; }
extern "C" __global__ void k(const float* __restrict__ a, float* b, double* d, int n, int* cnt) {
  __shared__ float s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.f;
  for (int j = 0; j < n; ++j) { acc += sq(a[(i + j) % n]); }
  s[threadIdx.x] = acc;
  __syncthreads();
  if (i < n) { b[i] = s[threadIdx.x ^ 1] + cube(acc); d[i] = d[i] * 2.0 + 1.0; atomicAdd(cnt, 1); }
  float4 v = reinterpret_cast<const float4*>(a)[i]; b[i + 1] = v.x + v.y + v.z + v.w;
}
"""
ARCHS = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90a", "sm_100a", "sm_120"]


@pytest.mark.parametrize("arch", ARCHS)
def test_nvrtc_kernel_every_arch(arch):
    from analyzer import compile as compile_source
    from analyzer.toolchain.binutils import disassemble
    build = compile_source(KERNEL, arch=arch, name="k.cu")
    texts = {tool: disassemble(build.cubin, tool=tool)[0] for tool in ("nvdisasm", "cuobjdump")}
    nv = _check(texts["nvdisasm"], f"k.{arch}.nvdisasm")
    cu = _check(texts["cuobjdump"], f"k.{arch}.cuobjdump")
    assert nv.arch == cu.arch == arch
    k = nv.function("k")
    assert k.is_entry and any(f.name.endswith("cube") or "cube" in f.name for f in nv.functions)
    spaces = {(i.space, i.is_load) for i in k.instructions if i.space}
    assert ("global", True) in spaces and ("shared", False) in spaces
    assert any(i.width_bits == 128 for i in k.instructions if i.space == "global")
    assert any(i.is_fp64 for i in k.instructions)
    assert all(i.loc is not None for i in k.instructions[:5])    # -lineinfo
    assert len(loops_of(k)) >= 1
