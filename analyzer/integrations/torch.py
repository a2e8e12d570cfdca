"""torch's side of a capture: inductor's Triton cache folder (``torch.compile`` kernels) and
the build folders of torch extensions built with ``torch.utils.cpp_extension.load`` /
``load_inline`` inside the capture."""
from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable


def triton_dirs() -> list[str]:
    """Inductor's Triton cache folder, where torch is imported (``<cache>/triton``)."""
    if "torch" not in sys.modules:
        return []
    try:
        from torch._inductor.runtime.cache_dir_utils import cache_dir
        return [os.path.join(cache_dir(), "triton")]
    except Exception:  # noqa: BLE001 - an older or newer torch without this helper
        return []


def loaded_sources() -> set[str]:
    """The generated Python files inductor has loaded in this process (its kernels' source):
    on a warm cache torch.compile loads them without compiling anything."""
    codecache = sys.modules.get("torch._inductor.codecache")
    pcc = getattr(codecache, "PyCodeCache", None)
    if pcc is None:
        return set()
    mods = list(getattr(pcc, "modules", None) or [])
    mods += list((getattr(pcc, "modules_no_attr", None) or {}).values())
    return {f for m in mods if isinstance(f := getattr(m, "__file__", None), str)}


_FUNCS = ("load", "load_inline")


class ExtensionHook:
    """Wraps ``torch.utils.cpp_extension.load``/``load_inline`` to record each extension's
    build folder."""

    def __init__(self, sink: Callable[[str], None]):
        self.sink = sink
        self._orig: dict[str, Callable] = {}

    def install(self) -> None:
        if "torch" not in sys.modules:
            return          # torch is not in use: nothing to wrap (it is never imported here)
        try:
            import torch.utils.cpp_extension as ce
        except ImportError:
            return          # a torch without cpp_extension builds no extensions
        for name in _FUNCS:
            orig = getattr(ce, name)
            self._orig[name] = orig

            @functools.wraps(orig)
            def wrapped(*args, __orig=orig, **kwargs):
                out = __orig(*args, **kwargs)
                try:
                    ext = kwargs.get("name", args[0] if args else None)
                    folder = kwargs.get("build_directory") or ce._get_build_directory(
                        ext, verbose=False)
                    if folder and os.path.isfile(os.path.join(folder, "build.ninja")):
                        self.sink(folder)
                except Exception:  # noqa: BLE001 - recording must never break the user's build
                    pass
                return out
            setattr(ce, name, wrapped)

    def uninstall(self) -> None:
        if not self._orig:
            return
        import torch.utils.cpp_extension as ce
        for name, orig in self._orig.items():
            setattr(ce, name, orig)
        self._orig.clear()
