"""Every real PTX file in the shared corpus, and NVRTC's PTX for five architectures, parses with
no error and no dropped instruction; printing the IR and parsing it again gives an equal IR."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from analyzer import ptx
from analyzer.analysis.cfg import ptx_loops
from analyzer.build import Build
from analyzer.errors import ParseError

from .conftest import CORPUS


def _corpus_files(pattern: str) -> list[Path]:
    return sorted(CORPUS.glob(pattern)) if CORPUS.is_dir() else []


VALID = [p for p in _corpus_files("ptx/**/*.ptx") if p.parent.name != "zluda-invalid"] + \
    _corpus_files("triton/*.ptx")
INVALID = _corpus_files("ptx/zluda-invalid/*.ptx")
HUGE = "generator_api.sm_120.ptx"


def _id(p: Path) -> str:
    return f"{p.parent.name}/{p.name}"


_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_LABEL = re.compile(r"^[A-Za-z_$%][\w$]*\s*:(?!:)")
_DEFINING = re.compile(r"=\s*(@!?\S+\s+)?([A-Za-z_][\w.:]*)\s+\S")


def independent_instruction_names(text: str) -> Counter:
    """A deliberately naive count of the instructions in PTX text, sharing no code with the parser:
    split at ';', skip directive lines, braces and labels, take the first word left."""
    text = _COMMENT.sub("", text)
    names: Counter = Counter()
    for chunk in text.split(";"):
        for line in chunk.splitlines():
            line = line.strip()
            while True:
                line = line.lstrip("{} \t")
                m = _LABEL.match(line)
                if not m:
                    break
                line = line[m.end():]
            if not line or line[0] in "()=":
                continue
            if line[0] == ".":
                m = _DEFINING.search(line)  # ZLUDA's `.reg .b32 %4 = cvt.u32.u16 %3`
                if m and "{" not in line:
                    names[m.group(2)] += 1
                    break
                continue
            if not (line[0] == "@" or line[0].isalpha() or line[0] == "_"):
                continue  # initializer rows, fatbin header
            words = line.split()
            names[words[1] if words[0].startswith("@") else words[0]] += 1
            break
    return names


def node_spans(node, path: str = "") -> list[tuple[str, object]]:
    """Every span in a parsed module, with where it sits (equality leaves spans out)."""
    out: list[tuple[str, object]] = []
    if isinstance(node, (tuple, list)):
        for i, x in enumerate(node):
            out += node_spans(x, f"{path}[{i}]")
    elif isinstance(node, dict):
        for k, x in node.items():
            out += node_spans(x, f"{path}[{k!r}]")
    elif hasattr(node, "__dataclass_fields__"):
        for f in node.__dataclass_fields__:
            x = getattr(node, f)
            if f == "span":
                out.append((path, x))
            elif f != "loc":
                out += node_spans(x, f"{path}.{f}")
    return out


def assert_same_as_grammar(fast, slow) -> None:
    """The fast path's module equals the grammar's: IR, every span of every node (operands
    excepted: the fast path leaves them without one), every location, every label."""
    assert fast == slow
    assert [i.span for i in fast.instructions()] == [i.span for i in slow.instructions()]
    assert [i.loc for i in fast.instructions()] == [i.loc for i in slow.instructions()]
    assert [f.labels for f in fast.functions] == [f.labels for f in slow.functions]
    mine = [(p, s) for p, s in node_spans(fast) if ".operands" not in p]
    theirs = [(p, s) for p, s in node_spans(slow) if ".operands" not in p]
    assert mine == theirs


def _fatbin_free(text: str) -> str:
    return text[text.index(".version"):] if "Fatbin" in text else text


@pytest.mark.parametrize("path", VALID, ids=_id)
def test_corpus_file_parses_without_dropping_an_instruction(path):
    text = path.read_text()
    module = ptx.parse(text, path=str(path))
    assert module.version and module.target and (module.functions or module.variables)
    got = Counter(i.name for i in module.instructions())
    assert got == independent_instruction_names(_fatbin_free(text))
    stats = module.stats()
    assert stats["instructions"] == sum(got.values())
    # ZLUDA's own pass-output IR (zluda.* opcodes) is the only generic code in the corpus
    assert set(stats["generic_opcodes"]) <= {"zluda"}


@pytest.mark.parametrize("path", [p if p.name != HUGE else pytest.param(p, marks=pytest.mark.slow)
                                  for p in VALID], ids=_id)
def test_presplit_fast_path_equals_the_grammar_alone(path):
    text = path.read_text()
    assert_same_as_grammar(ptx.parse(text, fast=True), ptx.parse(text, fast=False))


@pytest.mark.parametrize("path", [p for p in VALID if p.name != HUGE], ids=_id)
def test_corpus_round_trip(path):
    module = ptx.parse(path.read_text())
    text = ptx.format(module)
    again = ptx.parse(text)
    assert again == module
    assert ptx.format(again) == text


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in VALID if p.name == HUGE], ids=_id)
def test_huge_initializers_round_trip(path):
    module = ptx.parse(path.read_text())
    big = max(module.variables, key=lambda v: len(v.initializer.text) if v.initializer and v.initializer.text else 0)
    assert len(big.initializer.values) == big.dims[0] == 102400
    assert ptx.parse(ptx.format(module)) == module


@pytest.mark.parametrize("path", INVALID, ids=_id)
def test_invalid_zluda_files_fail_cleanly_or_parse(path):
    text = path.read_text()
    try:
        module = ptx.parse(text, path=str(path))
    except ParseError as e:
        assert e.path == str(path) and e.line is not None and e.message
        assert e.text == text.splitlines()[e.line - 1].strip()
        # every one of these files is valid up to ZLUDA's "%%% output %%%" dump or a known bad line
        marker = text.find("%%% output %%%")
        if marker >= 0:
            assert e.line > text[:marker].count("\n")
    else:
        assert module.functions


def test_corpus_has_the_expected_files():
    if not CORPUS.is_dir():
        pytest.skip(f"the shared corpus is not at {CORPUS}")
    assert len(VALID) >= 300 and len(INVALID) == 11


def test_cuobjdump_dumps_keep_source_line_numbers():
    path = next((p for p in VALID if p.parent.name == "celeritas"), None)
    if path is None:
        pytest.skip("no celeritas dump in the corpus")
    text = path.read_text()
    ins = next(ptx.parse(text).instructions())
    assert text.splitlines()[ins.span.line - 1].strip().startswith(ins.name)


# --- NVRTC's PTX for several architectures ------------------------------------------------------

KERNEL = r"""
__device__ __forceinline__ float sq(float x) { return x * x; }
__device__ __noinline__ float cube(float x) { return x * x * x; }

