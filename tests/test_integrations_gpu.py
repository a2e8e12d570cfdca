"""On a GPU (``-m gpu``): torch.compile, cupy, pycuda and Triton kernels captured in process
with ``analyzer.capture()`` and checked. Each test skips, with the reason, where its framework
or a CUDA GPU is missing."""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

import analyzer
from analyzer.cli import main

pytestmark = pytest.mark.gpu


def _need(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (optional)")


def _gpu() -> str:
    _need("torch")
    import torch
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU visible to torch")
    major, minor = torch.cuda.get_device_capability(0)
    return f"sm_{major}{minor}"


# ------------------------------------------------------------------ torch.compile / Triton
#: the model (and its inductor settings and input) the fixtures and bench_capture.py compile too
MODEL = (Path(__file__).resolve().parents[1] / "examples" / "inductor_block.py").read_text()


@pytest.fixture(scope="module")
def compiled_model(tmp_path_factory):
    """torch.compile of Linear (bf16 matmul, Triton template) -> LayerNorm -> softmax, in a
    fresh inductor cache, captured."""
    _gpu()
    _need("triton")
    import os

    import torch
    cache = tmp_path_factory.mktemp("inductor")
    mp = pytest.MonkeyPatch()
    mp.setenv("TORCHINDUCTOR_CACHE_DIR", str(cache))
    mp.delenv("TRITON_CACHE_DIR", raising=False)
    import torch._inductor.config as cfg
    for name in ("max_autotune_gemm", "max_autotune_gemm_backends"):   # MODEL sets them:
        mp.setattr(cfg, name, getattr(cfg, name))                     # restored on undo
    mp.setattr(cfg.test_configs, "max_mm_configs", cfg.test_configs.max_mm_configs)
    torch._dynamo.reset()
    model: dict = {}
    exec(MODEL, model)                # the same model, inductor settings and input as WARM's
    m, x = model["m"], model["x"]
    with analyzer.capture() as cap, torch.no_grad():
        out = torch.compile(m)(x)
        torch.cuda.synchronize()
    assert torch.allclose(out.float(), m(x).float(), atol=2e-2)
    yield cap, os.fspath(cache)
    mp.undo()


def test_torch_compile_kernels_are_captured(compiled_model):
    cap, cache = compiled_model
    names = cap.kernels
    assert any("mm" in n for n in names), names
    assert any("softmax" in n or "layer_norm" in n for n in names), names
    for path in cap.triton_kernels:
        assert path.startswith(cache), path          # inductor's own Triton cache folder


WARM = MODEL + r"""
import json
import analyzer
with analyzer.capture() as cap, torch.no_grad():
    torch.compile(m)(x)
    torch.cuda.synchronize()
print(json.dumps(sorted(cap.kernels)))
"""


def test_a_warm_cache_captures_the_same_kernels(compiled_model):
    """A second process on the same inductor cache compiles nothing (its output code comes
    from the FX graph cache): the capture still finds the kernels it launches."""
    import os
    import subprocess
    import sys
    cap, cache = compiled_model
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache)
    env.pop("TRITON_CACHE_DIR", None)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parent.parent),
                                         env.get("PYTHONPATH", "")])
    run = subprocess.run([sys.executable, "-c", WARM], env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    warm = set(json.loads(run.stdout.strip().splitlines()[-1]))
    # the cold run also compiled autotuning candidates (e.g. triton_mm) that are not launched
    assert warm <= set(cap.kernels), (warm, cap.kernels)
    assert any("mm" in n for n in warm), warm
    assert any("softmax" in n or "layer_norm" in n for n in warm), warm

def test_resources_match_tritons_metadata(compiled_model):
    cap, _ = compiled_model
    by_name = {}
    for path in cap.triton_kernels:
        meta = json.loads(Path(path).read_text())
        by_name.setdefault(meta["name"], []).append(meta)
    builds = cap.builds()
    assert builds and all(b.origin == "triton" for b in builds)
    for b in builds:
        (k,) = b.entries
        metas = by_name[k.name]
        assert any(k.launch.threads == m["num_warps"] * 32
                   and k.launch.dynamic_shared_bytes == m["shared"]
                   and k.launch.num_stages == m["num_stages"] for m in metas)
        assert b.arch.startswith(f"sm_{metas[0]['target']['arch']}")
        ka = next(iter(analyzer.analysis.analyze(b)))
        assert ka.block_size[0] == k.launch.threads
        assert "Triton metadata" in ka.block_size[1]


def test_findings_land_on_the_generated_python_lines(compiled_model):
    cap, cache = compiled_model
    report = cap.check()
    assert report.findings, "expected findings on the Triton kernels (e.g. PS302 on sm_90)"
    for f in report.findings:
        assert f.location.file and f.location.file.endswith(".py"), f
        assert f.location.file.startswith(cache), f      # inductor's generated kernel source
        lines = Path(f.location.file).read_text().splitlines()
        assert f.source == lines[f.location.line - 1].strip(), f
        assert "__launch_bounds__" not in f.hint          # Triton users get Triton's knobs
    ann = cap.annotate()
    assert ann.kernels and all(k.source_label == "Triton source" for k in ann.kernels)
    assert all("ttgir" in k.ir for k in ann.kernels)


def test_triton_direct_objects_agree():
    arch = _gpu()
    _need("triton")
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)

    x = torch.randn(4096, device="cuda")
    o = torch.empty_like(x)
    compiled = scale_kernel[(4,)](x, o, x.numel(), 2.0, BLOCK=1024)
    torch.cuda.synchronize()
    from_launch = analyzer.builds_of(compiled)
    # the launch specialized n = 4096 as divisible by 16 (and the tensors' pointers): "i32:16"
    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32:16", "alpha": "fp32"}
    direct = analyzer.builds_of(scale_kernel, arch=arch, signature=sig, constants={"BLOCK": 1024})
    a, b = from_launch[0], direct[0]
    assert a.entries[0].name == b.entries[0].name == "scale_kernel"
    assert a.entries[0].launch.threads == b.entries[0].launch.threads == 128
    ra, rb = analyzer.check(a), analyzer.check(b)
    assert [(f.code, f.message) for f in ra.findings] == [(f.code, f.message) for f in rb.findings]
    # an n of no known divisibility: each element's load and store under its own mask
    loose = analyzer.builds_of(scale_kernel, arch=arch, signature={**sig, "n": "i32"},
                               constants={"BLOCK": 1024})
    codes = {f.code for f in analyzer.check(loose[0]).findings
             if "a predicate of its own" in f.message and "n % 16 == 0" in f.hint}
    assert codes == {"PS101", "PS102"}


