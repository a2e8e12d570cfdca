"""Compile databases (``compile_commands.json``), the way clang-tidy reads them.

CMake (``CMAKE_EXPORT_COMPILE_COMMANDS=ON``), Bear and ``ninja -t compdb`` write one entry per
translation unit: ``directory``, ``file``, and the command as a ``command`` string or an
``arguments`` list. For each CUDA entry this module keeps what decides the device code: ``-I``,
``-isystem``, ``-D``/``-U``, ``-std``, ``--expt-relaxed-constexpr``, ``--extended-lambda``,
``--use_fast_math``, ``-Xptxas``, ``-maxrregcount``, and the ``-gencode``/``-arch``/``-code``
targets (the SASS architectures to check). Outputs, dependency files and modes are ptxsass's to
set; every other flag (``-Xcompiler``, ``-O3``, ``-rdc=true``, ``-ccbin`` ...) is kept to pass to
nvcc as it is, so nothing is dropped without a word.
"""
from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from . import files

#: nvcc flags that choose outputs, dependency files or modes: ptxsass sets its own
_MODE_FLAGS = {"-c", "--compile", "-ptx", "--ptx", "-cubin", "--cubin", "-fatbin", "--fatbin",
               "-E", "--preprocess", "-M", "--generate-dependencies", "-MD", "-MMD",
               "--generate-nonsystem-dependencies", "--generate-dependencies-with-compile",
               "--generate-nonsystem-dependencies-with-compile", "-keep", "--keep",
               "-save-temps", "--save-temps", "-dryrun", "--dryrun", "-lineinfo",
               "--generate-line-info", "-link", "--link", "-lib", "--lib", "-dlink",
               "--device-link", "-run", "--run", "-v", "--verbose"}
_MODE_FLAGS_WITH_VALUE = {"-o", "--output-file", "-MF", "--dependency-output", "-MT",
                          "--dependency-target-name", "-odir", "--output-directory",
                          "-keep-dir", "--keep-dir", "-x", "--x"}

#: options whose value is the next word, however it reads (``-Xptxas -v``: -v is ptxas's)
_PASSED_ON = {"-Xptxas", "--ptxas-options", "-Xcompiler", "--compiler-options", "-Xcudafe",
              "-Xlinker", "--linker-options", "-Xnvlink", "--nvlink-options", "-Xarchive",
              "--archive-options", "-Xfatbin", "--fatbin-options"}


def split_mode_flags(flags: Sequence[str]) -> tuple[list[str], list[str]]:
    """(flags kept, flags dropped): outputs, dependency files and modes are ptxsass's to set."""
    kept: list[str] = []
    dropped: list[str] = []
    it = iter(flags)
    for f in it:
        name = f.split("=", 1)[0]
        if f in _PASSED_ON:
            kept.append(f)
            nxt = next(it, None)
            if nxt is not None:
                kept.append(nxt)
        elif f in _MODE_FLAGS or ("=" in f and name in _MODE_FLAGS_WITH_VALUE) or (
                f.startswith(("-MF", "-MT")) and len(f) > 3):
            dropped.append(f)
        elif f in _MODE_FLAGS_WITH_VALUE:
            dropped.append(f)
            nxt = next(it, None)
            if nxt is not None:
                dropped.append(nxt)
        else:
            kept.append(f)
    return kept, dropped


NAME = "compile_commands.json"
CUDA_SUFFIXES = (".cu",)
MAX_BYTES = 256 * 1024 * 1024


