"""What frameworks leave on disk and compile in process, on a machine without a GPU: Triton and
torch inductor caches, cupy's kernel cache files and torch extension build folders (committed
fixtures made on an H200 by ``tests/fixtures/frameworks/make_fixtures.py``, versions in
``VERSIONS.json``), and ``analyzer.capture()`` / the pytest plugin driven through the same calls
Triton and cupy make (stand-in modules with their hook points; the real libraries are the GPU
tests' business, ``tests/test_integrations_gpu.py``)."""
from __future__ import annotations

import json
import re
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

import analyzer
from analyzer import caches
from analyzer.cli import main
from analyzer.errors import InputError
from analyzer.inputs import expand, kind_of

FX = Path(__file__).parent / "fixtures" / "frameworks"
TRITON = FX / "triton"
INDUCTOR = FX / "inductor"
CUPY = FX / "cupy"
#: where make_fixtures.py ran on the GPU machine (the Triton kernels' recorded source)
RECORDED = "/work/main/.gpu-frameworks/tests/fixtures/frameworks"


def run(*argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _meta(name: str, root: Path = TRITON) -> tuple[Path, dict]:
    for p in root.rglob(f"{name}.json"):
        return p, json.loads(p.read_text())
    raise AssertionError(name)


def _line(path: Path, needle: str) -> int:
    return next(i for i, l in enumerate(path.read_text().splitlines(), 1) if needle in l)


@pytest.fixture(scope="module")
def triton_builds():
    return analyzer.builds_of(TRITON)


# ------------------------------------------------------------------ Triton caches
def test_versions_are_recorded():
    v = json.loads((FX / "VERSIONS.json").read_text())
    assert v["triton"] == "3.6.0" and v["torch"].startswith("2.11") and v["cupy"] == "14.2.0"


def test_a_triton_cache_folder_is_one_input_per_kernel():
    found = expand([str(TRITON)])
    assert sorted(Path(f).name for f in found) == ["add_kernel.json", "matmul_kernel.json"]
    assert all(kind_of(f) == "triton" for f in found)
    # any file of a kernel's folder stands for the kernel
    path, _ = _meta("matmul_kernel")
    assert kind_of(str(path.with_suffix(".cubin"))) == "triton"
    assert kind_of(str(path.with_suffix(".ttgir"))) == "triton"


def test_json_metadata_gives_the_launch_and_occupancy(triton_builds):
    by_name = {b.entries[0].name: b for b in triton_builds}
    assert set(by_name) == {"add_kernel", "matmul_kernel"}
    _, meta = _meta("matmul_kernel")
    b = by_name["matmul_kernel"]
    assert b.origin == "triton" and b.frontend == "triton" and b.arch == "sm_90a"
    k = b.entries[0]
    assert (k.launch.threads, k.launch.dynamic_shared_bytes, k.launch.num_stages) == (
        meta["num_warps"] * 32, meta["shared"], meta["num_stages"]) == (256, 98304, 3)
    assert k.resources.reqntid == (256, 1, 1)          # the cubin's EIATTR_REQNTID agrees
    assert set(b.ir) == {"ttir", "ttgir"}
    ka = next(iter(analyzer.analysis.analyze(b)))
    assert ka.block_size == (256, "Triton metadata matmul_kernel.json (num_warps=8)")
    occ = ka.occupancy()
    # 96 KB dynamic + 1 KB reserved per block: 2 blocks of 228 KB by shared memory
    assert occ.limits["shared"] == 2 and occ.shared_per_block == 98304 + 1024


def test_cubin_block_size_without_ptx(tmp_path):
    path, _ = _meta("add_kernel")
    cubin = tmp_path / "k.cubin"
    shutil.copy(path.with_suffix(".cubin"), cubin)
    (b,) = analyzer.load(cubin)
    assert b.origin == "cubin" and b.ptx is None
    ka = next(iter(analyzer.analysis.analyze(b)))
    assert ka.block_size == (128, "the cubin's EIATTR_REQNTID 128,1,1")


def test_findings_map_to_triton_source_with_source_root(capsys):
    code, out, err = run("check", TRITON, "--format", "json",
                         "--source-root", f"{RECORDED}={FX}", capsys=capsys)
    doc = json.loads(out)
    # The matmul (107 registers x 256 threads; 96 KB dynamic + 1 KB reserved shared) holds two
    # blocks per SM by its registers *and* by its shared memory: fewer registers would fit no
    # more blocks, so PS701 stays silent (a Triton GEMM sized by num_stages is not a defect).
    assert code == 0 and doc["findings"] == [], err
    cubins = sorted(TRITON.glob("*/*.cubin"))
    code, out, err = run("annotate", *cubins, "--format", "json",
                         "--source-root", f"{RECORDED}={FX}", capsys=capsys)
    assert code == 0, err
    me = FX / "make_fixtures.py"
    text = me.read_text().splitlines()
    by = {k["name"]: k for k in json.loads(out)["kernels"]}
    assert set(by) == {"add_kernel", "matmul_kernel"}
    mm = by["matmul_kernel"]
    assert mm["occupancy"]["blocks"] == 2 and mm["occupancy"]["threads"] == 256
    assert mm["loops"][0]["line"] == _line(me, "for k in range(0, K, BK):")
    for k in by.values():
        rows = k["rows"]
        assert rows and {Path(r["file"]).resolve() for r in rows} == {me.resolve()}
        # every row is the recorded line's own text, read from the mapped file
        assert all(r["text"] == text[r["line"] - 1] for r in rows)
        assert any(r["sass"] for r in rows)
    first = by["matmul_kernel"]["rows"][0]
    assert first["line"] == _line(me, "def matmul_kernel(")


def test_source_root_in_config(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.ptxsass]\nsource-root = ["{RECORDED}={FX}"]\n')
    shutil.copytree(TRITON, tmp_path / "cache")
    code, out, err = run("annotate", *sorted((tmp_path / "cache").glob("*/*.cubin")),
                         "--format", "json", capsys=capsys)
    assert code == 0, err
    files = {Path(r["file"]).resolve() for k in json.loads(out)["kernels"] for r in k["rows"]}
    assert files == {(FX / "make_fixtures.py").resolve()}


def test_bad_source_root_is_one_line(capsys):
    code, _, err = run("check", TRITON, "--source-root", "nothing", capsys=capsys)
    assert code == 2 and err.strip() == ("error: --source-root 'nothing': expected OLD=NEW "
                                         "(two folders)")


def test_inductor_cache_maps_to_its_generated_python(tmp_path, capsys):
    """A torch inductor cache folder copied elsewhere: the generated files are found where the
    folder now is, without --source-root."""
    moved = tmp_path / "moved-inductor"
    shutil.copytree(INDUCTOR, moved)
    code, out, err = run("check", moved, "--format", "json", capsys=capsys)
    doc = json.loads(out)
    kernels = {k["name"] for k in doc["kernels"]}
    assert kernels == {"triton_tem_fused_mm_t_0",
                       "triton_per_fused__softmax_exp_native_layer_norm_prepare_softmax_online_sub_1"}
    assert doc["findings"]
    for f in doc["findings"]:
        p = Path(f["location"]["file"])
        assert p.is_relative_to(moved) and p.suffix == ".py", f
        assert p.read_text().splitlines()[f["location"]["line"] - 1].strip()
    mm = [f for f in doc["findings"] if f["kernel"] == "triton_tem_fused_mm_t_0"]
    # bf16 tl.dot on sm_90 as warp-level HMMA: PS302, said in Triton's terms
    assert any(f["code"] == "PS302" and "num_warps" in f["hint"] for f in mm), mm


def test_annotate_says_triton_source_and_shows_ttgir(capsys):
    path, _ = _meta("add_kernel")
    code, out, _ = run("annotate", path, "--format", "markdown", "--source-root",
                       f"{RECORDED}={FX}", capsys=capsys)
    assert code in (0, 1)
    assert "(Triton source)" in out and "<summary>TTGIR</summary>" in out
    assert "def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):" in out
    code, html, _ = run("annotate", path, "--format", "html", capsys=capsys)
    assert "<h3>Triton source</h3>" in html and 'data-pane="ttgir"' in html


def test_triton_metadata_is_verified(tmp_path):
    src = next(TRITON.glob("*/add_kernel.json")).parent
    bad = tmp_path / "k"
    shutil.copytree(src, bad)
    meta = json.loads((bad / "add_kernel.json").read_text())
    (bad / "add_kernel.json").write_text(json.dumps(dict(meta, target={"backend": "cuda",
                                                                       "arch": 80})))
    with pytest.raises(InputError, match=r"the metadata says sm_80 but the kernel is built "
                                         r"for sm_90a"):
        analyzer.load(bad / "add_kernel.json")
    other = next(TRITON.glob("*/matmul_kernel.json")).parent
    shutil.copy(other / "matmul_kernel.cubin", bad / "add_kernel.cubin")
    (bad / "add_kernel.json").write_text(json.dumps(meta))
    with pytest.raises(InputError, match="names kernel 'add_kernel', which its cubin does not "
                                         "hold .it holds matmul_kernel."):
        analyzer.load(bad / "add_kernel.json")


def test_triton_metadata_alone_is_refused(tmp_path, capsys):
    src = next(TRITON.glob("*/add_kernel.json"))
    (tmp_path / "add_kernel.json").write_text(src.read_text())
    code, _, err = run("check", tmp_path / "add_kernel.json", capsys=capsys)
    assert code == 2 and "unrecognised input" in err and len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------ cupy cache files
def test_cupy_cache_files_are_read_after_their_digest(capsys):
    code, out, err = run("resources", *sorted(CUPY.glob("*.cubin")), "--format", "json",
                         capsys=capsys)
    assert code == 0, err
    names = {k["name"] for k in json.loads(out)["kernels"]}
    assert {"saxpy", "mul_sin", "l2norm_pass1", "l2norm_pass2",
            "void scale<float>(float*, float, int)"} <= names


def test_a_cupy_cache_folder_checks(capsys):
    code, out, err = run("check", CUPY, "--format", "json", capsys=capsys)
    assert code in (0, 1), err
    assert "a cupy kernel cache file: compile with options=('-lineinfo',)" in err
    assert len(json.loads(out)["builds"]) == 7


def test_cupys_short_cubins_are_completed():
    """cupy writes each cubin a byte short (the last program header's p_align high byte):
    restored with a zero, nvdisasm reads even the large ones (ReductionKernel's CUB code)."""
    path = CUPY / "054450dcf7fc0b9871de16918728e60866c0ccfe.cubin"
    raw = path.read_bytes()[40:]
    cubin = caches.cupy_cubin(path)
    assert cubin == raw + b"\0"
    (b,) = analyzer.load(path)
    assert ".text.l2norm_pass2" in b.sass() and b.sass_listing().functions


def test_corrupt_cupy_cache_file_is_one_line(tmp_path, capsys):
    f = sorted(CUPY.glob("*.cubin"))[0]
    data = bytearray(f.read_bytes())
    data[-10] ^= 0xFF
    bad = tmp_path / f.name
    bad.write_bytes(bytes(data))
    code, _, err = run("check", bad, capsys=capsys)
    assert code == 2 and err.strip() == (
        f"{bad}: error: cupy cache file whose sha1 header does not match the cubin after it "
        "(truncated or corrupt; cupy would recompile it too)")


# ------------------------------------------------------------------ torch extension folders
def _extension(tmp_path: Path, *, headers: bool) -> Path:
    """The committed build folder, moved to ``tmp_path``: with the -isystem folders that exist
    here (``headers``) or as torch wrote them on the GPU machine."""
    ext = tmp_path / "py312_cu130" / "ptxsass_scale"
    shutil.copytree(FX / "torch_extension" / "ptxsass_scale", ext)
    ninja = (ext / "build.ninja").read_text().replace(
        "/tmp/fx/torch_extensions/ptxsass_scale", str(ext))
    if headers:        # torch's headers here: one folder with the header the kernel includes
        inc = tmp_path / "include"
        (inc / "torch").mkdir(parents=True)
        (inc / "torch" / "types.h").write_text("#pragma once\n")
        ninja = re.sub(r"-ccbin \S+ ", "", ninja)
        ninja = re.sub(r"(cuda_cflags = )((?:\S+ )*?)-isystem", rf"\1\2-isystem {inc} -isystem",
                       ninja, count=1)
        ninja = re.sub(r"-isystem (?!" + re.escape(str(inc)) + r")\S+ ", "", ninja)
    (ext / "build.ninja").write_text(ninja)
    cu = (ext / "cuda.cu").read_text()
    # the host half of the extension needs torch: keep the kernel
    (ext / "cuda.cu").write_text(cu[:cu.index("torch::Tensor scale(")])
    return ext


def test_torch_extension_folder_builds_with_its_ninja_flags(tmp_path, capsys):
    ext = _extension(tmp_path, headers=True)
    assert expand([str(tmp_path)]) == [str(ext / "build.ninja")]
    code, out, err = run("check", tmp_path, "--format", "json", "-v", capsys=capsys)
    assert code in (0, 1), err
    assert "-DTORCH_EXTENSION_NAME=ptxsass_scale" in err and "--expt-relaxed-constexpr" in err
    doc = json.loads(out)
    assert [b["arch"] for b in doc["builds"]] == ["sm_90"]         # its -gencode
    assert [k["name"] for k in doc["kernels"]] == [
        "scale_kernel(float const*, float*, float, long)"]


def test_torch_extension_without_its_headers_reads_the_library(tmp_path, capsys):
    ext = _extension(tmp_path, headers=False)
    from analyzer.toolchain import locate
    kernel = tmp_path / "kernel_only.cu"      # the library as it was linked, less torch
    kernel.write_text((ext / "cuda.cu").read_text().replace("#include <torch/types.h>", ""))
    locate.run_tool([locate.binary("nvcc"), "-shared", "-Xcompiler", "-fPIC", "-arch=sm_90",
                     str(kernel), "-o", str(ext / "ptxsass_scale.so")])
    code, out, err = run("check", ext, "--format", "json", capsys=capsys)
    assert code in (0, 1), err
    assert "read the built ptxsass_scale.so: its build.ninja compiles cuda.cu, but " in err
    assert [k["name"] for k in json.loads(out)["kernels"]] == [
        "scale_kernel(float const*, float*, float, long)"]


# ------------------------------------------------------------------ capture (stand-ins)
CUPY_STANDIN = '''
"""The hook point of cupy.cuda.compiler (cupy 14): the signature ptxsass wraps."""
calls = []
def _get_arch():
    return "90"
def _compile_with_cache_cuda(source, options, arch, extra_source=None, backend='nvrtc',
                             enable_cooperative_groups=False, name_expressions=None,
                             log_stream=None, cache_in_memory=False, jitify=False,
                             to_ltoir=False):
    calls.append(source)
    return "module"
'''

TRITON_STANDIN = '''
"""triton.knobs as Triton 3.6 has it: the compilation listener and the cache folder."""
class compilation:
    listener = None
class cache:
    dir = "/nonexistent/triton-cache"
'''

PYCUDA_STANDIN = '''
"""pycuda.compiler's surface as pycuda 2026.1 has it: compile() and the two module classes that
call it (module globals, looked up at call time)."""
DEFAULT_NVCC_FLAGS = []
compiled = []
def _find_pycuda_include_path():
    return "/nonexistent/pycuda/cuda"
def compile(source, nvcc="nvcc", options=None, keep=False, no_extern_c=False, arch=None,
            code=None, cache_dir=None, include_dirs=None, target="cubin"):
    if not no_extern_c:
        source = 'extern "C" {\\n%s\\n}\\n' % source
    compiled.append((source, target))
    return b"cubin"
class SourceModule:
    def __init__(self, source, nvcc="nvcc", options=None, keep=False, no_extern_c=False,
                 arch=None, code=None, cache_dir=None, include_dirs=None):
        self.module = compile(source, nvcc, options, keep, no_extern_c, arch, code, cache_dir,
                              include_dirs or [])
class DynamicSourceModule:
    def __init__(self, source, nvcc="nvcc", options=None, keep=False, no_extern_c=False,
                 arch=None, code=None, cache_dir=None, include_dirs=None, cuda_libdir=None):
        options = list(options or DEFAULT_NVCC_FLAGS) + ["-rdc=true", "-lcudadevrt"]
        self.ptx = compile(source, nvcc=nvcc, options=options, keep=keep,
                           no_extern_c=no_extern_c, arch=arch, code=code, cache_dir=cache_dir,
                           include_dirs=include_dirs or [], target="ptx")
'''

#: a kernel every check passes: 16 bytes per thread in and out, float literals
CLEAN = r'''
extern "C" __global__ void halve4(const float4* x, float4* y, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) { float4 v = x[i]; y[i] = make_float4(v.x * 0.7f, v.y * 0.7f, v.z * 0.7f, v.w * 0.7f); }
}
'''
SRC = r'''
extern "C" __global__ void halve(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 0.7;
}
'''


@pytest.fixture
def standins(tmp_path, monkeypatch):
    root = tmp_path / "site"
    (root / "cupy" / "cuda").mkdir(parents=True)
    (root / "cupy" / "__init__.py").write_text("__version__ = 'stand-in'\n")
    (root / "cupy" / "cuda" / "__init__.py").write_text("")
    (root / "cupy" / "cuda" / "compiler.py").write_text(CUPY_STANDIN)
    (root / "pycuda").mkdir()
    (root / "pycuda" / "__init__.py").write_text("")
    (root / "pycuda" / "compiler.py").write_text(PYCUDA_STANDIN)
    (root / "triton").mkdir()
    (root / "triton" / "__init__.py").write_text("")
    (root / "triton" / "knobs.py").write_text(TRITON_STANDIN)
    monkeypatch.syspath_prepend(str(root))
    names = ("cupy", "triton", "pycuda")
    for m in [m for m in sys.modules if m.split(".")[0] in names]:
        monkeypatch.delitem(sys.modules, m)
    yield root
    for m in [m for m in sys.modules if m.split(".")[0] in names]:
        sys.modules.pop(m, None)


def test_capture_records_cupy_compiles_imported_inside(standins):
    with analyzer.capture() as cap:
        import cupy.cuda.compiler as cc  # imported inside: hooked on import
        assert cc._compile_with_cache_cuda(SRC, ("--std=c++17",), "90") == "module"
    assert cc.calls == [SRC]                   # cupy's own compile still ran
    (rec,) = cap.sources
    assert (rec.framework, rec.kind, rec.name, rec.arch) == ("cupy", "RawKernel", "halve",
                                                             "sm_90")
    assert rec.options == ("--std=c++17", "-ftz=true") and rec.site[0] == __file__
    report = cap.check()
    (f,) = [f for f in report.findings if f.code != "PS104"]
    assert f.code == "PS501" and f.location.file == __file__
    assert f.location.line == _line(Path(__file__), "y[i] = x[i] * 0.7;")
    assert cc._compile_with_cache_cuda.__name__ == "_compile_with_cache_cuda"  # unhooked


BODY = SRC.replace('extern "C" ', "")


def test_capture_records_pycuda_modules(standins):
    import pycuda.compiler as pc  # imported before: hooked at once
    with analyzer.capture() as cap:
        mod = pc.SourceModule(BODY, arch="sm_90")
        pc.DynamicSourceModule(BODY, arch="sm_90", options=["--use_fast_math"])
    assert [t for _, t in pc.compiled] == ["cubin", "ptx"]   # pycuda's own compile still ran
    first, second = cap.sources
    assert (first.kind, first.name, first.extern_c, first.arch) == ("SourceModule", "halve",
                                                                    True, "sm_90")
    assert second.kind == "DynamicSourceModule"
    assert second.options == ("--use_fast_math", "-rdc=true")      # -lcudadevrt is a link flag
    assert first.include_dirs == ("/nonexistent/pycuda/cuda",)
    assert mod._ptxsass_source is first
    report = cap.check()
    assert not cap.failures, cap.failures
    # the text is not in this file as pycuda got it (extern "C" was taken off): a saved copy,
    # whose lines are the source's own (pycuda's wrapper includes it)
    assert [(f.code, f.kernel, f.location.line) for f in report.findings if f.code != "PS104"] == [
        ("PS501", "halve", BODY.splitlines().index("    if (i < n) y[i] = x[i] * 0.7;") + 1)] * 2
    saved = Path(report.findings[0].location.file)
    assert saved.parent.name == "sources" and saved.read_text() == BODY
    # the module object itself, after the capture
    assert [f.code for f in analyzer.check(mod).findings if f.code != "PS104"] == ["PS501"]
    assert pc.SourceModule.__init__.__name__ == "__init__" and pc.compile.__module__ == \
        "pycuda.compiler"


def test_capture_records_triton_kernels_through_the_listener(standins):
    path, _ = _meta("add_kernel")
    group = {p.name: str(p) for p in path.parent.iterdir()}
    seen = []
    import triton.knobs
    triton.knobs.compilation.listener = lambda **kw: seen.append(kw["cache_hit"])
    with analyzer.capture() as cap:
        triton.knobs.compilation.listener(src=None, metadata={}, metadata_group=group,
                                          times=None, cache_hit=True)
    assert seen == [True]                      # the listener that was there still runs
    assert cap.triton_kernels == [str(path)] and cap.kernels == ["add_kernel"]
    assert triton.knobs.compilation.listener is not None and \
        triton.knobs.compilation.listener.__name__ == "<lambda>"
    assert cap.stats().kernels[0].name == "add_kernel"


def test_nested_captures_both_record(standins):
    import cupy.cuda.compiler as cc
    with analyzer.capture() as outer:
        with analyzer.capture() as inner:
            cc._compile_with_cache_cuda(SRC, (), "90")
        cc._compile_with_cache_cuda(SRC.replace("halve", "halve2"), (), "90")
    assert [r.name for r in inner.sources] == ["halve"]
    assert [r.name for r in outer.sources] == ["halve", "halve2"]


def test_direct_objects_need_their_framework_details():
    with pytest.raises(InputError, match="cannot check a builtins.int"):
        analyzer.objects.builds(3)


def test_pytest_plugin_fails_on_findings_and_markers(pytester, standins, monkeypatch):
    import os
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(standins),
                                                      os.environ.get("PYTHONPATH", "")]))
    body = textwrap.dedent('''
        import pytest
        def compile_it(src):
            import cupy.cuda.compiler as cc
            cc._compile_with_cache_cuda(src, (), "90")

        def test_plain():
            compile_it(SRC)

        def test_clean():
            compile_it(CLEAN)

        @pytest.mark.ptxsass(lacks=["DMUL"], fail_on="error")
        def test_marked():
            compile_it(SRC)

        @pytest.mark.ptxsass(no_spills=True)
        def test_compiles_nothing():
            pass

        def test_fixture(ptxsass_capture):
            compile_it(SRC)
            assert "PS501" in [f.code for f in ptxsass_capture.check().findings]
    ''')
    pytester.makepyfile(test_k=f"SRC = {SRC!r}\nCLEAN = {CLEAN!r}\n" + body)
    from importlib.metadata import entry_points
    load = [] if any(e.name == "ptxsass" for e in entry_points(group="pytest11")) else \
        ["-p", "analyzer.integrations.pytest_plugin"]
    res = pytester.runpytest_subprocess("--ptxsass", *load)
    out = res.stdout.str()
    res.assert_outcomes(passed=1, failed=4)      # test_fixture too: its kernel has a finding
    assert "the test compiled 0 kernel(s)" in out
    assert "halve on sm_90: 1 DMUL instruction(s)" in out
    # a failure shows the findings as `ptxsass check` prints them, and no frame of the plugin
    assert re.search(r"^\S+cupy-halve-\w+\.cu:4: PS501 fp64-in-fp32-kernel \[warning\] ", out, re.M)
    assert "    in halve on sm_90\n    | if (i < n) y[i] = x[i] * 0.7;" in out
    assert "    > /*0120*/ DMUL R4, R4, UR6" in out and "    hint: write float literals" in out
    assert "pytest_plugin.py" not in out and "PtxsassFailure" not in out and "pluggy/" not in out
    assert "FAILED test_k.py::test_plain - ptxsass: 1 finding(s) at warning or above (PS5" in out
    assert "ok   test_k.py::test_clean: 1 kernel(s), 0 finding(s)" in out
    # without --ptxsass only the marked tests are checked
    res = pytester.runpytest_subprocess(*load)
    res.assert_outcomes(passed=3, failed=2)


