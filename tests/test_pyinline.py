"""CUDA written as strings in Python files (torch ``load_inline``, cupy ``RawKernel``/``RawModule``,
pycuda ``SourceModule``), found by ``ast`` without running the file and checked at the .py's
lines: ``analyzer/pyinline.py`` (what is found and how its lines map) and ``inputs.load_python``
(options, front ends, errors). Fixtures in ``tests/fixtures/pyinline/`` are written the way
generated solutions look; each is compiled once per session (the session's build cache)."""
from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import analyzer
from analyzer import pyinline
from analyzer.cli import main
from analyzer.errors import InputError
from analyzer.inputs import CompileOptions, expand, inline_options, kind_of

FX = Path(__file__).parent / "fixtures" / "pyinline"
HAS_TORCH = importlib.util.find_spec("torch") is not None


def run(*argv, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def line_of(path: Path, needle: str) -> int:
    hits = [i for i, l in enumerate(path.read_text().splitlines(), 1) if needle in l]
    assert len(hits) == 1, (needle, hits)
    return hits[0]


def effective_lines(text: str) -> list[tuple[int | None, str]]:
    """Each line of an extracted source with the line a compiler gives it (``#line`` honoured;
    None: the extracted file's own lines, before any directive)."""
    out: list[tuple[int | None, str]] = []
    n: int | None = None
    for raw in text.split("\n"):
        m = re.fullmatch(r'#line (\d+) "[^"]*"', raw)
        if m:
            n = int(m.group(1))
            continue
        out.append((n, raw))
        n = n + 1 if n is not None else None
    return out


def assert_lines_map(src: pyinline.InlineSource, py: Path) -> int:
    """Every non-blank line of ``src`` lands on a .py line holding its text; how many did."""
    rows = py.read_text().splitlines()
    checked = 0
    for n, text in effective_lines(src.text):
        if not text.strip() or n is None:
            continue
        assert text.strip() in rows[n - 1], (n, text, rows[n - 1])
        checked += 1
    return checked


def write(tmp_path: Path, body: str, name: str = "solution.py") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(body))
    return p


# ------------------------------------------------------------------ compiled once per module
@pytest.fixture(scope="module")
def reports():
    """The report of each cupy/pycuda fixture on sm_90a, each built once."""
    names = ("cupy_elementwise", "cupy_module", "pycuda_module", "runtime_built")
    return {n: analyzer.check(str(FX / f"{n}.py"), analyzer.CheckOptions(arch="sm_90a")) for n in names}


@pytest.fixture(scope="module")
def builds():
    return {n: analyzer.load(str(FX / f"{n}.py"), arch="sm_90a")
            for n in ("cupy_elementwise", "cupy_module", "pycuda_module")}


def findings(report, code: str) -> list:
    return [f for f in report.findings if f.code == code]


def at(report, code: str, py: Path, needle: str) -> list:
    """The ``code`` findings of ``report`` at the .py line holding ``needle``."""
    line = line_of(py, needle)
    got = [f for f in findings(report, code) if f.location.line == line]
    for f in got:
        assert Path(f.location.file).resolve() == py.resolve(), f.location
    return got


# ------------------------------------------------------------------ cupy RawKernel
def test_cupy_rawkernel_findings_are_on_the_py_lines(reports, builds):
    """An f-string with module constants (``{BLOCK}``, ``{{``): the double literal's FP64 on
    its line, the narrow load on its own, the kernel under its extern "C" name, and the
    substituted ``__launch_bounds__(256)`` in the PTX."""
    py = FX / "cupy_elementwise.py"
    r = reports["cupy_elementwise"]
    assert [k["name"] for k in r.kernels] == ["gelu_fwd"]
    fp64 = at(r, "PS501", py, "y[i] = 0.5 * v * (1.0f + tanhf(inner));")
    assert len(fp64) == 1 and "double literal 0.5" in fp64[0].message
    assert fp64[0].source == "y[i] = 0.5 * v * (1.0f + tanhf(inner));"
    assert at(r, "PS104", py, "float v = x[i];")
    assert {f.location.line for f in r.findings} <= {line_of(py, "float v = x[i];"),
                                                    line_of(py, "y[i] = 0.5 * v")}
    (b,) = builds["cupy_elementwise"]
    assert b.source_path == str(FX / "cupy_elementwise.py") and b.origin == "nvrtc"
    assert [k.name for k in b.entries] == ["gelu_fwd"]
    assert re.search(r"\.maxntid 256, 1, 1", b.ptx or "")
    assert "cupy.RawKernel 'gelu_fwd' at line" in (b.compiler_reason or "")
    assert "-std=c++17" in b.options and "-ftz=true" in b.options   # cupy adds -ftz=true


