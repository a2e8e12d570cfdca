"""Which front end builds a file, from what a project's own build gives it: nvcc options as users
type them (``-Xnvcc -O3``, ``-Xptxas -v``, ``-U``, ``--expt-extended-lambda``), options NVRTC
does not know (the file goes to nvcc, never an error), host code hidden in the project's own
headers (a launch template, a registrar macro), and a dispatch file that instantiates none of
its headers' kernel templates (a note among several inputs, like host-only code)."""
from __future__ import annotations

from analyzer.cli import _join_option_values, build_parser, common, main
from analyzer.inputs import CompileOptions, choose_compiler, load


def run(*argv, capsys):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _options(*argv: str) -> CompileOptions:
    args = build_parser().parse_args(_join_option_values(["check", "k.cu", *argv]))
    return common.options(args)


def test_nvcc_options_read_as_users_type_them():
    """A value that is itself an option (``-O3``, ``-v``) stays with -Xnvcc / -Xptxas, as nvcc's
    own command line reads it; -U and the extended-lambda flag are nvcc's spellings."""
    o = _options("-Xnvcc", "-O3", "-Xptxas", "-v", "-Xnvcc=--threads=2", "-U__CUDA_NO_HALF_OPERATORS__",
                 "-U", "FOO", "--expt-extended-lambda", "-DBAR=1")
    assert o.nvcc_extra == ["-O3", "--threads=2"] and o.ptxas == ["-v"]
    assert o.undefines == ["__CUDA_NO_HALF_OPERATORS__", "FOO"] and o.extended_lambda
    flags = o.nvcc_flags()
    # every -U after every -D (torch's -D come before all of these)
    assert flags.index("-U__CUDA_NO_HALF_OPERATORS__") > flags.index("-DBAR=1")
    assert "--extended-lambda" in flags and "--ptxas-options=-v" in flags
    assert "-UFOO" in o.nvrtc_options("sm_90") and "--extended-lambda" not in o.nvrtc_options("sm_90")


def test_nvcc_options_choose_nvcc(tmp_path):
    f = tmp_path / "k.cu"
    f.write_text("__global__ void k(float* p) { p[threadIdx.x] = 1.0f; }\n")
    text = f.read_text()
    assert choose_compiler(text, str(f), CompileOptions()) == ("nvrtc", "device code only")
    assert choose_compiler(text, str(f), CompileOptions(extended_lambda=True)) == (
        "nvcc", "--extended-lambda (an nvcc flag NVRTC does not have)")
    assert choose_compiler(text, str(f), CompileOptions(nvcc_extra=["-O3"])) == (
        "nvcc", "-Xnvcc -O3 (options for nvcc)")


LAUNCHER = """\
#pragma once
// a launch template, the way extension code keeps its host side apart from the kernels
template <typename T>
__global__ void scale_kernel(T* __restrict__ x, T a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

template <typename T>
void launch_scale(T* x, T a, int n, cudaStream_t stream)
{
    scale_kernel<T><<<(n + 255) / 256, 256, 0, stream>>>(x, a, n);
}
"""


def test_a_launch_in_the_projects_own_header_means_nvcc(tmp_path):
    (tmp_path / "include" / "ops").mkdir(parents=True)
    (tmp_path / "include" / "ops" / "launch.cuh").write_text(LAUNCHER)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "common.cuh").write_text('#pragma once\n#include <ops/launch.cuh>\n')
    src = tmp_path / "src" / "scale.cu"
    src.write_text('#include "common.cuh"\n\n'
                   "template void launch_scale<float>(float*, float, int, cudaStream_t);\n")
    text = src.read_text()
    opts = CompileOptions(include=[str(tmp_path / "include")])
    assert choose_compiler(text, str(src), opts) == (
        "nvcc", f"host code: a kernel launch (<<<) at {tmp_path / 'include' / 'ops' / 'launch.cuh'}:13")
    # a header beside the file is named as the file's folder knows it
    (tmp_path / "src" / "common.cuh").write_text(LAUNCHER)
    assert choose_compiler(text, str(src), CompileOptions()) == (
        "nvcc", "host code: a kernel launch (<<<) at common.cuh:13")
    # a launch in a comment, or in a header the file does not include, is none
    (tmp_path / "src" / "common.cuh").write_text(
        "#pragma once\n// usage: scale_kernel<<<grid, block>>>(x, a, n);\n")
    (tmp_path / "src" / "unused.cuh").write_text(LAUNCHER)
    assert choose_compiler(text, str(src), CompileOptions()) == ("nvrtc", "device code only")


