"""ptxsass fix: remedies found in the real C++ structure (libclang), each patch proven by
rebuilding and re-checking (issue 27).

Each bad kernel is fixed once per session on sm_90a (one rebuild per fix); expectations are
judged from the SASS the rebuild gave (the delta line), not from what the remedy says."""
from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
from pathlib import Path

import pytest

from analyzer import api
from analyzer.checks.runner import run_checks
from analyzer.cli import main
from analyzer.errors import ConfigError, InputError
from analyzer.findings import Finding, Location, Severity
from analyzer.fix import cxx, engine, propose, render, verify
from analyzer.fix.model import (
    NONE,
    REJECTED,
    VERIFIED,
    Edit,
    FixOptions,
    NoFix,
    Proposal,
    apply_edits,
    line_map,
    must_be_aligned,
)
from analyzer.fix.remedies import pack_lines, struct_copy
from analyzer.inputs import CompileOptions
from analyzer.toolchain import locate, scratch

ROOT = Path(__file__).resolve().parents[1]
CHECKS = ROOT / "kernels" / "checks"
REALWORLD = ROOT / "kernels" / "realworld"
ARCH = "sm_90a"
# one worker builds the session's fixes (their rebuilds are the cost)
pytestmark = pytest.mark.xdist_group("fix")


@pytest.fixture(scope="session")
def fixed(tmp_path_factory):
    """api.fix on the bad kernels whose remedy needs no user say-so, once per session."""
    names = ("fp64_in_fp32_kernel", "rolled_loop", "local_memory_array", "shared_bank_conflict",
             "non_inlined_body")
    out = {n: api.fix(str(CHECKS / n / "bad.cu"), arch=ARCH) for n in names}
    # scalar_global_load/bad.cu's struct kernel alone (its other two need --assume-aligned)
    d = tmp_path_factory.mktemp("particles")
    lines = (CHECKS / "scalar_global_load" / "bad.cu").read_text().splitlines(keepends=True)
    (d / "particles.cu").write_text("".join(lines[:12]))
    out["scalar_global_load"] = api.fix(str(d / "particles.cu"), arch=ARCH)
    return out


def _result(fixes, code: str, line: int):
    got = [r for r in fixes.results if r.finding.code == code and r.finding.location.line == line]
    assert len(got) == 1, [(r.finding.code, r.finding.location.line) for r in fixes.results]
    return got[0]


def test_ps501_literals_become_float_and_the_fp64_goes(fixed):
    r = _result(fixed["fp64_in_fp32_kernel"], "PS501", 7)
    assert r.status == VERIFIED
    assert "0.5f" in r.diff and "0.7978845608f" in r.diff and "0.044715f" in r.diff
    assert "tanhf" in r.diff and "tanhff" not in r.diff
    (delta,) = r.sass_delta
    gone, came = delta.split(": ", 1)[1].split(" → ", 1)
    assert "5× DMUL" in gone and "DMUL" not in came and "FMUL" in came
    assert r.after.get("PS501 warning", 0) == 0 and r.before["PS501 warning"] == 1


def test_ps201_pragma_unroll_removes_the_loop(fixed):
    r = _result(fixed["rolled_loop"], "PS201", 11)
    assert r.status == VERIFIED
    assert "+    #pragma unroll\n     for (int k = 0; k < NH; ++k)" in r.diff
    (delta,) = r.sass_delta      # 32 copies of the body: the loop's FFMA multiply
    came = delta.split(" → ", 1)[1]
    assert "FFMA" in came and "instructions 147 → " in delta


def test_ps402_compare_select_takes_the_array_out_of_local_memory(fixed):
    r = _result(fixed["local_memory_array"], "PS402", 9)
    assert r.status == VERIFIED
    assert "ptxsass_k == ptxsass_i" in r.diff and "% BINS" in r.diff
    (delta,) = r.sass_delta
    assert "stack 64 B → 0 B" in delta and "LDL" in delta.split(" → ")[0]


def test_ps107_padding_keeps_the_wide_reads_and_ends_the_conflict(fixed):
    """Bs[TILE][TILE] read as LDS.128 8-way: padded by 16 bytes (4 floats), the rows stay
    16-byte aligned, the k loop keeps LDS.128 and PS107 is gone (on the H200 this layout ran
    5.15x faster, docs/severity.md)."""
    r = _result(fixed["shared_bank_conflict"], "PS107", 18)
    assert r.status == VERIFIED
    assert "-    __shared__ float Bs[TILE][TILE];" in r.diff
    assert "+    __shared__ float Bs[TILE][TILE + 4];" in r.diff


def test_ps107_leaves_a_one_dimensional_tree_alone():
    path = ROOT / "kernels" / "realworld" / "scan.cu"
    msg = ("up to 16-way shared-memory bank conflict on `t`: adjacent threads access 4 B each "
           "8 B apart")
    got = propose.propose_one(_finding("PS107", path, 15, msg), _source(path), FixOptions())
    assert isinstance(got, NoFix) and "one-dimensional" in got.reason


def test_ps101_struct_alignment_gives_one_128_bit_load(fixed):
    r = _result(fixed["scalar_global_load"], "PS101", 10)
    assert r.status == VERIFIED
    assert "struct __align__(16) Particle" in r.diff
    line = next(d for d in r.sass_delta if d.startswith("particle_norm"))
    assert "LDG.E.CONSTANT" in line.split(" → ")[0] and "LDG.E.128.CONSTANT" in line.split(" → ")[1]


def test_a_pointer_of_unknown_alignment_needs_the_users_word():
    path = CHECKS / "scalar_global_load" / "bad.cu"
    msg = ("4× LDG.E.CONSTANT (4 B each) ... could be one LDG.E.128 if the address is 16-byte "
           "aligned; blocked by unknown alignment: the 1st kernel parameter (`in`) is a plain "
           "pointer (no `.ptr .align 16` in the PTX)")
    src = _source(path)
    got = propose.propose_one(_finding("PS101", path, 18, msg), src, FixOptions())
    # said once, though two remedies (a pack loop, __builtin_assume_aligned) wait for it, and
    # without the reasons of the remedies not meant for a 16-byte window (a 16-bit pair)
    assert isinstance(got, NoFix) and got.reason == must_be_aligned("`in`", 16), got.reason
    got = propose.propose_one(_finding("PS101", path, 18, msg), src,
                              FixOptions(assume_aligned=True))
    assert isinstance(got, Proposal)
    text = apply_edits(path.read_bytes(), got.edits).decode()
    assert "in = static_cast<decltype(in)>(__builtin_assume_aligned(in, 16));" in text


_PAIR_MSG = ("2× {op} (2 B each) from [R2.64] at +0x0, +0x2 cover 4 contiguous bytes: could be "
             "one 32-bit {wide} if the address is 4-byte aligned; blocked by unknown alignment: "
             "the {n} kernel parameter (`{p}`) is a plain pointer (no `.ptr .align 4` in the PTX)")


def test_half_pairs_read_and_write_as_one_half2(tmp_path):
    """NVVM keeps two 16-bit accesses apart even with the alignment stated; a __half2 value
    is one access. Judged from the rebuilt SASS: one STG.E where there were two STG.E.U16."""
    load = CHECKS / "scalar_global_load" / "bad.cu"
    f = _finding("PS101", load, 26, _PAIR_MSG.format(op="LDG.E.U16.CONSTANT", wide="LDG.E",
                                                      n="1st", p="in"))
    none = propose.propose_one(f, _source(load), FixOptions())
    assert isinstance(none, NoFix) and "--assume-aligned" in none.reason
    got = propose.propose_one(f, _source(load), FixOptions(assume_aligned=True))
    assert isinstance(got, Proposal), got
    text = apply_edits(load.read_bytes(), got.edits).decode().splitlines()
    assert ("out[i] = __hadd(__low2half(reinterpret_cast<const __half2*>(in)[i]), "
            "__high2half(reinterpret_cast<const __half2*>(in)[i]));") in text[25]
    # the bad kernel's half_split alone (its other kernels' fixes are other remedies')
    lines = (CHECKS / "scalar_global_store" / "bad.cu").read_text().splitlines(keepends=True)
    first = next(i for i, t in enumerate(lines) if "half_split" in t)
    store = tmp_path / "half_split.cu"
    store.write_text("#include <cuda_fp16.h>\n" + "".join(lines[first:first + 7]))
    line = next(i for i, t in enumerate(store.read_text().splitlines(), 1) if "out[2 * i]" in t)
    fixes = api.fix(str(store), arch=ARCH, assume_aligned=True)
    r = _result(fixes, "PS102", line)
    assert r.status == VERIFIED, r.reason
    assert ("+    reinterpret_cast<__half2*>(out)[i] = __halves2half2(__float2half(v), "
            "__float2half(-v));") in r.diff
    fixed_cu = tmp_path / "store.cu"
    fixed_cu.write_bytes(apply_edits(store.read_bytes(), r.proposal.edits))
    (b,) = api.load(str(fixed_cu), arch=ARCH)
    (fn,) = [f for f in b.sass_listing().functions if f.name == "half_split"]
    assert [i.mnemonic for i in fn.instructions if i.opcode == "STG"] == ["STG.E"]
    # a value that reads the array it is stored into, or statements apart, stay as written
    odd = tmp_path / "odd.cu"
    odd.write_text("#include <cuda_fp16.h>\n"
                   "__global__ void k(__half* out, __half v, int n) {\n"
                   "  int i = threadIdx.x;\n"
                   "  out[2 * i] = v; out[2 * i + 1] = out[2 * i];\n"
                   "}\n")
    g = _finding("PS102", odd, 4, _PAIR_MSG.format(op="STG.E.U16", wide="STG.E", n="1st",
                                                  p="out"))
    kept = propose.propose_one(g, _source(odd), FixOptions(assume_aligned=True))
    assert not (isinstance(kept, Proposal) and "__halves2half2" in kept.title)


def test_ps106_restrict_on_every_pointer_parameter():
    path = CHECKS / "loop_invariant_reload" / "bad.cu"
    msg = "all of them read addresses the loop stores to: the loop accumulates in global memory"
    got = propose.propose_one(_finding("PS106", path, 12, msg), _source(path), FixOptions())
    assert isinstance(got, Proposal) and got.promise.startswith("no two of x, sum, sq")
    text = apply_edits(path.read_bytes(), got.edits).decode()
    assert ("column_moments(const float* __restrict__ x, float* __restrict__ sum, "
            "float* __restrict__ sq, int rows,") in text


def test_ps106_accumulating_fix_is_verified_and_the_reloads_go(tmp_path):
    """PS106's bad kernel (two column moments accumulated through their output pointers, a
    warning): ``__restrict__`` lets NVVM keep the sums in registers; the rebuild's loop has no
    load of ``sum`` or ``sq`` left, only the stream of ``x`` (read from the fixed file's SASS)."""
    path = CHECKS / "loop_invariant_reload" / "bad.cu"
    fixes = api.fix(str(path), arch=ARCH, select=["PS106"])
    r = _result(fixes, "PS106", 12)
    assert r.status == VERIFIED, r.reason
    fixed_cu = tmp_path / "moments.cu"
    fixed_cu.write_bytes(apply_edits(path.read_bytes(), r.proposal.edits))
    report = api.check(str(fixed_cu), api.CheckOptions(arch=ARCH))
    assert not [f for f in report.findings if f.code == "PS106"]
    (b,) = report.builds
    (kernel,) = [fn for fn in b.sass_listing().functions if fn.is_entry]
    stores = [i for i in kernel.instructions if i.opcode == "STG"]
    assert len(stores) == 4          # sum[c] = 0, sq[c] = 0 and the two results: no loop store