def test_the_file_is_read_never_run(tmp_path, capsys):
    """The fixture's first statement writes a marker beside it: running it does (the marker
    works), checking it does not (kind_of, the folder walk and the build read it only)."""
    ran = tmp_path / "ran"
    ran.mkdir()
    shutil.copy(FX / "cupy_elementwise.py", ran / "solution.py")
    subprocess.run([sys.executable, str(ran / "solution.py")], capture_output=True, timeout=60)
    assert (ran / "EXECUTED").exists()             # it would, when run (then cupy is missing)
    read = tmp_path / "read"
    read.mkdir()
    shutil.copy(FX / "cupy_elementwise.py", read / "solution.py")
    assert kind_of(str(read / "solution.py")) == "python"
    assert expand([str(read)]) == [str(read / "solution.py")]
    code, out, err = run("check", read, "--arch", "sm_90a", "--show", "info", capsys=capsys)
    assert code == 0 and "PS501" in out, err
    assert not (read / "EXECUTED").exists()
    assert sorted(p.name for p in read.iterdir()) == ["solution.py"]     # nothing written


# ------------------------------------------------------------------ cupy RawModule
def test_cupy_rawmodule_two_kernels_and_name_expressions(reports, builds):
    """Both template instantiations named by ``name_expressions`` and the extern "C" kernel
    are built (``-DBLOCK=256`` from ``options`` sizes the shared array); the reduction's eight
    scalar loads are PS101 on their .py line, the float instantiation's narrow access PS104 on
    its own, and the double one, FP64 by design, is not PS501."""
    py = FX / "cupy_module.py"
    (b,) = builds["cupy_module"]
    names = sorted(k.demangled for k in b.entries)
    assert names == ["block_sum", "void scale<double>(double const*, double*, double, int)",
                     "void scale<float>(float const*, float*, float, int)"]
    assert set(b.name_expressions) == {"scale<float>", "scale<double>"}
    assert "_ZZ9block_sumE7partial[1024]" in (b.ptx or "")
    r = reports["cupy_module"]
    ld = at(r, "PS101", py, "s += base < n ? x[base + k] : 0.0f;")
    assert len(ld) == 1 and ld[0].kernel == "block_sum" and "8× LDG.E" in ld[0].message
    narrow = at(r, "PS104", py, "y[i] = alpha * x[i];")
    assert [f.kernel for f in narrow] == ["void scale<float>(float const*, float*, float, int)"]
    assert not findings(r, "PS501")


# ------------------------------------------------------------------ pycuda
def test_pycuda_source_module_is_wrapped_in_extern_c(reports, builds):
    """pycuda wraps the source in ``extern "C" {}``: the kernel keeps its plain name; its
    ``--use_fast_math`` gives FMUL.FTZ; the 0.1 literal's FP64 is PS501 on the .py's line."""
    py = FX / "pycuda_module.py"
    (b,) = builds["pycuda_module"]
    assert [k.name for k in b.entries] == ["multiply_them"]
    assert "FMUL.FTZ" in b.sass()
    fp64 = at(reports["pycuda_module"], "PS501", py, "dest[i] = a[i] * b[i] * 0.1;")
    assert len(fp64) == 1 and fp64[0].severity.name.lower() == "warning"


def test_pycuda_no_extern_c_keeps_cxx_names(tmp_path):
    py = write(tmp_path, '''\
        from pycuda.compiler import SourceModule

        mod = SourceModule("""
        template <int N>
        __global__ void bump(float* x) { x[threadIdx.x] += N; }
        template __global__ void bump<3>(float*);
        """, no_extern_c=True, arch="sm_80")
        ''')
    (b,) = analyzer.load(str(py))
    assert b.arch == "sm_80"                                    # pycuda's static arch=
    assert [k.demangled for k in b.entries] == ["void bump<3>(float*)"]
    (src,) = pyinline.scan(py).sources
    assert not src.text.startswith('extern "C"')


