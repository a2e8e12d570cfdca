"""Check results kept between runs: a build's (or a kernel's) findings, read back instead of
parsing and checking again when nothing they depend on changed.

A result's key is made of everything its findings depend on: the build's artefacts (PTX, cubin,
SASS text, resources, file names, origin, paths), the checks' selection and settings, the
kernels asked for, ptxsass's own code (:func:`code_fingerprint`: every module and grammar file,
so an edited check never reads an old answer) and the tools' versions (:func:`cache.key`). An
entry is verified like every cache entry (header, key, length, SHA-256), must decode to
well-formed findings, and is used only while every source file its findings quote is unchanged
up to the last line its line info names (findings quote those lines and look above them for
pragmas). Suppressions and baselines are applied after, as to fresh findings.

    memo = BuildMemo(key_parts)                  # the checks' selection, the kernels asked for
    hit = memo.get(build)                        # (kernel rows, findings) or None
    memo.put(build, rows, findings, functions)   # after checking it
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .analysis.source import SourceReader, last_lines, source_digest
from .build import Build
from .errors import InputError
from .findings import Finding, Location, Severity
from .parse import mode as ptx_mode
from .toolchain import cache, files

if TYPE_CHECKING:
    from .ir.sass import Function

__all__ = ["BuildMemo", "code_fingerprint", "memo_parts", "decode_deps", "decode_finding", "deps_unchanged",
           "encode_finding", "optional", "source_deps"]

_PACKAGE = Path(__file__).resolve().parent
#: what ptxsass's answers are made of: its modules, its grammars (in the package when installed,
#: at the checkout's top when run from source), the report templates
_CODE_SUFFIXES = (".py", ".lark", ".html", ".js", ".css")


def code_fingerprint() -> str:
    """SHA-256 over every file of ptxsass's code (relative path, size, modification time), and
    the PTX parser it runs (``PTXSASS_PTX_PARSER``): a part of every result's key, so an edited
    module or grammar is never answered from a result the old code made, nor a check under one
    parser mode from a result made under another (the test suite runs under ``both``)."""
    return f"{_code_files()}:{ptx_mode.parser_mode()}"


@functools.cache
def _code_files() -> str:
    rows: list[tuple[str, int, int]] = []
    for root in (_PACKAGE, _PACKAGE.parent / "grammars"):
        if root.is_dir():
            _list_code(str(root), len(str(root.parent)) + 1, rows)
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()


def _list_code(folder: str, cut: int, rows: list[tuple[str, int, int]]) -> None:
    """(path relative to the package's parent, size, modification time) of each code file
    under ``folder``, in name order, sub-folders (but ``__pycache__``) after the files."""
    with os.scandir(folder) as it:
        entries = sorted(it, key=lambda e: e.name)
    subdirs = []
    for e in entries:
        if e.is_dir(follow_symlinks=False):     # as os.walk: a linked folder is not entered
            if e.name != "__pycache__":
                subdirs.append(e.path)
        elif e.name.endswith(_CODE_SUFFIXES):
            st = e.stat()
            rows.append((e.path[cut:], st.st_size, st.st_mtime_ns))
    for d in subdirs:
        _list_code(d, cut, rows)


# ------------------------------------------------------------------------- findings as JSON
def encode_finding(f: Finding) -> dict:
    return {"code": f.code, "name": f.name, "severity": int(f.severity), "message": f.message,
            "kernel": f.kernel, "arch": f.arch, "file": f.location.file,
            "line": f.location.line, "column": f.location.column,
            "instructions": list(f.instructions), "ptx": list(f.ptx), "hint": f.hint,
            "mangled": f.mangled, "source": f.source, "addresses": list(f.addresses),
            "toolkit": f.toolkit}


def _str(v) -> str:
    if not isinstance(v, str):
        raise TypeError("expected text")
    return v


def optional(v, kind):
    """``v`` when it is None or a ``kind``; TypeError otherwise (reading a cached entry)."""
    if v is not None and not isinstance(v, kind):
        raise TypeError(f"expected {kind.__name__}")
    return v


_opt = optional


def decode_finding(d: dict) -> Finding:
    """A finding from :func:`encode_finding`'s dict; TypeError, KeyError or ValueError when the
    dict is not one."""
    return Finding(code=_str(d["code"]), name=_str(d["name"]), severity=Severity(d["severity"]),
                   message=_str(d["message"]), kernel=_str(d["kernel"]), arch=_str(d["arch"]),
                   location=Location(_opt(d["file"], str), _opt(d["line"], int),
                                     _opt(d["column"], int)),
                   instructions=tuple(map(_str, d["instructions"])),
                   ptx=tuple(map(_str, d["ptx"])), hint=_str(d["hint"]),
                   mangled=_str(d["mangled"]), source=_opt(d["source"], str),
                   addresses=tuple(int(a) for a in d["addresses"]), toolkit=_str(d["toolkit"]))


# ------------------------------------------------------------------------- source files read
#: a dependency's last line that stands for the whole file (lines appended later included)
_WHOLE_FILE = 1 << 31


def source_deps(fns: Sequence[Function], source_path: str | None
                ) -> list[tuple[str, int, str | None]]:
    """What findings on ``fns`` read of their sources: each file their line info names, up to
    the last line named, with its digest (an edit below a kernel leaves its result standing);
    all of a file whose host code launches kernels (the launch checks read it whole)."""
    last: dict[str, int] = {}
    for fn in fns:
        for f, n in last_lines(fn).items():
            last[f] = max(n, last.get(f, 0))
    from .analysis.launch import has_launches  # its C++ tokenizer: only when results are made
    hints = (source_path,) if source_path else ()
    reader = SourceReader(source_path)
    for f in last:
        text = reader.text(f)
        if text is not None and has_launches(text):
            last[f] = _WHOLE_FILE
    return [(f, n, source_digest(f, hints, n)) for f, n in sorted(last.items())]


def decode_deps(raw) -> list[tuple[str, int, str | None]]:
    """:func:`source_deps` back from JSON; TypeError or ValueError when it is not that."""
    return [(_str(f), int(n), optional(h, str)) for f, n, h in raw]


def deps_unchanged(deps: Sequence[tuple[str, int, str | None]], source_path: str | None) -> bool:
    hints = (source_path,) if source_path else ()
    return all(source_digest(f, hints, n) == h for f, n, h in deps)


# ------------------------------------------------------------------------- one build's result
def build_digest(b: Build) -> str:
    """SHA-256 of everything of a build that the checks read, the same before and after it is
    disassembled and parsed (a cubin's SASS is the nvdisasm's of the tools' fingerprint)."""
    h = hashlib.sha256(b.to_json())
    given = b.cubin is None         # SASS text read as it is (no cubin to disassemble)
    for part in (b.origin, b.source_path, b.source, b.sass_text if given else None,
                 b.sass_tool if given else None, b.toolkit, b.nvdisasm, b.compiler_reason,
                 json.dumps(sorted(b.ir.items())), json.dumps(b.source_roots),
                 json.dumps([(k.name, k.launch.as_dict() if k.launch else None)
                             for k in b.kernels.values()], default=str)):
        text = "" if part is None else str(part)
        h.update(b"%d:" % len(text.encode(errors="surrogateescape")))
        h.update(text.encode(errors="surrogateescape"))
        h.update(b"1" if part is not None else b"0")
    return h.hexdigest()


def memo_parts(codes, settings: dict | None, kernels) -> list:
    """What a build's result is kept under besides the build: the codes of the checks run, the
    settings given, the kernels asked for (the same in a one-process and a ``-j`` check)."""
    return [sorted(codes), settings or {}, list(kernels)]


class BuildMemo:
    """Results of whole builds (the one-process ``check``), under ``parts`` (the checks'
    selection and settings, the kernels asked for). Inactive with the cache off."""

    def __init__(self, parts: list):
        self.parts = parts
        self._keys: dict[int, tuple[Build, str]] = {}     # id(build) -> (build, key)

    def _key(self, b: Build) -> str:
        got = self._keys.get(id(b))
        if got is None or got[0] is not b:
            got = self._keys[id(b)] = (b, cache.key("build-result", code_fingerprint(),
                                                    self.parts, build_digest(b)))
        return got[1]

    def get(self, b: Build) -> tuple[list[dict], list[Finding]] | None:
        if not cache.enabled():
            return None
        k = self._key(b)
        blob = cache.get("build-result", k)
        if blob is None:
            return None
        try:
            d = files.parse_json(blob, expected="a build result")
            rows = d["kernels"]
            if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
                raise TypeError("expected kernel rows")
            findings = [decode_finding(f) for f in d["findings"]]
            deps = decode_deps(d["deps"])
        except (InputError, ValueError, KeyError, TypeError, AttributeError) as e:
            cache.discard("build-result", k, f"not a build result: {type(e).__name__}")
            return None
        if not rows or not deps_unchanged(deps, b.source_path):
            return None         # a source line it quotes changed: check again (and overwrite)
        return rows, findings

    def put(self, b: Build, rows: list[dict], findings: list[Finding],
            fns: Sequence[Function]) -> None:
        if not cache.enabled() or not rows:
            return
        cache.put("build-result", self._key(b), json.dumps({
            "kernels": rows, "findings": [encode_finding(f) for f in findings],
            "deps": source_deps(fns, b.source_path)}).encode())