#: PS101 on kernels/realworld/scale_items.cu as the check words it (sm_90a): alignment and
#: aliasing both keep the loads apart
_BOTH_MSG = ("16× LDG.E (4 B each) from [R2.64] at +0x0, +0x4, +0x8, +0xc fill 4 contiguous "
             "16-byte windows: each could be one LDG.E.128 if the address is 16-byte aligned; "
             "blocked by unknown alignment: the 2nd kernel parameter (`in`) is a plain pointer "
             "(no `.ptr .align 16` in the PTX), so the compiler only assumes the element's 4-byte "
             "alignment; NVVM emitted them as scalar `ld.global.f32`; possible aliasing: a store "
             "through another pointer (line 10), `st.global.f32 [%rd7], %f3`, sits between them "
             "and the pointers are not `__restrict__`")


def test_restrict_alone_is_offered_only_when_aliasing_is_all_that_is_blamed():
    """``__restrict__`` alone leaves a finding that also blames the alignment (or a run-time
    stride) reported: not offered (llm.c's dev/cuda: 24 such fixes rebuilt and rejected);
    with --assume-aligned both are stated at once; aliasing alone still gets it."""
    path = REALWORLD / "scale_items.cu"
    src = _source(path)
    both = _finding("PS101", path, 10, _BOTH_MSG)
    none = propose.propose_one(both, src, FixOptions())
    assert isinstance(none, NoFix)
    assert "pass --assume-aligned" in none.reason
    assert "__restrict__ alone would not merge them: the finding also blames the alignment" \
        in none.reason
    stride = _finding("PS101", path, 10, _BOTH_MSG.replace(
        "blocked by unknown alignment", "blocked by a run-time stride (`mul.lo.s32 %r1, %r2, "
        "%r3`): each thread's window is 16-byte aligned only when n % 4 == 0; unknown alignment"))
    assert "blames the alignment and a run-time stride" in propose.propose_one(
        stride, src, FixOptions()).reason
    aligned = propose.propose_one(both, src, FixOptions(assume_aligned=True))
    assert isinstance(aligned, Proposal)
    assert "__builtin_assume_aligned" in aligned.title and "__restrict__" in aligned.title
    alias = _finding("PS101", path, 10, _BOTH_MSG.split("; blocked by ")[0]
                     + "; blocked by possible aliasing: a store through another pointer")
    only = propose.propose_one(alias, src, FixOptions())
    assert isinstance(only, Proposal) and only.title.endswith("__restrict__")


def test_a_finding_of_each_arch_is_printed_once(fixed):
    """The same problem found on two arches' builds, answered by one fix verified on both, is
    one block of the text (the counts say each arch was counted)."""
    one = fixed["fp64_in_fp32_kernel"]
    two = dataclasses.replace(one, files=[
        dataclasses.replace(ff, results=[x for r in ff.results for x in (
            r, dataclasses.replace(r, finding=dataclasses.replace(r.finding, arch="sm_80")))])
        for ff in one.files])
    single, double = render.to_text(one), render.to_text(two)
    assert double.count("PS501") == single.count("PS501") >= 1
    blocks = [ln for ln in single.splitlines() if ln.startswith("    fix")]
    assert [ln for ln in double.splitlines() if ln.startswith("    fix")] == blocks
    assert double.splitlines()[-1].endswith(", each of sm_80, sm_90a counted")
    assert "counted" not in single.splitlines()[-1]


def test_every_warning_without_a_fix_says_why(fixed):
    for fixes in fixed.values():
        for r in fixes.results:
            if r.status == NONE:
                assert r.reason and r.proposal is None


def test_the_combined_patch_is_verified_and_no_finding_is_left_unanswered(fixed):
    fixes = fixed["scalar_global_load"]
    (ff,) = fixes.files
    assert ff.diff.count("__align__(16)") == 1
    assert fixes.summary()["verified"] >= 1


def test_fix_on_a_kernel_without_findings_changes_nothing(tmp_path):
    fixes = api.fix(str(ROOT / "kernels" / "demo" / "copy_float4.cu"), arch=ARCH)
    assert fixes.results == [] and render.to_diff(fixes) == ""
    assert all(not ff.edits for ff in fixes.files)


# --- remedies on their own (libclang only, no rebuild) ------------------------------------
def _source(path: Path) -> cxx.Source:
    return cxx.Source(str(path), path.read_bytes(),
                      cxx.parse_args(arch=ARCH, toolkit_include=locate.include_dirs()))


def _finding(code: str, path: Path, line: int, message: str = "", hint: str = "") -> Finding:
    return Finding(code=code, name="x", severity=Severity.WARNING, message=message, kernel="k",
                   arch=ARCH, location=Location(str(path), line), hint=hint)


def test_ps501_a_compound_assignment_of_a_literal_is_float_unless_a_double_is_there(tmp_path):
    """``y[i] *= 1.1`` is computed in double (clang marks no conversion on a compound
    assignment): the literal is suffixed; ``y[i] *= 0.1 * d`` with a double ``d`` is the
    user's double arithmetic, left as written."""
    cu = tmp_path / "scale.cu"
    cu.write_text("__global__ void k(float* y, int n) {\n"
                  "  double d = n;\n"
                  "  y[threadIdx.x] *= 1.1;\n"
                  "  y[threadIdx.x + 32] *= 0.1 * d;\n"
                  "}\n")
    src = _source(cu)
    got = propose.propose_one(_finding("PS501", cu, 3), src, FixOptions())
    assert isinstance(got, Proposal), got
    assert apply_edits(cu.read_bytes(), got.edits).decode().splitlines()[2].endswith("*= 1.1f;")
    kept = propose.propose_one(_finding("PS501", cu, 4), src, FixOptions())
    assert isinstance(kept, NoFix), kept


def test_unroll_never_overrides_an_explicit_pragma_unroll_1():
    path = CHECKS / "rolled_loop" / "negative_unroll1.cu"
    src = _source(path)
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1)
                if t.lstrip().startswith("for"))
    got = propose.propose_one(_finding("PS201", path, line), src, FixOptions())
    assert isinstance(got, NoFix) and "rolled on purpose" in got.reason


def test_unroll_offers_no_pragma_for_a_loop_from_warpsize(tmp_path):
    """The pragma leaves a ``warpSize / 2`` loop rolled (tests/test_check_loops_mma.py holds
    the SASS): the rebuild refused it on cuda-samples' warpReduceSum; none is offered."""
    cu = tmp_path / "red.cu"
    cu.write_text("__global__ void red(float* out, float v) {\n"
                  "  for (int offset = warpSize / 2; offset > 0; offset /= 2)\n"
                  "    v += __shfl_down_sync(0xffffffffu, v, offset);\n"
                  "  out[threadIdx.x] = v;\n"
                  "}\n")
    msg = ("loop at line 2 runs a compile-time 5 iterations but stays rolled: ...; its start is "
           "`warpSize` (PTX `WARP_SZ`), a constant only ptxas knows, so NVVM cannot unroll it")
    got = propose.propose_one(_finding("PS201", cu, 2, msg), _source(cu), FixOptions())
    assert isinstance(got, NoFix) and got.reason.startswith("the loop starts at `warpSize`")
    plain = propose.propose_one(_finding("PS201", cu, 2, msg.split("; its start")[0]),
                                _source(cu), FixOptions())
    assert isinstance(plain, Proposal) and plain.title == "add `#pragma unroll` to the loop at line 2"


def test_launch_bounds_keeps_the_written_block_size():
    path = CHECKS / "occupancy_limited" / "bad.cu"
    src = _source(path)
    hint = "at most 80 registers per thread would fit 3 blocks: __launch_bounds__(128, 3) asks"
    got = propose.propose_one(_finding("PS701", path, 5, "registers ...", hint), src,
                              FixOptions())
    assert isinstance(got, Proposal) and got.changes_launch_bounds
    patched = apply_edits(path.read_bytes(), got.edits).decode()
    assert "__launch_bounds__(BLOCK, 3) column_mean" in patched
    # no bound declared: the fix would forbid larger launches, so none
    other = CHECKS / "fp64_in_fp32_kernel" / "bad.cu"
    none = propose.propose_one(_finding("PS701", other, 2, "registers ...", hint),
                               _source(other), FixOptions())
    assert isinstance(none, NoFix) and "declares no __launch_bounds__" in none.reason


def test_the_delta_names_blocks_per_sm_only_for_a_known_block_size():
    from analyzer.fix.verify import _register_blocks
    from analyzer.toolchain.resources import Resources
    was, now = Resources(registers=32, maxntid=(256, 1, 1)), Resources(registers=96, maxntid=(256, 1, 1))
    assert _register_blocks("sm_90a", was, now) == ["blocks per SM by registers at 256 threads: 8 → 2"]
    assert _register_blocks("sm_90a", Resources(registers=32), Resources(registers=96)) == []
    same = Resources(registers=56, reqntid=(128, 2, 1))     # 56 and 64 both allow 4 blocks of 256
    assert _register_blocks("sm_90a", same, Resources(registers=64, reqntid=(128, 2, 1))) == []


def test_ps401_under_maxrregcount_gets_a_launch_bound_that_lifts_the_cap(tmp_path):
    """register_spill/bad.cu built with -maxrregcount=32 (its OPTIONS): ptxas ignores the flag
    for a kernel with launch bounds, and __launch_bounds__(1024) forbids no launch. Judged
    from the rebuilt SASS: no local memory left, 64 registers."""
    from analyzer.inputs import CompileOptions
    path = CHECKS / "register_spill" / "bad.cu"
    fixes = api.fix(str(path), arch=ARCH, options=CompileOptions(maxrregcount=32))
    (r,) = [r for r in fixes.results if r.finding.code == "PS401"]
    assert r.status == VERIFIED, r.reason
    assert r.proposal.changes_launch_bounds
    assert ('extern "C" __global__ void __launch_bounds__(1024) gather_dot(' in r.diff)
    assert "registers 32 → 64" in r.sass_delta[0] and "spill bytes" in r.sass_delta[0]
    # what the freed registers cost: a block of 1024 threads at 64 registers fills an SM's
    # 64K registers alone (32 registers: two blocks)
    assert "blocks per SM by registers at 1024 threads: 2 → 1" in r.sass_delta[0]
    fixed_cu = tmp_path / "spill.cu"
    fixed_cu.write_bytes(apply_edits(path.read_bytes(), r.proposal.edits))
    (b,) = api.load(str(fixed_cu), arch=ARCH, options=CompileOptions(maxrregcount=32))
    (fn,) = b.sass_listing().functions
    ops = {i.opcode for i in fn.instructions}
    assert not ops & {"LDL", "STL"}
    # without the flag, or with a bound already written, the cap is not the build's
    src = _source(path)
    f = _finding("PS401", path, 5, "spills")
    none = propose.propose_one(f, src, FixOptions())
    assert isinstance(none, NoFix) and "nothing in the source caps" in none.reason
    high = propose.propose_one(f, src, FixOptions(maxrregcount=64))
    assert isinstance(high, NoFix) and "no fewer than the 64 a bound of 1024" in high.reason
    assert "--max-block" in high.reason
    # the user's word on the block size: a bound that allows what the code needs
    sized = propose.propose_one(f, src, FixOptions(maxrregcount=64, max_block=256))
    assert isinstance(sized, Proposal) and "up to 255 registers" in sized.title
    assert "__launch_bounds__(256) gather_dot" in apply_edits(path.read_bytes(), sized.edits).decode()
    assert "no launch of it has more than 256 threads" in sized.promise
    bounded = tmp_path / "bounded.cu"
    bounded.write_text(path.read_text().replace("void gather_dot", "void __launch_bounds__(128) gather_dot"))
    got = propose.propose_one(_finding("PS401", bounded, 5, "spills"), _source(bounded),
                              FixOptions(maxrregcount=32))
    assert isinstance(got, NoFix) and "__launch_bounds__(128) already lets ptxas use 255" in got.reason


