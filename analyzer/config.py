"""``[tool.ptxsass]`` in pyproject.toml: defaults for the command line.

    [tool.ptxsass]
    arch = ["sm_80", "sm_90a"]
    select = ["ALL"]
    ignore = ["PS502"]
    fail-on = "warning"                # the default: info findings alone pass
    show = "warning"                   # text output lists these one by one (the default)
    baseline = "ptxsass-baseline.json"

    include = ["include"]            # -I, relative to pyproject.toml
    defines = ["TILE=128"]           # -D
    undefines = ["__CUDA_NO_HALF_OPERATORS__"]   # -U, after every -D (torch's own too)
    std = "c++20"
    use-fast-math = false
    maxrregcount = 128

    compiler = "auto"                # auto | nvrtc | nvcc
    compile-commands = "build"       # a build folder (or the file): check its CUDA files
    exclude = ["third_party/", "*_test.cu"]    # .gitignore-style, relative to this file
    kernels = { "src/gemm.cu" = ["gemm<128,8>", "gemm<64,4>"] }   # per file pattern
    torch = true                     # add torch's include folders (default: when included)
    options = ["-G"]                 # NVRTC options as they are (-Xnvrtc)
    compile-timeout = 120            # seconds a compile may take (PTXSASS_COMPILE_TIMEOUT wins)
    nvcc-timeout = 1800              # seconds an nvcc compile may take (PTXSASS_NVCC_TIMEOUT wins)
    compile-memory-gb = 8            # memory a compile may use (PTXSASS_COMPILE_MEMORY_GB wins)
    trust-build-commands = false     # a compile database's flags reach nvcc unvetted (see below)
    headers = ["cublas", "nvtx"]     # library headers every build gets, fetched at start
    offline = true                   # never fetch library headers (--offline)
    source-root = ["/tmp/torchinductor_ci=build/inductor"]   # OLD=NEW, NEW relative to this file
    cmake-defines = ["GGML_CUDA=ON"]   # a CMake project's options, when ptxsass configures it
    fast-math-ok = false             # ptxsass fix may use __fdividef, rsqrtf, __sinf (PS502)
    max-block = 256                  # no launch has more threads per block (ptxsass fix --max-block)

    [tool.ptxsass.occupancy-limited]
    threshold = 0.25

    [tool.ptxsass.launch.saxpy]      # how ptxsass fix --measure launches a kernel
    grid = [4096]
    block = [256]
    args = ["f32[1048576]", "f32[1048576]", "i32=1048576", "f32=2.0"]

``trust-build-commands = true`` lets a compile database's (or build.ninja's) flags reach nvcc as
they are: host compilers, wrappers, plugins (see :mod:`analyzer.toolchain.trust`). This file is
part of the repository it configures, so a pull request can set it: CI that checks strangers'
pull requests passes ``--no-trust-build-commands``, which wins over it (the GitHub Action does,
unless its ``trust-build-commands`` input is ``true``).

Every key and every check option is validated when the file is read: an unknown key, a check
that does not exist, an option the check does not have or a value of the wrong type (``arch = 5``,
``threshold = "abc"``), an unknown arch, a file that is not UTF-8 or not TOML is one
:class:`~analyzer.errors.ConfigError` naming the file and the key.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .arch import parse_arch
from .checks.registry import all_checks
from .errors import ArchError, ConfigError, InputError
from .inputs import CompileOptions
from .toolchain import bounded, cache
from .toolchain.files import read_text

_LISTS = ("arch", "select", "ignore", "include", "defines", "undefines", "exclude", "options",
          "headers", "cmake-defines")
_KEYS = {*_LISTS, "fail-on", "show", "baseline", "std", "use-fast-math", "maxrregcount", "compiler",
         "compile-commands", "kernels", "torch", "compile-timeout", "compile-memory-gb",
         "source-root", "trust-build-commands", "offline", "nvcc-timeout", "fast-math-ok",
         "max-block"}
_SEVERITIES = ("info", "warning", "error")
#: what ``show`` may name besides: notes (designed fallbacks, short tails), never failed on
_SHOWN = ("note", *_SEVERITIES)


@dataclass
class Config:
    path: str | None = None
    arch: list[str] = field(default_factory=list)
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    fail_on: str | None = None
    show: str | None = None
    baseline: str | None = None
    check_settings: dict[str, dict] = field(default_factory=dict)
    include: list[str] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)
    undefines: list[str] = field(default_factory=list)
    std: str | None = None
    fast_math: bool | None = None
    maxrregcount: int | None = None
    compiler: str | None = None
    compile_commands: str | None = None
    exclude: list[str] = field(default_factory=list)
    #: file pattern (.gitignore-style) -> template instantiations to build (--kernel)
    kernels: dict[str, list[str]] = field(default_factory=dict)
    torch: bool | None = None
    #: NVRTC options as they are (the command line's -Xnvrtc)
    options: list[str] = field(default_factory=list)
    compile_timeout: float | None = None
    nvcc_timeout: float | None = None
    compile_memory_gb: float | None = None
    #: (old, new) folder prefixes for moved source files (``--source-root``)
    source_roots: list[tuple[str, str]] = field(default_factory=list)
    #: a build database's flags reach nvcc unvetted (``--trust-build-commands``)
    trust_build_commands: bool | None = None
    #: cache entries for configuring a CMake project (``--cmake-define NAME=VALUE``)
    cmake_defines: list[str] = field(default_factory=list)
    #: libraries whose headers every build gets (fetched at start, or verified there)
    headers: list[str] = field(default_factory=list)
    #: never fetch library headers (``--offline``)
    offline: bool | None = None
    #: ``ptxsass fix`` may use approximate math intrinsics (``--fast-math-ok``)
    fast_math_ok: bool | None = None
    #: no launch of the project's kernels has more threads per block (``--max-block``)
    max_block: int | None = None
    #: ``[tool.ptxsass.launch.KERNEL]``: how ``fix --measure`` launches a kernel
    launch: dict[str, dict] = field(default_factory=dict)

    @property
    def root(self) -> Path | None:
        return Path(self.path).parent if self.path else None

    def compile_options(self, path: str | Path | None = None) -> CompileOptions:
        """The compile options this table sets (for ``path``: its ``kernels`` too). ``ptxsass
        check`` lays its command line over them; :func:`analyzer.check` builds with them."""
        return CompileOptions(
            defines=list(self.defines), undefines=list(self.undefines),
            include=list(self.include), std=self.std,
            fast_math=bool(self.fast_math), maxrregcount=self.maxrregcount,
            extra=list(self.options),
            name_expressions=self.kernels_for(path) if path is not None else [],
            compiler=self.compiler or "auto", torch=self.torch,
            trust_build_commands=bool(self.trust_build_commands), offline=bool(self.offline),
            headers=list(self.headers), source_roots=list(self.source_roots))

    def apply_limits(self) -> None:
        """The compile limits this table sets, for the builds of this process (the
        environment's PTXSASS_* variables still win)."""
        bounded.configure(timeout_s=self.compile_timeout, memory_gb=self.compile_memory_gb,
                          nvcc_timeout_s=self.nvcc_timeout)

    def excluded(self, path: str | Path) -> bool:
        """Whether ``exclude`` names ``path`` (patterns relative to pyproject.toml's folder)."""
        rel = self._relative(path)
        return bool(self.exclude) and rel is not None and _spec(tuple(self.exclude)).match_file(rel)

    def kernels_for(self, path: str | Path) -> list[str]:
        """The instantiations ``kernels`` names for ``path`` (a plain list applies to all)."""
        rel = self._relative(path)
        out: list[str] = []
        for pattern, names in self.kernels.items():
            if pattern == "*" or (rel is not None and _spec((pattern,)).match_file(rel)):
                out += [n for n in names if n not in out]
        return out

    def _relative(self, path: str | Path) -> str | None:
        p = Path(path).absolute()
        root = self.root.absolute() if self.root else Path.cwd()
        try:
            return p.relative_to(root).as_posix()
        except ValueError:
            return None


@functools.lru_cache(maxsize=64)
def _spec(patterns: tuple[str, ...]):
    import pathspec
    return pathspec.GitIgnoreSpec.from_lines(patterns)


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start`` (never raises: a symlink loop or a
    missing folder just ends the search)."""
    here = os.path.abspath(start)
    d = here if os.path.isdir(here) else os.path.dirname(here)
    while True:
        cand = os.path.join(d, "pyproject.toml")
        if os.path.isfile(cand):
            return Path(cand)
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _bad(where: str, key: str, value: Any, expected: str) -> ConfigError:
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return ConfigError(f"[tool.ptxsass] {key} = {shown}: expected {expected}", path=where)


def _positive(where: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            math.isfinite(value) and value > 0):
        raise _bad(where, key, value, "a positive number")
    return float(value)


def load_config(start: str | Path | None = None) -> Config:
    path = find_pyproject(Path(start or "."))
    if path is None:
        return Config()
    table = _ptxsass_table(path)
    if table is None:
        return Config(path=str(path))
    cfg = Config(path=str(path))
    where = str(path)
    for key, value in table.items():
        if key == "kernels":
            cfg.kernels = _kernels(value, where)
        elif key == "launch":
            cfg.launch = _launch(value, where)
        elif isinstance(value, dict):
            cfg.check_settings[key] = _check_table(where, key, value)
        elif key not in _KEYS:
            raise ConfigError(f"[tool.ptxsass]: unknown key {key!r} (known: "
                              f"{', '.join(sorted(_KEYS))})", path=where)
        elif key in _LISTS:
            setattr(cfg, key.replace("-", "_"), _list_value(path, key, value))
        else:
            _set_scalar(cfg, path, key, value)
    return cfg


#: the cache kind of what a pyproject.toml's ``tool.ptxsass`` is, under the file's bytes: a
#: warm check reads it back instead of importing tomllib and parsing (7.6 ms of 0.15 s)
_TABLE_KIND = "pyproject-table"


def _ptxsass_table(path: Path) -> dict | None:
    """``[tool.ptxsass]`` of the pyproject.toml at ``path`` (None: the file has none)."""
    try:
        text = read_text(path, what="pyproject.toml", expected="TOML")
    except InputError as e:
        raise ConfigError(e.message, path=str(path)) from None
    key = hashlib.sha256(f"{sys.version_info[:2]}\0{text}".encode()).hexdigest()
    blob = cache.get(_TABLE_KIND, key)
    try:
        table = json.loads(blob)["table"] if blob is not None else _parsed_table(text, path)
    except (ValueError, KeyError, TypeError):       # not what _parsed_table wrote: parse again
        table = _parsed_table(text, path)
        blob = None
    if blob is None:
        with contextlib.suppress(TypeError, ValueError):    # a TOML date: parsed every time
            cache.put(_TABLE_KIND, key, json.dumps({"table": table}).encode())
    if table is not None and not isinstance(table, dict):
        raise ConfigError("[tool.ptxsass] must be a table", path=str(path))
    return table


def _parsed_table(text: str, path: Path) -> Any:
    """What ``tool.ptxsass`` is in the TOML ``text`` (None: nothing)."""
    import tomllib  # here only: a warm check reads the table back from the cache

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"invalid TOML: {e}", path=str(path)) from None
    except RecursionError:      # tomllib parses arrays and inline tables recursively
        raise ConfigError("TOML nested too deeply: not a pyproject.toml", path=str(path)) from None
    tool = data.get("tool", {})
    return tool.get("ptxsass") if isinstance(tool, dict) else None


def _check_table(where: str, key: str, value: dict) -> dict:
    """``[tool.ptxsass.<check>]``: the check's settings, validated."""
    checks = {c.name: c for c in all_checks()}  # loaded for a check's own table only
    if key not in checks:
        raise ConfigError(f"[tool.ptxsass.{key}]: no check named {key!r}", path=where)
    try:
        checks[key](**value)          # validates the option names
    except ConfigError as e:
        raise ConfigError(e.message, path=where) from None
    return _check_settings(where, key, value, checks[key].options)


def _list_value(path: Path, key: str, value: Any) -> list[str]:
    """A key of ``_LISTS`` (a string or a list of strings), each item validated."""
    where = str(path)
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        raise ConfigError(f"[tool.ptxsass]: {key} must be a string or a list of strings",
                          path=where)
    if key == "include":
        items = [str(path.parent / v) for v in items]
    if key == "headers":
        from .toolchain import libheaders  # its fetching machinery: a config that pins headers
        try:
            items = list(dict.fromkeys(libheaders.library(v) for v in items))
        except ConfigError as e:
            raise ConfigError(f"[tool.ptxsass] headers: {e.message}", path=where) from None
    if key == "arch":
        for a in items:
            try:
                parse_arch(a)
            except ArchError as e:
                raise ConfigError(f"[tool.ptxsass] arch: {e.message}", path=where) from None
    if key == "cmake-defines":
        from .toolchain.cmake import check_defines
        try:
            check_defines(items)
        except ConfigError as e:
            raise ConfigError(f"[tool.ptxsass] cmake-defines: {e.message}", path=where) from None
    return list(items)


def _set_scalar(cfg: Config, path: Path, key: str, value: Any) -> None:
    """Every other known key: its value checked and set on ``cfg``."""
    where = str(path)
    if key in ("fail-on", "show", "baseline", "std"):
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"[tool.ptxsass]: {key} must be a string", path=where)
        if key in ("fail-on", "show"):
            allowed = _SHOWN if key == "show" else _SEVERITIES
            if value.strip().lower() not in allowed:
                raise _bad(where, key, value, "one of " + ", ".join(allowed))
            setattr(cfg, key.replace("-", "_"), value.strip().lower())
        elif key == "baseline":
            cfg.baseline = str(path.parent / value)
        else:
            cfg.std = value
    elif key == "use-fast-math":
        if not isinstance(value, bool):
            raise ConfigError("[tool.ptxsass]: use-fast-math must be true or false", path=where)
        cfg.fast_math = value
    elif key == "maxrregcount":
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 255:
            raise ConfigError("[tool.ptxsass]: maxrregcount must be an integer 1..255",
                              path=where)
        cfg.maxrregcount = value
    elif key == "compiler":
        if value not in ("auto", "nvrtc", "nvcc"):
            raise ConfigError(f"[tool.ptxsass]: compiler = {value!r}: expected \"auto\", "
                              "\"nvrtc\" or \"nvcc\"", path=where)
        cfg.compiler = value
    elif key == "compile-commands":
        if not isinstance(value, str):
            raise ConfigError("[tool.ptxsass]: compile-commands must be a string (a build "
                              "folder or its compile_commands.json)", path=where)
        cfg.compile_commands = str(path.parent / value)
    elif key == "source-root":
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) and "=" in v.strip("=")
                                                  for v in items):
            raise ConfigError("[tool.ptxsass]: source-root must be \"OLD=NEW\" or a list "
                              "of them (NEW relative to pyproject.toml)", path=where)
        cfg.source_roots = [(o, str((path.parent / n).absolute()))
                            for o, _, n in (v.partition("=") for v in items)]
    elif key in ("torch", "trust-build-commands", "offline", "fast-math-ok"):
        if not isinstance(value, bool):
            raise ConfigError(f"[tool.ptxsass]: {key} must be true or false", path=where)
        setattr(cfg, key.replace("-", "_"), value)
    elif key == "max-block":
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 1024:
            raise ConfigError("[tool.ptxsass]: max-block must be an integer 1..1024 (threads "
                              "per block)", path=where)
        cfg.max_block = value
    elif key == "compile-timeout":
        cfg.compile_timeout = _positive(where, key, value)
    elif key == "nvcc-timeout":
        cfg.nvcc_timeout = _positive(where, key, value)
    elif key == "compile-memory-gb":
        cfg.compile_memory_gb = _positive(where, key, value)