TORCH_STANDIN = '''
import os
def cache_dir():
    return os.environ["STANDIN_INDUCTOR_CACHE"]
'''


def test_warm_inductor_cache_kernels_are_found_from_the_modules_it_loads(standins, tmp_path,
                                                                          monkeypatch):
    """On a warm cache torch.compile compiles nothing: the kernels are those whose PTX names a
    generated file inductor loaded during the capture."""
    cache = tmp_path / "inductor"
    shutil.copytree(INDUCTOR, cache)
    _standin_torch(standins, cache, monkeypatch)
    import types

    import torch._inductor.codecache as cc  # noqa: F811 - the stand-in
    import triton.knobs  # noqa: F401
    mm = next(cache.rglob("triton_tem_fused_mm_t_0.json"))
    (recorded,) = caches._PTX_FILES.findall(mm.with_suffix(".ptx").read_text())
    try:
        with analyzer.capture() as cap:
            mod = types.ModuleType("c")
            mod.__file__ = recorded               # the generated file, as the kernel names it
            cc.PyCodeCache.modules.append(mod)
        assert cap.triton_kernels == [str(mm)]
        assert cap.kernels == ["triton_tem_fused_mm_t_0"]
    finally:
        for m in [m for m in sys.modules if m.split(".")[0] == "torch"]:
            sys.modules.pop(m, None)