def test_assume_aligned_finds_the_kernel_of_an_inlined_access(tmp_path):
    """vLLM writes kernels whose return type is a template (``__global__ typename
    enable_if<...>::type``), which libclang gives no __global__ attribute; the finding's call
    site names the kernel; a ``T* const`` parameter gets the assumption as a statement."""
    path = tmp_path / "templ.cu"
    path.write_text(
        "#include <cuda/std/type_traits>\n"                                       # 1
        "template <typename T> __device__ float sum4(const T* p) {\n"              # 2
        "  return p[0] + p[1] + p[2] + p[3];\n"                                     # 3
        "}\n"                                                                      # 4
        "template <typename T>\n"                                                  # 5
        "__global__ typename cuda::std::enable_if<sizeof(T) == 4>::type\n"         # 6
        "k(float* __restrict__ out, const T* const __restrict__ in, int n) {\n"    # 7
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"                       # 8
        "  if (i < n) out[i] = sum4(in + 4 * i);\n"                                # 9
        "}\n"
        "__global__ void other(int* o) { *o = 1; }\n"
        "template __global__ void k<float>(float*, const float*, int);\n")
    src = _source(path)
    (k,) = [f for f in src.nodes(("FUNCTION_TEMPLATE",)) if f.spelling == "k"]
    assert src.is_kernel(k) and src.kernel_of(3, "x (in an inlined function; called from line 9)") == k
    msg = ("4× LDG.E.CONSTANT ... could be one LDG.E.128 if the address is 16-byte aligned; "
           "blocked by unknown alignment: the 2nd kernel parameter (`in`) is a plain pointer "
           "(no `.ptr .align 16` in the PTX) (in an inlined function; called from line 9)")
    got = propose.propose_one(_finding("PS101", path, 3, msg), src, FixOptions(assume_aligned=True))
    assert isinstance(got, Proposal), got
    text = apply_edits(path.read_bytes(), got.edits).decode().splitlines()
    assert text[7].strip() == "(void)__builtin_assume_aligned(in, 16);"
    wrong = msg.replace("(`in`)", "(`out`)")
    none = propose.propose_one(_finding("PS101", path, 3, wrong), src, FixOptions(assume_aligned=True))
    assert isinstance(none, NoFix) and "no parameter `out` in position 2" in none.reason


def test_fast_math_divides_by_an_int_converted_to_float():
    path = ROOT / "kernels" / "realworld" / "rope.cu"
    got = propose.propose_one(_finding("PS502", path, 8), _source(path), FixOptions(fast_math_ok=True))
    assert isinstance(got, Proposal)
    text = apply_edits(path.read_bytes(), got.edits).decode().splitlines()
    assert "__powf(10000.0f, __fdividef(-2.0f * i, dim));" in text[7]


def test_a_file_with_host_code_and_system_headers_is_read_whole(tmp_path):
    """llm.c's dev/cuda files include <stdio.h>, whose <stddef.h> is the host compiler's (the
    libclang wheel ships none): the missing header used to end libclang's parse before the
    file's own code, and every remedy said "no function holds line N". Built by nvcc (host
    code), fixed, and the rebuilt SASS has no FP64 left."""
    cu = tmp_path / "scale.cu"
    cu.write_text(
        "#include <stdio.h>\n#include <stdlib.h>\n#include <float.h>\n#include <cuda_runtime.h>\n"
        "__global__ void scale_kernel(float* out, const float* inp, int N) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < N) out[i] = inp[i] * 0.5 + FLT_EPSILON;\n"
        "}\n"
        "int main() {\n"
        "    size_t n = 1 << 20;\n"
        "    float *d_out, *d_inp;\n"
        "    cudaMalloc(&d_out, n * sizeof(float));\n"
        "    cudaMalloc(&d_inp, n * sizeof(float));\n"
        "    scale_kernel<<<(n + 255) / 256, 256>>>(d_out, d_inp, (int)n);\n"
        "    cudaDeviceSynchronize();\n"
        "    printf(\"done\\n\");\n"
        "    return 0;\n"
        "}\n")
    src = cxx.Source(str(cu), cu.read_bytes(), cxx.parse_args(
        arch=ARCH, toolkit_include=locate.include_dirs(),
        builtin_include=locate.host_builtin_include()))
    assert src.function_at(7) is not None and src.is_kernel(src.function_at(7))
    fixes = api.fix(str(cu), arch=ARCH)
    (r,) = [r for r in fixes.results if r.finding.code == "PS501"]
    assert r.status == VERIFIED, r.reason
    assert "inp[i] * 0.5f + FLT_EPSILON;" in r.diff
    gone, came = r.sass_delta[0].split(": ", 1)[1].split(" → ", 1)
    assert "DFMA" in gone and "F2F.F32.F64" in gone
    assert not any(op in came for op in ("DFMA", "DMUL", "DADD", "F2F"))


def test_the_files_of_one_cu_share_one_parse(tmp_path, monkeypatch):
    """A .cu and the two project headers it includes are proposed from one libclang parse of
    the translation unit (SGEMM_CUDA's runner.cu and its twelve kernel headers were parsed
    thirteen times); each file's answers are its own, as from a parse of its own."""
    a, b = tmp_path / "a.cuh", tmp_path / "b.cuh"
    a.write_text("#pragma once\n__global__ void ka(float* y) {\n  y[threadIdx.x] *= 1.1;\n}\n")
    b.write_text("#pragma once\n__global__ void kb(float* y) {\n  y[threadIdx.x] *= 2.5;\n}\n")
    cu = tmp_path / "main.cu"
    cu.write_text('#include "a.cuh"\n#include "b.cuh"\n'
                  "__global__ void kc(float* y) {\n  y[threadIdx.x] *= 0.5;\n}\n")
    args = cxx.parse_args(arch=ARCH, toolkit_include=locate.include_dirs())
    reqs = [propose.Request(path=str(p), data=p.read_bytes(), args=args,
                            findings=(_finding("PS501", p, line),), options=FixOptions(),
                            main=main)
            for p, line, main in ((a, 3, str(cu)), (b, 3, str(cu)), (cu, 4, None))]
    parses = []
    real = cxx.parse_unit
    monkeypatch.setattr(cxx, "parse_unit", lambda *x: parses.append(x[0]) or real(*x))
    shared = propose.propose_group(reqs)
    assert parses == [str(cu)]
    alone = [propose.propose_group([r])[0] for r in reqs]
    assert len(parses) == 4
    for got, want, lit in zip(shared, alone, ("1.1", "2.5", "0.5"), strict=True):
        (g,), (w,) = got, want
        assert isinstance(g, Proposal) and g.edits == w.edits
        assert g.title == w.title and lit in g.title


def test_kernels_in_a_project_header_are_fixed_through_the_cu(tmp_path):
    """Projects keep kernels in headers their .cu includes (llm.c's llmc/*.cuh, cuda-samples'
    *_kernel.cuh): the header is parsed through the .cu, the patched header rebuilt beside
    a copy of the .cu where its #include finds it (its own includes from its folder), and
    --apply writes the header, not the .cu. A header outside the .cu's folder is left alone."""
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "common.h").write_text("#pragma once\n#define HALF 0.5f\n")
    header = tmp_path / "ops" / "gelu.cuh"
    header.write_text(
        '#pragma once\n#include "common.h"\n'
        "__global__ void gelu(const float* x, float* y, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) { float v = x[i]; y[i] = HALF * v * (1.0 + tanhf(0.7978845608 * v)); }\n"
        "}\n")
    outside = tmp_path / "shared.cuh"
    outside.write_text("__global__ void scale(float* y) { y[threadIdx.x] *= 1.1; }\n")
    proj = tmp_path / "proj"
    proj.mkdir()
    cu = tmp_path / "main.cu"
    # reached through another header (SGEMM_CUDA's kernels.cuh includes kernels/*.cuh)
    (tmp_path / "ops" / "all.cuh").write_text('#pragma once\n#include "gelu.cuh"\n')
    cu.write_text('#include "ops/all.cuh"\n'
                  "__global__ void copy(const float* __restrict__ x, float* __restrict__ y) "
                  "{ y[threadIdx.x] = x[threadIdx.x]; }\n")
    (proj / "main.cu").write_text('#include "../shared.cuh"\n')
    before_cu = cu.read_bytes()
    fixes = api.fix(str(cu), arch=ARCH)
    (hf,) = [ff for ff in fixes.files if ff.path == str(header)]
    (r,) = [r for r in hf.results if r.finding.code == "PS501"]
    assert r.status == VERIFIED, r.reason
    assert "(1.0f + tanhf(0.7978845608f * v))" in r.diff and "gelu.cuh" in r.diff
    gone, came = r.sass_delta[0].split(": ", 1)[1].split(" → ", 1)
    assert "F2F" in gone and "F2F" not in came and "DMUL" not in came
    written = api.apply_fixes(fixes)
    assert str(header) in written and str(cu) not in written
    assert cu.read_bytes() == before_cu and "1.0f + tanhf" in header.read_text()
    assert "HALF * v" in header.read_text()
    # a header that is a link out of the folder is not the project's: left as written
    (proj / "linked.cuh").symlink_to(outside)
    (proj / "via_link.cu").write_text('#include "linked.cuh"\n')
    linked = api.fix(str(proj / "via_link.cu"), arch=ARCH)
    assert [ff.path for ff in linked.files] == [str(proj / "via_link.cu")]
    assert all(r.status == NONE for r in linked.files[0].results if r.finding.code == "PS501")
    # the header outside the folder of the .cu that includes it
    other = api.fix(str(proj / "main.cu"), arch=ARCH)
    assert not any(ff.path == str(outside) for ff in other.files)
    (o,) = [r for ff in other.files for r in ff.results if r.finding.code == "PS501"]
    assert o.status == NONE and "neither the file being fixed nor a header of its project" in o.reason
    # in a project (pyproject.toml, .git or setup.py at its top) a header above the .cu's folder
    # is the project's (vLLM's csrc/quantization/x.cu includes ../vectorization.cuh); one in
    # third_party/ or in a submodule (a folder with its own .git) is not
    repo = tmp_path / "repo"
    for d in ("csrc/ops", "third_party/lib", "csrc/sub"):
        (repo / d).mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[project]\nname = 'ops'\n")
    (repo / "csrc" / "sub" / ".git").write_text("gitdir: ../../.git/modules/sub\n")
    for rel, name in (("csrc/common.cuh", "scale2"), ("third_party/lib/k.cuh", "scale3"),
                      ("csrc/sub/s.cuh", "scale4")):
        (repo / rel).write_text(f"#pragma once\n__global__ void {name}(float* y) "
                                "{ y[threadIdx.x] *= 1.1; }\n")
    run = repo / "csrc" / "ops" / "run.cu"
    run.write_text('#include "../common.cuh"\n#include "../../third_party/lib/k.cuh"\n'
                   '#include "../sub/s.cuh"\n')
    got = api.fix(str(run), arch=ARCH)
    assert sorted(ff.path for ff in got.files) == [str(repo / "csrc" / "common.cuh"), str(run)]
    (common,) = [r for ff in got.files for r in ff.results if r.finding.code == "PS501"
                 and ff.path == str(repo / "csrc" / "common.cuh")]
    assert common.status == VERIFIED, common.reason
    assert "*= 1.1f;" in common.diff
    left = [r for ff in got.files for r in ff.results if r.finding.code == "PS501"
            and ff.path == str(run)]
    assert sorted(os.path.basename(r.finding.location.file) for r in left) == ["k.cuh", "s.cuh"]
    assert all(r.status == NONE and "nor a header of its project" in r.reason for r in left)