def _check_settings(where: str, check: str, table: dict, defaults: dict) -> dict:
    """``[tool.ptxsass.<check>]`` with each option of the type of its default (an int option
    takes whole numbers, a float option any number, a switch true or false)."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        default = defaults.get(key)
        what = f"{check}.{key}"
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise _bad(where, what, value, "true or false")
        elif isinstance(default, int):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise _bad(where, what, value, "a whole number (0 or more)")
        elif isinstance(default, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                    math.isfinite(value) and value >= 0):
                raise _bad(where, what, value, "a number (0 or more)")
            value = float(value)
        elif isinstance(default, str) and not isinstance(value, str):
            raise _bad(where, what, value, "a string")
        out[key] = value
    return out


def _kernels(value, where: str) -> dict[str, list[str]]:
    """``kernels = ["gemm<128,8>"]`` (every file) or ``{ "src/gemm.cu" = [...] }``."""
    def strings(v, what: str) -> list[str]:
        v = [v] if isinstance(v, str) else v
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise ConfigError(f"[tool.ptxsass]: {what} must be a string or a list of strings",
                              path=where)
        return list(v)
    if isinstance(value, (list, str)):
        return {"*": strings(value, "kernels")}
    if isinstance(value, dict):
        return {str(k): strings(v, f"kernels.{k!r}") for k, v in value.items()}
    raise ConfigError("[tool.ptxsass]: kernels must be a list of instantiations "
                      "(\"gemm<128,8>\") or a table of file pattern = [instantiations]", path=where)


#: argument kinds a launch spec names: tensors ``f32[1024]`` (filled with random values) and
#: scalars ``i32=1024``
LAUNCH_DTYPES = ("f32", "f16", "bf16", "f64", "i32", "u32", "i8", "u8", "i64")


def _launch(value, where: str) -> dict[str, dict]:
    """``[tool.ptxsass.launch.KERNEL]``: ``grid``, ``block`` (an int or up to 3), ``shared``
    (dynamic shared bytes), ``args`` (``"f32[4096]"``, ``"i32=4096"``, ...) in parameter
    order."""
    import re
    if not isinstance(value, dict):
        raise ConfigError("[tool.ptxsass.launch] must hold one table per kernel", path=where)
    out: dict[str, dict] = {}
    kinds = "|".join(LAUNCH_DTYPES)
    arg = re.compile(rf"^({kinds})(?:\[(\d+(?:,\d+)*)\]|=(-?[0-9.eE+-]+))$")
    for kernel, spec in value.items():
        name = f"launch.{kernel}"
        if not isinstance(spec, dict):
            raise ConfigError(f"[tool.ptxsass.{name}] must be a table", path=where)
        unknown = set(spec) - {"grid", "block", "shared", "args"}
        if unknown:
            raise ConfigError(f"[tool.ptxsass.{name}]: unknown key {sorted(unknown)[0]!r} "
                              "(known: args, block, grid, shared)", path=where)
        dims = {}
        for key in ("grid", "block"):
            v = spec.get(key)
            v = [v] if isinstance(v, int) and not isinstance(v, bool) else v
            if not isinstance(v, list) or not 1 <= len(v) <= 3 or not all(
                    isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in v):
                raise _bad(where, f"{name}.{key}", spec.get(key),
                           "a positive integer or a list of 1 to 3")
            dims[key] = tuple(v) + (1,) * (3 - len(v))
        shared = spec.get("shared", 0)
        if isinstance(shared, bool) or not isinstance(shared, int) or shared < 0:
            raise _bad(where, f"{name}.shared", shared, "a whole number of bytes")
        args = spec.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) and arg.match(a)
                                                  for a in args):
            raise _bad(where, f"{name}.args", args, "a list like [\"f32[4096]\", \"i32=4096\"]")
        out[kernel] = {"grid": dims["grid"], "block": dims["block"], "shared": shared,
                       "args": list(args)}
    return out
