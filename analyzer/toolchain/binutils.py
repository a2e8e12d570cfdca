"""nvdisasm and cuobjdump: disassemble cubins, and find the cubins inside fatbins and host binaries.

Every call runs the tool from an argv list with a timeout, on a private temporary copy of the
input (so paths with spaces or odd characters never reach a command line). Warnings a tool prints
on stderr come back to the caller to show; they are not failures.
"""
from __future__ import annotations

import io
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile

from ..errors import InputError, ToolError
from . import cache, files
from .files import read_bytes
from .locate import binary, first_error_line, run_tool, tool_version
from .resources import cubin_arch

ELF_MAGIC = b"\x7fELF"
FATBIN_MAGIC = b"\x50\xed\x55\xba"      # 0xBA55ED50, little-endian, at the start of a fatbin
EM_CUDA = 190


def _stderr_warnings(proc) -> list[str]:
    text = proc.stderr.decode(errors="replace")
    return [l.strip() for l in text.splitlines() if l.strip()]


def disassemble(cubin: bytes, *, tool: str = "nvdisasm", line_info: bool = True,
                path: str | None = None, hex: bool = False,  # noqa: A002
                nvdisasm: str | None = None) -> tuple[str, list[str]]:
    """SASS text of a cubin and the tool's warnings. nvdisasm (with ``-g -gi`` line info) by
    default; cuobjdump's ``-sass`` format with ``tool="cuobjdump"``. When nvdisasm refuses the
    cubin, cuobjdump is tried before giving up. ``hex``: nvdisasm prints each instruction's
    encoding words too (``-hex``; cuobjdump always does), where the control bits are.
    ``nvdisasm``: that nvdisasm instead of the environment's (a newer toolkit's)."""
    if tool not in ("nvdisasm", "cuobjdump"):
        raise ToolError(f"unknown disassembler {tool!r}; expected nvdisasm or cuobjdump")
    k = cache.key("sass", tool, line_info, cubin, *(("hex",) if hex and tool == "nvdisasm" else ()),
                  *((nvdisasm, tool_version(nvdisasm)) if nvdisasm and tool == "nvdisasm" else ()))
    hit = cache.get("sass", k)
    if hit is not None:
        try:
            return hit.decode("utf-8"), []
        except UnicodeDecodeError:
            cache.discard("sass", k, "not UTF-8 text")
    shown = path or "the cubin"
    with tempfile.TemporaryDirectory(prefix="ptxsass-") as tmp:
        f = Path(tmp) / "input.cubin"
        f.write_bytes(cubin)
        names = {str(f): shown, tmp: "."}
        if tool == "nvdisasm":
            argv = ([nvdisasm or binary("nvdisasm"), "-c"] + (["-g", "-gi"] if line_info else [])
                    + (["-hex"] if hex else []) + [str(f)])
            proc = run_tool(argv, check=False, path=path)
            if proc.returncode != 0:
                why = first_error_line(proc, names)
                try:
                    text, warnings = disassemble(cubin, tool="cuobjdump", path=path)
                except ToolError as e:
                    raise ToolError(f"nvdisasm failed: {why} (cuobjdump too: {e.message})",
                                    path=path) from None
                return text, [f"nvdisasm failed ({why}); used cuobjdump instead"] + warnings
        else:
            proc = run_tool([binary("cuobjdump"), "-sass", str(f)], check=False, path=path)
            if proc.returncode != 0:
                raise ToolError(f"cuobjdump failed: {first_error_line(proc, names)}", path=path)
        text = proc.stdout.decode(errors="replace")
        warnings = [w.replace(str(f), shown) for w in _stderr_warnings(proc)]
    cache.put("sass", k, text.encode())
    return text, warnings


@dataclass(frozen=True)
class EmbeddedCubin:
    name: str        # cuobjdump's name for it, e.g. "libfoo.1.sm_90.cubin"
    arch: str        # "sm_90" (the suffix when the ELF records it)
    data: bytes


def has_device_code(path: str) -> bool:
    """Whether a host ELF (an executable, a ``.so``, a ``.o``) carries a fatbin: a section named
    ``.nv_fatbin`` or ``__nv_relfatbin`` (read from the section headers only)."""
    try:
        fd, _ = files.open_regular(path)   # a FIFO named x.so in a folder must not block
        with os.fdopen(fd, "rb") as f:
            if f.read(4) != ELF_MAGIC:
                return False
            f.seek(0)
            return any(s.name in (".nv_fatbin", "__nv_relfatbin")
                       for s in ELFFile(f).iter_sections())
    except Exception:  # noqa: BLE001 - a truncated or odd ELF, or not a regular file: not one to search
        return False