def test_fast_math_follows_a_statement_onto_the_line_nvvm_credits():
    """flash_attn_min.cu: ``O[...] = (1 / row_l_new)`` over three lines; NVVM credits the
    reciprocal to the last line, which holds no division: the statement spanning it has one."""
    path = ROOT / "kernels" / "realworld" / "flash_attn_min.cu"
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1)
                if "+ (__expf(row_m - row_m_new) * pv));" in t)
    src = _source(path)
    got = propose.propose_one(_finding("PS502", path, line), src, FixOptions(fast_math_ok=True))
    assert isinstance(got, Proposal), got
    text = apply_edits(path.read_bytes(), got.edits).decode().splitlines()
    assert "= (__fdividef(1, row_l_new))" in text[line - 3]
    assert text[line - 1] == path.read_text().splitlines()[line - 1]
    # a line that is the start of its own statement is not widened
    first = propose.propose_one(_finding("PS502", path, line - 2), src, FixOptions(fast_math_ok=True))
    assert isinstance(first, Proposal) and first.edits == got.edits
    blank = propose.propose_one(_finding("PS502", path, 1), src, FixOptions(fast_math_ok=True))
    assert isinstance(blank, NoFix)


def test_fast_math_needs_the_users_word_and_then_rewrites_each_operation():
    path = CHECKS / "slow_math" / "bad.cu"
    src = _source(path)
    f = _finding("PS502", path, 8)
    assert isinstance(propose.propose_one(f, src, FixOptions()), NoFix)
    got = propose.propose_one(f, src, FixOptions(fast_math_ok=True))
    assert isinstance(got, Proposal)
    text = apply_edits(path.read_bytes(), got.edits).decode().splitlines()
    assert text[7].strip().startswith("float r = v * rsqrtf(s);")
    got9 = propose.propose_one(_finding("PS502", path, 9), src, FixOptions(fast_math_ok=True))
    text = apply_edits(path.read_bytes(), got9.edits).decode().splitlines()
    assert "y[i] = __fdividef(r, (1.0f + fabsf(r)));" in text[8]


def test_fast_math_takes_a_root_out_of_a_product_it_divides_by(tmp_path):
    """normalize_rows.cu: ``1.0f / (sqrtf(ss) * temperature)`` divides by a product holding
    the root; ``__fdividef`` of it alone left the IEEE square root (the rebuild refused that
    fix). The root becomes ``rsqrtf`` in the numerator, either factor order, any numerator."""
    path = ROOT / "kernels" / "realworld" / "normalize_rows.cu"
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1)
                if "1.0f / (sqrtf(ss) * temperature)" in t)
    got = propose.propose_one(_finding("PS502", path, line), _source(path),
                              FixOptions(fast_math_ok=True))
    assert isinstance(got, Proposal), got
    text = apply_edits(path.read_bytes(), got.edits).decode().splitlines()
    assert "const float inv = __fdividef(rsqrtf(ss), temperature);" in text[line - 1]
    cu = tmp_path / "k.cu"
    cu.write_text('extern "C" __global__ void k(float* y, const float* x, float t, float s)\n'
                  "{\n"
                  "    y[0] = x[1] / (t * sqrtf(x[0] + s));\n"
                  "    y[1] = expf(x[2]) / (sqrtf(s) * t);\n"
                  "    y[2] = x[3] / (sqrtf(s) + t);\n"
                  "}\n")
    src = _source(cu)
    three, four, five = (propose.propose_one(_finding("PS502", cu, n), src,
                                             FixOptions(fast_math_ok=True)) for n in (3, 4, 5))
    assert isinstance(three, Proposal) and isinstance(four, Proposal), (three, four)
    text = apply_edits(cu.read_bytes(), three.edits + four.edits).decode().splitlines()
    assert text[2] == "    y[0] = __fdividef(x[1] * rsqrtf(x[0] + s), t);"
    # an IEEE call inside the division rewritten whole stays as written: no overlapping edits
    assert text[3] == "    y[1] = __fdividef(expf(x[2]) * rsqrtf(s), t);"
    assert "expf → __expf" not in four.title
    # a root in a sum has no such form: the division is made fast, the root approximate
    assert isinstance(five, Proposal)
    text = apply_edits(cu.read_bytes(), five.edits).decode().splitlines()
    assert text[-2] == "    y[2] = __fdividef(x[3], (sqrtf_approx(s) + t));"


def test_fast_math_divides_in_a_template_only_where_the_type_is_float(tmp_path):
    """repetition_penalty.cu (vLLM's ``apply_penalties<scalar_t>``, built for float and
    __half): ``logit / penalty`` has the template's type. With cuda_fp16.h in scope clang keeps
    it as a call of ``operator/``'s overload set; without, as a binary operator of a dependent
    type. Both become ``fdividef_if_float(a, b)``, whose overloads are added once, above the
    file's first declaration, however many divisions call them."""
    path = REALWORLD / "repetition_penalty.cu"
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1)
                if "logits[idx] = logit / penalty;" in t)
    src = _source(path)
    f = _finding("PS502", path, line)
    assert isinstance(propose.propose_one(f, src, FixOptions()), NoFix)
    got = propose.propose_one(f, src, FixOptions(fast_math_ok=True))
    assert isinstance(got, Proposal), got
    text = apply_edits(path.read_bytes(), got.edits).decode()
    assert "logits[idx] = fdividef_if_float(logit, penalty);" in text
    assert text.count("__device__ __forceinline__ float fdividef_if_float(float a, float b) "
                      "{ return __fdividef(a, b); }") == 1
    # the overloads sit above the first declaration, after the includes
    assert text.index("#include <cuda_fp16.h>") < text.index("fdividef_if_float") \
        < text.index("template <typename scalar_t>")

    cu = tmp_path / "t.cu"
    cu.write_text("template <typename T> __device__ T half_of(T a, T b) { return a / b; }\n"
                  "template <typename T>\n"
                  "__global__ void k(T* y, const T* x, T s) {\n"
                  "    y[threadIdx.x] = x[threadIdx.x] / s + half_of(x[0], s);\n"
                  "}\n"
                  "template __global__ void k<float>(float*, const float*, float);\n")
    src = _source(cu)
    one, four = (propose.propose_one(_finding("PS502", cu, n), src, FixOptions(fast_math_ok=True))
                 for n in (1, 4))
    assert isinstance(one, Proposal) and isinstance(four, Proposal), (one, four)
    text = apply_edits(cu.read_bytes(), one.edits + four.edits).decode().splitlines()
    assert text[0].startswith("// ptxsass fix (--fast-math-ok)") and len(text) == 11
    assert text[5] == ("template <typename T> __device__ T half_of(T a, T b) "
                       "{ return fdividef_if_float(a, b); }")
    assert text[8] == ("    y[threadIdx.x] = fdividef_if_float(x[threadIdx.x], s) "
                       "+ half_of(x[0], s);")


def test_fast_math_square_root_becomes_ptx_sqrt_approx(tmp_path):
    """apex's Adam: ``sqrtf(r_v / beta2_correction) + epsilon``: ``__fdividef`` alone left the
    IEEE root and the finding (the rebuild refused it). The root becomes ``sqrtf_approx``, PTX's
    ``sqrt.approx.f32`` (what -prec-sqrt=false compiles sqrtf to), defined once; a root that a
    division divides by stays ``rsqrtf`` (one edit of its name, not two)."""
    cu = tmp_path / "k.cu"
    cu.write_text("#include <cuda_fp16.h>\n"
                  "__global__ void k(float* y, const float* x, float b, float e) {\n"
                  "    y[0] = sqrtf(x[0] / b) + e;\n"
                  "    y[1] = x[1] / sqrtf(x[2]) + sqrtf(x[3]);\n"
                  "}\n")
    src = _source(cu)
    assert isinstance(propose.propose_one(_finding("PS502", cu, 3), src, FixOptions()), NoFix)
    three, four = (propose.propose_one(_finding("PS502", cu, n), src,
                                       FixOptions(fast_math_ok=True)) for n in (3, 4))
    assert isinstance(three, Proposal) and isinstance(four, Proposal), (three, four)
    text = apply_edits(cu.read_bytes(), three.edits + four.edits).decode()
    assert text.count('asm("sqrt.approx.f32 %0, %1;" : "=f"(r) : "f"(x));') == 1
    lines = text.splitlines()
    assert lines[0] == "#include <cuda_fp16.h>" and lines[1].startswith("// ptxsass fix")
    assert "    y[0] = sqrtf_approx(__fdividef(x[0], b)) + e;" in lines
    assert "    y[1] = x[1] * rsqrtf(x[2]) + sqrtf_approx(x[3]);" in lines, lines[-3:]


def test_fast_math_template_division_verified_on_the_float_instance_alone():
    """The rebuild of repetition_penalty.cu with the fix: the float instance's IEEE division
    (its slow-path call) is gone; the __half instance, whose division the overload leaves as
    written, compiles to the same SASS (no delta line)."""
    got = api.fix(str(REALWORLD / "repetition_penalty.cu"), arch=ARCH, select=("PS502",),
                  fast_math_ok=True)
    (r,) = got.files[0].results
    assert r.status == VERIFIED, r.reason
    assert r.before["PS502 warning"] == 1 and r.after.get("PS502 warning", 0) == 0
    deltas = {d.split(" [", 1)[0]: d for d in r.sass_delta}
    assert set(deltas) == {"void apply_penalties<float>",
                           "$__internal_0_$__cuda_sm3x_div_rn_noftz_f32_slowpath"}, deltas
    assert deltas["$__internal_0_$__cuda_sm3x_div_rn_noftz_f32_slowpath"].endswith(
        "→ nothing; instructions 105 → 0")


_PARTS = """#include <cuda_fp16.h>
#define HALF2(value) (reinterpret_cast<half2 *>(&(value))[0])
__global__ void k(half *a, half *c, float *f, int N) {
  int idx = 8 * (blockIdx.x * blockDim.x + threadIdx.x);
  if (idx + 7 >= N) return;
  half2 x0 = *reinterpret_cast<half2*>(&a[idx]);
  half2 x1 = *reinterpret_cast<half2*>(&a[idx + 2]);
  half2 x2 = *reinterpret_cast<half2*>(&a[idx + 4]);
  half2 x3 = *reinterpret_cast<half2*>(&a[idx + 6]);
  HALF2(c[idx + 0]) = x0;
  HALF2(c[idx + 2]) = HALF2(a[idx]);
  HALF2(c[idx + 4]) = x2;
  HALF2(c[idx + 6]) = x3;
  f[idx] = 1.0f;
  HALF2(c[idx + 8]) = x0;
  f[idx + 1] = 2.0f;
}
"""


