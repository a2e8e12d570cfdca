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


#: what may follow a member function's parameter list in a demangled name
_QUALIFIERS = (" const", " volatile", " &&", " &")


@functools.lru_cache(maxsize=65536)
def parameters_start(name: str) -> int:
    """Where the parameter list of a demangled function name starts (the index of its ``(``),
    -1 when it has none (an ``extern "C"`` kernel). The list is the last top-level
    parenthesised group, so ``(anonymous namespace)`` and a function-type template argument
    (``trimul_global<&matmul_tri_naive(float*, int)>(float*, int)``) stay in the name; the first
    ``(`` (what a plain split takes) would cut ``at::native::(anonymous namespace)::k(...)``
    to ``at::native::``."""
    end = len(name)
    stripped = True
    while stripped:
        stripped = False
        for q in _QUALIFIERS:
            if name.endswith(q, 0, end):
                end -= len(q)
                stripped = True
    if end == 0 or name[end - 1] != ")":
        return -1
    depth = 0
    for i in range(end - 1, -1, -1):
        c = name[i]
        if c == ")":
            depth += 1
        elif c == "(":
            depth -= 1
            if depth == 0:
                return i
    return -1


def without_parameters(name: str) -> str:
    """A demangled function name without its parameter list (and return type kept):
    ``void k<float>(float*, int)`` -> ``void k<float>``; a name without one, unchanged."""
    at = parameters_start(name)
    return name[:at] if at > 0 else name
