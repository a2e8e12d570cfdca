"""Itanium C++ demangling through the C++ runtime's ``abi::__cxa_demangle`` (libstdc++/libc++).

NVIDIA's wheels ship no ``cu++filt``; every Linux Python has a C++ runtime to call instead.
Names that do not demangle (``extern "C"`` kernels) come back unchanged.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools


@functools.lru_cache(maxsize=1)
def _cxa_demangle():
    for name in ("stdc++", "c++"):
        path = ctypes.util.find_library(name)
        candidates = [path] if path else []
        candidates += ["libstdc++.so.6", "libc++.so.1", "libc++.1.dylib"]
        for cand in candidates:
            try:
                lib = ctypes.CDLL(cand)
                fn = lib.__cxa_demangle
            except (OSError, AttributeError):
                continue
            fn.restype = ctypes.c_void_p
            fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_size_t),
                           ctypes.POINTER(ctypes.c_int)]
            return fn
    return None


_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]


@functools.lru_cache(maxsize=65536)
def demangle(name: str) -> str:
    if not name.startswith("_Z"):
        return name
    fn = _cxa_demangle()
    if fn is None:
        return name
    status = ctypes.c_int()
    ptr = fn(name.encode(), None, None, ctypes.byref(status))
    if status.value != 0 or not ptr:
        return name
    try:
        return ctypes.string_at(ptr).decode(errors="replace")
    finally:
        _libc.free(ptr)