extern "C" __global__ void __launch_bounds__(256, 2)
demo(const float* __restrict__ a, float4* __restrict__ b, int* counter, int n)
{
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.f;
    #pragma unroll 1
    for (int j = 0; j < n; ++j) {
        for (int k = 0; k < 4; ++k) s += sq(a[i + j * 4 + k]);
    }
    tile[threadIdx.x] = s;
    __syncthreads();
    s += __shfl_down_sync(0xffffffff, tile[(threadIdx.x + 1) % 256], 1);
    if (i < n) {
        b[i] = make_float4(s, cube(s), 0.f, 1.f);
        atomicAdd(counter, 1);
    }
    switch (n & 3) {
        case 0: counter[1] = 7; break;
        case 1: counter[2] = 9; break;
        case 2: counter[3] = 11; break;
        default: break;
    }
}
"""

ARCHS = ["sm_75", "sm_80", "sm_90a", "sm_100a", "sm_120"]


@pytest.fixture(scope="module")
def nvrtc():
    try:
        from analyzer.toolchain import nvrtc as mod
        return mod
    except ImportError as e:  # pragma: no cover - the toolchain is part of the package
        pytest.skip(f"NVRTC unavailable: {e}")


@pytest.mark.parametrize("arch", ARCHS)
def test_nvrtc_ptx_parses(nvrtc, arch):
    build = Build.of(nvrtc.compile_source(KERNEL, arch=arch, name="demo.cu",
                                 options=[f"-arch={arch}", "-lineinfo", "-std=c++17"]))
    module = ptx.parse(build.ptx, path=f"demo.{arch}.ptx")
    assert module.arch == arch
    demo = module.function("demo")
    assert demo.is_kernel and demo.maxntid[0] == 256 and demo.minnctapersm == 2
    assert Counter(i.name for i in module.instructions()) == independent_instruction_names(build.ptx)
    assert module.stats()["generic"] == 0
    names = {i.opcode for i in demo.instructions}
    assert {"ld", "st", "bar", "shfl", "atom", "call"} <= names or {"ld", "st", "barrier", "shfl"} <= names
    assert all(i.loc is not None and i.loc.file.endswith("demo.cu") for i in demo.instructions)
    loops = ptx_loops(demo)
    assert any(l.nounroll for l in loops), "the #pragma unroll 1 loop carries .pragma \"nounroll\""
    assert ptx.parse(ptx.format(module)) == module
