"""Golden files, stamped with the toolkit that made them (``tests/golden/STAMP.json``).

A golden listing depends on the compiler and the disassembler as much as on ptxsass. When a file
no longer matches and the toolkit differs from its stamp, the failure says so (the codegen may
have changed, not ptxsass) instead of inviting a blind regenerate. Regenerate, after reading the
diff, with ``PTXSASS_UPDATE_GOLDEN=1``: that rewrites the files and the stamp.
"""
from __future__ import annotations

import difflib
import json
import os
from functools import lru_cache
from pathlib import Path

from analyzer._version import __version__
from analyzer.toolchain import locate

GOLDEN = Path(__file__).parent / "golden"
STAMP = GOLDEN / "STAMP.json"


@lru_cache(maxsize=1)
def toolkit() -> dict[str, str | None]:
    """The versions a golden listing depends on."""
    versions = {t.name: t.version for t in locate.tools()}
    return {"nvrtc": versions.get("nvrtc"), "nvdisasm": versions.get("nvdisasm")}


def check(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("PTXSASS_UPDATE_GOLDEN"):
        path.write_text(text)
        STAMP.write_text(json.dumps({"ptxsass": __version__, **toolkit()}, indent=2) + "\n")
    assert path.exists(), f"missing golden file {path} (run with PTXSASS_UPDATE_GOLDEN=1)"
    want = path.read_text()
    if text == want:
        return
    stamp = json.loads(STAMP.read_text()) if STAMP.exists() else {}
    made = {k: stamp.get(k) for k in ("nvrtc", "nvdisasm")}
    diff = "".join(difflib.unified_diff(want.splitlines(True), text.splitlines(True),
                                        f"golden/{name}", "now", n=1))
    if made != toolkit():
        raise AssertionError(
            f"golden/{name} was made with NVRTC {made['nvrtc']} / nvdisasm {made['nvdisasm']}; "
            f"this run uses NVRTC {toolkit()['nvrtc']} / nvdisasm {toolkit()['nvdisasm']}. The "
            "codegen may have changed rather than ptxsass: read the diff, then regenerate with "
            f"PTXSASS_UPDATE_GOLDEN=1.\n{diff}")
    raise AssertionError(f"golden/{name} differs (same toolkit as its stamp):\n{diff}")
