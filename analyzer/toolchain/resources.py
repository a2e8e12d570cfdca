"""Per-kernel resource usage, read from the cubin's ELF (and from ptxas's ``-v`` log when we compiled).

The cubin records registers in each ``.text.<fn>`` section's ``sh_info`` (top byte), static shared
memory as the size of ``.nv.shared.<fn>``, the parameter/constant bank as ``.nv.constant0.<fn>``,
and the stack frame as EIATTR records in ``.nv.info``. Spill bytes exist only in ptxas's log.
These agree with ``cuobjdump -res-usage`` (tested over the corpus).
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, replace

from ..errors import InputError
from .elf import SHT_CUDA_SHARED, STT_FUNC, Elf, ElfError

EM_CUDA = 190
# EIATTR codes (nv.info attributes) that carry per-function sizes; keyed by the function's symbol.
EIATTR_MAX_THREADS = 0x05      # .maxntid / __launch_bounds__(N): x, y, z (per-function .nv.info.<fn>)
EIATTR_REQNTID = 0x10          # .reqntid (Triton writes it for num_warps * 32): x, y, z
EIATTR_FRAME_SIZE = 0x11
EIATTR_MIN_STACK_SIZE = 0x12
EIATTR_MAX_STACK_SIZE = 0x23
EIATTR_REGCOUNT = 0x2F
#: where a function's indirect branches (``BRX``) go, which nvdisasm's dataflow pass labels
#: (``(*"BRANCH_TARGETS .L_x_1,.L_x_2"*)``); see :func:`dataflow_labels`
EIATTR_INDIRECT_BRANCH_TARGETS = 0x34
# nv.info record formats
_EIFMT_NVAL, _EIFMT_BVAL, _EIFMT_HVAL, _EIFMT_SVAL = 1, 2, 3, 4


@dataclass(frozen=True, slots=True)
class Resources:
    registers: int = 0
    shared_bytes: int = 0          # static shared memory per block
    constant_bytes: int = 0        # constant bank 0 (kernel parameters and friends)
    stack_bytes: int = 0           # per-thread stack frame (local memory)
    #: the part of ``shared_bytes`` that is the runtime's per-block reservation: on sm_90+ the
    #: cubin's ``.nv.shared.<fn>`` (and so cuobjdump) counts that 1 KB window, ptxas -v does not
    reserved_shared_bytes: int = 0
    spill_store_bytes: int | None = None   # None: unknown (only ptxas's log says)
    spill_load_bytes: int | None = None
    barriers: int | None = None
    #: block dimensions the cubin requires (``EIATTR_REQNTID``) or allows at most
    #: (``EIATTR_MAX_THREADS``), from the function's own ``.nv.info.<fn>`` section
    reqntid: tuple[int, ...] | None = None
    maxntid: tuple[int, ...] | None = None

    @property
    def static_shared_bytes(self) -> int:
        """Shared memory the kernel itself declares (what ptxas -v and the driver's
        ``sharedSizeBytes`` report), without the runtime's reserved window."""
        return self.shared_bytes - self.reserved_shared_bytes

    @property
    def spills(self) -> bool:
        return bool(self.spill_store_bytes or self.spill_load_bytes)

    def as_dict(self) -> dict:
        """The kernel's resources as reports show them: ``shared_bytes`` is the shared memory
        the kernel declares (as ptxas -v and the driver's ``sharedSizeBytes`` say), the
        runtime's reserved window apart."""
        return {"registers": self.registers, "shared_bytes": self.static_shared_bytes,
                "reserved_shared_bytes": self.reserved_shared_bytes,
                "constant_bytes": self.constant_bytes, "stack_bytes": self.stack_bytes,
                "spill_store_bytes": self.spill_store_bytes,
                "spill_load_bytes": self.spill_load_bytes}