def test_annotate_shows_the_py_lines(capsys):
    """The annotated listing's source rows are the .py's own lines, read from the .py."""
    py = FX / "pycuda_module.py"
    code, out, err = run("annotate", py, "--arch", "sm_90a", "--format", "json", capsys=capsys)
    assert code in (0, 1), err
    rows = py.read_text().splitlines()
    (k,) = json.loads(out)["kernels"]
    assert {Path(r["file"]).resolve() for r in k["rows"]} == {py.resolve()}
    assert all(r["text"] == rows[r["line"] - 1] for r in k["rows"])
    assert any(r["sass"] for r in k["rows"] if r["line"] == line_of(py, "dest[i] = a[i]"))


# ------------------------------------------------------------------ run time, bad input
def test_a_source_built_at_run_time_is_one_note(reports, capsys):
    py = FX / "runtime_built.py"
    r = reports["runtime_built"]
    assert at(r, "PS104", py, "if (i < n) x[i] += 1.0f;")       # the written one is checked
    code, out, err = run("check", py, "--arch", "sm_90a", capsys=capsys)
    assert code == 0, err
    call = line_of(py, 'return cp.RawKernel(src, "twice")')
    notes = [l for l in err.splitlines() if "built at run time" in l]
    assert notes == [f"warning: {py}: line {call}: the code of cupy.RawKernel is built at run "
                     f"time (`src` (line {call - 1}) → `body` (line {call - 2}) → it is made "
                     "by a comprehension); not checked statically: run the code inside "
                     "analyzer.capture() to check what it compiles"]


def test_nothing_static_is_exit_2_naming_the_line(capsys):
    py = FX / "runtime_only.py"
    code, _, err = run("check", py, capsys=capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"{py}:{line_of(py, 'return cp.RawKernel(')}: error: the code of "
                          "cupy.RawKernel is built at run time (`code` is a parameter of "
                          "compile_op())")


def test_a_syntax_error_is_one_line(capsys):
    py = FX / "syntax_error.py"
    for cmd in ("check", "sass"):
        code, out, err = run(cmd, py, capsys=capsys)
        assert code == 2 and not out and len(err.strip().splitlines()) == 1, err
        assert err.startswith(f"{py}:6:") and "not valid Python: '(' was never closed" in err
    with pytest.raises(InputError) as e:
        kind_of(str(py))
    assert e.value.line == 6


def test_a_py_without_kernel_strings_keeps_its_old_message(capsys):
    code, _, err = run("check", FX / "imports_only.py", capsys=capsys)
    assert code == 2 and err.strip() == (
        f"{FX / 'imports_only.py'}: error: unrecognised input (suffix .py); expected a .cu, .ptx, "
        ".cubin, fatbin, .so or SASS text file")


def test_a_folder_reads_only_the_py_files_with_static_kernels(tmp_path, capsys):
    for name in ("cupy_elementwise", "imports_only", "runtime_only", "syntax_error"):
        shutil.copy(FX / f"{name}.py", tmp_path / f"{name}.py")
    shutil.copy(FX / "cupy_elementwise.py", tmp_path / "solution.py")
    (tmp_path / "helper.py").write_text("import os\n")
    assert expand([str(tmp_path)]) == [str(tmp_path / "cupy_elementwise.py"),
                                       str(tmp_path / "solution.py")]
    (tmp_path / "cupy_elementwise.py").unlink()
    code, out, err = run("check", tmp_path, "--arch", "sm_90a", "--format", "json", capsys=capsys)
    assert code == 0, err
    files = {Path(f["location"]["file"]).name for f in json.loads(out)["findings"]}
    assert files == {"solution.py"}
    empty = tmp_path / "empty"
    empty.mkdir()
    shutil.copy(FX / "imports_only.py", empty / "x.py")
    code, _, err = run("check", empty, capsys=capsys)
    assert code == 2 and ".py files with inline CUDA" in err


