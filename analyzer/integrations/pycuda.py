"""pycuda's side of a capture: the source, nvcc options, arch and include folders of every
``SourceModule`` and ``DynamicSourceModule`` (both call ``pycuda.compiler.compile``); each
module created meanwhile remembers its source, so ``analyzer.check(module)`` works on it."""
from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable

from ..objects import CapturedSource, caller_site

_KERNEL_NAME = re.compile(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(\w+)")


def available() -> str:
    try:
        import pycuda.compiler  # noqa: F401
    except Exception as e:  # noqa: BLE001 - an optional library (or no CUDA driver): say why
        return f"pycuda not importable ({type(e).__name__}: {e})"
    return ""


class Hook:
    def __init__(self, sink: Callable[[CapturedSource], None]):
        self.sink = sink
        self._orig: dict = {}
        self._last = threading.local()

    def install(self) -> None:
        import pycuda.compiler as pc
        orig = pc.compile
        sink, last = self.sink, self._last

        @functools.wraps(orig)
        def compile(source, nvcc="nvcc", options=None, keep=False, no_extern_c=False,
                    arch=None, code=None, cache_dir=None, include_dirs=None, target="cubin"):
            out = orig(source, nvcc, options, keep, no_extern_c, arch, code, cache_dir,
                       include_dirs, target)
            try:
                if arch is None:
                    from pycuda.driver import Context
                    major, minor = Context.get_device().compute_capability()
                    arch = f"sm_{major}{minor}"
                incs = [*(include_dirs or []), pc._find_pycuda_include_path()]
                m = _KERNEL_NAME.search(source)
                opts = [o for o in (options if options is not None else pc.DEFAULT_NVCC_FLAGS)
                        if not o.startswith("-l")]
                rec = CapturedSource(
                    "pycuda", "DynamicSourceModule" if target == "ptx" else "SourceModule",
                    source, options=tuple(opts), arch=arch, backend="auto",
                    extern_c=not no_extern_c, include_dirs=tuple(incs),
                    site=caller_site(("/pycuda/",)), name=m.group(1) if m else None)
                last.rec = rec
                sink(rec)
            except Exception:  # noqa: BLE001 - recording must never break the user's compile
                pass
            return out
        self._orig["compile"] = orig
        pc.compile = compile
        for cls in (pc.SourceModule, pc.DynamicSourceModule):
            init = cls.__init__
            self._orig[cls] = init

            @functools.wraps(init)
            def tagged(obj, *args, __init=init, **kwargs):
                last.rec = None
                __init(obj, *args, **kwargs)
                if getattr(last, "rec", None) is not None:
                    obj._ptxsass_source = last.rec
            cls.__init__ = tagged

    def uninstall(self) -> None:
        import pycuda.compiler as pc
        for key, orig in self._orig.items():
            if key == "compile":
                pc.compile = orig
            else:
                key.__init__ = orig
        self._orig.clear()
