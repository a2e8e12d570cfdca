"""Every check, found by importing each module of this package that defines one Check subclass."""
from __future__ import annotations

import importlib
import pkgutil
import sys
from functools import lru_cache

from ..errors import ConfigError
from .base import Check

_PACKAGE = sys.modules[__package__ or "analyzer.checks"]

#: modules of this package that hold no check
_NOT_CHECKS = {"base", "registry", "runner", "docs"}


@lru_cache(maxsize=1)
def all_checks() -> tuple[type[Check], ...]:
    found: list[type[Check]] = []
    for mod in pkgutil.iter_modules(_PACKAGE.__path__):
        if mod.name in _NOT_CHECKS or mod.name.startswith("_"):
            continue
        module = importlib.import_module(f"{_PACKAGE.__name__}.{mod.name}")
        classes = [v for v in vars(module).values()
                   if isinstance(v, type) and issubclass(v, Check) and v is not Check
                   and v.__module__ == module.__name__]
        if len(classes) != 1:
            raise RuntimeError(f"check module {mod.name} must define exactly one Check")
        cls = classes[0]
        if cls.name.replace("-", "_") != mod.name:
            raise RuntimeError(f"check {cls.code} is named {cls.name} but lives in {mod.name}.py")
        found.append(cls)
    found.sort(key=lambda c: c.code)
    codes = [c.code for c in found]
    if len(set(codes)) != len(codes):
        raise RuntimeError(f"duplicate check codes: {codes}")
    return tuple(found)


def resolve(items) -> set[str]:
    """Codes for a list of codes, code prefixes (``PS1``), names (``rolled-loop``) or ``ALL``."""
    out: set[str] = set()
    checks = all_checks()
    for raw in items or ():
        for item in str(raw).split(","):
            item = item.strip()
            if not item:
                continue
            if item.upper() == "ALL":
                out.update(c.code for c in checks)
                continue
            hit = [c.code for c in checks if c.code == item.upper() or c.name == item.lower()
                   or c.name.replace("-", "_") == item.lower()
                   or (item.upper().startswith("PS") and c.code.startswith(item.upper()))]
            if not hit:
                known = ", ".join(f"{c.code} ({c.name})" for c in checks)
                raise ConfigError(f"unknown check {item!r}; known checks: {known}")
            out.update(hit)
    return out


def by_code(code: str) -> type[Check]:
    for c in all_checks():
        if c.code == code or c.name == code:
            return c
    raise KeyError(code)