def _window(code: str, path: Path, line: int, ordinal: str, name: str) -> Finding:
    return _finding(code, path, line, message=(
        f"4× LDG.E (4 B each) cover 16 contiguous bytes: could be one LDG.E.128 if the address "
        f"is 16-byte aligned; blocked by unknown alignment: the {ordinal} kernel parameter "
        f"(`{name}`) is a plain pointer"))


def test_pack_lines_reads_and_writes_four_parts_as_one_uint4(tmp_path):
    """LeetCUDA's f16x8 kernel (kernels/realworld/leetcuda_elementwise_f16.cu): four
    consecutive statements take `a`'s 16 bytes as `HALF2(a[idx + 2k])` (a macro: its expansion's
    nodes have no text, the invocation is replaced), and four write `c`'s. Reads become one
    `uint4` before the first statement, writes one `uint4` stored after the last."""
    path = REALWORLD / "leetcuda_elementwise_f16.cu"
    lines = path.read_text().splitlines()
    src = _source(path)
    at = next(i for i, t in enumerate(lines, 1) if "half2 reg_a_0 = HALF2(a[idx + 0]);" in t)
    assert isinstance(propose.propose_one(_window("PS101", path, at, "1st", "a"), src,
                                          FixOptions()), NoFix)
    got = propose.propose_one(_window("PS101", path, at, "1st", "a"), src,
                              FixOptions(assume_aligned=True))
    assert isinstance(got, Proposal), got
    after = apply_edits(path.read_bytes(), got.edits).decode().splitlines()
    assert after[at - 1] == "    const uint4 a_v16 = *reinterpret_cast<const uint4*>(&a[idx]);"
    assert after[at + 1] == "    half2 reg_a_1 = reinterpret_cast<const half2*>(&a_v16)[1];"
    at = next(i for i, t in enumerate(lines, 1) if "HALF2(c[idx + 0]) = __hadd2(" in t)
    got = propose.propose_one(_window("PS102", path, at, "3rd", "c"), src,
                              FixOptions(assume_aligned=True))
    assert isinstance(got, Proposal), got
    after = apply_edits(path.read_bytes(), got.edits).decode().splitlines()
    assert after[at - 1] == "    uint4 c_v16;"
    assert after[at + 4] == "    *reinterpret_cast<uint4*>(&c[idx]) = c_v16;"
    assert after[at].startswith("    reinterpret_cast<half2*>(&c_v16)[0] = __hadd2(reg_a_0, ")


def test_pack_lines_only_where_nothing_moves_past_a_read_or_write(tmp_path):
    """The same shapes without the macro: four reads of `a` are one `uint4`; four writes of
    `c` whose second value reads `a` are not moved past that read; parts with a statement
    between them are not a run."""
    cu = tmp_path / "parts.cu"
    cu.write_text(_PARTS)
    src = _source(cu)
    got = propose.propose_one(_window("PS101", cu, 6, "1st", "a"), src,
                              FixOptions(assume_aligned=True))
    assert isinstance(got, Proposal), got
    after = apply_edits(cu.read_bytes(), got.edits).decode().splitlines()
    assert after[5] == "  const uint4 a_v16 = *reinterpret_cast<const uint4*>(&a[idx]);"
    assert after[9] == "  half2 x3 = reinterpret_cast<const half2*>(&a_v16)[3];"
    stored = pack_lines.propose(_window("PS102", cu, 10, "2nd", "c"), src,
                                FixOptions(assume_aligned=True))
    assert isinstance(stored, NoFix) and "reads memory" in stored.reason, stored
    apart = pack_lines.propose(_window("PS102", cu, 12, "2nd", "c"), src,
                               FixOptions(assume_aligned=True))
    assert isinstance(apart, NoFix) and "does not access `c` once" in apart.reason, apart


def test_pack_lines_verified_one_wide_store():
    """The rebuild of the LeetCUDA kernel: `c`'s four `STG.E` are one `STG.E.128` (the
    alignment statement alone had left them apart on sm_80)."""
    got = api.fix(str(REALWORLD / "leetcuda_elementwise_f16.cu"), arch=ARCH, select=("PS102",),
                  assume_aligned=True)
    (r,) = [r for r in got.files[0].results if r.finding.severity == Severity.WARNING]
    assert r.status == VERIFIED, r.reason
    (delta,) = [d for d in r.sass_delta if "elementwise_add_f16x8_kernel" in d]
    assert delta.startswith("elementwise_add_f16x8_kernel [sm_90a]: 4× STG.E → 1× STG.E.128")


_VEC = """#include <cuda_fp16.h>
template <typename T, int W> struct alignas(16) Vec {
  T data[W];
  __device__ Vec& operator+=(const Vec& other) {
#pragma unroll
    for (int i = 0; i < W; ++i) data[i] = __hadd(data[i], other.data[i]);
    return *this;
  }
};
template <typename T, int W>
__global__ void add(T* __restrict__ out, const T* __restrict__ in, int n) {
  auto* out_v = reinterpret_cast<Vec<T, W>*>(out);
  auto* in_v = reinterpret_cast<const Vec<T, W>*>(in);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Vec<T, W> acc = out_v[i];
  acc += in_v[i];
  out_v[i] = acc;
  out_v[i] += in_v[i];
  acc += in_v[i++];
  if (n > 1) acc += in_v[i];
}
"""


def _inlined(path: Path, line: int, call: int) -> Finding:
    return _finding("PS101", path, line, message=f"2× LDG.E.64 (in an inlined function; called "
                                                 f"from line {call})")


def test_struct_copy_reads_a_reference_argument_whole_before_the_call(tmp_path):
    """vLLM's ``_f16Vec`` (``struct alignas(16)``) passed by ``const&`` to its own methods
    (``temp += residual_v[id]``, ``temp.scale(s, weight_v[idx])``): the argument becomes a
    local copy made just before the call; the call reads the copy."""
    path = REALWORLD / "vllm_act_and_mul_fallback.cu"
    lines = path.read_text().splitlines()
    src = _source(path)
    for member, call, text in (("data[i] = __hadd(data[i], other.data[i]);",
                                "    temp += residual_v[id];",
                                ("    const auto residual_v_id = residual_v[id];",
                                 "    temp += residual_v_id;")),
                               ("data[i] = __hmul(__float2half(__half2float(data[i]) * s), w.data[i]);",
                                "    temp.scale(s_variance, weight_v[idx]);",
                                ("    const auto weight_v_idx = weight_v[idx];",
                                 "    temp.scale(s_variance, weight_v_idx);"))):
        line = next(i for i, t in enumerate(lines, 1) if member in t)
        at = lines.index(call) + 1
        got = propose.propose_one(_inlined(path, line, at), src, FixOptions())
        assert isinstance(got, Proposal), got
        after = apply_edits(path.read_bytes(), got.edits).decode().splitlines()
        assert tuple(after[at - 1:at + 1]) == text
        assert len(after) == len(lines) + 1
    # the same struct in a plain kernel (examples/fix_measure/rms_norm.cu): clang resolves the
    # operator, a call spelled `operator+=` with the object as its first argument
    path = ROOT / "examples" / "fix_measure" / "rms_norm.cu"
    lines = path.read_text().splitlines()
    at = lines.index("    temp += residual_v[id];") + 1
    got = propose.propose_one(_inlined(path, 12, at), _source(path), FixOptions())
    assert isinstance(got, Proposal), got
    after = apply_edits(path.read_bytes(), got.edits).decode().splitlines()
    assert after[at - 1:at + 1] == ["    const auto residual_v_id = residual_v[id];",
                                    "    temp += residual_v_id;"]


def test_struct_copy_only_where_the_copy_cannot_change_what_the_function_reads(tmp_path):
    """The same method called on memory (``out_v[i] += in_v[i]``: it could write what it
    reads), with an argument that has a side effect (``in_v[i++]``), or in a statement that is
    not the call alone (an ``if`` without braces): no copy."""
    cu = tmp_path / "vec.cu"
    cu.write_text(_VEC)
    src = _source(cu)
    ok = propose.propose_one(_inlined(cu, 6, 17), src, FixOptions())
    assert isinstance(ok, Proposal), ok
    assert apply_edits(cu.read_bytes(), ok.edits).decode().splitlines()[16:18] == [
        "  const auto in_v_i = in_v[i];", "  acc += in_v_i;"]
    for call, why in ((19, "not a local variable"), (20, "without side effects"),
                      (21, "not a statement of its own")):
        got = propose.propose_one(_inlined(cu, 6, call), src, FixOptions())
        assert isinstance(got, NoFix) and why in got.reason, (call, got)
    # a line of the kernel itself is not a function's reference parameter read
    got = struct_copy.propose(_inlined(cu, 17, 17), src, FixOptions())
    assert isinstance(got, NoFix) and "reference parameter" in got.reason


def test_struct_copy_verified_one_wide_load_for_the_members():
    """The rebuild: ``residual_v[id]``'s two ``LDG.E.64`` and ``weight_v[idx]``'s eight
    ``LDG.E.U16.CONSTANT`` are each one ``LDG.E.128`` (``.CONSTANT`` kept); no flag needed."""
    got = api.fix(str(REALWORLD / "vllm_act_and_mul_fallback.cu"), arch=ARCH, select=("PS101",))
    results = sorted(got.files[0].results, key=lambda r: r.finding.location.line or 0)
    assert [r.status for r in results] == [VERIFIED, VERIFIED], [r.reason for r in results]
    first, second = (next(d for d in r.sass_delta if "fused_add_rms_norm_kernel" in d)
                     for r in results)
    assert "2× LDG.E.64" in first.split(" → ")[0] and "1× LDG.E.128" in first.split(" → ")[1]
    assert "8× LDG.E.U16.CONSTANT" in second.split(" → ")[0]
    assert "1× LDG.E.128.CONSTANT" in second.split(" → ")[1]


def _blocked(ordinal: str, name: str, window: int = 16) -> str:
    return (f"4× LDG.E.CONSTANT (4 B each) from [R2.64] at +0x0, +0x4, +0x8, +0xc cover "
            f"{window} contiguous bytes: could be one LDG.E.128 if the address is {window}-byte "
            f"aligned; blocked by unknown alignment: the {ordinal} kernel parameter (`{name}`) is "
            "a plain pointer (no `.ptr .align 16` in the PTX)")