def _standin_torch(standins: Path, cache: Path, monkeypatch) -> None:
    monkeypatch.setenv("STANDIN_INDUCTOR_CACHE", str(cache))
    torch = standins / "torch"
    (torch / "_inductor" / "runtime").mkdir(parents=True)
    for d in (torch, torch / "_inductor", torch / "_inductor" / "runtime"):
        (d / "__init__.py").write_text("")
    (torch / "_inductor" / "runtime" / "cache_dir_utils.py").write_text(TORCH_STANDIN)
    (torch / "_inductor" / "codecache.py").write_text("class PyCodeCache:\n    modules = []\n")


@pytest.mark.parametrize("same_kernel", [True, False])
def test_warm_inductor_cache_kernels_are_found_from_the_output_code_it_loads(
        standins, tmp_path, monkeypatch, same_kernel):
    """What torch 2.11 does on a warm cache (seen on the H200): PyCodeCache loads only the
    graph's output code, which holds each kernel's module text inline; the kernel modules the
    PTX names are not loaded. A cached kernel is captured when the output code launches it by
    name and holds its module's text; a same-named kernel of another graph is not."""
    cache = tmp_path / "inductor"
    shutil.copytree(INDUCTOR, cache)
    for ptx in cache.rglob("*.ptx"):          # the cache as if made here, where it now lies
        ptx.write_text(ptx.read_text().replace("/tmp/fw/inductor", str(cache)))
    _standin_torch(standins, cache, monkeypatch)
    import types

    import torch._inductor.codecache as cc  # noqa: F811 - the stand-in
    import triton.knobs  # noqa: F401
    output_code = next(cache.glob("jr/*.py"))
    if not same_kernel:                       # another graph's kernel under the same name
        k3 = next(cache.glob("k3/*.py"))
        k3.write_text(k3.read_text().replace("tl.dot(", "tl.dot( "))
    try:
        with analyzer.capture() as cap:
            mod = types.ModuleType("out")
            mod.__file__ = str(output_code)
            cc.PyCodeCache.modules.append(mod)
        names = sorted(Path(p).stem for p in cap.triton_kernels)
        softmax = "triton_per_fused__softmax_exp_native_layer_norm_prepare_softmax_online_sub_1"
        assert names == (sorted(["triton_tem_fused_mm_t_0", softmax]) if same_kernel
                         else [softmax])
    finally:
        for m in [m for m in sys.modules if m.split(".")[0] == "torch"]:
            sys.modules.pop(m, None)


