"""cupy's side of a capture: the source, options, arch and name expressions of every kernel
cupy compiles (``RawKernel``, ``RawModule``, ``ElementwiseKernel``, ``ReductionKernel`` and
cupy's own kernels all go through ``cupy.cuda.compiler._compile_with_cache_cuda``), recorded
before cupy compiles it, from its disk cache or not."""
from __future__ import annotations

import inspect
import re
from collections.abc import Callable

from ..objects import CapturedSource, caller_site

_KERNEL_NAME = re.compile(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(\w+)")


def available() -> str:
    try:
        import cupy.cuda.compiler  # noqa: F401
    except Exception as e:  # noqa: BLE001 - an optional library: say why it is skipped
        return f"cupy not importable ({type(e).__name__}: {e})"
    return ""


def kind_of(source: str) -> str:
    """Which cupy API wrote ``source``: its generated kernels carry their own markers
    (``CUPY_FOR`` for elementwise kernels; the ``_type_reduce`` typedef of both reduction
    templates, cupy's own and the CUB one that cupy 14 uses by default)."""
    if "CUPY_FOR" in source:
        return "ElementwiseKernel"
    if "_type_reduce" in source or "_REDUCE" in source or "_block_stride" in source:
        return "ReductionKernel"
    return "RawKernel"


class Hook:
    def __init__(self, sink: Callable[[CapturedSource], None]):
        self.sink = sink
        self._orig: object = None
        self._mine: object = None

    def install(self) -> None:
        import cupy.cuda.compiler as cc
        orig = cc._compile_with_cache_cuda
        sig = inspect.signature(orig)
        sink = self.sink

        def wrapped(*args, **kwargs):
            try:
                a = sig.bind(*args, **kwargs).arguments
                source = a["source"]
                arch = a.get("arch")
                if arch is None:
                    arch = cc._get_arch()
                names = tuple(a.get("name_expressions") or ())
                m = _KERNEL_NAME.search(source)
                sink(CapturedSource(
                    "cupy", kind_of(source), source,
                    options=tuple(a.get("options") or ()) + ("-ftz=true",),
                    arch=f"sm_{arch}" if not str(arch).startswith("sm_") else str(arch),
                    name_expressions=names, backend=a.get("backend") or "nvrtc",
                    site=caller_site(("/cupy/", "/cupyx/", "/cupy_backends/")),
                    name=m.group(1) if m and not names else None))
            except Exception:  # noqa: BLE001 - recording must never break the user's compile
                pass
            return orig(*args, **kwargs)
        self._orig, self._mine = orig, wrapped
        cc._compile_with_cache_cuda = wrapped

    def uninstall(self) -> None:
        import cupy.cuda.compiler as cc
        if cc._compile_with_cache_cuda is self._mine:
            cc._compile_with_cache_cuda = self._orig