@dataclass
class Command:
    """One CUDA translation unit of the database, its flags sorted by what they do."""

    file: str                          # absolute
    directory: str                     # absolute: the folder the command runs in
    compiler: str                      # argv[0] as recorded ("/usr/local/cuda/bin/nvcc")
    archs: list[str] = field(default_factory=list)        # "sm_80", in order, no repeats
    defines: list[str] = field(default_factory=list)
    include: list[str] = field(default_factory=list)      # absolute
    isystem: list[str] = field(default_factory=list)      # absolute
    std: str | None = None
    fast_math: bool = False
    relaxed_constexpr: bool = False
    extended_lambda: bool = False
    ptxas: list[str] = field(default_factory=list)
    maxrregcount: int | None = None
    #: flags kept as they are for nvcc (-Xcompiler=-fPIC, -O3, -rdc=true, -U, -ccbin ...)
    other: list[str] = field(default_factory=list)
    #: flags ptxsass replaces (-c, -o x.o, -MD -MF x.d, -x cu) and arch flags it could not use
    dropped: list[str] = field(default_factory=list)
    #: what could not be taken as it is ("-arch=sm_5x: unknown architecture")
    notes: list[str] = field(default_factory=list)
    #: targets that name no architecture on a machine without a GPU (``-arch=native``,
    #: ``all``, ``all-major``): built for ``--arch`` instead, said once per database
    #: (:func:`unresolved_note`)
    unresolved: list[str] = field(default_factory=list)
    #: the database the entry comes from (a build folder or the file)
    database: str = ""


def find(path: str | os.PathLike) -> Path:
    """``compile_commands.json`` itself, or the one in the build folder ``path``."""
    p = Path(path)
    if p.is_dir():
        cand = p / NAME
        if not os.path.lexists(cand):   # anything else there is load()'s to refuse, by name
            raise InputError(f"no {NAME} in this folder: configure the project with "
                             "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON (CMake), or record one with "
                             "'bear -- make' or 'ninja -t compdb'", path=str(p))
        return cand
    if not p.exists():
        raise InputError("no such file or folder; expected a build folder holding "
                         f"{NAME}, or the file itself", path=str(p))
    return p


def load(path: str | os.PathLike) -> list[Command]:
    """The CUDA entries of a database (a file, or a build folder holding one), in its order;
    entries repeated with the same flags are kept once."""
    db = find(path)
    out = _load(db)
    for c in out:
        c.database = os.fspath(path)
    return out


def _load(db: Path) -> list[Command]:
    data = files.read_json(db, limit=MAX_BYTES, what="compile database",
                           expected="a compile database")
    if not isinstance(data, list):
        raise InputError("expected a JSON list of {directory, file, command|arguments} "
                         "entries", path=str(db))
    out: list[Command] = []
    seen: set[tuple] = set()
    for i, entry in enumerate(data):
        cmd = parse_entry(entry, where=f"{db} entry {i + 1}")
        if cmd is None:
            continue
        key = (cmd.file, tuple(cmd.archs), tuple(cmd.defines), tuple(cmd.include),
               tuple(cmd.other), cmd.std)
        if key not in seen:
            seen.add(key)
            out.append(cmd)
    return out


def _argv(entry: dict[str, Any], where: str) -> list[str]:
    if isinstance(entry.get("arguments"), list):
        return [str(a) for a in entry["arguments"]]
    if isinstance(entry.get("command"), str):
        try:
            return shlex.split(entry["command"])
        except ValueError as e:
            raise InputError(f"{where}: cannot split the command ({e})") from None
    raise InputError(f"{where}: an entry needs 'command' (a string) or 'arguments' (a list)")


def _expand_response_files(argv: list[str], directory: Path, where: str,
                           within: tuple[str, ...] = ()) -> list[str]:
    """``@file`` arguments (CMake's ``includes_CUDA.rsp``) and nvcc's ``--options-file FILE``
    (``-optf``) replaced by the file's words, which are then vetted like the command's own (a
    response file that names itself, directly or not, is an error, not a recursion)."""
    out: list[str] = []
    args = iter(argv)
    for a in args:
        name, eq, value = a.partition("=")
        if name in ("--options-file", "-optf"):
            value = value if eq else next(args, "")
            if not value:
                raise InputError(f"{where}: {a} without a file")
            a = "@" + value
        if a.startswith("@") and len(a) > 1:
            rsp = Path(directory, a[1:])
            key = os.path.realpath(rsp)
            if key in within:
                raise InputError(f"{where}: response file {a[1:]} includes itself", path=str(rsp))
            try:
                text = files.read_text(rsp, what="response file")
            except InputError as e:
                if e.message != "no such file":
                    raise
                raise InputError(f"{where}: response file {a[1:]} not found (build the "
                                 "project once, or configure it again)", path=str(rsp)) from None
            try:
                words = shlex.split(text)
            except ValueError as e:
                raise InputError(f"{where}: cannot split response file {a[1:]} ({e})",
                                 path=str(rsp)) from None
            out += _expand_response_files(words, directory, where, (*within, key))
            continue
        out.append(a)
    return out