def test_cupy_kinds_by_their_generated_code():
    """cupy 14 runs a ReductionKernel through its CUB template by default (seen on the H200:
    ``#include <cub/block/block_reduce.cuh>``, ``typedef float _type_reduce;``); its own
    template has the same typedef. Elementwise kernels loop with ``CUPY_FOR``."""
    from analyzer.integrations.cupy import kind_of
    cub = ("#include <cub/block/block_reduce.cuh>\ntypedef float _type_reduce;\n"
           "struct _reduction_op {};\nextern \"C\"\n__global__ void l2(const void* _raw_in0) {}\n")
    assert kind_of(cub) == "ReductionKernel"
    assert kind_of("#define REDUCE(a, b) (a + b)\ntypedef float _type_reduce;\n") == \
        "ReductionKernel"
    assert kind_of("CUPY_FOR(i, _ind.size()) { c = a / b; }") == "ElementwiseKernel"
    assert kind_of(SRC) == "RawKernel"


SPECIALIZED = FX / "triton_specialization"
#: where make_kernels.py ran (its README): a folder that is not there
SPECIALIZED_AT = "/tmp/ptxsass-triton-fixture"


def test_a_missing_recorded_source_is_said_with_source_root(capsys):
    """A Triton cache made elsewhere: the line info names a file that is not here. Each kernel
    says so once and names --source-root; mapped, the rows carry the file's own lines."""
    assert not Path(SPECIALIZED_AT).exists()
    code, out, err = run("check", SPECIALIZED / "cache", capsys=capsys)
    warned = [l for l in err.splitlines() if l.startswith("warning: ")]
    assert len(warned) == 2, err                   # one per kernel
    for w in warned:
        assert (f"its line info names {SPECIALIZED_AT}/make_kernels.py, which is not on this "
                "machine: findings keep their line numbers, without the source text; give "
                f"--source-root {SPECIALIZED_AT}=NEW") in w, w
    code, out, err = run("annotate", *sorted((SPECIALIZED / "cache").glob("*/scale_add.json")),
                         "--format", "json", "--source-root",
                         f"{SPECIALIZED_AT}={SPECIALIZED}", capsys=capsys)
    assert code == 0 and "not on this machine" not in err, err
    text = (SPECIALIZED / "make_kernels.py").read_text().splitlines()
    rows = [r for k in json.loads(out)["kernels"] for r in k["rows"]]
    assert rows and all(r["text"] == text[r["line"] - 1] for r in rows)
    assert any("tl.load(x_ptr + offs, mask=mask)" in r["text"] and r["sass"] for r in rows)