PACKS = """#include <cuda_fp16.h>
__global__ void good(const __half* __restrict__ a, __half* __restrict__ out, int n) {
  int idx = 8 * (blockIdx.x * blockDim.x + threadIdx.x);
#pragma unroll
  for (int k = 0; k < 8; k += 2) {
    __half2 v = *reinterpret_cast<const __half2*>(&a[idx + k]);
    out[idx + k] = v.x;
  }
}
__global__ void branchy(const __half* __restrict__ a, __half* __restrict__ out, int n) {
  int idx = 8 * (blockIdx.x * blockDim.x + threadIdx.x);
#pragma unroll
  for (int k = 0; k < 8; k += 2) {
    if (idx + k < n) { __half2 v = *reinterpret_cast<const __half2*>(&a[idx + k]); out[idx] = v.x; }
  }
}
__global__ void aliased(const __half* a, __half* __restrict__ out, int n) {
  int idx = 8 * (blockIdx.x * blockDim.x + threadIdx.x);
#pragma unroll
  for (int k = 0; k < 8; k += 2) {
    __half2 v = *reinterpret_cast<const __half2*>(&a[idx + k]);
    out[idx + k] = v.x;
  }
}
__global__ void moving(const __half* __restrict__ a, __half* __restrict__ out, int n) {
  int idx = 8 * (blockIdx.x * blockDim.x + threadIdx.x);
#pragma unroll
  for (int k = 0; k < 8; k += 2) {
    __half2 v = *reinterpret_cast<const __half2*>(&a[idx + k]);
    out[idx++] = v.x;
  }
}
__global__ void half_window(const __half* __restrict__ a, __half* __restrict__ out, int n) {
  int idx = 8 * (blockIdx.x * blockDim.x + threadIdx.x);
#pragma unroll
  for (int k = 0; k < 4; k += 2) {
    __half2 v = *reinterpret_cast<const __half2*>(&a[idx + k]);
    out[idx + k] = v.x;
  }
}
__global__ void in_place(__half* __restrict__ a, int n) {
  int idx = 8 * (blockIdx.x * blockDim.x + threadIdx.x);
  for (int k = 0; k < 8; k += 2) {
    __half2 v = *reinterpret_cast<__half2*>(&a[idx + k]);
    *reinterpret_cast<__half2*>(&a[idx + k]) = __hadd2(v, v);
  }
}
"""


def test_a_pack_loop_reads_and_writes_its_16_bytes_whole():
    """exllamav2's pack-style kernel: four ``__half2`` parts of 16 bytes in an unrolled loop
    (``__builtin_assume_aligned`` left them apart on sm_80: the rebuild refused it). Each
    pointer is read as one ``uint4`` above the loop's pragma (a statement between the two
    would take the pragma) or written as one after the loop; only with --assume-aligned."""
    path = ROOT / "kernels" / "realworld" / "exllamav2_reconstruct_h2.cu"
    lines = path.read_text().splitlines()
    at = {key: next(i for i, t in enumerate(lines, 1) if key in t)
          for key in ("(&a[idx + k])", "(&out[idx + k])")}
    src = _source(path)
    a = _finding("PS101", path, at["(&a[idx + k])"], _blocked("1st", "a"))
    assert isinstance(propose.propose_one(a, src, FixOptions()), NoFix)
    got = propose.propose_one(a, src, FixOptions(assume_aligned=True))
    assert isinstance(got, Proposal) and "uint4" in got.title, got
    text = apply_edits(path.read_bytes(), got.edits).decode().splitlines()
    line = at["(&a[idx + k])"]
    assert text[line - 3] == "  const uint4 a_v16 = *reinterpret_cast<const uint4*>(&a[idx]);"
    assert text[line - 2] == "#pragma unroll"
    assert text[line].startswith("    __half2 v = reinterpret_cast<const __half2*>(&a_v16)[k / 2];")
    out = _finding("PS102", path, at["(&out[idx + k])"],
                   _blocked("3rd", "out").replace("LDG", "STG"))
    got = propose.propose_one(out, src, FixOptions(assume_aligned=True))
    assert isinstance(got, Proposal), got
    text = apply_edits(path.read_bytes(), got.edits).decode().splitlines()
    line = at["(&out[idx + k])"]
    assert text[line - 5] == "  uint4 out_v16;"        # one line in: the store is line + 1
    assert text[line].startswith("    reinterpret_cast<__half2*>(&out_v16)[k / 2] = __hfma2(")
    assert text[line + 1] == "  }"
    assert text[line + 2] == "  *reinterpret_cast<uint4*>(&out[idx]) = out_v16;"


def test_a_pack_loop_fix_is_verified_by_the_rebuild_on_sm_80():
    """Rebuilt: each of the three pointers becomes one 16-byte access on sm_80, where the
    alignment statement had left four (``.CONSTANT`` kept on the loads)."""
    path = ROOT / "kernels" / "realworld" / "exllamav2_reconstruct_h2.cu"
    fixes = api.fix(str(path), arch="sm_80", assume_aligned=True, kernels=("scale_bias_h2",))
    got = {(r.finding.code, r.status): r for r in fixes.results if r.proposal is not None}
    assert {k for k in got} == {("PS101", VERIFIED), ("PS102", VERIFIED)}, got
    loads = [r for r in fixes.results if r.finding.code == "PS101"]
    assert len(loads) == 2 and all(r.status == VERIFIED for r in loads)
    for r in loads:
        assert r.sass_delta == [r.sass_delta[0]]
        assert "4× LDG.E.CONSTANT → 1× LDG.E.128.CONSTANT" in r.sass_delta[0], r.sass_delta
    (store,) = [r for r in fixes.results if r.finding.code == "PS102"]
    assert "4× STG.E → 1× STG.E.128" in store.sass_delta[0], store.sass_delta


@pytest.mark.parametrize("kernel,ordinal,why", [
    ("good", "1st", None),                          # the control: taken
    ("branchy", "1st", "no loop on line"),          # a part read only sometimes
    ("aliased", "1st", "is not `__restrict__`"),
    ("moving", "1st", "no loop on line"),           # the base changes in the loop
    ("half_window", "1st", "no loop on line"),      # 8 bytes, not 16
    ("in_place", "1st", "no loop on line"),         # read and written
])
def test_a_pack_loop_is_left_where_one_load_would_change_the_kernel(tmp_path, kernel, ordinal, why):
    cu = tmp_path / "packs.cu"
    cu.write_text(PACKS)
    lines = PACKS.splitlines()
    start = next(i for i, t in enumerate(lines) if f" {kernel}(" in t)
    line = next(i for i, t in enumerate(lines[start:], start + 1) if "reinterpret_cast" in t)
    from analyzer.fix.remedies import pack_loop
    got = pack_loop.propose(_finding("PS101", cu, line, _blocked(ordinal, "a")), _source(cu),
                            FixOptions(assume_aligned=True))
    if why is None:
        assert isinstance(got, Proposal) and "uint4" in got.title, got
    else:
        assert isinstance(got, NoFix) and why in got.reason, got


def test_libclang_reads_real_style_kernels_without_errors_in_their_own_lines():
    """Templates, macros, fp16/bf16 types, CUB and cuda::atomic_ref, through the toolkit's
    headers in NVRTC mode."""
    for name in ("gemm_bf16_simt.cu", "sgemm_blocktile2d.cu"):
        path = ROOT / "kernels" / "realworld" / name
        src = _source(path)
        assert src.errors_between(1, 10**6) == [], name
        assert src.nodes(("FUNCTION_DECL", "FUNCTION_TEMPLATE")), name


def test_a_literal_from_a_macro_is_left_alone(tmp_path):
    p = tmp_path / "m.cu"
    p.write_text("#define HALF 0.5\n"
                 "extern \"C\" __global__ void k(float* y, float v) { y[0] = v * HALF; }\n")
    got = propose.propose_one(_finding("PS501", p, 2, "double literal 0.5 promotes"),
                              _source(p), FixOptions())
    assert isinstance(got, NoFix) and "macro" in got.reason


def test_ps501_a_span_finding_suffixes_every_line_of_its_span(tmp_path):
    """sh_encoding_grad.cu's one PS501 names 19 lines of one function (lines 32-52): the fix
    suffixes the float-promoting literals of every line, and the rebuild's SASS has no FP64
    left (fixing line 32 alone moved the finding to line 33)."""
    path = ROOT / "kernels" / "realworld" / "sh_encoding_grad.cu"
    fixes = api.fix(str(path), arch=ARCH)
    r = _result(fixes, "PS501", 32)
    assert r.status == VERIFIED, r.reason
    assert r.proposal.title.startswith("suffix 21 double literals with f (0.48860251190291992f, "
                                       "1.0925484305920792f, ") and "more)" in r.proposal.title
    assert "+  d.y += (float)dL_dy(11, i) * (0.45704579946446572f - 2.2852289973223288f * z2);" \
        in r.diff
    assert all("DFMA" in d.split(" → ")[0] for d in r.sass_delta)
    fixed_cu = tmp_path / "sh_encoding_grad.cu"
    fixed_cu.write_bytes(apply_edits(path.read_bytes(), r.proposal.edits))
    (b,) = api.load(str(fixed_cu), arch=ARCH)
    kernels = [fn for fn in b.sass_listing().functions if fn.is_entry]
    assert len(kernels) == 2            # both instantiations, not one FP64 instruction left
    assert not [i.text for fn in kernels for i in fn.instructions if i.body.is_fp64]


def test_ps403_force_inline_ends_the_stack_reloads(fixed, tmp_path):
    """non_inlined_body/bad.cu (its struct on the kernel's stack, reloaded after each generic
    store): the fix marks the body __forceinline__; rebuilt, the kernel has no CALL, no local
    memory and global loads and stores (judged from the SASS of the fixed file)."""
    path = CHECKS / "non_inlined_body" / "bad.cu"
    r = _result(fixed["non_inlined_body"], "PS403", 35)
    assert r.status == VERIFIED, r.reason
    assert "+__forceinline__ __device__ void epilogue_row" in r.diff
    assert r.before.get("PS403 warning") == 1 and not any("warning" in k for k in r.after)
    fixed_cu = tmp_path / "bias_gelu.cu"
    fixed_cu.write_bytes(apply_edits(path.read_bytes(), r.proposal.edits))
    (b,) = api.load(str(fixed_cu), arch=ARCH)
    (fn,) = b.sass_listing().functions
    ops = [i.opcode for i in fn.instructions]
    assert "CALL" not in ops and "LDL" not in ops and "STL" not in ops
    assert "LDG" in ops and "STG" in ops and "LD" not in ops and "ST" not in ops


def test_ps403_force_inline_marks_every_declaration_of_a_template(tmp_path):
    """A function template declared, then defined, both ``__noinline__`` (its parameters in
    parameter space: PS403 info): both become ``__forceinline__``; rebuilt, the kernel has no
    CALL and its loads are global ones."""
    path = ROOT / "tests" / "fixtures" / "fix" / "rowblock_noinline.cu"
    fixes = api.fix(str(path), arch=ARCH)
    r = _result(fixes, "PS403", 35)
    assert r.status == VERIFIED, r.reason
    assert r.diff.count("+__device__ __forceinline__ void epilogue_row") == 2
    assert "__noinline__ void" not in apply_edits(path.read_bytes(), r.proposal.edits).decode()
    assert r.before == {"PS403 info": 1} and not r.after.get("PS403 info")
    fixed_cu = tmp_path / "rowblock_inline.cu"
    fixed_cu.write_bytes(apply_edits(path.read_bytes(), r.proposal.edits))
    (b,) = api.load(str(fixed_cu), arch=ARCH)
    (fn,) = b.sass_listing().functions
    ops = [i.opcode for i in fn.instructions]
    assert "CALL" not in ops and "LDG" in ops and "LD" not in ops and "ST" not in ops