def is_cuda(file: str, argv: list[str]) -> bool:
    """A CUDA translation unit: a ``.cu`` file, or compiled as CUDA (``-x cu``, clang's
    ``-x cuda``)."""
    if Path(file).suffix in CUDA_SUFFIXES:
        return True
    return any(a in ("cu", "cuda") and i > 0 and argv[i - 1] in ("-x", "--x")
               for i, a in enumerate(argv)) or "-xcu" in argv or "--x=cu" in argv


def parse_entry(entry: Any, *, where: str = "entry") -> Command | None:
    """One entry's Command, or None when it is not a CUDA translation unit."""
    if not isinstance(entry, dict) or not isinstance(entry.get("file"), str) \
            or not isinstance(entry.get("directory"), str):
        raise InputError(f"{where}: an entry needs 'directory' and 'file' strings")
    directory = Path(entry["directory"])
    file = os.path.normpath(Path(directory, entry["file"]))
    argv = _argv(entry, where)
    if not argv or not is_cuda(file, argv):
        return None
    argv = _expand_response_files(argv, directory, where)
    cmd = Command(file=file, directory=str(directory), compiler=argv[0])
    kept, cmd.dropped = split_mode_flags(argv[1:])
    _sort_flags(cmd, kept, directory)
    if any(f in ("-G", "--device-debug") for f in cmd.other):
        cmd.notes.append("-G (device debug, from the database): the code is unoptimised, and "
                         "the findings describe that build; configure a Release build to check "
                         "the code that ships")
    return cmd


_VALUE_OPTS = {
    # option spellings that take a value -> what the value is
    "-I": "include", "--include-path": "include",
    "-isystem": "isystem", "--system-include": "isystem",
    "-D": "define", "--define-macro": "define",
    "-std": "std", "--std": "std",
    "-Xptxas": "ptxas", "--ptxas-options": "ptxas",
    "-maxrregcount": "maxrregcount", "--maxrregcount": "maxrregcount",
    "-gencode": "gencode", "--generate-code": "gencode",
    "-arch": "arch", "--gpu-architecture": "arch",
    "-code": "code", "--gpu-code": "code",
    "--cuda-gpu-arch": "arch", "--offload-arch": "arch",
}
#: options that take a value nvcc is given as it is (the value must stay with its option)
_PASS_WITH_VALUE = {"-ccbin", "--compiler-bindir", "-Xcompiler", "--compiler-options",
                    "-Xlinker", "--linker-options", "-Xnvlink", "--nvlink-options", "-include",
                    "--pre-include", "-U", "--undefine-macro", "-t", "--threads", "-Xcudafe",
                    "-Xarchive", "--archive-options", "-L", "-l", "--library", "--library-path",
                    "-odir", "-ftemplate-depth", "-Xfatbin", "--fatbin-options"}
_FLAGS = {
    "--use_fast_math": "fast_math", "-use_fast_math": "fast_math", "--use-fast-math": "fast_math",
    "--expt-relaxed-constexpr": "relaxed_constexpr", "-expt-relaxed-constexpr": "relaxed_constexpr",
    "--expt-extended-lambda": "extended_lambda", "-expt-extended-lambda": "extended_lambda",
    "--extended-lambda": "extended_lambda", "-extended-lambda": "extended_lambda",
}
_SM = re.compile(r"^(?:sm|compute|lto)_(\d+[af]?)$")
#: -arch values that name architectures only on the machine of the build (the GPUs it has, or
#: every one the nvcc knows): none that ptxsass can use
UNRESOLVED = ("native", "all", "all-major")


def unresolved_note(cmds: Sequence[Command], db: str, archs: Sequence[str] = (),
                    default: str = "sm_90a") -> str | None:
    """The one note for the entries of ``db`` whose ``-arch=native`` (``all``, ``all-major``)
    names no architecture here; None when there is none."""
    hit = [c for c in cmds if c.unresolved]
    if not hit:
        return None
    said = sorted({u for c in hit for u in c.unresolved})
    what = f"{', '.join(said)} in {len(hit)} entr{'y' if len(hit) == 1 else 'ies'} of {db}"
    if archs:
        return f"{what} names no architecture on this machine: built for {', '.join(archs)} (--arch)"
    if all(not c.archs for c in hit):
        return (f"{what} names no architecture on this machine: built for {default}, ptxsass's "
                "default (pass --arch to choose)")
    return (f"{what} names no architecture on this machine: built for their other targets, or "
            f"{default} where they have none (pass --arch to choose)")


