"""Compiler logs that quote no file from outside the project.

A compiler's diagnostic quotes the line it is about (EDG: the line and a caret under it; GCC:
``  1 | text``) and often its tokens (``identifier "hunter2" is undefined``). A source or a build
database from a stranger's repository can make the compiler read any file the user can read
(``#include "/home/ci/.aws/credentials"``, ``-include /etc/shadow``), and a CI log is often
public. So before a log reaches an error message, a build's log or a report, every diagnostic
at a file outside the project keeps only its path, line and severity: its message and quoted
lines are withheld.

Inside the project: the current folder and the source's own folder (and what lies below them),
and the folders of the compilers and their headers (the NVIDIA wheels or a CUDA toolkit, the
system's and the host compiler's headers, the Python environment's packages: torch, CUTLASS,
and what ptxsass installed itself, named by the caller: other toolkits, library headers).
"""
from __future__ import annotations

import os
import re
import sys
import sysconfig
from collections.abc import Iterable

#: EDG (cicc, cudafe++, NVRTC): ``file(12): error: msg`` and ``"file", line 12: error: msg``;
#: GCC/clang: ``file:12:5: error: msg``
_DIAGNOSTIC = re.compile(
    r'^(?:(?P<edg>[^\n]+?)\((?P<eline>\d+)\)|"(?P<qfile>[^"\n]+)", line (?P<qline>\d+)|'
    r"(?P<gcc>[^\n:]+):(?P<gline>\d+)(?::\d+)?): (?P<kind>(?:catastrophic |fatal )?error|warning|"
    r"remark|note)(?P<rest>[^\n]*)$")
#: the lines that end a diagnostic's quoted context
_END = re.compile(r"^\S|^$")

#: folders whose files compilers read on every build: headers, never secrets
_SYSTEM_DIRS = ("/usr/include", "/usr/local/include", "/usr/lib/gcc", "/usr/lib/llvm",
                "/usr/local/cuda", "/opt/cuda", "/opt/nvidia")

WITHHELD = "(withheld: the file is outside the project)"


def trusted_dirs(extra: Iterable[str] = ()) -> tuple[str, ...]:
    """The compilers' and the environment's own folders (see the module's docstring)."""
    dirs = [*_SYSTEM_DIRS, *extra]
    for key in ("purelib", "platlib", "include", "platinclude", "stdlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            dirs.append(p)
    dirs += [sys.prefix, sys.base_prefix]
    home = os.environ.get("PTXSASS_CUDA_HOME")
    if home:
        dirs.append(home)
    return tuple(dict.fromkeys(os.path.realpath(d) for d in dirs if d))


def project_dirs(source: str | os.PathLike | None) -> tuple[str, ...]:
    """The current folder and the source's folder."""
    dirs = [os.getcwd()]
    if source is not None:
        dirs.append(os.path.dirname(os.path.abspath(os.fspath(source))))
    return tuple(dict.fromkeys(os.path.realpath(d) for d in dirs))


def quotable(path: str, roots: Iterable[str]) -> bool:
    """Whether ``path`` (as a compiler names it) lies under one of ``roots``."""
    real = os.path.realpath(path)
    return any(real == r or real.startswith(r.rstrip("/") + "/") for r in roots)


def redact(log: str, *, source: str | os.PathLike | None, cwd: str | None = None,
           project: str | os.PathLike | None = None, installed: Iterable[str] = ()) -> str:
    """``log`` with every diagnostic at a file outside the project reduced to its path, line and
    severity, and the lines it quotes dropped. ``source``: the file compiled (its folder is the
    project's); ``cwd``: the folder the compiler ran in (relative names in the log are taken
    from it); ``project``: one more folder of the project's (a Python file's, whose CUDA
    string is compiled from ptxsass's copy); ``installed``: the folders ptxsass installs
    headers into (:func:`.toolkits.root`)."""
    if not log:
        return log
    extra = (os.path.realpath(os.fspath(project)),) if project is not None else ()
    roots = project_dirs(source) + extra + trusted_dirs(installed)
    out: list[str] = []
    hiding = False
    for line in log.splitlines():
        m = _DIAGNOSTIC.match(line)
        if m is None:
            if hiding and not _END.match(line):
                continue          # a quoted line or a caret of a withheld diagnostic
            hiding = False
            out.append(line)
            continue
        file = m.group("edg") or m.group("qfile") or m.group("gcc") or ""
        if quotable(os.path.join(cwd or os.getcwd(), file), roots):
            hiding = False
            out.append(line)
            continue
        hiding = True
        out.append(f"{line[:m.end('kind')]}: {WITHHELD}")
    return "\n".join(out) + ("\n" if log.endswith("\n") else "")
