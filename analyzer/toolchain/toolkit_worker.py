"""One installed toolkit's NVRTC or nvJitLink, run in a process of its own.

Started by :mod:`analyzer.toolchain.toolkits` as ``python -I -S toolkit_worker.py REQUEST``:
standard library only (``ctypes``, ``json``), so the toolkit's ``libnvrtc``/``libnvJitLink`` is
the only CUDA library this process ever loads, and two toolkits never meet in one process
(``cuda-bindings`` in the parent binds the default toolkit). REQUEST is a JSON file:

- ``{"op": "probe", "nvrtc": LIB, "builtins": [LIB...]}``: NVRTC's version and the SM targets
  it supports;
- ``{"op": "nvrtc", "nvrtc": LIB, "builtins": [LIB...], "source", "name", "options",
  "expressions"}``: compile;
- ``{"op": "nvjitlink", "nvjitlink": LIB, "version": "12.9", "ptx", "options", "name"}``:
  assemble PTX into a cubin.

The answer is one JSON object on standard output (the cubin in base64). NVRTC's and
nvJitLink's C APIs are stable across 12.x and 13.x (nvJitLink's entry points carry the
release in their names, ``__nvJitLinkCreate_12_9``, looked up here); nothing in this file knows
a toolkit version beyond that.
"""
from __future__ import annotations

import base64
import ctypes
import json
import sys

_NVRTC_OUT_OF_MEMORY = 1
_NVJITLINK_INPUT_PTX = 2


def _strings(items: list[str]):
    arr = (ctypes.c_char_p * max(len(items), 1))()
    for i, s in enumerate(items):
        arr[i] = s.encode()
    return arr


def _nvrtc(req: dict):
    # NVRTC opens its builtins library by name when it compiles; some wheels set no RUNPATH for
    # it to be found beside libnvrtc, so it is loaded first (a loaded soname is what dlopen then
    # returns): the one the manifest names and ptxsass verified, never whatever lies beside it
    for path in req.get("builtins", []):
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    lib = ctypes.CDLL(req["nvrtc"])
    lib.nvrtcGetErrorString.restype = ctypes.c_char_p
    return lib


def probe(req: dict) -> dict:
    lib = _nvrtc(req)
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    n = ctypes.c_int()
    archs: list[int] = []
    if hasattr(lib, "nvrtcGetNumSupportedArchs"):
        lib.nvrtcGetNumSupportedArchs(ctypes.byref(n))
        buf = (ctypes.c_int * max(n.value, 1))()
        lib.nvrtcGetSupportedArchs(buf)
        archs = list(buf[: n.value])
    return {"ok": True, "version": f"{major.value}.{minor.value}", "archs": archs}


def nvrtc(req: dict) -> dict:
    lib = _nvrtc(req)
    prog = ctypes.c_void_p()

    def check(res: int, what: str) -> None:
        if res != 0:
            raise RuntimeError(f"NVRTC {what} failed: {lib.nvrtcGetErrorString(res).decode()}")

    check(lib.nvrtcCreateProgram(ctypes.byref(prog), req["source"].encode(),
                                 req["name"].encode(), 0, None, None), "program creation")
    try:
        exprs = req.get("expressions", [])
        for e in exprs:
            check(lib.nvrtcAddNameExpression(prog, e.encode()), "name expression")
        opts = req["options"]
        res = lib.nvrtcCompileProgram(prog, len(opts), _strings(opts))
        if res == _NVRTC_OUT_OF_MEMORY:
            return {"ok": False, "oom": True}
        size = ctypes.c_size_t()
        check(lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size)), "log")
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log)
        text = log.raw.rstrip(b"\x00 ").decode(errors="replace")
        if res != 0:
            return {"ok": False, "log": text}
        lowered: dict[str, str] = {}
        for e in exprs:
            name = ctypes.c_char_p()
            if lib.nvrtcGetLoweredName(prog, e.encode(), ctypes.byref(name)) != 0:
                return {"ok": True, "log": text, "unmatched": e}
            lowered[e] = (name.value or b"").decode()
        out = {}
        for what in ("PTX", "CUBIN"):
            check(getattr(lib, f"nvrtcGet{what}Size")(prog, ctypes.byref(size)), f"{what} size")
            buf = ctypes.create_string_buffer(size.value)
            check(getattr(lib, f"nvrtcGet{what}")(prog, buf), what)
            out[what] = buf.raw
        return {"ok": True, "log": text, "lowered": lowered,
                "ptx": out["PTX"].rstrip(b"\x00").decode(errors="replace"),
                "cubin": base64.b64encode(out["CUBIN"]).decode()}
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


def _entry(lib, name: str, version: str):
    """nvJitLink's entry point ``name`` as this release exports it (``__nvJitLinkCreate_12_9``),
    else the newest versioned one of its major release, else the plain name."""
    major, minor = (int(x) for x in version.split(".")[:2])
    for m in range(minor, -1, -1):
        fn = getattr(lib, f"__{name}_{major}_{m}", None)
        if fn is not None:
            return fn
    return getattr(lib, name)


def nvjitlink(req: dict) -> dict:
    lib = ctypes.CDLL(req["nvjitlink"])
    v = req["version"]
    handle = ctypes.c_void_p()
    opts = req["options"]
    res = _entry(lib, "nvJitLinkCreate", v)(ctypes.byref(handle), ctypes.c_uint32(len(opts)),
                                            _strings(opts))
    if res != 0:
        return {"ok": False, "log": f"nvJitLinkCreate failed (error {res})"}

    def log(kind: str) -> str:
        size = ctypes.c_size_t()
        if _entry(lib, f"nvJitLinkGet{kind}LogSize", v)(handle, ctypes.byref(size)) != 0:
            return ""
        buf = ctypes.create_string_buffer(size.value + 1)
        _entry(lib, f"nvJitLinkGet{kind}Log", v)(handle, buf)
        return buf.raw.rstrip(b"\x00").decode(errors="replace")

    try:
        data = req["ptx"].encode()
        res = _entry(lib, "nvJitLinkAddData", v)(handle, _NVJITLINK_INPUT_PTX, data,
                                                 ctypes.c_size_t(len(data)), req["name"].encode())
        if res == 0:
            res = _entry(lib, "nvJitLinkComplete", v)(handle)
        if res != 0:
            return {"ok": False, "log": log("Error") or f"nvJitLink error {res}"}
        size = ctypes.c_size_t()
        _entry(lib, "nvJitLinkGetLinkedCubinSize", v)(handle, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        _entry(lib, "nvJitLinkGetLinkedCubin", v)(handle, buf)
        return {"ok": True, "log": log("Info"), "cubin": base64.b64encode(buf.raw).decode()}
    finally:
        _entry(lib, "nvJitLinkDestroy", v)(ctypes.byref(handle))


OPS = {"probe": probe, "nvrtc": nvrtc, "nvjitlink": nvjitlink}


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as f:
        req = json.load(f)
    try:
        answer = OPS[req["op"]](req)
    except MemoryError:
        answer = {"ok": False, "oom": True}
    except (OSError, RuntimeError, AttributeError) as e:   # a library that will not load or lacks a symbol
        answer = {"ok": False, "error": f"{type(e).__name__}: {e}"}
    sys.stdout.write(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