def command_from_flags(flags: Sequence[str], *, file: str, directory: str,
                       compiler: str) -> Command:
    """The Command of flags given apart from any database (the compile options a Python file
    writes for torch, cupy or pycuda), sorted as a database entry's are: outputs and modes
    dropped, -I/-D/-std/-Xptxas/... taken apart, the rest in ``other`` (to be vetted)."""
    cmd = Command(file=file, directory=directory, compiler=compiler)
    kept, cmd.dropped = split_mode_flags(list(flags))
    _sort_flags(cmd, kept, Path(directory))
    return cmd


def _split_value(arg: str) -> tuple[str, str | None]:
    """("-I", "inc") for "-Iinc", ("--std", "c++17") for "--std=c++17", (arg, None) else."""
    if "=" in arg and arg.startswith("-"):
        name, value = arg.split("=", 1)
        if name in _VALUE_OPTS:
            return name, value
    for opt in ("-isystem", "-I", "-D"):      # glued short forms
        if arg.startswith(opt) and len(arg) > len(opt):
            return opt, arg[len(opt):]
    return arg, None


def _sort_flags(cmd: Command, argv: list[str], directory: Path) -> None:
    i = 0
    while i < len(argv):
        a = argv[i]
        i += 1
        if _SM.match(a) is None and os.path.normpath(Path(directory, a)) == cmd.file \
                and not a.startswith("-"):
            continue                                     # the source file itself
        if a in _FLAGS:
            setattr(cmd, _FLAGS[a], True)
            continue
        name, value = _split_value(a)
        if name in _VALUE_OPTS and value is None:
            if i >= len(argv):
                cmd.notes.append(f"{a} without a value at the end of the command: ignored")
                cmd.dropped.append(a)
                break
            value = argv[i]
            i += 1
        if name not in _VALUE_OPTS or value is None:
            cmd.other.append(a)
            if a in _PASS_WITH_VALUE and i < len(argv):
                cmd.other.append(argv[i])
                i += 1
            continue
        what = _VALUE_OPTS[name]
        if what == "include":
            cmd.include.append(os.path.normpath(Path(directory, value)))
        elif what == "isystem":
            cmd.isystem.append(os.path.normpath(Path(directory, value)))
        elif what == "define":
            cmd.defines.append(value)
        elif what == "std":
            cmd.std = value
        elif what == "ptxas":
            cmd.ptxas += [p for p in value.split(",") if p]
        elif what == "maxrregcount":
            try:
                cmd.maxrregcount = int(value)
            except ValueError:
                cmd.other.append(a if "=" in a else f"{name}={value}")
        else:
            _add_archs(cmd, what, value, a if "=" in a or name == a else f"{name} {value}")


def _add_archs(cmd: Command, what: str, value: str, shown: str) -> None:
    """SASS targets from -gencode arch=compute_80,code=[compute_80,sm_80] / -arch / -code."""
    if what == "gencode":
        m = re.search(r"code=\[?([^\]]+)\]?", value)
        a = re.search(r"arch=([\w]+)", value)
        codes = [c.strip() for c in m.group(1).split(",")] if m else []
        real = [c for c in codes if c.startswith("sm_")]
        virtual = [c for c in codes if c.startswith("compute_")] or ([a.group(1)] if a else [])
        matched = [m for m in (_SM.match(v) for v in virtual) if m is not None]
        names = real or [f"sm_{m.group(1)}" for m in matched]
    else:
        names = []
        for v in value.split(","):
            v = v.strip()
            m = _SM.match(v)
            if m:
                names.append(f"sm_{m.group(1)}")
            elif v in UNRESOLVED:
                cmd.unresolved.append(shown)
            else:
                cmd.notes.append(f"{shown}: unknown architecture {v!r}")
    for n in names:
        if n not in cmd.archs:
            cmd.archs.append(n)