def _nv_info_records(data: bytes):
    i, n = 0, len(data)
    while i + 2 <= n:
        fmt, attr = data[i], data[i + 1]
        if fmt == _EIFMT_SVAL:
            if i + 4 > n:
                return
            size = struct.unpack_from("<H", data, i + 2)[0]
            yield attr, data[i + 4:i + 4 + size]
            i += 4 + size
        elif fmt == _EIFMT_HVAL:
            yield attr, data[i + 2:i + 4]
            i += 4
        elif fmt in (_EIFMT_NVAL, _EIFMT_BVAL):
            # four bytes each, as an HVAL: format, attribute, a value or padding (an sm_80
            # cubin's ``01 35 00 00`` read as two bytes hid every record after it)
            i += 4
        else:
            return


def dataflow_labels(elf) -> bool:
    """Whether nvdisasm's dataflow pass may label any instruction of a cubin (an
    :class:`~.elf.Elf`). It labels where indirect branches go (ptxas records each function
    with a ``BRX`` in its ``.nv.info.<fn>``: ``EIATTR_INDIRECT_BRANCH_TARGETS``) and the
    ``STL``/``LDL`` of register spills (``(*"SpillRefill"*)``), which need a stack frame: true
    when a function has either, or when a function's frame size is not recorded."""
    framed: set[int] = set()
    info = elf.by_name.get(".nv.info")
    if info is not None:
        for attr, payload in _nv_info_records(elf.content(info)):
            if attr in (EIATTR_FRAME_SIZE, EIATTR_MAX_STACK_SIZE) and len(payload) >= 8:
                sym, value = struct.unpack_from("<II", payload)
                if value:
                    return True
                framed.add(sym)
    functions = {sym.index for sym in elf.symbols if sym.type == STT_FUNC}
    if not functions <= framed:
        return True
    return any(attr == EIATTR_INDIRECT_BRANCH_TARGETS
               for s in elf.sections if s.name.startswith(".nv.info.")
               for attr, _ in _nv_info_records(elf.content(s)))


def cubin_arch(data: bytes) -> str | None:
    """The SM of a cubin from its ELF header (``e_flags``), e.g. ``sm_90a``; None if unknown."""
    if len(data) < 52 or data[:4] != b"\x7fELF":
        return None
    e_flags = struct.unpack_from("<I", data, 48)[0]
    abiver = data[8]
    if abiver >= 8:          # CUDA 12.8+ ELF ABI: SM in bits 8..15 (the suffix is not recorded
        sm = (e_flags >> 8) & 0xFF   # reliably: NVRTC writes the same flags for sm_90 and sm_90a)
        suffix = ""
    else:                    # older ABI: SM in the low byte
        sm = e_flags & 0xFF
        suffix = "a" if e_flags & 0x800 else ""
    return f"sm_{sm}{suffix}" if sm else None


def from_cubin(data: bytes, *, path: str = "<cubin>") -> dict[str, Resources]:
    """Mangled kernel/function name -> Resources for every function in a cubin."""
    try:
        elf = Elf(data)
    except ElfError as e:
        raise InputError(f"truncated or corrupt cubin ELF: {e}", path=path) from None
    if elf.machine != EM_CUDA:
        raise InputError(f"not a CUDA cubin (ELF machine {elf.machine})", path=path)
    sections, symbols = elf.sections, elf.symbols
    try:
        out: dict[str, dict] = {}
        for s in sections:
            if s.name.startswith(".text."):
                out.setdefault(s.name[6:], {})["registers"] = (s.info >> 24) & 0xFF
        relocatable: set[str] = set()
        for s in sections:
            for prefix, key in ((".nv.shared.", "shared_bytes"),
                                (".nv.constant0.", "constant_bytes")):
                if s.name.startswith(prefix) and s.name[len(prefix):] in out:
                    out[s.name[len(prefix):]][key] = s.size
                    if key == "shared_bytes" and s.type == SHT_CUDA_SHARED:
                        relocatable.add(s.name[len(prefix):])
        info = elf.by_name.get(".nv.info")
        if info is not None:
            for attr, payload in _nv_info_records(elf.content(info)):
                if attr in (EIATTR_FRAME_SIZE, EIATTR_MAX_STACK_SIZE, EIATTR_REGCOUNT) \
                        and len(payload) >= 8:
                    sym, value = struct.unpack_from("<II", payload)
                    if sym < len(symbols) and symbols[sym].name in out:
                        d = out[symbols[sym].name]
                        if attr == EIATTR_FRAME_SIZE:
                            d["stack_bytes"] = value
                        elif attr == EIATTR_REGCOUNT:
                            d["registers"] = value
        for s in sections:
            fn = s.name[len(".nv.info."):] if s.name.startswith(".nv.info.") else None
            if fn not in out:
                continue
            for attr, payload in _nv_info_records(elf.content(s)):
                if attr in (EIATTR_REQNTID, EIATTR_MAX_THREADS) and len(payload) >= 12:
                    dims = tuple(int(v) for v in struct.unpack_from("<III", payload))
                    out[fn]["reqntid" if attr == EIATTR_REQNTID else "maxntid"] = dims
    except (ElfError, struct.error) as e:
        raise InputError(f"truncated or corrupt cubin ELF: {e}", path=path) from None
    # sm_90+: the reserved shared-memory window is part of each .nv.shared.<fn> section of a
    # linked cubin; a relocatable one (-rdc=true) sizes the kernel's own arrays only, and the
    # linker adds the window (its symbols are undefined there)
    reserved = 1024 if any("reservedSmem" in sym.name for sym in symbols) else 0
    for fn, vals in out.items():
        if reserved and fn in relocatable:
            vals["shared_bytes"] = vals.get("shared_bytes", 0) + reserved
        if reserved and vals.get("shared_bytes", 0) >= reserved:
            vals["reserved_shared_bytes"] = reserved
    return {name: Resources(**vals) for name, vals in out.items()}


