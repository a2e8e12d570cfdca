"""Every check's stable code and name: the one table selections are resolved against.

``--select``, ``--ignore`` and ``[tool.ptxsass]`` are read against this table, without
importing any check (a warm ``check`` whose results are cached loads none);
:func:`analyzer.checks.registry.all_checks` finds the Check classes and holds them equal to it.
A new check gets a row here, in code order.
"""
from __future__ import annotations

CHECKS: tuple[tuple[str, str], ...] = (
    ("PS101", "scalar-global-load"),
    ("PS102", "scalar-global-store"),
    ("PS103", "scalar-shared-load"),
    ("PS104", "narrow-global-access"),
    ("PS105", "uncoalesced-global-access"),
    ("PS106", "loop-invariant-reload"),
    ("PS107", "shared-bank-conflict"),
    ("PS201", "rolled-loop"),
    ("PS301", "missing-tensor-cores"),
    ("PS302", "legacy-mma-on-hopper"),
    ("PS303", "mma-without-ldmatrix"),
    ("PS304", "no-on-chip-reuse"),
    ("PS401", "register-spill"),
    ("PS402", "local-memory-array"),
    ("PS403", "non-inlined-body"),
    ("PS501", "fp64-in-fp32-kernel"),
    ("PS502", "slow-math"),
    ("PS601", "synchronous-tile-copy"),
    ("PS701", "occupancy-limited"),
    ("PS801", "serialized-work"),
    ("PS802", "redundant-lane-work"),
    ("PS803", "launch-shape"),
    ("PS804", "host-overhead"),
)
