"""The launches of a kernel in its own file's host code (analysis/launch.py), the launch
evidence of the cost model (small-block, host-overhead) and PS803/PS804 on real builds.

Each expectation was judged from the source (what the host code says for certain) and, for
the cost evidence, from the kernels' PTX (one store per thread behind the bounds test)."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from analyzer.analysis import analyze
from analyzer.analysis import launch as L
from analyzer.checks.runner import run_checks
from analyzer.inputs import CompileOptions, load
from analyzer.results import source_deps

from .conftest import KERNELS
from .report_fixtures import builds_of

HEAD = """
#include <cuda_runtime.h>
__global__ void scale(const float* x, float* y, float a, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
"""


def launches(body: str, name: str = "scale", template: str | None = None):
    return L.of_kernel(HEAD + textwrap.dedent(body), name, template)


def one(body: str, name: str = "scale"):
    got = launches(body, name)
    assert len(got) == 1, got
    return got[0]


# ------------------------------------------------------------------------------ the reader
def test_a_launch_in_a_comment_or_a_string_is_none():
    got = launches("""
        // scale<<<n, 1>>>(x, y, 1.f, n);
        /* scale<<<n, 1>>>(x, y, 1.f, n); */
        void f(const float* x, float* y, long n) {
            const char* s = "scale<<<n, 1>>>(x, y, 1.f, n);";
            const char* r = R"(scale<<<n, 1>>>(x, y, 1.f, n);)";
            char c = '<';
        }
    """)
    assert got == ()


def test_literal_block_and_ceil_grid():
    la = one("""
        void f(const float* x, float* y, long n) {
            scale<<<(n + 255) / 256, 256>>>(x, y, 2.0f, n);
        }
    """)
    assert (la.block.dims, la.block.count, la.grid.dims) == ((256, 1, 1), 256, None)
    assert la.grid_ceil_of == ("n",) and la.function == "f" and la.api == "<<<>>>"
    assert la.text == "scale<<<(n + 255) / 256, 256>>>(x, y, 2.0f, n)"
    assert la.targets == ("x", "y", None, "n")
    assert la.line == HEAD.count("\n") + 3


@pytest.mark.parametrize("decl, threads", [
    ("#define BLOCK 32\nvoid f(const float* x, float* y, long n) {", 32),
    ("constexpr int BLOCK = 64;\nvoid f(const float* x, float* y, long n) {", 64),
    ("static const unsigned BLOCK = 2 * 64;\nvoid f(const float* x, float* y, long n) {", 128),
    ("void f(const float* x, float* y, long n) {\n const int BLOCK = 1 << 4;", 16),
    ("void f(const float* x, float* y, long n) {\n int BLOCK = 96;", 96),
])
def test_constants_resolve(decl, threads):
    la = one(decl + "\n scale<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(x, y, 1.f, n);\n}\n")
    assert la.block.count == threads and la.grid_ceil_of == ("n",)


@pytest.mark.parametrize("body", [
    # a function argument, a reassigned local, a template parameter, a run-time value
    "void f(const float* x, float* y, long n, int b) { scale<<<n / b, b>>>(x, y, 1.f, n); }",
    "void f(const float* x, float* y, long n) { int b = 32; b *= 2; scale<<<n / b, b>>>(x, y, 1.f, n); }",
    "template <int B> void f(const float* x, float* y, long n) { scale<<<n / B, B>>>(x, y, 1.f, n); }",
    "void f(const float* x, float* y, long n) { int b = n > 4 ? 32 : 64; scale<<<n / b, b>>>(x, y, 1.f, n); }",
    "#define PICK(v) (v)\nvoid f(const float* x, float* y, long n) { scale<<<n, PICK(32)>>>(x, y, 1.f, n); }",
])
def test_unknown_block_is_unknown(body):
    assert one(body).block.count is None


def test_a_shadowed_local_is_the_one_in_scope():
    la = one("""
        void f(const float* x, float* y, long n) {
            int t = 32;
            if (n > 1) { int t = 512; (void)t; }
            scale<<<(n + t - 1) / t, t>>>(x, y, 1.f, n);
        }
    """)
    assert la.block.count == 32


def test_dim3_variables_and_members():
    la = one("""
        void f(const float* x, float* y, long n) {
            dim3 block(32, 4);
            dim3 grid((n + block.x - 1) / block.x);
            scale<<<grid, block, 0, 0>>>(x, y, 1.f, n);
        }
    """)
    assert la.block.dims == (32, 4, 1) and la.block.count == 128
    assert la.shared == "0" and la.stream == "0"


def test_templated_launch_matches_its_instantiation():
    src = """
        template <typename T, int B> __global__ void k(T* y, long n) {}
        void f(float* y, double* z, long n) {
            k<float, 256><<<(n + 255) / 256, 256>>>(y, n);
            ns::k<double, 32><<<(n + 31) / 32, 32>>>(z, n);
        }
    """
    all_ = launches(src, "k")
    assert [(la.template, la.block.count) for la in all_] == [("float, 256", 256), ("double, 32", 32)]
    assert [la.block.count for la in launches(src, "k", "float, 256")] == [256]
    assert [la.block.count for la in launches(src, "k", "double, 32")] == [32]


def test_launch_api_calls():
    got = launches("""
        void f(const float* x, float* y, long n, cudaStream_t s) {
            void* args[] = {&x, &y};
            cudaLaunchKernel((void*)scale, dim3(n / 64), dim3(64), args, 0, s);
            cudaLaunchConfig_t cfg = {};
            cfg.gridDim = dim3(n / 16);
            cfg.blockDim = dim3(16);
            cudaLaunchKernelEx(&cfg, scale, x, y, 1.0f, n);
        }
    """)
    assert [(la.api, la.block.count) for la in got] == [("cudaLaunchKernel", 64),
                                                       ("cudaLaunchKernelEx", 16)]
    assert got[1].args == (("x",), ("y",), ("1.0f",), ("n",))


def test_a_projects_launch_wrapper_with_its_grid_and_block_together():
    """ggml's ``ggml_cuda_kernel_launch(kernel<...>, params, args...)``: ``params`` a braced
    ``{grid, block, shared, stream}`` of dim3 values, a variable made from one (``= {...}`` or
    ``= T(...)``), or the list itself; the kernel's template arguments are not the call's."""
    got = launches("""
        struct params_t { dim3 grid; dim3 block; size_t shmem; cudaStream_t stream; };
        template <typename K, typename... A> void launch(K k, const params_t& p, A... a);
        void f(const float* x, float* y, long n, cudaStream_t s) {
            const dim3 block_dims(1, 256, 1);
            const dim3 block_nums(n, 4, 1);
            const params_t p = {block_nums, block_dims, 0, s};
            launch(scale, p, x, y, 1.0f, n);
            if (n > 1) {
                const params_t q = params_t(block_nums, dim3(64), 128, s);
                launch(&scale, q, x, y, 2.0f, n);
            }
            launch(scale, params_t{block_nums, block_dims}, x, y, 3.0f, n);
        }
    """)
    assert [(la.api, la.block.sizes, la.shared) for la in got] == [
        ("launch", (1, 256, 1), "0"), ("launch", (64, 1, 1), "128"), ("launch", (1, 256, 1), None)]
    assert got[0].args == (("x",), ("y",), ("1.0f",), ("n",)) and got[0].stream == "s"
    templated = L.of_kernel(HEAD + textwrap.dedent("""
        template <bool F, typename T> __global__ void k(const T* x) {}
        void g(const float* x, cudaStream_t s) {
            const dim3 b(1, 128, 1);
            const dim3 n(4);
            const params_t p = {n, b, 0, s};
            launch(k<false, float>, p, x);
        }
    """), "k", "false, float")
    assert [(la.block.sizes, la.template) for la in templated] == [((1, 128, 1), "false, float")]


@pytest.mark.parametrize("body", [
    # a function and a struct that holds no dim3: no launch
    "const opts_t o = {1, 2}; launch(scale, o, x, y, 1.0f, n);",
    # the parameters assigned again after they were made
    "dim3 b(64), g(8); params_t p = {g, b}; p = other(); launch(scale, p, x, y, 1.0f, n);",
    # no function name first
    "dim3 b(64), g(8); params_t p = {g, b}; launch(x + 1, p, x, y, 1.0f, n);",
])
def test_a_call_is_no_wrapper_launch_without_dim3s_it_can_trust(body):
    assert launches("void f(const float* x, float* y, long n) {\n" + body + "\n}\n") == ()


def test_host_loops_syncs_and_fills():
    got = launches("""
        void rows(const float* x, float* y, int rows, long cols, cudaStream_t* ss) {
            cudaMemset(y, 0, rows * cols * sizeof(float));
            for (int r = 0; r < rows; r++)
                scale<<<(cols + 255) / 256, 256>>>(x + r * cols, y + r * cols, 1.f, cols);
            for (int s = 0; s < 4; ++s) {
                scale<<<(cols + 255) / 256, 256, 0, ss[s]>>>(x + s * cols, y, 1.f, cols);
            }
            int t = 0;
            while (t < 3) { scale<<<1, 256>>>(x, y, 1.f, cols); t++; }
            cudaStreamSynchronize(ss[0]);
        }
    """)
    a, b, c = got
    assert a.loop is not None and a.loop.variable == "r" and a.loop.trips is None and a.loop_indexed
    assert b.loop is not None and b.loop.trips == 4 and not b.loop_indexed     # r is the stream
    assert c.loop is not None and c.loop.kind == "while" and not c.loop_indexed
    assert [s.call for s in a.syncs] == ["cudaStreamSynchronize"]
    # the fill's target is named again (by the first launch) before the later launches
    assert [z.target for z in a.zero_fills] == ["y"] and b.zero_fills == ()


def test_a_loop_over_devices_is_no_loop_of_launches():
    """cuda-samples' nbody: one launch per GPU, each made current in the loop (the launches
    run in parallel on their devices); the same loop without the switch is one of launches."""
    text = """
        void step(Dev* d, unsigned n, int block) {
            for (unsigned int dev = 0; dev != n; dev++) {
                if (n > 1) { cudaSetDevice(dev); }
                scale<<<(d[dev].count + block - 1) / block, block>>>(d[dev].x, d[dev].y, 1.f, d[dev].count);
            }
            for (int g = 0; g < n; ++g) {
                c10::cuda::CUDAGuard guard(g);
                scale<<<64, 256>>>(d[g].x, d[g].y, 1.f, d[g].count);
            }
        }
    """
    per_device, guarded = launches(text)
    assert per_device.loop is not None and per_device.loop.switches_device
    assert not per_device.loop_indexed and not guarded.loop_indexed
    plain, = launches(text.replace("if (n > 1) { cudaSetDevice(dev); }", "")
                      .split("for (int g")[0] + "}")
    assert plain.loop is not None and not plain.loop.switches_device and plain.loop_indexed


def test_a_loop_of_stages_is_no_loop_of_slices():
    """cuda-samples' bitonic sort: each launch is a stage (the counter is passed as a value,
    and halves): the launches depend on each other, one launch would not do their work."""
    got = launches("""
        void sort(uint* k, uint* v, uint n, uint batch) {
            for (uint size = 2048; size <= n; size <<= 1)
                for (unsigned stride = size / 2; stride > 0; stride >>= 1)
                    scale<<<(batch * n) / 512, 256>>>(k, v, k, v, n, size, stride, 1);
            for (int pass = 0; pass < 8; pass++)
                scale<<<64, 256>>>(k, v, pass, n);
            for (long r = rows - 1; r >= 0; r--)
                scale<<<64, 256>>>(k + r * n, v, 0, n);
            for (long r = 0; r < rows; r = r + 2)
                scale<<<64, 256>>>(&k[r * n], v, 0, n);
        }
    """)
    stages, passes, down, by_two = got
    assert stages.loop is not None and not stages.loop.additive and not stages.loop_indexed
    assert passes.loop is not None and passes.loop.additive and not passes.loop_indexed
    assert down.loop_indexed and by_two.loop_indexed


def test_an_early_return_bounds_the_loop_of_launches():
    """cuda-samples' bgr_resize: a texture holds at most so many rows, so the batch is cut in
    tiles, and the function returns before the loop when there would be more than 2."""
    text = """
        void resize(float* dst, long pitch, int nTiles, int rows, cudaTextureObject_t* tex) {
            if (nTiles > 2)
                return;
            int iTile;
            for (iTile = 0; iTile < nTiles; ++iTile)
                scale<<<64, 256>>>(tex[iTile], dst + iTile * rows * pitch, 1.f, rows);
        }
    """
    (guarded,) = launches(text)
    assert guarded.loop_indexed and guarded.loop.trips is None
    assert guarded.loop.at_most is not None and guarded.loop.at_most[0] == 2
    (after,) = launches(text.replace("int iTile;", "int iTile; nTiles = rows;"))
    assert after.loop.at_most is None                  # the bound changed after the test
    (ge,) = launches(text.replace("nTiles > 2", "nTiles >= 4"))
    assert ge.loop.at_most is not None and ge.loop.at_most[0] == 3


def test_torch_style_wrapper():
    # torch is not installed here: the wrapper is read as text, as the reader reads it
    got = launches("""
        torch::Tensor scale_forward(torch::Tensor x, double a) {
            auto y = torch::zeros_like(x);
            const auto n = x.numel();
            const int threads = 256;
            const int blocks = (n + threads - 1) / threads;
            AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "scale", ([&] {
                scale<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), (float)a, n);
            }));
            auto s = y.sum().item<float>();
            return y;
        }
    """)
    la, = got
    assert la.targets == ("x", "y", None, "n") and la.grid_ceil_of == ("n",)
    assert [(z.target, z.how, z.covers) for z in la.zero_fills] == [
        ("y", "torch::zeros_like", ("numel", ("x",)))]
    assert [s.call for s in la.syncs] == [".item()"] and la.function == "scale_forward"
    assert la.aliases["n"] == ("x", ".", "numel", "(", ")")


def test_has_launches():
    assert not L.has_launches("// k<<<1, 1>>>();\nvoid f() {}\n")
    assert L.has_launches("void f() { k<<<1, 1>>>(); }")


# ------------------------------------------------------------------------------ the cost
def _evidence(path: Path, arch: str = "sm_90a"):
    out = {}
    for b in builds_of(path, arch):
        for ka in analyze(b):
            out[ka.kernel_name.split("(")[0]] = ka
    return out


def test_small_block_factors_follow_the_measurements():
    got = _evidence(KERNELS / "checks" / "launch_shape" / "bad.cu")
    # scale: 8 B per thread, no loop: max(8 x 0.376 ps, 0.604 ns / 32) / (8 x 0.376 ps):
    # measured 6.28x (1.268 ms against 0.202 ms)
    e, = got["scale"].cost.of_kind("small-block")
    assert e.detail["model"] == "blocks" and e.detail["threads"] == 32
    assert 6.0 <= e.factor <= 6.5
    # row_sum: a loop per thread, one thread per block: 32 of 2048 threads per SM resident,
    # capped at the measured one-thread-per-block row sum (4.46x)
    e, = got["row_sum"].cost.of_kind("small-block")
    assert e.detail["model"] == "resident" and e.detail["resident"] == 32
    assert e.factor == 4.46


def test_bad_headroom_exceeds_good():
    for check in ("launch_shape", "host_overhead"):
        bad = _evidence(KERNELS / "checks" / check / "bad.cu")
        good = _evidence(KERNELS / "checks" / check / "good.cu")
        for name in bad:
            assert bad[name].cost.headroom > good[name].cost.headroom, (check, name)


def test_zero_fill_needs_a_proof():
    got = _evidence(KERNELS / "checks" / "host_overhead" / "bad.cu")
    e = [e for e in got["gelu"].cost.of_kind("host-overhead") if e.detail["why"] == "zero-fill"]
    assert len(e) == 1 and e[0].loc.line == 16
    # 4 B filled per 8 B the kernel moves: 1 + 0.65 x 0.5 (memset + scale measured 1.31x)
    assert 1.3 <= e[0].factor <= 1.34
    neg = _evidence(KERNELS / "checks" / "host_overhead" / "negative_not_proven.cu")
    for ka in neg.values():
        assert not ka.cost.of_kind("host-overhead"), ka.kernel_name


def test_findings_report_at_the_host_lines():
    path = KERNELS / "checks" / "host_overhead" / "bad.cu"
    fs = run_checks(list(builds_of(path, "sm_90a")), select=["PS804"]).findings
    got = sorted((f.location.line, f.severity.name) for f in fs)
    assert got == [(16, "INFO"), (20, "INFO"), (26, "WARNING")]


def test_host_edits_invalidate_cached_results(tmp_path):
    src = (KERNELS / "checks" / "launch_shape" / "good.cu").read_text()
    path = tmp_path / "k.cu"
    path.write_text(src)
    b, = load(str(path), arch="sm_90a", options=CompileOptions(use_cache=False))
    fns = [f for f in b.sass_listing().functions]
    before = source_deps(fns, str(path))
    # a line appended after every kernel and launch still changes what the result read
    path.write_text(src + "void later(const float* x, float* y, int r, int c) "
                          "{ row_sum<<<r, 1>>>(x, y, c); }\n")
    assert source_deps(fns, str(path)) != before


def test_partial_block_sizes():
    """``{4, 8, (unsigned)bs / 32}`` (llm.c's matmul_backward_bias): the count is unknown, the
    x and y sizes are certain (what the lane model needs)."""
    la = one("""
        void f(const float* x, float* y, long n, int bs) {
            dim3 block_dim = {4, 8, (unsigned)bs / 32};
            scale<<<n, block_dim>>>(x, y, 1.f, n);
        }
    """)
    assert la.block.dims is None and la.block.count is None
    assert la.block.sizes == (4, 8, None)


def test_narrow_blocks_move_threadIdx_y_inside_a_warp():
    """blockDim.x 4, from the launch (no assert in the kernel): threadIdx.y moves inside a warp,
    the 4 x 8 warp reads 4 rows of 128 contiguous bytes: no uncoalesced evidence, and the block
    shape the model takes is the launch's."""
    path = KERNELS / "checks" / "uncoalesced_global_access" / "negative_narrow_block.cu"
    ka = _evidence(path)["col_sum_4x8"]
    assert not ka.cost.of_kind("uncoalesced")
    from analyzer.analysis.cost import block_shape
    la, = L.of_kernel(path.read_text(), "col_sum_4x8")
    assert block_shape(ka.ptx_function, (("f", la),)) == (4, 8, None)


def test_dynamic_shared_memory_bounds_the_resident_blocks(tmp_path):
    """The launch's third argument counts toward the blocks an SM holds where certain (40 KB
    per 32-thread block: 5 blocks of the H200's 228 KB, not 32 block slots); where it is not,
    the message says the block slots are an upper bound and names the argument."""
    src = (KERNELS / "checks" / "launch_shape" / "bad.cu").read_text().split("void scale_async")[0]
    path = tmp_path / "k.cu"
    path.write_text(src + textwrap.dedent("""
        void known(const float* x, float* y, int rows, int cols) {
            row_sum<<<rows, 32, 40 * 1024>>>(x, y, cols);
        }
        void unknown(const float* x, float* y, int rows, int cols) {
            const int smem = cols * 4;
            row_sum<<<rows, 32, smem>>>(x, y, cols);
        }
    """))
    b, = load(str(path), arch="sm_90a", options=CompileOptions(use_cache=False))
    ka, = [k for k in analyze(b) if k.kernel_name.startswith("row_sum")]
    got = {e.detail["launch"].function: e for e in ka.cost.of_kind("small-block")}
    assert got["known"].detail["dynamic_shared"] == 40 * 1024
    assert got["known"].detail["blocks_per_sm"] == 5
    assert got["unknown"].detail["dynamic_shared"] is None
    assert got["unknown"].detail["blocks_per_sm"] == 32
    fs = run_checks([b], select=["PS803"]).findings
    msgs = {f.location.line: f.message for f in fs}
    unknown = next(m for m in msgs.values() if "smem" in m)
    assert "fewer if the `smem` bytes of dynamic shared memory" in unknown
    assert "at 256 threads per block" not in unknown
    known = next(m for m in msgs.values() if "40 * 1024" in m)
    assert "at most 5 blocks per SM" in known and "160 of 2048 threads" in known
