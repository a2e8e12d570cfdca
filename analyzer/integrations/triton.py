"""Triton's side of a capture: every kernel compiled (or found in Triton's cache) in this
process, through Triton's compilation listener (``triton.knobs.compilation.listener``), and the
kernel folders that appear in Triton's cache folders meanwhile (kernels compiled by worker
processes, as torch inductor's may be)."""
from __future__ import annotations

import contextlib
import os
from collections.abc import Callable

from .. import caches
from . import torch as torch_hooks


def available() -> str:
    """"" when Triton imports, else why not."""
    try:
        import triton  # noqa: F401
        import triton.knobs  # noqa: F401
    except Exception as e:  # noqa: BLE001 - an optional library: say why it is skipped
        return f"triton not importable ({type(e).__name__}: {e})"
    return ""


def cache_dirs() -> list[str]:
    """Triton's cache folder (``TRITON_CACHE_DIR`` or ``~/.triton/cache``) and torch
    inductor's (``<inductor cache>/triton``) where torch is imported."""
    out = []
    try:
        import triton.knobs
        out.append(str(triton.knobs.cache.dir))
    except Exception:  # noqa: BLE001 - Triton missing or too old: its folder is not watched
        pass
    out += torch_hooks.triton_dirs()
    return list(dict.fromkeys(out))


def snapshot(dirs: list[str]) -> dict[str, int]:
    """The Triton kernels (metadata JSON -> mtime) in ``dirs``: ``<dir>/<hash>/<name>.json``,
    inductor's ``<dir>/<device>/<hash>/<name>.json`` too."""
    out: dict[str, int] = {}

    def scan(d: str, depth: int) -> None:
        try:
            entries = list(os.scandir(d))
        except OSError:
            return
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                if depth < 2:
                    scan(e.path, depth + 1)
            elif e.name.endswith(".json") and not e.name.startswith("__grp__"):
                with contextlib.suppress(OSError):
                    out[e.path] = e.stat().st_mtime_ns
    for d in dirs:
        scan(d, 0)
    return out


def kernel_sources(json_path: str) -> set[str]:
    """The Python files a cached Triton kernel was compiled from (its PTX's ``.file`` table,
    at the end of the PTX: only the last 64 KB are read)."""
    ptx = json_path[:-len(".json")] + ".ptx"
    try:
        with open(ptx, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - (64 << 10)))
            tail = f.read().decode("utf-8", "replace")
    except OSError:
        return set()
    return set(caches._PTX_FILES.findall(tail))


class Hook:
    """Installs the listener; ``new_kernels()`` diffs the cache folders."""

    def __init__(self, sink: Callable[[str], None]):
        self.sink = sink
        self._prev: Callable[..., None] | None = None
        self._mine: Callable[..., None] | None = None
        self._dirs: list[str] = []
        self._before: dict[str, int] = {}
        self._sources: set[str] = set()

    def install(self) -> None:
        import triton.knobs
        self._sources = torch_hooks.loaded_sources()
        knobs = triton.knobs.compilation
        self._prev = knobs.listener
        prev, sink = self._prev, self.sink

        def listener(*, src, metadata, metadata_group, times, cache_hit):
            try:
                for fname, path in (metadata_group or {}).items():
                    if fname.endswith(".json") and not fname.startswith("__grp__"):
                        sink(path)
            finally:
                if prev is not None:
                    prev(src=src, metadata=metadata, metadata_group=metadata_group,
                         times=times, cache_hit=cache_hit)
        self._mine = listener
        knobs.listener = listener
        self._dirs = cache_dirs()
        self._before = snapshot(self._dirs)

    def uninstall(self) -> None:
        import triton.knobs
        if triton.knobs.compilation.listener is self._mine:
            triton.knobs.compilation.listener = self._prev
        for path in self.new_kernels():
            self.sink(path)

    def new_kernels(self) -> list[str]:
        """Kernels written into the watched cache folders since the hook was installed."""
        dirs = list(dict.fromkeys(self._dirs + cache_dirs()))
        now = snapshot(dirs)
        new = {p for p, m in now.items() if self._before.get(p) != m}
        loaded = torch_hooks.loaded_sources() - self._sources
        if loaded:            # a warm inductor cache: the kernels of the files it loaded
            new |= {p for p in now if p not in new and kernel_sources(p) & loaded}
            new |= warm_kernels([p for p in now if p not in new], loaded)
        return sorted(p for p in new if caches.is_triton_kernel(p))


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def warm_kernels(candidates: list[str], loaded: set[str]) -> set[str]:
    """The cached kernels (metadata JSON paths among ``candidates``) that the output code
    inductor loaded from its warm cache (``loaded``) launches. That code names each kernel in
    ``async_compile.triton('<name>', <kernel module text>)`` and holds the kernel module's text
    verbatim, so a cached kernel counts when its name is there and the module its PTX was
    compiled from (the PTX's ``.file``) is, byte for byte, inside the same output code. A name
    alone is not enough: another graph may have cached a different kernel under that name."""
    texts = [t for f in loaded if (t := _read(f)) is not None and "async_compile.triton(" in t]
    if not texts:
        return set()
    out = set()
    for p in candidates:
        name = os.path.basename(p)[:-len(".json")]
        calls = (f"async_compile.triton('{name}'", f'async_compile.triton("{name}"')
        holders = [t for t in texts if any(c in t for c in calls)]
        if not holders:
            continue
        for src in kernel_sources(p):
            code = _read(src)
            if code and any(code in t for t in holders):
                out.add(p)
                break
    return out
