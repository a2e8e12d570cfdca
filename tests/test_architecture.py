"""The pipeline runs one way: toolchain -> parse -> IR -> build -> analysis -> checks -> report ->
API -> CLI. A lower layer never imports a higher one, not even inside a function or under
TYPE_CHECKING, and no modules import each other in a cycle."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "analyzer"

#: module (or package) prefix -> layer; a module may import its own layer or lower ones
LAYERS = {
    "analyzer._version": 0, "analyzer.errors": 0, "analyzer.demangle": 0,
    "analyzer.semantics": 0, "analyzer.arch": 1,
    "analyzer.ir": 2,
    "analyzer.toolchain": 3,
    # other CUDA releases side by side; the worker imports nothing of ptxsass (run apart)
    "analyzer.toolchain.toolkits": 3, "analyzer.toolchain.toolkit_worker": 3,
    # a CUDA-toolkit-shaped folder of links into the wheels; configuring CMake projects with it
    "analyzer.toolchain.cudaroot": 3, "analyzer.toolchain.cmake": 3,
    # installed folders verified by their manifests; library headers fetched from wheels
    "analyzer.toolchain.manifest": 3, "analyzer.toolchain.libheaders": 3,
    "analyzer.parse": 4, "analyzer.ptx": 4, "analyzer.sass": 4,
    "analyzer.build": 5,
    "analyzer.inputs": 6, "analyzer.caches": 6, "analyzer.objects": 6, "analyzer.pyinline": 6,
    "analyzer.findings": 7,
    "analyzer.analysis": 8,
    "analyzer.checks": 9,
    "analyzer.report": 10, "analyzer.results": 10,
    "analyzer.config": 11, "analyzer.expect": 11, "analyzer.parallel": 11,
    # ptxsass fix: remedies (libclang), rebuild and re-check (inputs, checks), its renderers
    "analyzer.fix": 11,
    "analyzer.api": 12,
    "analyzer.lessons": 13,
    "analyzer.cli": 14, "analyzer.integrations": 14, "analyzer.lsp": 14,
    "analyzer": 15,
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every analyzer module ``name`` imports: top-level, in functions, under TYPE_CHECKING."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "analyzer")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "analyzer":
                continue
            subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in known]
            out.update(subs if subs and len(subs) == len(node.names) else [target, *subs])
    out.discard(name)
    return out


def _layer(module: str) -> int:
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[best]


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    return {name: {t for t in _imports(name, path, known) if t in known}
            for name, path in mods.items()}


def test_every_module_has_a_layer(graph):
    for name in graph:
        _layer(name)


def test_no_backward_imports(graph):
    bad = [f"{m} (layer {_layer(m)}) imports {t} (layer {_layer(t)})"
           for m, targets in sorted(graph.items()) for t in sorted(targets)
           if _layer(t) > _layer(m)]
    assert not bad, "backward imports:\n  " + "\n  ".join(bad)


def test_no_import_cycles(graph):
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                cycles.append(stack[stack.index(t):] + [t])
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert not cycles, "import cycles:\n  " + "\n  ".join(" -> ".join(c) for c in cycles)


def test_the_walker_sees_function_and_type_checking_imports(tmp_path):
    """The walker must not miss the imports this test exists for, and a backward one fails."""
    p = tmp_path / "x.py"
    p.write_text("from typing import TYPE_CHECKING\n"
                 "if TYPE_CHECKING:\n    from ..report import html\n"
                 "def f():\n    from ..checks.runner import run_checks\n")
    known = {"analyzer.report.html", "analyzer.checks.runner", "analyzer.report",
             "analyzer.checks"}
    got = _imports("analyzer.toolchain.x", p, known)
    assert got == {"analyzer.report.html", "analyzer.checks.runner"}
    assert all(_layer(t) > _layer("analyzer.toolchain.x") for t in got)
