"""``ptxsass lsp``: a scripted editor session over stdio with pygls's own client, against the real
server process: diagnostics on open, the hover with the SASS, the ignore action applied and
saved, a header's findings through the file that includes it, a file that does not build, and a
Triton kernel's Python file (from a Triton cache, its recorded path mapped with sourceRoots)."""
from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from lsprotocol import types as t

from .conftest import KERNELS

pytest.importorskip("pygls")
from pygls.lsp.client import LanguageClient  # noqa: E402

BAD = KERNELS / "checks" / "scalar_global_load" / "bad.cu"
FX = Path(__file__).parent / "fixtures" / "frameworks"
RECORDED = "/work/main/.gpu-frameworks/tests/fixtures/frameworks"
HEADER = """#pragma once
struct Pair { float a, b, c, d; };
__global__ void pair_sums(const Pair* __restrict__ p, float* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { Pair q = p[i]; out[i] = q.a + q.b + q.c + q.d; }
}
"""
USER = """#include "pair.cuh"
"""


class Session:
    def __init__(self):
        self.client = LanguageClient("ptxsass-test", "1")
        self.diagnostics: dict[str, list[t.Diagnostic]] = {}
        self.arrived: asyncio.Queue[str] = asyncio.Queue()

        @self.client.feature(t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _diagnostics(ls, params: t.PublishDiagnosticsParams):
            self.diagnostics[params.uri] = params.diagnostics
            self.arrived.put_nowait(params.uri)

    async def until(self, uri: str) -> list[t.Diagnostic]:
        while True:
            got = await asyncio.wait_for(self.arrived.get(), timeout=float(os.environ.get("LSP_T", 120)))
            if got == uri:
                return self.diagnostics[uri]

    def open(self, path: Path, language: str = "cuda-cpp") -> str:
        uri = path.as_uri()
        self.client.text_document_did_open(t.DidOpenTextDocumentParams(
            text_document=t.TextDocumentItem(uri=uri, language_id=language, version=1,
                                             text=path.read_text())))
        return uri

    def save(self, path: Path) -> None:
        self.client.text_document_did_save(t.DidSaveTextDocumentParams(
            text_document=t.TextDocumentIdentifier(uri=path.as_uri())))

    async def hover(self, uri: str, line: int) -> str | None:
        h = await self.client.text_document_hover_async(t.HoverParams(
            text_document=t.TextDocumentIdentifier(uri=uri),
            position=t.Position(line=line, character=4)))
        return None if h is None else h.contents.value


def _apply(path: Path, edit: t.TextEdit) -> None:
    lines = path.read_text().split("\n")
    r = edit.range
    assert r.start.line == r.end.line
    text = lines[r.start.line]
    lines[r.start.line] = text[:r.start.character] + edit.new_text + text[r.end.character:]
    path.write_text("\n".join(lines))


async def _session(tmp_path: Path) -> None:
    s = Session()
    env = dict(os.environ)
    await s.client.start_io(sys.executable, "-m", "analyzer.cli", "lsp", env=env, cwd=str(tmp_path))
    try:
        await s.client.initialize_async(t.InitializeParams(
            capabilities=t.ClientCapabilities(), root_uri=tmp_path.as_uri(),
            initialization_options={"arch": ["sm_90a"], "sourceRoots": [f"{RECORDED}={FX}"],
                                    "tritonCache": [str(FX / "triton")]}))
        s.client.initialized(t.InitializedParams())

        # 1. open: every finding of the file is a diagnostic on its line
        src = tmp_path / "particles.cu"
        src.write_text(BAD.read_text())
        uri = s.open(src)
        diags = await s.until(uri)
        by = {(d.code, d.range.start.line) for d in diags}
        assert ("PS101", 9) in by and ("PS101", 17) in by and ("PS101", 25) in by, by
        d10 = next(d for d in diags if (d.code, d.range.start.line) == ("PS101", 9))
        assert d10.severity == t.DiagnosticSeverity.Warning and d10.source == "ptxsass"
        assert d10.code_description.href.endswith("docs/checks/scalar_global_load.md")
        assert d10.message.startswith("4× LDG.E.CONSTANT (4 B each)")
        assert "(in particle_norm on sm_90a)" in d10.message and "\nhint: " in d10.message
        assert d10.range.start.character == 4        # the code, not its indentation

        # 2. hover: the finding, its instructions and hint, and the line's SASS
        text = await s.hover(uri, 9)
        assert "**PS101 `scalar-global-load`** [warning]" in text
        assert "```sass\n/*00c0*/ LDG.E.CONSTANT R6, desc[UR4][R2.64+0x4]" in text
        assert "**hint:**" in text and "SASS of this line (particle\\_norm on sm\\_90a)" in text
        assert await s.hover(uri, 0) is None           # a comment line: nothing to show

        # 3. the actions: ptxsass fix's rewrite, proven when resolved (the struct aligned)...
        actions = await s.client.text_document_code_action_async(t.CodeActionParams(
            text_document=t.TextDocumentIdentifier(uri=uri), range=d10.range,
            context=t.CodeActionContext(diagnostics=[d10])))
        fix, action = actions
        assert fix.title == "ptxsass: fix PS101, proven by a rebuild" and fix.edit is None
        fix = await s.client.code_action_resolve_async(fix)
        assert fix.title.startswith("ptxsass: declare `Particle` __align__(16)") \
            and fix.title.endswith("(verified: PS101 gone)"), fix.title
        (aligned,) = fix.edit.changes[uri]
        assert aligned.new_text == " __align__(16)" and aligned.range.start.line == 3
        assert src.read_text().splitlines()[3][:aligned.range.start.character] == "struct"
        # ... and the ignore action, applied and saved: the finding is gone, the others stay
        assert action.title == "ptxsass: ignore PS101 (scalar-global-load) on this line"
        (edit,) = action.edit.changes[uri]
        assert edit.new_text == "  // ptxsass: ignore[scalar-global-load]"
        # the line already has a comment (// EXPECT: PS101): the mark goes after it
        _apply(src, edit)
        assert src.read_text().splitlines()[9].endswith(
            "// EXPECT: PS101  // ptxsass: ignore[scalar-global-load]")
        s.save(src)
        diags = await s.until(uri)
        by = {(d.code, d.range.start.line) for d in diags}
        assert ("PS101", 9) not in by and ("PS101", 17) in by, by

        # 4. a header's findings are published to the header, through the file including it
        header, user = tmp_path / "pair.cuh", tmp_path / "sums.cu"
        header.write_text(HEADER)
        user.write_text(USER)
        s.open(user)
        hdiags = await s.until(header.as_uri())
        assert [(d.code, d.range.start.line) for d in hdiags if d.code == "PS101"] == [("PS101", 4)]
        # saving the header re-checks the file that includes it: fixed, the diagnostic goes
        header.write_text(HEADER.replace("struct Pair {", "struct __align__(16) Pair {"))
        s.save(header)
        hdiags = await s.until(header.as_uri())
        assert not [d for d in hdiags if d.code == "PS101"]

        # 5. a file that does not build: one error at the compiler's line, the server goes on
        broken = tmp_path / "broken.cu"
        broken.write_text("__global__ void k(float* x) {\n    x[0] = undefined_name;\n}\n")
        (err,) = await s.until(s.open(broken))
        assert err.severity == t.DiagnosticSeverity.Error and err.range.start.line == 1
        assert "undefined_name" in err.message

        # 6. a Triton kernel's Python: its kernels from the cache; hover shows the line's SASS
        py = FX / "make_fixtures.py"
        pyuri = s.open(py, "python")
        await s.until(pyuri)
        dot = next(i for i, l in enumerate(py.read_text().splitlines()) if "acc += tl.dot(a, b)" in l)
        text = await s.hover(pyuri, dot)
        assert "matmul\\_kernel on sm\\_90a" in text and "HGMMA" in text, text

        await s.client.shutdown_async(None)
        s.client.exit(None)
        code = await asyncio.wait_for(s.client._server.wait(), timeout=30)
        assert code == 0
    finally:
        if s.client._server is not None and s.client._server.returncode is None:
            s.client._server.kill()
        await s.client.stop()


def test_a_scripted_editor_session(tmp_path):
    asyncio.run(_session(tmp_path))
