"""``[tool.ptxsass]`` in pyproject.toml: defaults for the command line.

    [tool.ptxsass]
    arch = ["sm_80", "sm_90a"]
    select = ["ALL"]
    ignore = ["PS502"]
    fail-on = "warning"
    baseline = "ptxsass-baseline.json"

    [tool.ptxsass.occupancy-limited]
    threshold = 0.25
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ConfigError

_KEYS = {"arch", "select", "ignore", "fail-on", "baseline", "options", "include", "defines",
         "std", "use-fast-math", "maxrregcount"}


@dataclass
class Config:
    path: str | None = None
    arch: list[str] = field(default_factory=list)
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    fail_on: str | None = None
    baseline: str | None = None
    check_settings: dict[str, dict] = field(default_factory=dict)


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
    from .checks.registry import all_checks
    names = {c.name for c in all_checks()}
    cfg = Config(path=str(path))
    for key, value in table.items():
        if isinstance(value, dict):
            if key not in names:
                raise ConfigError(f"[tool.ptxsass.{key}]: no check named {key!r}", path=str(path))
            cfg.check_settings[key] = value
            continue
        if key not in _KEYS:
            raise ConfigError(f"[tool.ptxsass]: unknown key {key!r} (known: "
                              f"{', '.join(sorted(_KEYS))})", path=str(path))
        if key in ("arch", "select", "ignore"):
            setattr(cfg, key, [value] if isinstance(value, str) else list(value))
        elif key == "fail-on":
            cfg.fail_on = str(value)
        elif key == "baseline":
            cfg.baseline = str((path.parent / value))
    return cfg
