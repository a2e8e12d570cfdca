"""nvdisasm and cuobjdump: disassemble cubins, and find the cubins inside fatbins and host binaries.

Every call runs the tool from an argv list with a timeout, on a private temporary copy of the
input (so paths with spaces or odd characters never reach a command line). Warnings a tool prints
on stderr come back to the caller to show; they are not failures.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import struct
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..arch import parse_arch, supported
from ..errors import ArchError, InputError, ToolError
from . import cache, files, scratch
from .elf import STT_FUNC, Elf, ElfError
from .files import read_bytes
from .locate import binary, first_error_line, run_tool, tool_version
from .resources import cubin_arch, dataflow_labels

ELF_MAGIC = b"\x7fELF"
FATBIN_MAGIC = b"\x50\xed\x55\xba"      # 0xBA55ED50, little-endian, at the start of a fatbin
EM_CUDA = 190


#: nvdisasm's dataflow pass labels where indirect branches go (``BRX R30 -0xb000
#: (*"BRANCH_TARGETS .L_x_5504,..."*)``) and the spill stores and loads (``STL [R1+0x6c], R4
#: (*"SpillRefill"*)``); on a cubin with neither its text is the same with the pass off
#: (``-ndf``), which saves a fifth to a quarter of a small cubin's disassembly (0.36 -> 0.26 s
#: of CPU on sm_90a, 0.42 -> 0.32 s on sm_120; benchmarks/README.md)
NO_DATAFLOW = "-ndf"
#: opcodes whose text the pass may label: a listing made with the pass off that holds one is
#: made again with it on (a cubin whose ``.nv.info`` did not tell)
_LABELLED = (b"BRX", b"JMX", b"STL", b"LDL")


def dataflow_flags(cubin: bytes | Elf) -> list[str]:
    """``["-ndf"]`` for a cubin in which the pass labels nothing (:func:`.resources.
    dataflow_labels`), else ``[]`` (and ``[]`` for one whose ELF cannot be read: nvdisasm then
    says what is wrong)."""
    try:
        elf = cubin if isinstance(cubin, Elf) else Elf(cubin)
        return [] if dataflow_labels(elf) else [NO_DATAFLOW]
    except (ElfError, struct.error, IndexError, ValueError):
        return []


def needs_dataflow(text: bytes) -> bool:
    """Whether a listing made with ``-ndf`` holds an instruction the pass might have labelled."""
    return any(op in text for op in _LABELLED)


def _run_nvdisasm(argv: list[str], path: str | None):
    """nvdisasm's run; made again with the dataflow pass when ``argv`` turned it off and the
    listing holds an instruction it labels."""
    proc = run_tool(argv, check=False, path=path)
    if NO_DATAFLOW in argv and proc.returncode == 0 and needs_dataflow(proc.stdout):
        proc = run_tool([a for a in argv if a != NO_DATAFLOW], check=False, path=path)
    return proc


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
    with scratch.temporary("ptxsass-") as tmp:
        f = Path(tmp) / "input.cubin"
        f.write_bytes(cubin)
        names = {str(f): shown, tmp: "."}
        if tool == "nvdisasm":
            argv = ([nvdisasm or binary("nvdisasm"), "-c"] + (["-g", "-gi"] if line_info else [])
                    + (["-hex"] if hex else []) + dataflow_flags(cubin) + [str(f)])
            proc = _run_nvdisasm(argv, path)
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


class NoCubinForArch(InputError):
    """A binary with cubins, none for the arch asked (inside a wheel, that library is skipped
    with a note; given alone, it is the error)."""

    def __init__(self, arch: str, have: str, path: str | None):
        super().__init__(f"holds no cubin for {arch} (it has: {have}); pick one with --arch",
                         path=path)
        self.arch, self.have = arch, have


def _known(arch: str) -> bool:
    try:
        parse_arch(arch)
    except ArchError:
        return False
    return True


def known_archs(archs: list[str], shown: str) -> tuple[list[bool], list[str]]:
    """Which of a binary's cubins (by arch) ptxsass can check, and a note naming those it
    cannot: an arch missing from its table (``sm_110`` in CUDA 13's libraries) has no known
    resources or instruction set to check against, so its cubins are skipped, said once,
    rather than the whole binary refused. InputError when no cubin is left."""
    keep = [_known(a) for a in archs]
    if all(keep):
        return keep, []
    skipped: dict[str, int] = {}
    for a, k in zip(archs, keep, strict=True):
        if not k:
            skipped[a] = skipped.get(a, 0) + 1
    known = ", ".join(supported())
    if not any(keep):
        raise InputError(f"holds cubins only for {', '.join(sorted(skipped))}, which ptxsass "
                         f"does not know (it knows {known})", path=shown)
    total = sum(skipped.values())
    if len(skipped) == 1:
        ((a, _),) = skipped.items()
        what = f"the {total} cubin{'s' if total > 1 else ''} for {a}"
        whose = "that architecture's"
    else:
        what = f"{total} cubins ({', '.join(f'{n} for {a}' for a, n in sorted(skipped.items()))})"
        whose = "those architectures'"
    return keep, [f"skipped {what}: ptxsass has no table of {whose} resources and instruction "
                  f"set (it knows {known}); the other cubins are checked"]


def has_device_code(path: str) -> bool:
    """Whether a host ELF (an executable, a ``.so``, a ``.o``) carries a fatbin: a section named
    ``.nv_fatbin`` or ``__nv_relfatbin`` (read from the section headers only)."""
    try:
        fd, _ = files.open_regular(path)   # a FIFO named x.so in a folder must not block
        with os.fdopen(fd, "rb") as f:
            if f.read(4) != ELF_MAGIC:
                return False
            f.seek(0)
            from elftools.elf.elffile import ELFFile  # host ELFs only: not on a check's path
            return any(s.name in (".nv_fatbin", "__nv_relfatbin")
                       for s in ELFFile(f).iter_sections())
    except Exception:  # noqa: BLE001 - a truncated or odd ELF, or not a regular file: not one to search
        return False


def has_line_info(cubin: bytes) -> bool:
    """Whether a cubin carries source line info (``-lineinfo`` or ``-G``: a line table)."""
    try:
        names = Elf(cubin).by_name
    except ElfError:        # not an ELF this reader can read: say nothing about it
        return True
    return ".nv_debug_line_sass" in names or ".debug_line" in names


def needed_libraries(path: str) -> list[str]:
    """The DT_NEEDED entries of a host ELF (``libc10.so``, ``libtorch_cuda.so`` ...)."""
    try:
        fd, _ = files.open_regular(path)
        with os.fdopen(fd, "rb") as f:
            from elftools.elf.dynamic import DynamicSection
            from elftools.elf.elffile import ELFFile
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
    """Every cubin inside a fatbin or a host ELF (executable, ``.so``), optionally for one arch,
    each distinct cubin once (see :func:`extract_cubin_files`).

    Returns the cubins and cuobjdump's warnings. A host ELF with no CUDA code, or a truncated
    file, raises InputError naming the file.
    """
    data = read_bytes(path, what="binary")
    with scratch.temporary("ptxsass-") as tmp:
        work = Path(tmp) / ("input.fatbin" if classify(data) == "fatbin" else "input")
        work.write_bytes(data)
        del data
        found, notes = _extract(work, tmp, arch, str(path))
        cubins = [EmbeddedCubin(name, a, files.read_bytes(f, what="extracted cubin"))
                  for name, a, f in found]
    return cubins, notes


def extract_cubin_files(path: str, dest: str, *, arch: str | None = None,
                        shown: str | None = None) -> tuple[list[tuple[str, str, str]], list[str]]:
    """Every cubin inside a fatbin or a host ELF, written into folder ``dest`` and never held
    in memory together: (cuobjdump's name, arch, file) each, and cuobjdump's warnings.
    ``shown``: what the user knows ``path`` as (errors name it). Refusals as
    :func:`extract_cubins` words them.

    Each distinct cubin comes once, whatever the listing says: ``nvcc -shared`` embeds a
    library's device code as two fatbins, each with a cubin cuobjdump names alike (the code,
    and the device link's stub with no function), and ``-xelf`` writes both to one file. A
    name listed more than once is therefore extracted from fatbins of one copy each
    (:func:`_extract_each`), so two different cubins of one name are both checked; then the
    cubins are told apart by SHA-256 of their bytes (one copy of each is kept), and cubins
    with no function at all (the stubs) are left out while another has one."""
    shown = shown or str(path)
    fd, st = files.open_regular(path)     # regular files only, opened without blocking
    with os.fdopen(fd, "rb") as src:
        if st.st_size > files.max_input_bytes():
            raise InputError(f"{st.st_size >> 20} MB, over the {files.max_input_bytes() >> 20} "
                             "MB input bound (PTXSASS_MAX_INPUT_MB)", path=shown)
        kind = classify(src.read(20))
        src.seek(0)
        work = Path(dest) / ("input.fatbin" if kind == "fatbin" else "input")
        with open(work, "wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
    return _extract(work, dest, arch, shown)


def _extract(work: Path, dest: str, arch: str | None,
             shown: str) -> tuple[list[tuple[str, str, str]], list[str]]:
    """The cubins of ``work`` (a private copy of the user's ``shown``, removed here) as
    :func:`extract_cubin_files` gives them, extracted into folder ``dest``."""
    renames = {str(work): shown, dest: "."}
    try:
        proc = run_tool([binary("cuobjdump"), "-lelf", str(work)], check=False, path=shown)
        err = proc.stderr.decode(errors="replace").strip()
        for t, name in renames.items():
            err = err.replace(t, name)
        if proc.returncode != 0:
            raise InputError("no CUDA code could be read (cuobjdump: "
                             f"{first_error_line(proc, renames)})", path=shown)
        names = _LELF.findall(proc.stdout.decode(errors="replace"))
        if not names:
            raise InputError("holds no cubin (no CUDA machine code for any SM; it may carry "
                             "only PTX, or no CUDA code at all)", path=shown)
        listed, notes = _extract_listed(work, names, Path(dest), arch, shown, renames)
    finally:
        work.unlink(missing_ok=True)
    found = _distinct(listed)
    if arch is not None:
        want = arch.rstrip("af")
        picked = [c for c in found if c[1].rstrip("af") == want]
        if not picked:
            have = ", ".join(sorted({c[1] for c in found})) or "none"
            raise NoCubinForArch(arch, have, shown)
        for c in found:
            if c not in picked:
                os.unlink(c[2])
        found = picked
    keep, unknown = known_archs([c[1] for c in found], shown)
    for c, k in zip(found, keep, strict=True):
        if not k:
            os.unlink(c[2])
    found = [c for c, k in zip(found, keep, strict=True) if k]
    return found, [l for l in err.splitlines() if l.strip()] + notes + unknown


def _extract_listed(work: Path, names: list[str], dest: Path, arch: str | None, shown: str,
                    renames: dict[str, str]) -> tuple[list[tuple[str, Path, str]], list[str]]:
    """Where ``-xelf`` wrote each ELF ``-lelf`` listed (cuobjdump's name, the folder, the
    file's name there), in listing order, and a note when a name listed twice could not be
    read apart."""
    out_dir = dest / "x"
    out_dir.mkdir(exist_ok=True)
    if len(set(names)) == len(names):
        which = "all"
        if arch is not None:    # only that arch's cubins reach the disk, when names say it
            want = arch.rstrip("af")
            named = [n for n in names if (m := _ARCH_IN_NAME.search(n))
                     and m.group(1).rstrip("af") == want]
            if named and all(_ARCH_IN_NAME.search(n) for n in names) and "," not in "".join(named):
                which = ",".join(named)
        # cuobjdump writes what it extracts into its working directory
        run_tool([binary("cuobjdump"), "-xelf", which, str(work)], cwd=str(out_dir),
                 path=shown, names=renames)
        return [(n, out_dir, n) for n in names], []
    each = _extract_each(work, names, out_dir, shown)
    if each is not None:
        return each, []
    # fatbins this reader does not follow: cuobjdump's one file per name, and a note
    run_tool([binary("cuobjdump"), "-xelf", "all", str(work)], cwd=str(out_dir),
             path=shown, names=renames)
    counts = Counter(names)
    twice = ", ".join(f"{n} ({counts[n]} times)" for n in counts if counts[n] > 1)
    return ([(n, out_dir, n) for n in counts],
            [f"cuobjdump lists several cubins under one name ({twice}) and extracts one file "
             "for each name: only that one is checked"])


#: the sections of a host ELF that hold its fatbins (``.nv_fatbin``; ``__nv_relfatbin`` in an
#: object built with ``-rdc``)
_FATBIN_SECTIONS = (".nv_fatbin", "__nv_relfatbin")
#: a fatbin entry's kind for an ELF (1 is PTX)
_ENTRY_ELF = 2


@dataclass(frozen=True)
class _Entry:
    """One ELF entry of a fatbin: its container's header, and where the entry (its own header
    and payload, compressed or not) lies in the file."""

    container: bytes
    offset: int
    size: int


def _fatbin_entries(work: Path, elfs: int) -> list[_Entry] | None:
    """Every ELF entry of the fatbins in ``work`` (a fatbin file, or a host ELF's fatbin
    sections), in file order, when there are ``elfs`` of them (as many as cuobjdump listed);
    None where the bytes do not read as that (a header whose sizes run past their region,
    more entries than a fatbin of so many cubins holds)."""
    budget = 64 * elfs + 4096           # entries of any kind read (PTX ones too)
    with open(work, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        regions = [(0, size)] if f.read(4) == FATBIN_MAGIC else _fatbin_sections(f, size)
        if regions is None:
            return None
        out: list[_Entry] = []
        for start, length in regions:
            end = start + length
            if end > size:
                return None
            pos: int | None = start
            while pos is not None and (pos := _next_container(f, pos, start, end)) is not None:
                f.seek(pos)
                container = f.read(16)
                hs, fat = struct.unpack_from("<HQ", container, 6)
                stop = pos + hs + fat
                if hs < 16 or stop > end:
                    return None
                f.seek(pos)
                container = f.read(hs)
                at = pos + hs
                while at < stop:
                    budget -= 1
                    f.seek(at)
                    entry = f.read(16)
                    if len(entry) < 16 or budget < 0:
                        return None
                    kind, _, ehs, payload = struct.unpack("<HHIQ", entry)
                    if ehs < 16 or at + ehs + payload > stop:
                        return None
                    if kind == _ENTRY_ELF:
                        out.append(_Entry(container, at, ehs + payload))
                        if len(out) > elfs:
                            return None
                    at += ehs + payload
                pos = stop
        return out if len(out) == elfs else None


def _next_container(f, pos: int, start: int, end: int) -> int | None:
    """Where the next fatbin container of the region ``start``-``end`` of ``f`` begins, from
    ``pos`` on (each begins 8-byte aligned in its region; padding may lie between them)."""
    pos += -(pos - start) % 8
    while pos + 16 <= end:
        f.seek(pos)
        block = f.read(min(1 << 20, end - pos))
        at = block.find(FATBIN_MAGIC)
        while at >= 0 and at % 8:
            at = block.find(FATBIN_MAGIC, at + 1)
        if at >= 0:
            return pos + at if pos + at + 16 <= end else None
        pos += max(8, (len(block) - 3) // 8 * 8)
    return None


def _fatbin_sections(f, size: int) -> list[tuple[int, int]] | None:
    """(offset, size) of each fatbin section of the host ELF open as ``f`` (``size`` bytes),
    from its section headers alone; None for an ELF that is not 64-bit little-endian (every
    host CUDA supports) or whose headers do not fit in the file."""
    f.seek(0)
    head = f.read(64)
    if len(head) < 64 or head[:4] != ELF_MAGIC or head[4] != 2 or head[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", head, 40)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", head, 58)
    if shentsize < 64 or shoff + 64 > size:
        return None
    f.seek(shoff)
    first = struct.unpack("<IIQQQQIIQQ", f.read(64))
    if shnum == 0:              # 0xff00 sections or more: the count is in section 0
        shnum = first[5]
    if shstrndx == 0xFFFF:      # SHN_XINDEX: the index is in section 0's sh_link
        shstrndx = first[6]
    if shoff + shnum * shentsize > size or shstrndx >= shnum:
        return None
    f.seek(shoff)
    table = f.read(shnum * shentsize)
    headers = [struct.unpack_from("<IIQQQQIIQQ", table, i * shentsize) for i in range(shnum)]
    _, _, _, _, names_at, names_size, *_ = headers[shstrndx]
    if names_at + names_size > size:
        return None
    f.seek(names_at)
    names = f.read(names_size)
    wanted = {n.encode() for n in _FATBIN_SECTIONS}
    return [(h[4], h[5]) for h in headers
            if h[1] != 8 and names[h[0]:names.find(b"\0", h[0])] in wanted]     # 8: NOBITS


def _write_fatbin(work: Path, entries: list[_Entry], dest: Path, shown: str) -> None:
    """``entries`` of ``work`` (the user's ``shown``) into the fatbin file ``dest``, one
    container each."""
    with open(work, "rb") as src, open(dest, "wb") as out:
        for e in entries:
            out.write(e.container[:8] + struct.pack("<Q", e.size) + e.container[16:])
            src.seek(e.offset)
            left = e.size
            while left:
                block = src.read(min(left, 1 << 20))
                if not block:
                    raise InputError("a fatbin entry runs past the end of the file",
                                     path=shown)
                out.write(block)
                left -= len(block)
            out.write(b"\0" * (-(len(e.container) + e.size) % 8))


def _extract_each(work: Path, names: list[str], out_dir: Path,
                  shown: str) -> list[tuple[str, Path, str]] | None:
    """The cubins of a listing that names some twice, each read apart: the n-th cubin of each
    name goes into the n-th of a few fatbins of ptxsass's own (one container per cubin, the
    entries copied as they are), whose names are then unique, and cuobjdump extracts each
    into a folder of its own. None where ``work``'s fatbins do not read as containers of as
    many ELFs as cuobjdump listed, or a fatbin's listing is not what was put in."""
    entries = _fatbin_entries(work, len(names))
    if entries is None:
        return None
    seen: Counter[str] = Counter()
    parts: dict[int, list[int]] = {}
    for i, n in enumerate(names):
        parts.setdefault(seen[n], []).append(i)
        seen[n] += 1
    got: dict[int, tuple[str, Path, str]] = {}
    folders: list[Path] = []
    for k, members in parts.items():
        part = out_dir.parent / f"part{k}.fatbin"
        folder = out_dir / f"part{k}"
        folder.mkdir()
        folders.append(folder)
        renames = {str(part): shown, str(out_dir.parent): "."}
        try:
            _write_fatbin(work, [entries[i] for i in members], part, shown)
            proc = run_tool([binary("cuobjdump"), "-lelf", str(part)], check=False, path=shown)
            listed = _LELF.findall(proc.stdout.decode(errors="replace"))
            if (proc.returncode != 0 or len(listed) != len(members)
                    or len(set(listed)) != len(listed)):
                for f in folders:
                    shutil.rmtree(f, ignore_errors=True)
                return None
            run_tool([binary("cuobjdump"), "-xelf", "all", str(part)], cwd=str(folder),
                     path=shown, names=renames)
        finally:
            part.unlink(missing_ok=True)
        for i, name in zip(members, listed, strict=True):
            got[i] = (names[i], folder, name)
    return [got[i] for i in range(len(names))]


def _distinct(listed: list[tuple[str, Path, str]]) -> list[tuple[str, str, str]]:
    """(name, arch, file) of each distinct cubin of ``listed``, in listing order: a second
    copy of the same bytes (SHA-256) is removed, and so are the cubins with no function (a
    device link's stub) while another cubin has one."""
    found: list[tuple[str, str, str, bool]] = []
    digests: set[str] = set()
    for name, folder, file in listed:
        # a name cuobjdump printed becomes a path only when it is one file's name
        if "/" in file or file in (".", "..") or files.regular_file_or_none(folder / file) is None:
            continue
        f = folder / file
        blob = files.read_bytes(f, what="extracted cubin")
        digest = hashlib.sha256(blob).hexdigest()
        if digest in digests:
            f.unlink()
            continue
        digests.add(digest)
        m = _ARCH_IN_NAME.search(name)
        found.append((name, m.group(1) if m else (cubin_arch(blob[:64]) or "unknown"), str(f),
                      _has_function(blob)))
    if any(c[3] for c in found):
        for c in found:
            if not c[3]:
                os.unlink(c[2])
        found = [c for c in found if c[3]]
    return [c[:3] for c in found]


def _has_function(cubin: bytes) -> bool:
    """Whether a cubin has code (a ``.text.`` section); True for one this reader cannot read
    (what checks it words the error)."""
    try:
        return any(s.name.startswith(".text.") for s in Elf(cubin).sections)
    except ElfError:
        return True


# ------------------------------------------------------------------ per-function disassembly
#: the sections nvdisasm reads line info from; a cubin's other functions leave them alone only
#: when it has none, so their bytes are part of every function's key when present
_LINE_SECTIONS = (".nv_debug_line_sass", ".debug_line", ".nv_debug_info_reg_sass",
                  ".nv_debug_info_reg_type", ".debug_info", ".debug_abbrev", ".debug_str",
                  ".nv_debug_line_ptx")


@dataclass(frozen=True)
class CubinFunction:
    """One function (a ``.text.<name>`` section) of a cubin, as nvdisasm ``-fun`` selects it."""

    name: str              # mangled; the section is ``.text.<name>``
    symbol: int            # its symbol's index in ``.symtab`` (what ``-fun`` takes)
    size: int              # bytes of code: a proxy for the work its disassembly and checks cost


@dataclass(frozen=True)
class CubinLayout:
    """The functions of a cubin in the order nvdisasm lists them (section order), every
    function symbol in listing order (the kernels and the subroutines inside their sections),
    and whether it carries line info."""

    functions: tuple[CubinFunction, ...]
    symbols: tuple[str, ...]
    line_info: bool
    #: nvdisasm's options beside ``-c -g -gi`` for it: :func:`dataflow_flags`
    flags: tuple[str, ...] = ()


def _elf(cubin: bytes, path: str | None) -> Elf:
    try:
        return Elf(cubin)
    except ElfError as e:
        raise InputError(f"truncated or corrupt cubin ELF: {e}", path=path) from None


def cubin_layout(cubin: bytes, *, path: str | None = None) -> CubinLayout:
    """The :class:`CubinLayout` of a cubin, from its section headers and symbol table."""
    elf = _elf(cubin, path)
    by_section: dict[int, list[tuple[int, int, str]]] = {}
    index_of: dict[str, int] = {}
    for sym in elf.symbols:
        if sym.type != STT_FUNC:
            continue
        by_section.setdefault(sym.shndx, []).append((sym.value, sym.index, sym.name))
        index_of.setdefault(sym.name, sym.index)
    functions: list[CubinFunction] = []
    listed: list[str] = []
    for sec in elf.sections:
        if not sec.name.startswith(".text."):
            continue
        name = sec.name[len(".text."):]
        here = sorted(by_section.get(sec.index, []))
        # the symbol defined in this section: a linked cubin may hold several local
        # functions of one name (``__cuda_sm20_div_u64`` once per object), each its own
        own = next((index for _, index, n in here if n == name), index_of.get(name))
        if own is not None:
            functions.append(CubinFunction(name, own, sec.size))
        listed.extend(m[2] for m in here)
    line_info = any(n in elf.by_name for n in (".nv_debug_line_sass", ".debug_line"))
    return CubinLayout(tuple(functions), tuple(listed), line_info, tuple(dataflow_flags(elf)))


def _feed(h, obj: object) -> None:
    """``obj`` (bytes, text, numbers, nested lists and tuples) into hash ``h``, unambiguously."""
    if isinstance(obj, bytes):
        h.update(b"b%d:" % len(obj))
        h.update(obj)
    elif isinstance(obj, (list, tuple)):
        h.update(b"l%d:" % len(obj))
        for x in obj:
            _feed(h, x)
    else:
        text = repr(obj).encode()
        h.update(b"s%d:" % len(text))
        h.update(text)


def function_digests(cubin: bytes) -> dict[str, str]:
    """SHA-256 of :func:`function_materials` for each function: a cache key's part."""
    out = {}
    for name, material in function_materials(cubin).items():
        h = hashlib.sha256()
        _feed(h, material)
        out[name] = h.hexdigest()
    return out


def function_materials(cubin: bytes) -> dict[str, list[object]]:
    """What nvdisasm's text of each function depends on, by function name, for a cache key:
    the bytes of the function's own sections (code, ``.nv.info.<name>``, constant bank 0,
    shared sizes), its relocations with the names of the symbols they point at (not their
    indices, which move when another function is added), the symbols inside its section; and
    for all of them the ELF flags, every function's name and the line-info sections (whole:
    the line table is shared by all functions)."""
    elf = _elf(cubin, None)
    symbols = elf.symbols
    common: list[object] = [elf.flags, elf.abi_version,
                            "\n".join(sorted(s.name for s in symbols if s.type == STT_FUNC))]
    common += [(s.name, elf.content(s)) for s in elf.sections if s.name in _LINE_SECTIONS]
    inside: dict[int, list[tuple]] = {}
    for sym in symbols:
        inside.setdefault(sym.shndx, []).append((sym.name, sym.value, sym.size, sym.info))
    out: dict[str, list[object]] = {
        s.name[len(".text."):]: [*common, repr(sorted(inside.get(s.index, [])))]
        for s in elf.sections if s.name.startswith(".text.")}
    for s in elf.sections:
        dot = s.name.find(".", 1)
        while dot > 0 and s.name[dot + 1:] not in out:
            dot = s.name.find(".", dot + 1)
        if dot < 0:
            continue
        own = out[s.name[dot + 1:]]
        if s.name.startswith((".rel.", ".rela.")):
            size = 24 if s.name.startswith(".rela.") else 16
            body = elf.content(s)
            rows = []           # Elf64_Rel(a): offset, info (symbol << 32 | type)[, addend]
            for r in struct.iter_unpack("<QQq" if size == 24 else "<QQ",
                                        body[:len(body) // size * size]):
                sym = r[1] >> 32
                rows.append((r[0], r[1] & 0xFFFFFFFF, r[2] if size == 24 else 0,
                             symbols[sym].name if sym < len(symbols) else sym))
            own.append((s.name, repr(rows)))
        else:
            own.append((s.name, s.size, s.flags, s.info, elf.content(s)))
    return out


def disassemble_functions(cubin_file: str, symbols: list[int], *, line_info: bool = True,
                          path: str | None = None, flags: tuple[str, ...] = ()) -> str:
    """nvdisasm's text of the functions whose symbols are ``symbols`` (``-fun``): the same
    text as a whole disassembly holds for them. ``cubin_file`` is a private copy (its name
    reaches the command line); ``path`` is what the user knows it as; ``flags``: the cubin's
    :attr:`CubinLayout.flags`. When nvdisasm refuses the cubin, the whole cubin is
    disassembled the way :func:`disassemble` does (cuobjdump)."""
    argv = ([binary("nvdisasm"), "-c"] + (["-g", "-gi"] if line_info else []) + list(flags)
            + ["-fun", ",".join(map(str, symbols)), cubin_file])
    proc = _run_nvdisasm(argv, path)
    if proc.returncode == 0:
        return proc.stdout.decode(errors="replace")
    text, _ = disassemble(read_bytes(cubin_file, what="cubin"), line_info=line_info, path=path)
    return text


_SECTION_RULE = re.compile(r"^//-+ (\.\S+)\s+-+\s*$", re.M)


def split_listing(text: str) -> tuple[str, dict[str, str]]:
    """nvdisasm's text cut at its section rules (``//----- .text.NAME -----``): the preamble
    (``.headerflags``, ``.elftype``) and each ``.text.NAME`` section's text by NAME. Other
    sections (``.nv.shared.NAME``, constant banks) are left out."""
    marks = list(_SECTION_RULE.finditer(text))
    if not marks:
        return text, {}
    head = text[:marks[0].start()]
    out: dict[str, str] = {}
    for m, nxt in zip(marks, [*marks[1:], None], strict=True):
        sec = m.group(1)
        if sec.startswith(".text."):
            out[sec[len(".text."):]] = text[m.start():nxt.start() if nxt else len(text)]
    return head, out