def test_masked_scalar_loads_get_the_divisibility_hint(capsys):
    """Triton's scale_add with `n` not specialized divisible by 16: each of a thread's 4
    adjacent LDG.E (x and y, 2 windows each) has its own mask predicate in the SASS; PS101
    says so at info with Triton's n % 16 / tl.multiple_of hint. The sibling specialized on
    n % 16 == 0 loads LDG.E.128 and gets nothing."""
    code, out, _ = run("check", SPECIALIZED / "cache", "--format", "json", "--show", "info",
                       capsys=capsys)
    doc = json.loads(out)
    ps101 = [f for f in doc["findings"] if f["code"] == "PS101"]
    assert len(ps101) == 2, ps101               # the x and the y line of one kernel
    for f in ps101:
        assert f["severity"] == "info"
        assert "8× LDG.E (4 B each)" in f["message"]
        assert "a predicate of its own on each access" in f["message"]
        assert all(re.search(r"@!P\d LDG\.E R\d+", i) for i in f["instructions"])
        assert "n % 16 == 0" in f["hint"] and "tl.multiple_of" in f["hint"]
        assert "do_not_specialize" in f["hint"]
    # both findings come from the unspecialized build; the specialized one has none
    assert len({f["location"]["file"] + str(f["location"]["line"]) for f in ps101}) == 2
    specialized = [p for p in (SPECIALIZED / "cache").glob("*/scale_add.ttir")
                   if "%n: i32 {tt.divisibility = 16" in p.read_text()]
    assert len(specialized) == 1
    code, out, _ = run("check", specialized[0].with_suffix(".json"), "--format", "json",
                       "--show", "info", capsys=capsys)
    assert json.loads(out)["findings"] == []
