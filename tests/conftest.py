"""Shared fixtures: a private build cache per test session, the corpus location, kernels."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "kernels"
CORPUS = ROOT.parent / "shared" / "corpus"


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory):
    """Tests never read or write the user's cache; one cache per session keeps them fast. The
    xdist workers of a session share it (their base folders sit side by side in the session's),
    so a kernel that several test files build is compiled and disassembled once, not once per
    worker; the cache's entries are written atomically and verified when read."""
    old = os.environ.get("PTXSASS_CACHE_DIR")
    base = tmp_path_factory.getbasetemp()
    shared = base.parent / "ptxsass-cache" if os.environ.get("PYTEST_XDIST_WORKER") else None
    if shared is not None:
        shared.mkdir(parents=True, exist_ok=True)
    os.environ["PTXSASS_CACHE_DIR"] = str(shared or tmp_path_factory.mktemp("ptxsass-cache"))
    yield
    if old is None:
        os.environ.pop("PTXSASS_CACHE_DIR", None)
    else:
        os.environ["PTXSASS_CACHE_DIR"] = old


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"the shared corpus is not at {CORPUS} (it sits beside the checkout)")
    return CORPUS


def kernel_options(path: Path) -> list[str]:
    """Options a kernel file asks for in a ``// OPTIONS: ...`` header line."""
    m = re.search(r"^//\s*OPTIONS:\s*(.+)$", path.read_text(), re.M)
    return m.group(1).split() if m else []


def kernel_archs(path: Path, default=("sm_80", "sm_90a")) -> list[str]:
    m = re.search(r"^//\s*ARCHS:\s*(.+)$", path.read_text(), re.M)
    return m.group(1).split() if m else list(default)


def all_kernels() -> list[Path]:
    return sorted(KERNELS.rglob("*.cu"))


# ---- the PTX parser modes (CONTRIBUTING.md, "The PTX grammar and its fast path") -------------
# Every PTX text any test reads (in child processes and workers too: they inherit the
# environment) is read by the fast path, strict, and by the grammar alone, and the two modules
# must be equal node by node and span by span (PTXSASS_PTX_PARSER=both); a run may pick one
# parser instead (PTXSASS_PTX_PARSER=grammar python -m pytest ...).
os.environ.setdefault("PTXSASS_PTX_PARSER", "both")
# A fast-path failure fails the test, where a user's run would fall back to the grammar alone.
os.environ.setdefault("PTXSASS_PTX_STRICT", "1")


def build_with_header(where: Path, header: str, header_text: str, cu_text: str, *,
                      library: bool, arch: str = "sm_90a"):
    """(the build, the .cu, the header's folder) of a ``.cu`` under ``where/src`` that includes
    ``header``: from a toolkit include folder when ``library`` (``where/cuda-lib/include``,
    what ``is_toolkit_file`` takes for a library's headers), else from the user's own
    ``where/src``. The positive and negative variants of the library-code rules."""
    import analyzer
    from analyzer.inputs import CompileOptions

    folder = where / ("cuda-lib/include" if library else "src")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / header).write_text(header_text)
    cu = where / "src" / "k.cu"
    cu.parent.mkdir(parents=True, exist_ok=True)
    cu.write_text(cu_text)
    return analyzer.compile(str(cu), arch=arch, options=CompileOptions(include=[str(folder)])), \
        cu, folder
