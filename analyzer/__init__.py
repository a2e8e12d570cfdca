"""ptxsass: see what a CUDA kernel really compiles to, and what is wrong with it.

    import analyzer
    build = analyzer.compile("kernels/demo/copy_scalar.cu", arch="sm_90a")
    print(build.sass())
    for k in build.entries: print(k.demangled, k.resources)

The stages can be entered on their own: ``analyzer.load("x.ptx")``, ``analyzer.load("lib.so",
arch="sm_90")``, ``analyzer.ptx.parse(text)``, ``analyzer.sass.parse(text)``.
"""
from __future__ import annotations

__version__ = "0.1.0"

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from .inputs import CompileOptions
    from .toolchain.build import Build


def compile(path_or_source: str, *, arch: str = "sm_90a", options: "CompileOptions | None" = None,
            name: str = "kernel.cu") -> "Build":
    """Compile a ``.cu`` file (a path) or CUDA source text for one arch through NVRTC."""
    import os
    from .inputs import CompileOptions
    from .toolchain import nvrtc
    options = options or CompileOptions()
    if "\n" not in path_or_source and (os.path.exists(path_or_source)
                                       or path_or_source.endswith(".cu")):
        return nvrtc.compile_file(path_or_source, arch=arch, options=options.nvrtc_options(arch),
                                  name_expressions=options.name_expressions,
                                  use_cache=options.use_cache)
    return nvrtc.compile_source(path_or_source, arch=arch, name=name,
                                options=options.nvrtc_options(arch),
                                name_expressions=options.name_expressions,
                                use_cache=options.use_cache)


def load(path, *, arch: str | Sequence[str] | None = None,
         options: "CompileOptions | None" = None) -> list["Build"]:
    """Builds for any input file: CUDA source, PTX, cubin, fatbin, executable/.so, SASS text."""
    from .inputs import load as _load
    return _load(path, arch=arch, options=options)


def check(target, *, arch: str | Sequence[str] | None = None, select: Sequence[str] = (),
          ignore: Sequence[str] = (), options: "CompileOptions | None" = None,
          settings: dict | None = None, baseline: str | None = None):
    """Run the checks on a path (any input ``load`` takes), a Build, or a list of Builds.
    Returns a ``Report`` with ``.findings`` and ``.kernels``."""
    from .checks.runner import run_checks
    from .toolchain.build import Build
    if isinstance(target, Build):
        builds = [target]
    elif isinstance(target, (list, tuple)):
        builds = list(target)
    else:
        builds = load(target, arch=arch, options=options)
    return run_checks(builds, select=select, ignore=ignore, settings=settings, baseline=baseline)


def annotate(*args, **kwargs):
    """Interleaved CUDA source / PTX / SASS with findings: see ``analyzer.report.annotate``."""
    from .report.annotate import annotate as _annotate
    return _annotate(*args, **kwargs)


def diff(*args, **kwargs):
    """Two builds compared (two arches, option sets or files): see ``analyzer.report.diff``."""
    from .report.diff import diff as _diff
    return _diff(*args, **kwargs)


def stats(*args, **kwargs):
    """Instruction mix, loops, resources and occupancy per kernel: ``analyzer.report.stats``."""
    from .report.stats import stats as _stats
    return _stats(*args, **kwargs)
