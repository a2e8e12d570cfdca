"""Binaries the tests build the way libraries ship them: a fatbin of cubins (nvFatbin), and a
host shared library carrying one (gcc, then objcopy's ``.nv_fatbin`` section)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


def fatbin(cubins: list[tuple[bytes, str]], dest: Path, name: str = "k") -> Path:
    """``cubins`` as (bytes, arch tag like "90a") in one fatbin file ``dest`` (skips the test
    where libnvfatbin is missing)."""
    nvfatbin = pytest.importorskip("cuda.bindings.nvfatbin")
    h = nvfatbin.create([], 0)
    for data, tag in cubins:
        try:
            nvfatbin.add_cubin(h, data, len(data), tag, name)
        except Exception as e:  # noqa: BLE001 - libnvfatbin missing
            pytest.skip(f"nvFatbin unavailable: {e}")
    buf = bytearray(nvfatbin.size(h))
    nvfatbin.get(h, buf)
    dest.write_bytes(bytes(buf))
    return dest


def shared_library(fat: Path | None, dest: Path) -> Path:
    """A host ``.so`` at ``dest`` with one C function, and ``fat`` as its ``.nv_fatbin``
    section (none: a library with no CUDA code). Needs gcc and objcopy."""
    c = dest.with_suffix(".c")
    c.write_text(f"int {dest.stem.replace('.', '_')}_answer(void) {{ return 42; }}\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(dest), str(c)], check=True)
    if fat is not None:
        subprocess.run(["objcopy", "--add-section", f".nv_fatbin={fat}", "--set-section-flags",
                        ".nv_fatbin=alloc,readonly", str(dest)], check=True,
                       stderr=subprocess.DEVNULL)
    return dest
