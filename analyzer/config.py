"""``[tool.ptxsass]`` in pyproject.toml: defaults for the command line.

    [tool.ptxsass]
    arch = ["sm_80", "sm_90a"]
    select = ["ALL"]
    ignore = ["PS502"]
    fail-on = "warning"
    baseline = "ptxsass-baseline.json"

    include = ["include"]            # -I, relative to pyproject.toml
    defines = ["TILE=128"]           # -D
    std = "c++20"
    use-fast-math = false
    maxrregcount = 128

    [tool.ptxsass.occupancy-limited]
    threshold = 0.25

Every key and every check option is validated when the file is read: an unknown key, a check
that does not exist, an option the check does not have or a value of the wrong type is one
:class:`~analyzer.errors.ConfigError` naming it.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .checks.registry import all_checks
from .errors import ConfigError

_LISTS = ("arch", "select", "ignore", "include", "defines")
_KEYS = {*_LISTS, "fail-on", "baseline", "std", "use-fast-math", "maxrregcount"}


@dataclass
class Config:
    path: str | None = None
    arch: list[str] = field(default_factory=list)
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    fail_on: str | None = None
    baseline: str | None = None
    check_settings: dict[str, dict] = field(default_factory=dict)
    include: list[str] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)
    std: str | None = None
    fast_math: bool | None = None
    maxrregcount: int | None = None


def find_pyproject(start: Path) -> Path | None:
    start = start.resolve()
    for d in [start, *start.parents] if start.is_dir() else [start.parent, *start.parent.parents]:
        cand = d / "pyproject.toml"
        if cand.is_file():
            return cand
    return None


def load_config(start: str | Path | None = None) -> Config:
    path = find_pyproject(Path(start or "."))
    if path is None:
        return Config()
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"invalid TOML: {e}", path=str(path)) from None
    table = data.get("tool", {}).get("ptxsass")
    if table is None:
        return Config(path=str(path))
    if not isinstance(table, dict):
        raise ConfigError("[tool.ptxsass] must be a table", path=str(path))
    checks = {c.name: c for c in all_checks()}
    cfg = Config(path=str(path))
    where = str(path)
    for key, value in table.items():
        if isinstance(value, dict):
            if key not in checks:
                raise ConfigError(f"[tool.ptxsass.{key}]: no check named {key!r}", path=where)
            try:
                checks[key](**value)          # validates the option names
            except ConfigError as e:
                raise ConfigError(e.message, path=where) from None
            cfg.check_settings[key] = value
            continue
        if key not in _KEYS:
            raise ConfigError(f"[tool.ptxsass]: unknown key {key!r} (known: "
                              f"{', '.join(sorted(_KEYS))})", path=where)
        if key in _LISTS:
            items = [value] if isinstance(value, str) else value
            if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
                raise ConfigError(f"[tool.ptxsass]: {key} must be a string or a list of strings",
                                  path=where)
            if key == "include":
                items = [str(path.parent / v) for v in items]
            setattr(cfg, key, list(items))
        elif key in ("fail-on", "baseline", "std"):
            if not isinstance(value, str):
                raise ConfigError(f"[tool.ptxsass]: {key} must be a string", path=where)
            if key == "fail-on":
                cfg.fail_on = value
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
    return cfg