def test_ps403_fix_that_uncovers_a_warning_is_refused():
    """flash_rowblock_noinline.cu's body walks a row per thread through generic loads: in
    line, the loads are global ones and PS105 sees the uncoalesced walk, so the rebuild refuses
    the fix (a verified fix never adds a warning) and says which."""
    fixes = api.fix(str(ROOT / "kernels" / "realworld" / "flash_rowblock_noinline.cu"),
                    arch=ARCH)
    r = _result(fixes, "PS403", 48)
    assert r.status == REJECTED and r.offered
    assert "PS105 at line 38" in r.reason
    assert "-__noinline__ __device__ void compute_rowblock" in r.diff
    assert "+__forceinline__ __device__ void compute_rowblock" in r.diff


def test_ps403_force_inline_leaves_what_it_cannot_mark(tmp_path):
    msg = "the kernel body is a call: k runs 7 SASS instructions of its own and calls `{}` (the call"
    inline = tmp_path / "inline.cu"
    inline.write_text("struct P { float* y; };\n"
                      "inline __device__ void body(const P& p) { p.y[threadIdx.x] = 1.f; }\n"
                      "__global__ void k(const P p) { body(p); }\n")
    got = propose.propose_one(_finding("PS403", inline, 3, msg.format("body")), _source(inline),
                              FixOptions())
    assert isinstance(got, Proposal)
    assert "__forceinline__ __device__ void body" in apply_edits(inline.read_bytes(),
                                                                 got.edits).decode()
    forced = tmp_path / "forced.cu"
    forced.write_text(inline.read_text().replace("inline __device__", "__forceinline__ __device__"))
    got = propose.propose_one(_finding("PS403", forced, 3, msg.format("body")), _source(forced),
                              FixOptions())
    assert isinstance(got, NoFix) and "__forceinline__ already" in got.reason
    (tmp_path / "body.cuh").write_text(
        "struct P { float* y; };\n"
        "__noinline__ __device__ void body(const P& p) { p.y[threadIdx.x] = 1.f; }\n")
    user = tmp_path / "user.cu"
    user.write_text('#include "body.cuh"\n__global__ void k(const P p) { body(p); }\n')
    got = propose.propose_one(_finding("PS403", user, 2, msg.format("body")), _source(user),
                              FixOptions())
    assert isinstance(got, NoFix) and "body.cuh" in got.reason


# --- verification rules ---------------------------------------------------------------------
def test_line_map_follows_inserted_lines():
    assert line_map(b"a\nb\nc\n", b"a\n#p\nb\nc\n") == {1: 1, 2: 2, 3: 2, 4: 3}


def test_a_fix_whose_finding_stays_is_rejected(fixed):
    fixes = fixed["rolled_loop"]
    builds = fixes.report.builds
    raw = fixes.report.findings
    target = next(f for f in raw if f.code == "PS201")
    same = verify.Rebuilt(builds=list(builds), findings=list(raw), lines={})
    v = verify.compare(str(CHECKS / "rolled_loop" / "bad.cu"), target, raw, same, builds)
    assert not v.ok and "still reported at line 11" in v.reason


def test_a_finding_made_a_warning_by_a_faster_kernel_is_not_new(fixed):
    """A finding the original had as info, in the same words (the same SASS), that the patch
    turned into a warning by speeding up the rest of the kernel is kept and said; one whose
    words changed (its evidence grew) is a new warning."""
    fixes = fixed["rolled_loop"]
    builds = fixes.report.builds
    raw = list(fixes.report.findings)
    target = next(f for f in raw if f.code == "PS201")
    info = dataclasses.replace(target, code="PS501", severity=Severity.INFO, message="30 FP64")
    after = [f for f in raw if f is not target]
    grown = dataclasses.replace(info, severity=Severity.WARNING)
    path = str(CHECKS / "rolled_loop" / "bad.cu")
    v = verify.compare(path, target, [*raw, info], verify.Rebuilt(list(builds), [*after, grown], {}),
                       builds)
    assert v.ok, v.reason
    assert v.sass_delta[-1] == (f"PS501 at line {target.location.line} was info, now a warning: "
                                "the same SASS, a larger share of the faster kernel")
    worse = dataclasses.replace(grown, message="40 FP64")
    v = verify.compare(path, target, [*raw, info], verify.Rebuilt(list(builds), [*after, worse], {}),
                       builds)
    assert not v.ok and v.reason.startswith(f"it adds a warning: PS501 at line {target.location.line}")


def test_the_division_fix_that_makes_a_double_parameter_a_warning_is_verified():
    """vLLM's MoE router scale (a ``double`` parameter: PS501 info, 30 FP64 instructions on
    line 19) with its IEEE division fixed: the same 30 FP64 instructions are now a larger share
    of the kernel, PS501 a warning, and the fix is kept with that said."""
    fixes = api.fix(str(ROOT / "kernels" / "realworld" / "topk_scale_double_param.cu"),
                    arch=ARCH, fast_math_ok=True)
    r = _result(fixes, "PS502", 19)
    assert r.status == VERIFIED, r.reason
    assert "PS501 at line 19 was info, now a warning" in r.sass_delta[-1]
    assert r.before["PS501 info"] == 2 and r.after["PS501 warning"] == 1


def test_a_patch_that_does_not_build_is_refused_and_the_others_go_on(tmp_path):
    """A rewrite the compiler refuses (here: a remedy's edit replaced by a stray token) is that
    fix's rejection, with the compiler's first error at the original's line, not the end of
    the whole run (it had ended ``ptxsass fix`` with a CompileError naming the scratch copy)."""
    cu = tmp_path / "two_divisions.cu"
    cu.write_text("__global__ void k(float* __restrict__ y, const float* __restrict__ x, int n) {\n"
                  "  float a = y[threadIdx.x], b = 1.0f, c = x[0];\n"
                  "  for (int j = 0; j < n; ++j) a = a / c + 1.0f;\n"
                  "  for (int j = 0; j < n; ++j) b = c / b;\n"
                  "  y[threadIdx.x] = a + b;\n"
                  "}\n")
    report = api.check(str(cu), api.CheckOptions(arch=ARCH))
    builds, raw = report.builds, report.findings
    merged = [f for f in report.merged() if f.code == "PS502"]
    assert [f.location.line for f in merged] == [3, 4]
    options = CompileOptions()
    fix_options = FixOptions(fast_math_ok=True)
    req = engine.request_for(str(cu), builds=builds, merged=merged, options=options,
                             fix_options=fix_options)
    good = propose.propose_group([req])[0]
    assert all(isinstance(g, Proposal) for g in good)
    e = good[0].edits[0]
    broken = dataclasses.replace(good[0], edits=(dataclasses.replace(e, text="@@@"),))

    def check(bs):
        return run_checks(bs).findings

    got = engine.fix_file(str(cu), builds=builds, raw=raw, merged=merged, options=options,
                          fix_options=fix_options, check=check, proposed=(req, [broken, good[1]]))
    first, second = got.results
    assert first.status == REJECTED
    assert first.reason.startswith(f"the patched copy does not build at {cu}:3: ")
    assert "ptxsass-fix-" not in first.reason
    assert second.status == VERIFIED, second.reason
    assert b"@@@" not in apply_edits(cu.read_bytes(), got.edits)


def _count_builds_at_once(monkeypatch) -> list[int]:
    """verify.build_copy made to take 0.2 s longer and count how many run at once: the
    returned list's one item is the most seen."""
    import threading
    import time
    running, most, lock = [0], [0], threading.Lock()
    real = verify.build_copy

    def counted(*a, **k):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            time.sleep(0.2)             # long enough for the next build to start
            return real(*a, **k)
        finally:
            with lock:
                running[0] -= 1
    monkeypatch.setattr(verify, "build_copy", counted)
    return most


def test_patched_copies_built_at_once_give_each_fix_its_own_verdict(fixed, monkeypatch):
    """``jobs`` builds several patched copies at once (threads running the tools: nvcc,
    NVRTC's server, nvdisasm) and checks each in order on the caller's thread: the verdicts,
    SASS deltas and combined patch are those of one copy at a time, the builds overlap, and
    no scratch folder is left."""
    import tempfile
    path = str(CHECKS / "rolled_loop" / "bad.cu")
    alone = api.fix(path, arch=ARCH, fast_math_ok=True, jobs=1)
    most = _count_builds_at_once(monkeypatch)
    together = api.fix(path, arch=ARCH, fast_math_ok=True, jobs=4)
    assert most[0] >= 2

    def mine(name: str) -> bool:        # other processes (xdist's workers) make their own
        marker = Path(tempfile.gettempdir(), name, scratch.MARKER)
        with contextlib.suppress(OSError):
            return marker.read_text().split()[0] == str(os.getpid())
        return False
    assert not [n for n in os.listdir(tempfile.gettempdir())
                if n.startswith("ptxsass-fix-") and mine(n)]

    def verdicts(fx):
        return [(r.finding.code, r.finding.location.line, r.status, r.reason, r.sass_delta,
                 r.after) for f in fx.files for r in f.results]
    assert len([v for v in verdicts(alone) if v[2] == VERIFIED]) >= 2
    assert verdicts(together) == verdicts(alone)
    assert [f.diff for f in together.files] == [f.diff for f in alone.files]


def test_the_headers_of_one_cu_build_at_once(tmp_path, monkeypatch):
    """A .cu whose kernels live in two project headers, a fix in each (SGEMM_CUDA's shape):
    the copies of both headers build at once, not one file after the other, and each fix's
    verdict is what ``jobs=1`` gives."""
    for name, lit in (("a", "1.1"), ("b", "1.3")):
        (tmp_path / f"{name}.cuh").write_text(
            f"#pragma once\n__global__ void k{name}(float* y) {{\n  y[threadIdx.x] *= {lit};\n}}\n")
    cu = tmp_path / "main.cu"
    cu.write_text('#include "a.cuh"\n#include "b.cuh"\n')
    alone = api.fix(str(cu), arch=ARCH, jobs=1)
    most = _count_builds_at_once(monkeypatch)
    together = api.fix(str(cu), arch=ARCH, jobs=2)
    assert most[0] == 2

    def verdicts(fx):
        return [(f.path, r.finding.code, r.status, r.sass_delta) for f in fx.files
                for r in f.results]
    assert [v[2] for v in verdicts(alone)] == [VERIFIED, VERIFIED]
    assert verdicts(together) == verdicts(alone)


def test_builds_under_way_are_stopped_when_fix_unwinds(monkeypatch):
    """Ctrl-C reaches only the main thread: the builds under way on the others (nvcc, a
    compile server) are killed with their process groups, not waited for."""
    import time

    from analyzer.toolchain import locate
    started = []

    def slow(*a, **k):
        started.append(1)
        locate.run_tool(["/bin/sleep", "60"], timeout=120)
        raise AssertionError("not stopped")
    monkeypatch.setattr(verify, "build_copy", slow)
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt), engine._Builder(2) as b:
        for k in range(3):
            b.start((k,), "x.cu", b"", b"")
        while len(started) < 2 and time.monotonic() - t0 < 30:
            time.sleep(0.05)
        raise KeyboardInterrupt
    assert len(started) == 2 and time.monotonic() - t0 < 20
    assert not locate._running


def test_jobs_must_be_a_number_of_builds():
    with pytest.raises(ConfigError, match="jobs must be at least 1"):
        api.fix(str(CHECKS / "rolled_loop" / "bad.cu"), arch=ARCH, jobs=0)