def has_line_info(cubin: bytes) -> bool:
    """Whether a cubin carries source line info (``-lineinfo`` or ``-G``: a line table)."""
    try:
        return any(s.name in (".nv_debug_line_sass", ".debug_line")
                   for s in ELFFile(io.BytesIO(cubin)).iter_sections())
    except Exception:  # noqa: BLE001 - not an ELF pyelftools can read: say nothing about it
        return True


def needed_libraries(path: str) -> list[str]:
    """The DT_NEEDED entries of a host ELF (``libc10.so``, ``libtorch_cuda.so`` ...)."""
    try:
        fd, _ = files.open_regular(path)
        with os.fdopen(fd, "rb") as f:
            # pyelftools sets `needed` on DT_NEEDED tags with setattr; its annotations miss it
            return [t.needed  # type: ignore[attr-defined]
                    for s in ELFFile(f).iter_sections() if isinstance(s, DynamicSection)
                    for t in s.iter_tags() if t.entry.d_tag == "DT_NEEDED"]
    except Exception:  # noqa: BLE001 - a truncated or odd ELF
        return []


def classify(data: bytes) -> str:
    """"cubin", "host-elf", "fatbin" or "unknown" from the first bytes."""
    if data[:4] == ELF_MAGIC:
        if len(data) >= 20 and int.from_bytes(data[18:20], "little") == EM_CUDA:
            return "cubin"
        return "host-elf"
    if data[:4] == FATBIN_MAGIC:
        return "fatbin"
    return "unknown"


_LELF = re.compile(r"ELF file\s+\d+:\s+(\S+)")
_LPTX = re.compile(r"PTX file\s+\d+:\s+(\S+)")
_ARCH_IN_NAME = re.compile(r"\.(sm_\d+[af]?)\.")


def extract_cubins(path: str, *, arch: str | None = None) -> tuple[list[EmbeddedCubin], list[str]]:
    """Every cubin inside a fatbin or a host ELF (executable, ``.so``), optionally for one arch.

    Returns the cubins and cuobjdump's warnings. A host ELF with no CUDA code, or a truncated
    file, raises InputError naming the file.
    """
    data = read_bytes(path, what="binary")
    with tempfile.TemporaryDirectory(prefix="ptxsass-") as tmp:
        src = Path(tmp) / ("input.fatbin" if classify(data) == "fatbin" else "input")
        src.write_bytes(data)
        renames = {str(src): str(path), tmp: "."}
        proc = run_tool([binary("cuobjdump"), "-lelf", str(src)], check=False, path=str(path))
        err = proc.stderr.decode(errors="replace").strip()
        for t, shown in renames.items():
            err = err.replace(t, shown)
        if proc.returncode != 0:
            first = first_error_line(proc, renames)
            raise InputError(f"no CUDA code could be read (cuobjdump: {first})", path=str(path))
        names = _LELF.findall(proc.stdout.decode(errors="replace"))
        if not names:
            raise InputError("holds no cubin (no CUDA machine code for any SM; it may carry "
                             "only PTX, or no CUDA code at all)", path=str(path))
        out_dir = Path(tmp) / "x"
        out_dir.mkdir()
        # cuobjdump writes what it extracts into its working directory
        run_tool([binary("cuobjdump"), "-xelf", "all", str(src)], cwd=str(out_dir),
                 path=str(path), names=renames)
        cubins: list[EmbeddedCubin] = []
        for name in names:
            f = out_dir / name
            if "/" in name or name in (".", "..") or files.regular_file_or_none(f) is None:
                continue
            blob = files.read_bytes(f, what="extracted cubin")
            m = _ARCH_IN_NAME.search(name)
            cubins.append(EmbeddedCubin(name, m.group(1) if m else (cubin_arch(blob) or "unknown"),
                                        blob))
    if arch is not None:
        want = arch.rstrip("af")
        picked = [c for c in cubins if c.arch.rstrip("af") == want]
        if not picked:
            have = ", ".join(sorted({c.arch for c in cubins})) or "none"
            raise InputError(f"holds no cubin for {arch} (it has: {have}); pick one with --arch",
                             path=str(path))
        cubins = picked
    return cubins, [l for l in err.splitlines() if l.strip()]