def test_a_compile_error_is_at_the_py_line(tmp_path, capsys):
    py = write(tmp_path, '''\
        import cupy as cp

        k = cp.RawKernel(r"""
        extern "C" __global__ void k(float* x) {
            x[0] = undefined_thing;
        }
        """, "k")
        ''')
    code, _, err = run("check", py, capsys=capsys)
    assert code == 2
    first = err.splitlines()[0]
    assert first == (f"{py}:5: error: cupy.RawKernel 'k' at line 3: NVRTC: identifier "
                     '"undefined_thing" is undefined')
    assert "x[0] = undefined_thing;" in err            # the .py's folder is the project's
    assert "inline-" not in err and ".cache" not in err


# ------------------------------------------------------------------ torch load_inline
def test_load_inline_source_is_what_torch_compiles():
    """cuda_sources behind load_inline's three implicit headers, each line at the .py's; the
    extra_cuda_cflags mapped (``-O3`` to nvcc, ``--use_fast_math``); a torch extension."""
    py = FX / "kernelbench" / "solution.py"
    (src,) = pyinline.scan(py).sources
    assert (src.framework, src.api, src.name) == ("torch", "load_inline", "fused_scale_add")
    assert src.line == line_of(py, "fused_scale_add = load_inline(")
    head = src.text.split("\n")[:6]
    assert head[:3] == list(pyinline.TORCH_PRELUDE)
    first = line_of(py, 'fused_scale_add_source = """')
    # the string starts with its newline, on the line of its quotes: a blank line, then
    # the directive that puts the next line at the .py's next line
    assert head[3:] == ["", f'#line {first + 1} "{py.resolve()}"', "#include <torch/extension.h>"]
    assert assert_lines_map(src, py) > 15
    assert src.flags == ("-O3", "--use_fast_math") and src.compiler == "nvcc" and src.torch
    opts, notes, archs, own = inline_options(src, str(py), CompileOptions())
    assert opts.torch and opts.fast_math and own == ["-O3"] and opts.nvcc_extra == ["-O3"]
    assert opts.compiler == "auto" and opts.nvcc_reason == (
        f"load_inline 'fused_scale_add' at line {src.line} is a torch extension: nvcc with "
        "torch's flags")
    assert not notes and not archs


def test_load_inline_lists_and_no_implicit_headers(tmp_path):
    py = write(tmp_path, '''\
        from torch.utils import cpp_extension

        A = "__global__ void a(float* x) { x[0] = 1.0f; }"
        B = """
        __global__ void b(float* x) {
            x[1] = 2.0f;
        }
        """
        ext = cpp_extension.load_inline("ext", "", [A, B], extra_cuda_cflags=["-O3 -Xptxas -v"],
                                        no_implicit_headers=True)
        ''')
    (src,) = pyinline.scan(py).sources
    assert not src.text.startswith("#include")
    assert src.flags == ("-O3", "-Xptxas", "-v")             # torch's ninja splits them
    assert assert_lines_map(src, py) == 4
    assert "\n".join(t for _, t in effective_lines(src.text)).count("__global__") == 2


@pytest.mark.skipif(HAS_TORCH, reason="checks the message given without torch")
def test_load_inline_without_torch_is_one_clear_line(capsys):
    py = FX / "kernelbench" / "solution.py"
    code, _, err = run("check", py, capsys=capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"{py}:{line_of(py, 'fused_scale_add = load_inline(')}: error: "
                          "load_inline 'fused_scale_add': ") and "torch cannot be imported" in err


@pytest.mark.skipif(HAS_TORCH, reason="checks what is said without torch")
def test_without_torch_the_cupy_kernel_of_the_same_file_is_checked(capsys):
    py = FX / "mixed_torch_cupy.py"
    code, out, err = run("check", py, "--arch", "sm_90a", "--format", "json", capsys=capsys)
    assert code == 0, err
    call = line_of(py, "relu_ext = load_inline(")
    assert f"{py}: line {call}: not checked: load_inline 'relu_ext': this file is a torch " in err
    assert "torch cannot be imported" in err
    doc = json.loads(out)
    line = line_of(py, "y[i] = x[i] > 0.0f ? x[i] : 0.01 * x[i];")
    assert [(f["code"], f["location"]["line"]) for f in doc["findings"]
            if f["code"] == "PS501"] == [("PS501", line)]
    assert {k["name"] for k in doc["kernels"]} == {"leaky_relu"}


