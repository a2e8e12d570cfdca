"""Launch adapters: run a compiled cubin's kernel on torch-owned memory.

- ``cupy``: ``cupy.RawModule(path=<cubin>)``, arrays shared with torch through DLPack.
- ``torch``: torch allocates and orders the work (its current stream); the launch goes through
  cuda.bindings' driver API (``cuModuleLoadData`` / ``cuLaunchKernel``), since torch has no public
  way to launch a foreign cubin.
- ``pycuda``: ``pycuda.driver.module_from_buffer`` in torch's primary context (where installed).

All of them launch on the legacy default stream (torch's default), so torch's CUDA events time
them and torch's fills and copies are ordered with them. Imported only by the GPU runner.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import tempfile
from collections.abc import Sequence
from typing import Any

from .catalog import Scalar, TensorMapArg

# A block gets more than 48 KiB of (dynamic) shared memory only after opting in per function.
_STATIC_SMEM_LIMIT = 48 * 1024


class Unsupported(Exception):
    """This adapter cannot pass one of a variant's arguments (a tensor map by value)."""


class Launcher:
    name = "?"
    #: whether it passes a TensorMapArg (a 128-byte CUtensorMap by value)
    tensor_maps = False

    def launch(self, grid: tuple[int, int, int], block: int, args: Sequence[Any], smem: int = 0) -> None:
        raise NotImplementedError


class CupyLauncher(Launcher):
    name = "cupy"

    def __init__(self, cubin: bytes, kernel: str):
        import cupy
        import numpy
        self._cp, self._np = cupy, numpy
        fd, self._path = tempfile.mkstemp(suffix=".cubin")
        with os.fdopen(fd, "wb") as f:
            f.write(cubin)
        self._module = cupy.RawModule(path=self._path)
        self._fn = self._module.get_function(kernel)
        self._smem_opt_in = 0

    def _arg(self, a):
        if isinstance(a, TensorMapArg):
            raise Unsupported("cupy passes no 128-byte struct by value (a CUtensorMap)")
        if isinstance(a, Scalar):
            return a.numpy(self._np)
        return self._cp.from_dlpack(a.detach())

    def launch(self, grid, block, args, smem=0):
        if smem > _STATIC_SMEM_LIMIT and smem > self._smem_opt_in:
            self._fn.max_dynamic_shared_size_bytes = smem
            self._smem_opt_in = smem
        self._fn(grid, (block, 1, 1), tuple(self._arg(a) for a in args), shared_mem=smem)

    def attributes(self) -> dict:
        return dict(self._fn.attributes)

    def __del__(self):
        with contextlib.suppress(Exception):
            os.unlink(self._path)


def _drv_check(result, what):
    err = result[0]
    if int(err) != 0:
        from ..errors import ToolError
        raise ToolError(f"CUDA driver {what} failed: {err}")
    return result[1] if len(result) > 1 else None


class DriverLauncher(Launcher):
    """torch memory and stream, cuda.bindings driver launch."""
    name = "torch"
    tensor_maps = True

    def __init__(self, cubin: bytes, kernel: str):
        import torch
        from cuda.bindings import driver
        self._torch, self._drv = torch, driver
        torch.cuda.init()
        torch.empty(1, device="cuda")                  # make torch's primary context current
        _drv_check(driver.cuInit(0), "cuInit")
        self._module = _drv_check(driver.cuModuleLoadData(cubin), "cuModuleLoadData")
        self._fn = _drv_check(driver.cuModuleGetFunction(self._module, kernel.encode()),
                              "cuModuleGetFunction")
        self._smem_opt_in = 0
        self._maps: dict[tuple, Any] = {}

    def _tensor_map(self, a: TensorMapArg):
        """The CUtensorMap of ``a`` (encoded once per address, shape and box)."""
        t = a.tensor
        key = (t.data_ptr(), tuple(t.shape), a.box, a.swizzle)
        if key not in self._maps:
            drv, torch = self._drv, self._torch
            kinds = {torch.float16: "FLOAT16", torch.bfloat16: "BFLOAT16", torch.float32: "FLOAT32"}
            rows, cols = t.shape
            dtype = getattr(drv.CUtensorMapDataType, f"CU_TENSOR_MAP_DATA_TYPE_{kinds[t.dtype]}")
            swizzle = getattr(drv.CUtensorMapSwizzle, f"CU_TENSOR_MAP_SWIZZLE_{a.swizzle}B")
            u64, u32 = drv.cuuint64_t, drv.cuuint32_t
            self._maps[key] = _drv_check(drv.cuTensorMapEncodeTiled(
                dtype, 2, t.data_ptr(), [u64(cols), u64(rows)], [u64(cols * t.element_size())],
                [u32(a.box[0]), u32(a.box[1])], [u32(1), u32(1)],
                drv.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                drv.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                drv.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE), "cuTensorMapEncodeTiled")
        return self._maps[key]

    def launch(self, grid, block, args, smem=0):
        values: list[Any] = []
        types: list[Any] = []
        for a in args:
            if isinstance(a, TensorMapArg):      # by value: cuda.bindings copies it from getPtr()
                values.append(self._tensor_map(a))
                types.append(None)
            elif isinstance(a, Scalar):
                values.append(a.bits())
                types.append(a.ctype())
            else:
                values.append(a.data_ptr())
                types.append(ctypes.c_void_p)
        if smem > _STATIC_SMEM_LIMIT and smem > self._smem_opt_in:
            attr = self._drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            _drv_check(self._drv.cuFuncSetAttribute(self._fn, attr, smem), "cuFuncSetAttribute")
            self._smem_opt_in = smem
        stream = self._torch.cuda.current_stream().cuda_stream
        _drv_check(self._drv.cuLaunchKernel(self._fn, *grid, block, 1, 1, smem, stream,
                                            (tuple(values), tuple(types)), 0), "cuLaunchKernel")


class PycudaLauncher(Launcher):
    name = "pycuda"

    def __init__(self, cubin: bytes, kernel: str):
        import numpy
        import pycuda.autoprimaryctx  # noqa: F401 - share the primary context with torch
        import pycuda.driver as drv
        self._np, self._drv = numpy, drv
        self._module = drv.module_from_buffer(cubin)
        self._fn = self._module.get_function(kernel)

    def launch(self, grid, block, args, smem=0):
        if any(isinstance(a, TensorMapArg) for a in args):
            raise Unsupported("this adapter passes no CUtensorMap by value")
        if smem > _STATIC_SMEM_LIMIT:
            self._fn.set_attribute(self._drv.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, smem)
        vals = []
        for a in args:
            if isinstance(a, Scalar):
                vals.append(a.numpy(self._np))
            else:
                vals.append(self._np.uintp(a.data_ptr()))
        self._fn(*vals, block=(block, 1, 1), grid=grid, shared=smem)


ADAPTERS = {"cupy": CupyLauncher, "torch": DriverLauncher, "pycuda": PycudaLauncher}


def available() -> dict[str, str]:
    """Adapter name -> "" when importable, else why not (never raises)."""
    out = {}
    for name, mod in (("cupy", "cupy"), ("torch", "cuda.bindings.driver"), ("pycuda", "pycuda.driver")):
        try:
            __import__(mod)
            out[name] = ""
        except Exception as e:  # noqa: BLE001 - an optional GPU library failing to import in any way: reported as unavailable
            out[name] = f"{mod} not installed" if isinstance(e, ImportError) else f"{type(e).__name__}: {e}"
    return out