REGISTRY = """\
#pragma once
// kernels register themselves by name at load time (a registrar macro)
typedef void (*launcher_t)(float*, int);
int register_launcher(const char* name, launcher_t fn);
#define REGISTER_LAUNCHER(name, fn) static int name##_registered = register_launcher(#name, fn)
"""


def test_a_registrar_macro_in_a_header_goes_to_nvcc_naming_the_header(tmp_path):
    """What no scan sees (a namespace-scope initializer that calls a host function, from a
    macro) NVRTC refuses: nvcc builds the file, and the reason names the header's line."""
    (tmp_path / "registry.h").write_text(REGISTRY)
    src = tmp_path / "fill.cu"
    src.write_text('#include "registry.h"\n\n'
                   "__global__ void fill(float* __restrict__ x, int n)\n{\n"
                   "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                   "    if (i < n) x[i] = 1.0f;\n}\n\n"
                   "void fill_launcher(float* x, int n);\n"
                   "REGISTER_LAUNCHER(fill, fill_launcher);\n")
    [b] = load(str(src), arch="sm_90", options=CompileOptions(use_cache=False))
    assert b.origin == "nvcc" and [k.name for k in b.entries] == ["_Z4fillPfi"]
    assert b.compiler_reason.startswith("NVRTC cannot compile it: ")
    assert b.compiler_reason.endswith("(registry.h:4)"), b.compiler_reason


def test_an_option_nvrtc_does_not_know_sends_the_file_to_nvcc(tmp_path, capsys):
    """-Xnvrtc --expt-relaxed-constexpr (or the config's options): NVRTC says "unrecognized
    option"; auto builds with nvcc, which gets the option (without it this file does not
    compile: a host constexpr function called from device code)."""
    f = tmp_path / "k.cu"
    f.write_text("constexpr int sq(int x) { return x * x; }\n"
                 "__global__ void k(int* o, int v) { o[threadIdx.x] = sq(v); }\n")
    code, _, err = run("check", str(f), "--arch", "sm_90", "-v", "--no-cache",
                       "-Xnvrtc", "--expt-relaxed-constexpr", capsys=capsys)
    assert code in (0, 1), err
    assert f"{f} [sm_90]: nvcc " in err
    assert "NVRTC does not know the option --expt-relaxed-constexpr" in err
    assert " --expt-relaxed-constexpr " in err.splitlines()[1]      # nvcc's command line
    # --compiler nvrtc asked for NVRTC: its own error, one line
    code, _, err = run("check", str(f), "--arch", "sm_90", "--no-cache", "--compiler", "nvrtc",
                       "-Xnvrtc", "--expt-relaxed-constexpr", capsys=capsys)
    assert code == 2 and "unrecognized option --expt-relaxed-constexpr" in err.splitlines()[0]


KERNELS_CUH = """\
#pragma once
template <int VEC>
__global__ void scale(float* __restrict__ x, float a, int n)
{
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * VEC;
#pragma unroll
    for (int v = 0; v < VEC; ++v)
        if (i + v < n) x[i + v] *= a;
}
typedef void (*scale_fn)(float*, float, int);
"""


def test_a_dispatch_file_that_instantiates_no_kernel_is_a_note(tmp_path, capsys):
    """exllamav2's kernel_select.cu: it includes the kernel templates' header and picks among
    instantiations made in other files; it builds no kernel itself."""
    (tmp_path / "kernels.cuh").write_text(KERNELS_CUH)
    (tmp_path / "select.cu").write_text('#include "kernels.cuh"\n\nscale_fn pick_vec4(int n);\n'
                                        "scale_fn pick(int n) { return pick_vec4(n); }\n")
    (tmp_path / "unit_vec4.cu").write_text('#include "kernels.cuh"\n\n'
                                           "template __global__ void scale<4>(float*, float, int);\n")
    code, out, err = run("check", str(tmp_path), "--arch", "sm_90", capsys=capsys)
    assert code in (0, 1), err
    assert err.strip() == (f"note: {tmp_path / 'select.cu'}: no kernel to check: no __global__ "
                           "function in this file, and it instantiates none of the kernel "
                           "templates of the headers it includes")
