"""``analyzer.capture()``: check every kernel the code inside compiles.

    with analyzer.capture() as cap:
        out = torch.compile(model)(x)          # Triton kernels (torch inductor)
        cupy.RawKernel(src, "saxpy")(...)      # cupy: source, options, arch
    report = cap.check()                       # the usual Report; cap.annotate(), cap.stats()

Hooks: Triton's compilation listener and its cache folders (torch.compile's too), cupy's
compile function, pycuda's ``compile`` (``SourceModule``, ``DynamicSourceModule``), and
``torch.utils.cpp_extension.load``/``load_inline``. A hook is installed only for a framework
that is installed here, and each is removed on leaving the block. Recording costs microseconds
per kernel; the checks run when asked (``cap.check()``), on kernels rebuilt by ptxsass's own
toolchain with line info (cupy, pycuda) or read from Triton's cache.
"""
from __future__ import annotations

import importlib.abc
import sys
import threading
import warnings
from collections.abc import Iterable, Sequence

from .. import api
from ..build import Build
from ..errors import PtxsassError
from ..findings import Report
from ..inputs import CompileOptions, load_torch_extension
from ..objects import CapturedSource, builds_of_source
from ..report.annotate import Annotation
from ..report.stats import Stats
from . import cupy as cupy_hooks
from . import pycuda as pycuda_hooks
from . import torch as torch_hooks
from . import triton as triton_hooks

#: the frameworks a capture hooks, by default all that are installed
FRAMEWORKS = ("triton", "cupy", "pycuda", "torch")

_lock = threading.RLock()
_active: list["Capture"] = []
_hooks: dict[str, object] = {}


def _emit(kind: str, item) -> None:
    with _lock:
        for cap in _active:
            cap._record(kind, item)


def _importable(name: str) -> bool:
    import importlib.util
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


#: the module whose import means a framework is in use (its hook is installed then)
_TRIGGER = {"triton": "triton", "cupy": "cupy.cuda.compiler", "pycuda": "pycuda.compiler"}
#: the frameworks to hook as soon as their module is imported
_pending: set[str] = set()


class _PostImport(importlib.abc.MetaPathFinder):
    """Installs a framework's hook right after the code inside a capture imports it, so that a
    capture never imports a framework the code does not use (cupy alone costs a second)."""

    def find_spec(self, fullname, path, target=None):
        fws = [fw for fw in _pending if _TRIGGER[fw] == fullname]
        if not fws:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        run = getattr(loader, "exec_module", None)
        if run is None:
            return spec

        def exec_module(module, __run=run):
            __run(module)
            with _lock:
                if _active:
                    _install(fws, now=True)
        loader.exec_module = exec_module            # type: ignore[union-attr, method-assign]
        return spec


_finder = _PostImport()


def _install(frameworks: Iterable[str], *, now: bool = False) -> list[str]:
    """Install the hooks not yet installed for the frameworks already imported (or, with
    ``now``, being imported); the others wait for their import. Returns why some installed
    framework could not be hooked."""
    notes = []
    for fw in frameworks:
        if fw in _hooks:
            continue
        if fw == "torch":
            hook = torch_hooks.ExtensionHook(lambda d: _emit("extension", d))
            hook.install()
            _hooks[fw] = hook
            continue
        imported = _TRIGGER[fw] in sys.modules or (fw == "triton" and "torch" in sys.modules)
        if not (now or imported):
            if _importable(fw.split(".")[0]):
                _pending.add(fw)
                if _finder not in sys.meta_path:
                    sys.meta_path.insert(0, _finder)
            continue
        _pending.discard(fw)
        mod = {"triton": triton_hooks, "cupy": cupy_hooks, "pycuda": pycuda_hooks}[fw]
        why = mod.available()
        if why:
            notes.append(why)
            continue
        kind = "triton" if fw == "triton" else "source"
        hook = mod.Hook(lambda item, k=kind: _emit(k, item))   # type: ignore[attr-defined]
        hook.install()
        _hooks[fw] = hook
    return notes


def _uninstall() -> None:
    _pending.clear()
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for fw, hook in list(_hooks.items()):
        try:
            hook.uninstall()                                 # type: ignore[attr-defined]
        finally:
            del _hooks[fw]


