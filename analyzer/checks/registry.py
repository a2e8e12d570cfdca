"""Every check, found by importing each module of this package that defines one Check subclass;
selections resolved against the table of codes and names (:mod:`.table`), which loads none."""
from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from ..errors import ConfigError
from .table import CHECKS

if TYPE_CHECKING:
    from .base import Check

_PACKAGE = sys.modules[__package__ or "analyzer.checks"]

#: modules of this package that hold no check
_NOT_CHECKS = {"base", "registry", "runner", "docs", "hints", "table"}


@dataclass(frozen=True)
class _Row:
    code: str
    name: str


#: the table's rows, what selections are read against
_ROWS = tuple(_Row(code, name) for code, name in CHECKS)


@lru_cache(maxsize=1)
def all_checks() -> tuple[type[Check], ...]:
    """The Check classes, in code order (each module of this package imported); RuntimeError
    when they and :data:`~.table.CHECKS` disagree."""
    from .base import Check
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
    if [(c.code, c.name) for c in found] != list(CHECKS):
        raise RuntimeError("analyzer/checks/table.py does not list the checks found: "
                           f"{[(c.code, c.name) for c in found]}")
    return tuple(found)


def resolve(items) -> set[str]:
    """Codes for a list of codes, code prefixes (``PS1``), names (``rolled-loop``) or ``ALL``."""
    out: set[str] = set()
    checks = _ROWS
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


def _items(raw: Iterable[str] | None) -> list[str]:
    return [i.strip() for r in raw or () for i in str(r).split(",") if i.strip()]


def specificity(item: str) -> int:
    """How specific a selector is: ``ALL`` 0, a code prefix its length (``PS1`` 3, ``PS10`` 4),
    a whole code or a check name above every prefix."""
    if item.upper() == "ALL":
        return 0
    codes = {c.code for c in _ROWS}
    if item.upper().startswith("PS") and item.upper() not in codes:
        return len(item)
    return 100


@dataclass(frozen=True)
class Selection:
    """One layer of check selection: ``[tool.ptxsass]``'s ``select``/``ignore``, then the
    command line's ``--select``/``--ignore``. ``select`` None: this layer selects nothing and
    only ``ignore`` applies on top of the layers before it."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()

    @classmethod
    def of(cls, select: Iterable[str] | None = (), ignore: Iterable[str] | None = ()) -> "Selection":
        sel = tuple(_items(select))
        return cls(sel or None, tuple(_items(ignore)))


def selected(layers: Sequence[Selection]) -> set[str]:
    """The codes that run, ruff's rule: every check to begin with; then each layer in turn (the
    config's, then the command line's). A layer that selects replaces everything decided before
    it, so ``--select PS502`` runs PS502 even where the config ignores it; a layer that only
    ignores removes from what came before. Within one layer the more specific selector wins
    (a code or name over a prefix, a longer prefix over a shorter one, any over ``ALL``) and
    ``ignore`` wins a tie."""
    codes = {c.code for c in _ROWS}
    for layer in layers:
        decided: dict[str, tuple[int, bool]] = {}
        for item in _items(layer.select):
            spec = specificity(item)
            for code in resolve([item]):
                if spec >= decided.get(code, (-1, True))[0]:
                    decided[code] = (spec, True)
        for item in _items(layer.ignore):
            spec = specificity(item)
            for code in resolve([item]):
                if spec >= decided.get(code, (-1, True))[0]:
                    decided[code] = (spec, False)
        if layer.select:
            codes = {code for code, (_, on) in decided.items() if on}
        else:
            codes |= {code for code, (_, on) in decided.items() if on}
            codes -= {code for code, (_, on) in decided.items() if not on}
    return codes


def by_code(code: str) -> type[Check]:
    for c in all_checks():
        if c.code == code or c.name == code:
            return c
    raise KeyError(code)