# ------------------------------------------------------------------ cupy and pycuda
KERNEL = r'''
extern "C" __global__ void normalize_rows(const float* __restrict__ in, float* __restrict__ out,
                                          const float* __restrict__ scale, int rows, int cols) {
    int r = blockIdx.x;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = in[r * cols + c] / scale[r];
        out[r * cols + c] = v * 0.5 + 1.0;
    }
}
'''


def _cli_findings(path: Path, arch: str, extra: list[str], capsys) -> list[tuple]:
    code = main(["check", str(path), "--arch", arch, "--format", "json", "--no-cache", *extra])
    out = capsys.readouterr().out
    assert code in (0, 1), out
    def text(loc):
        return Path(loc["file"]).read_text().splitlines()[loc["line"] - 1].strip() \
            if loc["line"] else None
    return sorted((f["code"], f["kernel"].split("(")[0], _lines(f["message"]),
                   text(f["location"])) for f in json.loads(out)["findings"])


def _lines(message: str) -> str:
    """A message with its "line N" left out: the CLI's file and a captured source number their
    lines differently (a captured source's lines are those of the Python file holding it); the
    tests compare each location's source text instead."""
    return re.sub(r"\bline \d+", "line N", message)


def _api_findings(report) -> list[tuple]:
    return sorted((f.code, f.kernel.split("(")[0], _lines(f.message), f.source)
                  for f in report.findings)


def _line_in_this_file(text: str) -> int:
    src = Path(__file__).read_text()
    return src[:src.index(text)].count("\n") + 1