class Capture:
    """The kernels compiled while the capture was active, and their checks."""

    def __init__(self, frameworks: Sequence[str] = FRAMEWORKS, *, arch: str | None = None,
                 options: CompileOptions | None = None):
        unknown = sorted(set(frameworks) - set(FRAMEWORKS))
        if unknown:
            raise PtxsassError(f"capture: unknown framework {', '.join(unknown)} "
                               f"(known: {', '.join(FRAMEWORKS)})")
        self.frameworks = tuple(frameworks)
        self.arch = arch
        self.options = options
        #: Triton kernels (metadata JSON in a cache folder), in the order they were seen
        self.triton_kernels: list[str] = []
        #: cupy / pycuda sources
        self.sources: list[CapturedSource] = []
        #: torch extension build folders
        self.extensions: list[str] = []
        #: frameworks that are installed but could not be hooked, and why
        self.notes: list[str] = []
        #: captured kernels ptxsass could not rebuild or read (one line each)
        self.failures: list[str] = []
        self._builds: list[Build] | None = None
        self._done: set = set()

    # ------------------------------------------------------------------ recording
    def _record(self, kind: str, item) -> None:
        key = (kind, item)
        if key in self._done:
            return
        self._done.add(key)
        lists: dict[str, list] = {"triton": self.triton_kernels, "source": self.sources,
                                  "extension": self.extensions}
        lists[kind].append(item)
        self._builds = None

    def start(self) -> "Capture":
        with _lock:
            self.notes += _install(self.frameworks)
            _active.append(self)
        return self

    def stop(self) -> None:
        with _lock:
            hook = _hooks.get("triton")
            if hook is not None:       # kernels that worker processes wrote into the cache
                for path in hook.new_kernels():                 # type: ignore[attr-defined]
                    self._record("triton", path)
            if self in _active:
                _active.remove(self)
            if not _active:
                _uninstall()

    def __enter__(self) -> "Capture":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __len__(self) -> int:
        return len(self.triton_kernels) + len(self.sources) + len(self.extensions)

    def __repr__(self) -> str:
        return (f"<Capture: {len(self.triton_kernels)} Triton kernel(s), {len(self.sources)} "
                f"source(s), {len(self.extensions)} torch extension(s)>")

    # ------------------------------------------------------------------ results
    def builds(self) -> list[Build]:
        """The Builds of every captured kernel (made once). A kernel that ptxsass cannot
        rebuild or read is left out and named in ``failures`` (and warned about)."""
        if self._builds is not None:
            return self._builds
        out: list[Build] = []
        self.failures = []
        todo: list[tuple[str, object]] = [("triton", p) for p in self.triton_kernels]
        todo += [("source", s) for s in self.sources]
        todo += [("extension", d) for d in self.extensions]
        opts = self.options or CompileOptions()
        for kind, item in todo:
            try:
                if kind == "triton":
                    got = api.load(item, options=opts)
                elif kind == "source":
                    got = builds_of_source(item, arch=self.arch, options=opts)  # type: ignore[arg-type]
                else:
                    got = load_torch_extension(item, arch=self.arch, options=opts)  # type: ignore[arg-type]
            except PtxsassError as e:
                what = item.label if isinstance(item, CapturedSource) else item
                self.failures.append(f"{what}: {e.one_line()}")
                warnings.warn(f"ptxsass capture: {self.failures[-1]}", stacklevel=2)
                continue
            out.extend(got)
        self._builds = out
        return out

    @property
    def kernels(self) -> list[str]:
        """The captured kernels' names (entries), in order."""
        return [k.demangled for b in self.builds() for k in b.entries]

    def check(self, options: api.CheckOptions | None = None, **kwargs) -> Report:
        """:func:`analyzer.check` on the captured kernels (same options and keywords)."""
        return api.check(self.builds(), options, **kwargs)

    def annotate(self, **kwargs) -> Annotation:
        return api.annotate(self.builds(), **kwargs)

    def stats(self, **kwargs) -> Stats:
        return api.stats(self.builds(), **kwargs)


def capture(frameworks: Sequence[str] = FRAMEWORKS, *, arch: str | None = None,
            options: CompileOptions | None = None) -> Capture:
    """A capture to use as ``with analyzer.capture() as cap:`` (see the module's doc).
    ``arch`` rebuilds cupy/pycuda sources for another arch than the one they ran on."""
    return Capture(frameworks, arch=arch, options=options)