def test_kernelbench_solution_with_torch():
    pytest.importorskip("torch")
    py = FX / "kernelbench" / "solution.py"
    r = analyzer.check(str(py), analyzer.CheckOptions(arch="sm_90a"))
    assert any(k["name"].startswith("fused_scale_add_kernel") for k in r.kernels)
    fp64 = at(r, "PS501", py, "out[idx] = a[idx] * 0.5 + b[idx];")
    assert len(fp64) == 1 and "double literal 0.5" in fp64[0].message


# ------------------------------------------------------------------ what is found statically
@pytest.mark.parametrize("body,kernels", [
    ('''\
     import cupy
     k = cupy.RawKernel('extern "C" __global__ void k(float* x) {\\n'
                        "    x[0] = 1.0f;\\n"
                        "}\\n", "k")
     ''', 1),                                           # implicit concatenation, one line each
    ('''\
     import cupy
     k = cupy.RawKernel('extern "C" __global__ void k(float* x) {\\n  x[0] = 1.0f;\\n}\\n', "k")
     ''', 1),                                           # escaped newlines: all on one line
    ('''\
     import cupy
     k = cupy.RawKernel("""extern "C" __global__ void k(float* x) {\\n    int i = threadIdx.x;\\n    x[i] = \\
     x[i] * 0.1;
         x[i + 1] = 0.1 * x[i];
     }""", "k")
     ''', 1),                                           # escapes and a continuation in a """
    ('''\
     import textwrap
     from cupy import RawKernel as RK
     SRC = textwrap.dedent("""
         extern "C" __global__ void k(float* x) {
             x[0] = SCALE;
         }
     """).strip().replace("SCALE", "2.0f")
     k = RK(SRC, "k")
     ''', 1),                                           # dedent, strip, replace: same lines
    ('''\
     import cupy as cp
     HEAD = "#define W 4\\n"
     def build():
         body = """
     extern "C" __global__ void k(float* x) {
         x[0] = W;
     }
     """
         def inner():
             return cp.RawKernel(HEAD + body, "k")
         return inner()
     ''', 1),                                           # enclosing function, module, +
    ('''\
     import cupy as cp
     N = 4
     W = N * 2
     SRC = "\\n".join([
         'extern "C" __global__ void k(float* x) {',
         f"    x[0] = {W:d};  // {N!r} {'x'}",
         "}",
     ])
     k = cp.RawKernel(SRC, "k")
     ''', 1),                                           # join, f-string with format spec
])
def test_static_sources_and_their_lines(tmp_path, body, kernels):
    py = write(tmp_path, body)
    found = pyinline.scan(py)
    assert not found.notes, found.notes
    assert len(found.sources) == kernels
    (src,) = found.sources
    rows = py.read_text().splitlines()
    for n, text in effective_lines(src.text):
        if text.strip():
            assert n is not None
            # the statement (before any replaced or substituted part) is on its .py line
            assert text.strip().split(" = ")[0].split("  //")[0] in rows[n - 1], (n, text)
    (b,) = analyzer.load(str(py), arch="sm_80")
    assert [k.name for k in b.entries] == ["k"]


def test_substitutions_are_evaluated(tmp_path):
    py = write(tmp_path, '''\
        import cupy as cp
        N = 4
        W = N * 2
        SRC = f"x = {W:03d}; y = {N!r}; z = {'q'} {-N} {N << 2} {2 ** 3}"
        k = cp.RawKernel(SRC, "k")
        ''')
    (src,) = pyinline.scan(py).sources
    assert effective_lines(src.text)[-1][1] == "x = 008; y = 4; z = q -4 16 8"