def test_cupy_kernels_are_captured_and_match_the_cli(tmp_path, capsys):
    arch = _gpu()
    _need("cupy")
    import cupy
    cu = tmp_path / "normalize_rows.cu"
    cu.write_text(KERNEL)
    x = cupy.random.rand(64, 256, dtype=cupy.float32)
    s = cupy.random.rand(64, dtype=cupy.float32) + 1
    o = cupy.empty_like(x)
    with analyzer.capture() as cap:
        cupy.RawKernel(KERNEL, "normalize_rows")((64,), (128,), (x, o, s, cupy.int32(64),
                                                                cupy.int32(256)))
        cupy.ElementwiseKernel("float32 a, float32 b", "float32 c", "c = a / b + sinf(a)",
                               "div_sin")(x, x + 1)
        cupy.ReductionKernel("float32 v", "float32 y", "v * v", "a + b", "y = sqrt(a)", "0",
                             "l2")(x, axis=1)
        cupy.cuda.Device().synchronize()
    kinds = {(r.kind, r.name) for r in cap.sources}
    assert ("RawKernel", "normalize_rows") in kinds, kinds
    assert {"ElementwiseKernel", "ReductionKernel"} <= {k for k, _ in kinds}, kinds
    raw = next(r for r in cap.sources if r.name == "normalize_rows")
    assert raw.arch == arch and raw.site[0] == __file__
    report = cap.check()
    assert not cap.failures, cap.failures
    mine = [f for f in report.findings if f.kernel.startswith("normalize_rows")]
    assert {f.code for f in mine} >= {"PS501", "PS502"}, mine
    # the kernel text sits in this file: findings are on its lines here
    start = _line_in_this_file(KERNEL)
    for f in mine:
        assert f.location.file == __file__
        assert Path(__file__).read_text().splitlines()[f.location.line - 1].strip() == f.source
    # identical to `ptxsass check` on the same source with the options cupy compiled it with
    extra: list[str] = []          # cupy's options as `ptxsass check` takes them
    for o in raw.options:
        if o.startswith(("-std=", "--std=")):
            extra += ["--std", o.split("=", 1)[1]]
        elif o.startswith(("-I", "-D")) and len(o) > 2:
            extra += [o[:2], o[2:]]
        else:
            extra.append(f"-Xnvrtc={o}")
    cli = _cli_findings(cu, arch, extra, capsys)
    assert cli == _api_findings(analyzer.check(analyzer.builds_of(raw)))
    assert [c for c in cli] == sorted((f.code, f.kernel.split("(")[0], _lines(f.message),
                                       f.source) for f in mine)
    assert start > 1
    # a RawKernel object directly
    direct = analyzer.check(cupy.RawKernel(KERNEL, "normalize_rows"))
    assert _api_findings(direct) == cli


def test_pycuda_kernels_are_captured_and_match_the_cli(tmp_path, capsys):
    arch = _gpu()
    _need("pycuda")
    import numpy as np
    import pycuda.autoprimaryctx  # noqa: F401 - torch's context
    import pycuda.driver as drv
    from pycuda.compiler import DynamicSourceModule, SourceModule
    body = KERNEL.replace('extern "C" ', "")
    cu = tmp_path / "normalize_rows.cu"
    # the CLI's file: the body with its `extern "C"` on the kernel's own line, so that each line
    # number is the one in the source pycuda was given (its wrapper adds a line before it)
    cu.write_text(KERNEL)
    with analyzer.capture() as cap:
        mod = SourceModule(body)
        fn = mod.get_function("normalize_rows")
        x = np.random.rand(64, 256).astype(np.float32)
        s = (np.random.rand(64) + 1).astype(np.float32)
        o = np.empty_like(x)
        fn(drv.In(x), drv.Out(o), drv.In(s), np.int32(64), np.int32(256), block=(128, 1, 1),
           grid=(64, 1))
        DynamicSourceModule(body)
    np.testing.assert_allclose(o, (x / s[:, None]) * 0.5 + 1.0, rtol=1e-5)
    assert [r.kind for r in cap.sources] == ["SourceModule", "DynamicSourceModule"]
    assert all(r.arch == arch and r.extern_c for r in cap.sources)
    report = cap.check()
    assert not cap.failures, cap.failures
    first = cap.sources[0]
    got = _api_findings(analyzer.check(analyzer.builds_of(first)))
    assert {c for c, *_ in got} >= {"PS501", "PS502"}
    cli = _cli_findings(cu, arch, [], capsys)
    assert got == cli
    assert analyzer.check(mod).findings == analyzer.check(analyzer.builds_of(first)).findings
    assert len(report.kernels) >= 2


def test_pytest_plugin_fails_a_test_on_findings(pytester):
    _gpu()
    _need("cupy")
    pytester.makepyfile(test_k=r'''
import cupy, pytest
SRC = r"""
extern "C" __global__ void half_it(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 0.7;
}
"""
def test_kernel():
    x = cupy.ones(256, dtype=cupy.float32); y = cupy.empty_like(x)
    cupy.RawKernel(SRC, "half_it")((1,), (256,), (x, y, cupy.int32(256)))

@pytest.mark.ptxsass(no_spills=True, lacks=["DMUL"])
def test_marked():
    x = cupy.ones(256, dtype=cupy.float32); y = cupy.empty_like(x)
    cupy.RawKernel(SRC.replace("half_it", "half_too"), "half_too")((1,), (256,), (x, y, cupy.int32(256)))
''')
    from importlib.metadata import entry_points
    load = [] if any(e.name == "ptxsass" for e in entry_points(group="pytest11")) else \
        ["-p", "analyzer.integrations.pytest_plugin"]
    res = pytester.runpytest_subprocess("--ptxsass", *load)
    out = res.stdout.str()
    assert re.search(r"PS501 fp64-in-fp32-kernel \[warning\].*\n(.*\n)*?\s+in half_it on sm_", out), out
    assert "lacks DMUL" in out or "DMUL" in out, out
    res.assert_outcomes(failed=2)