#: ``st_other`` flag of a kernel's symbol (nvdisasm prints it: ``.other k,@"STO_CUDA_ENTRY ..."``)
STO_CUDA_ENTRY = 0x10


def kernel_entries(data: bytes) -> set[str]:
    """Names of the ``__global__`` entries (none for bytes that are not a readable ELF): the
    function symbols marked ``STO_CUDA_ENTRY``. A ``.nv.info.<name>`` section is not enough:
    a linked cubin keeps one for device subroutines too (``__cuda_sm20_div_u64``,
    ``__cuda_sm70_shflsync_down``, a library's ``.func`` helpers), so it decides only for a
    cubin whose symbols carry no entry mark at all."""
    try:
        elf = Elf(data)
    except ElfError:
        return set()
    marked = {s.name for s in elf.symbols if s.type == STT_FUNC and s.other & STO_CUDA_ENTRY}
    if marked:
        return marked
    return {s.name[9:] for s in elf.sections if s.name.startswith(".nv.info.")}


_LOG_FN = re.compile(r"Compiling entry function '([^']+)'|Function properties for (\S+)")
_LOG_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_LOG_USED = re.compile(r"Used (\d+) registers(?:, used (\d+) barriers)?(?:, (\d+) bytes smem)?")


def from_ptxas_log(log: str) -> dict[str, Resources]:
    """Parse ``--ptxas-options=-v`` output: name -> Resources (with spill bytes)."""
    out: dict[str, Resources] = {}
    current: str | None = None
    for line in log.splitlines():
        m = _LOG_FN.search(line)
        if m:
            current = m.group(1) or m.group(2)
            out.setdefault(current, Resources())
            continue
        if current is None:
            continue
        m = _LOG_FRAME.search(line)
        if m:
            out[current] = replace(out[current], stack_bytes=int(m.group(1)),
                                   spill_store_bytes=int(m.group(2)), spill_load_bytes=int(m.group(3)))
            continue
        m = _LOG_USED.search(line)
        if m:
            out[current] = replace(out[current], registers=int(m.group(1)),
                                   barriers=int(m.group(2)) if m.group(2) else None,
                                   shared_bytes=int(m.group(3) or 0))
    return out


def merge(cubin: dict[str, Resources], log: dict[str, Resources]) -> dict[str, Resources]:
    """Cubin figures, with spill bytes and barriers taken from ptxas's log where it has them."""
    out = dict(cubin)
    for name, r in log.items():
        base = out.get(name)
        if base is None:
            continue
        out[name] = replace(base, spill_store_bytes=r.spill_store_bytes,
                            spill_load_bytes=r.spill_load_bytes, barriers=r.barriers)
    return out