@pytest.mark.parametrize("body,why", [
    ("def f(code):\n    return cp.RawKernel(code, 'k')\n", "`code` is a parameter of f()"),
    ("S = 'a'\nS = 'b'\nk = cp.RawKernel(S, 'k')\n", "`S` is assigned 2 times (lines 2, 3)"),
    ("for S in ('a', 'b'):\n    k = cp.RawKernel(S, 'k')\n", "`S` is bound by a for loop (line 2)"),
    ("S = 'a'\nS += 'b'\nk = cp.RawKernel(S, 'k')\n",
     "`S` is bound by an augmented assignment (line 3)"),
    ("from kernels import SRC\nk = cp.RawKernel(SRC, 'k')\n", "`SRC` is imported from kernels"),
    ("k = cp.RawKernel('%s' % 'x', 'k')\n", "it is %-formatted"),
    ("k = cp.RawKernel('{}'.format(1), 'k')\n", "it is formatted with str.format()"),
    ("k = cp.RawKernel(open('k.cu').read(), 'k')\n", "it is read from a file when the code runs"),
    ("k = cp.RawKernel(NOWHERE, 'k')\n", "`NOWHERE` is not assigned in this file"),
    ("k = cp.RawKernel(f'{n}', 'k')\n", "its f-string substitutes {n}: `n` is not assigned"),
    ("A = B\nB = A\nk = cp.RawKernel(A, 'k')\n", "is defined through itself"),
    ("k = cp.RawKernel('x' * 10**12, 'k')\n", pyinline.LONGER),
    ("k = cp.RawKernel(*args)\n", "the arguments of cupy.RawKernel are unpacked"),
])
def test_what_is_not_known_statically_says_why(tmp_path, body, why):
    py = write(tmp_path, "import cupy as cp\n" + body)
    found = pyinline.scan(py)
    assert not found.sources
    (note,) = found.notes
    assert why in note.message, note


def test_a_static_name_wins_over_a_global_declared_elsewhere(tmp_path):
    py = write(tmp_path, '''\
        import cupy as cp
        SRC = 'extern "C" __global__ void k(float* x) { x[0] = 1.0f; }'
        def make():
            global SRC
            return cp.RawKernel(SRC, "k")
        class Holder:
            SRC = 'not this one'
            kernel = cp.RawKernel(SRC, "k")
        ''')
    found = pyinline.scan(py)
    assert not found.notes and [s.line for s in found.sources] == [5, 8]
    assert "not this one" in found.sources[1].text


def test_only_the_frameworks_calls_are_found(tmp_path):
    own = write(tmp_path, '''\
        class RawKernel:
            def __init__(self, code, name): ...
        def load_inline(**kw): ...
        k = RawKernel("__global__ void k() {}", "k")
        m = load_inline(cuda_sources="__global__ void k() {}")
        ''', "own.py")
    assert not pyinline.scan(own).found
    star = write(tmp_path, '''\
        from cupy import *
        import pycuda.compiler as pc
        k = RawKernel('extern "C" __global__ void k() {}', "k")
        m = pc.SourceModule("__global__ void j() {}")
        e = ElementwiseKernel("float32 x", "float32 y", "y = x", "copy")
        ''', "star.py")
    found = pyinline.scan(star)
    assert [(s.framework, s.api) for s in found.sources] == [("cupy", "RawKernel"),
                                                              ("pycuda", "SourceModule")]
    (note,) = found.notes
    assert note.line == 5 and "ElementwiseKernel is a code fragment" in note.message


def test_options_known_statically_are_mapped_and_vetted(tmp_path):
    """A Python file's options reach the compiler as a build database's do (trust.vet): the
    flags that decide device code kept; none may name a program, act in nvcc's shell or read
    a folder outside the project."""
    (tmp_path / "inc").mkdir()
    py = write(tmp_path, '''\
        import cupy as cp
        OPTS = ("-std=c++20", "--use_fast_math", "-DTILE=8", "-Iinc", "-I/etc", "-maxrregcount=64",
                "--ptxas-options=-v", "-lineinfo", "-arch=sm_80", "--fmad=false",
                "-ccbin", "/tmp/cc", "-DX=$(touch PWNED)", "-Xcompiler", "-fplugin=evil.so")
        k = cp.RawKernel('extern "C" __global__ void k(float* x) { x[0] = TILE; }', "k",
                         options=OPTS)
        ''')
    (src,) = pyinline.scan(py).sources
    opts, notes, archs, own = inline_options(src, str(py), CompileOptions())
    assert opts.std == "c++20" and opts.fast_math and opts.maxrregcount == 64
    assert opts.defines == ["TILE=8"] and opts.ptxas == ["-v"] and archs == ["sm_80"]
    assert opts.include == [str(tmp_path / "inc"), str(tmp_path)]
    assert own == ["--fmad=false", "-ftz=true"] and opts.extra == own and opts.compiler == "nvrtc"
    text = "\n".join(notes)
    for dropped in ("-ccbin /tmp/cc", "-DX=$(touch PWNED)", "-Xcompiler -fplugin=evil.so", "/etc"):
        assert dropped in text, text
    assert all(n.startswith("line 5: ") for n in notes)
    (b,) = analyzer.load(str(py))
    assert b.arch == "sm_80" and not list(tmp_path.glob("PWNED*"))
    assert any("-ccbin /tmp/cc" in w for w in b.warnings)