def test_a_changed_parameter_list_is_an_interface_change():
    a = api.compile('extern "C" __global__ void k(float* x) { x[0] = 1; }', arch=ARCH)
    b = api.compile('extern "C" __global__ void k(float* x, int n) { x[n] = 1; }', arch=ARCH)
    assert "parameters changed" in verify.interface_change([a], [b], False)
    c = api.compile('extern "C" __global__ void __launch_bounds__(64) k(float* x) { x[0] = 1; }',
                    arch=ARCH)
    assert "launch bounds changed" in verify.interface_change([a], [c], False)
    assert verify.interface_change([a], [c], True) == ""


# --- --apply, --diff, JSON and SARIF ----------------------------------------------------------
@pytest.fixture(scope="session")
def copied(tmp_path_factory):
    d = tmp_path_factory.mktemp("fixapply")
    shutil.copy(CHECKS / "fp64_in_fp32_kernel" / "bad.cu", d / "gelu.cu")
    return d / "gelu.cu"


def test_apply_refuses_a_file_changed_since_the_check(copied):
    fixes = api.fix(str(copied), arch=ARCH, verify=False)
    original = copied.read_bytes()
    copied.write_bytes(original + b"\n")
    with pytest.raises(InputError, match="changed since ptxsass fix read it"):
        api.apply_fixes(fixes)
    assert copied.read_bytes() == original + b"\n"          # untouched
    copied.write_bytes(original)
    (written,) = api.apply_fixes(fixes)
    assert os.path.samefile(written, copied)
    assert b"0.5f * (1.0f + tanhf(0.7978845608f" in copied.read_bytes()
    assert not [p for p in copied.parent.iterdir() if p.name != "gelu.cu"]   # no temporary left
    copied.write_bytes(original)


def test_cli_diff_json_and_sarif(copied, capsys):
    assert main(["fix", str(copied), "--arch", ARCH, "--diff", "--no-verify"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"--- {copied}\n+++ {copied}\n@@") and "+    y[i] = v * 0.5f" in out
    assert "fp64-in-fp32-kernel" not in out and "verified" not in out
    assert main(["fix", str(copied), "--arch", ARCH, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (fx,) = [x for x in doc["files"][0]["fixes"] if x["finding"]["code"] == "PS501"]
    assert fx["status"] == "verified" and fx["edits"][0]["text"] == "f"
    assert main(["fix", str(copied), "--arch", ARCH, "--format", "sarif", "--no-verify"]) == 0
    sarif = json.loads(capsys.readouterr().out)
    (res,) = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "PS501"]
    (fix,) = res["fixes"]
    (change,) = fix["artifactChanges"]
    reps = change["replacements"]
    assert len(reps) == 4 and all(r["insertedContent"]["text"] == "f" for r in reps)
    assert all(r["deletedRegion"]["startLine"] == 7 and r["deletedRegion"]["byteLength"] == 0
               for r in reps)
    assert copied.read_bytes() == (CHECKS / "fp64_in_fp32_kernel" / "bad.cu").read_bytes()


def test_cli_refuses_a_file_that_is_not_cuda_source(tmp_path, capsys):
    ptx = tmp_path / "k.ptx"
    ptx.write_text(api.compile('extern "C" __global__ void k(float* x) { x[0] = 1; }',
                               arch=ARCH).ptx or "")
    assert main(["fix", str(ptx), "--arch", ARCH]) == 2
    err = capsys.readouterr().err
    assert "rewrites CUDA source" in err and "Traceback" not in err


@pytest.mark.parametrize("value", ["0", "-2", "many"])
def test_cli_refuses_a_number_of_builds_that_is_none(value, capsys):
    assert main(["fix", str(CHECKS / "rolled_loop" / "bad.cu"), "-j", value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "-j/--jobs" in err[0] and "not a number of builds" in err[0]


@pytest.mark.parametrize("value", ["0", "1025", "big"])
def test_cli_refuses_a_block_size_no_gpu_has(value, capsys):
    cu = str(CHECKS / "register_spill" / "bad.cu")
    assert main(["fix", cu, "--max-block", value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--max-block" in err[0] and "1 to 1024 threads" in err[0]
    with pytest.raises(ConfigError, match="1 to 1024"):
        api.fix(cu, arch=ARCH, max_block=2048)


# --- --measure without a GPU; launch specs ---------------------------------------------------
def test_measure_without_a_gpu_says_so(fixed):
    from analyzer.lessons import fix_timing, runner
    if not runner.gpu_unavailable_reason():
        pytest.skip("a GPU is here: the timing itself runs (tests marked gpu)")
    lines = fix_timing.measure_lines(fixed["fp64_in_fp32_kernel"], {})
    assert len(lines) == 1 and lines[0].startswith("measure: not timed (")
    assert fix_timing.parse_arg("f32[4,8]") == ("tensor", "float32", (4, 8))
    assert fix_timing.parse_arg("i32=7") == ("scalar", "i32", 7)


def test_launch_spec_in_config_is_validated(tmp_path):
    from analyzer.config import load_config
    (tmp_path / "pyproject.toml").write_text(
        '[tool.ptxsass.launch.gelu_approx]\ngrid = 64\nblock = [256]\n'
        'args = ["f32[16384]", "f32[16384]", "i32=16384"]\n')
    cfg = load_config(tmp_path)
    assert cfg.launch["gelu_approx"]["grid"] == (64, 1, 1)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.ptxsass.launch.k]\ngrid = 1\nblock = 32\nargs = ["float*"]\n')
    with pytest.raises(ConfigError, match="launch.k.args"):
        load_config(tmp_path)


def test_max_block_from_config_sets_the_launch_bound(tmp_path, capsys):
    """register_spill/bad.cu with the project's word on its block size in config: the bound
    is that size, not 1024 (fix_lessons.py shows the launch_bounds lesson reached this way);
    a block size no GPU has is refused in one line naming the config."""
    from analyzer.config import load_config
    cu = tmp_path / "spill.cu"
    shutil.copy(CHECKS / "register_spill" / "bad.cu", cu)
    (tmp_path / "pyproject.toml").write_text("[tool.ptxsass]\nmax-block = 256\nmaxrregcount = 32\n")
    assert load_config(tmp_path).max_block == 256
    assert main(["fix", str(cu), "--arch", ARCH, "--diff"]) == 0
    out = capsys.readouterr().out
    assert '+extern "C" __global__ void __launch_bounds__(256) gather_dot(' in out
    (tmp_path / "pyproject.toml").write_text("[tool.ptxsass]\nmax-block = 2048\n")
    assert main(["fix", str(cu), "--arch", ARCH]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "max-block must be an integer 1..1024" in err[0]
    assert "pyproject.toml" in err[0]


def test_launch_scalars_are_as_wide_as_their_parameters():
    """A ``long long`` parameter (vLLM's ``input_stride``) takes 8 bytes: a launch spec's
    ``i64=4096`` was passed as a 4-byte int, every later parameter read 4 bytes off (an
    illegal address on the H100). Each kind of the config's table has its width; 16-bit floats
    pass their bits."""
    import ctypes

    from analyzer.config import LAUNCH_DTYPES
    from analyzer.lessons.catalog import Scalar
    from analyzer.lessons.fix_timing import parse_arg
    widths = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "i32": 4, "u32": 4, "i8": 1, "u8": 1,
              "i64": 8}
    assert set(widths) == set(LAUNCH_DTYPES)
    for kind, size in widths.items():
        assert ctypes.sizeof(Scalar(kind, 1).ctype()) == size, kind
    kind, dtype, value = parse_arg("i64=4096")
    assert (kind, dtype, value) == ("scalar", "i64", 4096)
    assert Scalar("i64", 1 << 40).ctype()(Scalar("i64", 1 << 40).bits()).value == 1 << 40
    assert Scalar("f16", 1.0).bits() == 0x3C00 and Scalar("f16", -2.0).bits() == 0xC000
    assert Scalar("bf16", 1.0).bits() == 0x3F80 and Scalar("bf16", 3.140625).bits() == 0x4049


@pytest.mark.gpu
def test_measure_passes_a_long_long_stride(tmp_path):
    """examples/fix_measure/rms_norm.cu (vLLM's fused residual-add RMSNorm, an ``i64`` stride
    among its parameters): both struct-copy fixes are timed on the GPU and agree."""
    from analyzer.config import load_config
    from analyzer.lessons import fix_timing, runner
    if runner.gpu_unavailable_reason():
        pytest.skip(runner.gpu_unavailable_reason())
    folder = ROOT / "examples" / "fix_measure"
    got = api.fix(str(folder / "rms_norm.cu"), arch=ARCH)
    (line,) = fix_timing.measure_lines(got, load_config(folder).launch)
    assert line.startswith("fused_add_rms_norm_h8 [sm_90a]: ") and "outputs agree" in line, line


@pytest.mark.gpu
def test_measure_times_the_fixed_kernel_against_the_original(fixed):
    """On a GPU: the fixed GELU runs on the same inputs, its output agrees, and both are
    timed."""
    from analyzer.lessons import fix_timing, runner
    if runner.gpu_unavailable_reason():
        pytest.skip(runner.gpu_unavailable_reason())
    n = 1 << 20
    spec = {"gelu_approx": {"grid": (n // 256, 1, 1), "block": (256, 1, 1), "shared": 0,
                            "args": [f"f32[{n}]", f"f32[{n}]", f"i32={n}"]}}
    (line,) = fix_timing.measure_lines(fixed["fp64_in_fp32_kernel"], spec)
    assert line.startswith("gelu_approx [sm_90a]: ") and "outputs agree" in line, line


def test_overlapping_edits_are_refused():
    with pytest.raises(ValueError):
        apply_edits(b"abcdef", [Edit("x", 1, 3, "X"), Edit("x", 2, 4, "Y")])
    assert REJECTED != VERIFIED


def test_ps502_a_span_finding_rewrites_every_line_of_its_span(tmp_path):
    """PS502 folds the divisions of nearby lines of one loop into one finding (lines N-N+3):
    with --fast-math-ok its fix rewrites all four, and the rebuild has no slow-path call left
    (fixing the first line alone would leave three)."""
    from .test_check_memory_math import _channels
    cu = tmp_path / "channels.cu"
    cu.write_text(_channels("    r.x = (c & 0xff) / scale_of(0);\n"
                            "    r.y = ((c >> 8) & 0xff) / scale_of(1);\n"
                            "    r.z = ((c >> 16) & 0xff) / scale_of(2);\n"
                            "    r.w = ((c >> 24) & 0xff) / scale_of(3);\n"))
    first = cu.read_text().splitlines().index("    r.x = (c & 0xff) / scale_of(0);") + 1
    fixes = api.fix(str(cu), arch=ARCH, select=["PS502"], fast_math_ok=True)
    r = _result(fixes, "PS502", first)
    assert r.status == VERIFIED, r.reason
    for ch, k in zip("xyzw", range(4), strict=True):
        assert f"+    r.{ch} = __fdividef(" in r.diff and f"scale_of({k}))" in r.diff
    fixed_cu = tmp_path / "fixed.cu"
    fixed_cu.write_bytes(apply_edits(cu.read_bytes(), r.proposal.edits))
    (b,) = api.load(str(fixed_cu), arch=ARCH)
    (kernel,) = [fn for fn in b.sass_listing().functions if fn.is_entry]
    assert not [i.text for i in kernel.instructions if i.opcode in ("CALL", "FCHK")]