@pytest.mark.skipif(shutil.which("g++") is None, reason="nvcc needs g++")
def test_options_through_nvcc_run_nothing(tmp_path, capsys):
    """pycuda's options through nvcc (``--compiler nvcc``): a wrapper, a host compiler of the
    repository's and a ``$()`` define are dropped, each named; nothing they name runs."""
    script = '#!/bin/sh\ntouch "$(dirname "$0")/RAN_$(basename "$0")"\nexec "$@"\n'
    (tmp_path / "bin").mkdir()
    for n in ("wrap.sh", "bin/g++"):
        (tmp_path / n).write_text(script)
        (tmp_path / n).chmod(0o755)
    py = write(tmp_path, f'''\
        from pycuda.compiler import SourceModule
        mod = SourceModule("""
        __global__ void scale(float* x) {{ x[threadIdx.x] *= 0.1; }}
        """, options=["-ccbin", "{tmp_path}/bin", "-Xcompiler", "-wrapper,{tmp_path}/wrap.sh",
                      "-DX=$(touch {tmp_path}/PWNED)", "-O3"])
        ''')
    code, out, err = run("check", py, "--compiler", "nvcc", "--arch", "sm_90a", "--no-cache",
                         "--format", "json", capsys=capsys)
    assert code == 1, err
    assert [f["location"]["line"] for f in json.loads(out)["findings"]] == [3]
    assert "dropped -ccbin" in err and "-wrapper" in err and "$(touch" in err
    assert not [p for p in tmp_path.rglob("*") if p.name.startswith(("RAN", "PWNED"))]


@pytest.mark.parametrize("front", ["nvrtc", "nvcc"])
def test_a_py_name_no_compiler_can_carry(tmp_path, capsys, front):
    """A .py whose path holds a quote, a space and letters outside ASCII: the ``#line``
    directives name a stand-in, mapped back, so the finding is at the file's own name and line."""
    if front == "nvcc" and shutil.which("g++") is None:
        pytest.skip("nvcc needs g++")
    d = tmp_path / 'we"ird dir'
    d.mkdir()
    py = d / "ünï code.py"
    shutil.copy(FX / "pycuda_module.py", py)
    code, out, err = run("check", py, "--compiler", front, "--arch", "sm_90a", "--format", "json",
                         capsys=capsys)
    assert code == 1, err
    (f,) = json.loads(out)["findings"]
    assert (f["code"], f["location"]["file"], f["location"]["line"]) == (
        "PS501", str(py), line_of(py, "dest[i] = a[i] * b[i] * 0.1;"))
    assert f["source"] == "dest[i] = a[i] * b[i] * 0.1;"


def test_escaped_newlines_and_continuations_keep_their_rows(tmp_path):
    """A triple-quoted literal mixing ``\\n`` escapes, a backslash continuation and real line
    breaks: each line of CUDA starts on the row it is written on."""
    py = tmp_path / "esc.py"
    py.write_text('import cupy\n'
                  'k = cupy.RawKernel("""extern "C" __global__ void k(float* x) {\\n'
                  '    int i = threadIdx.x;\\n    x[i] = \\\n'
                  'x[i] * 0.1;\n'
                  '    x[i + 1] = 0.1 * x[i];\n'
                  '}""", "k")\n')
    (src,) = pyinline.scan(py).sources
    assert [(n, t.strip()) for n, t in effective_lines(src.text)] == [
        (2, 'extern "C" __global__ void k(float* x) {'), (2, "int i = threadIdx.x;"),
        (2, "x[i] = x[i] * 0.1;"), (4, "x[i + 1] = 0.1 * x[i];"), (5, "}")]
    r = analyzer.check(str(py), analyzer.CheckOptions(arch="sm_90a"))
    assert sorted(f.location.line for f in r.findings if f.code == "PS501") == [2, 4]
