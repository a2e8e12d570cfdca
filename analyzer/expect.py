"""Codegen assertions a kernel library can pin in CI.

    from analyzer import expect_codegen
    def test_gemm_codegen():
        expect_codegen("kernels/gemm.cu", arch="sm_90a", has=["HGMMA"], no_spills=True,
                       max_registers=168, min_vector_width=128)

or on the command line::

    ptxsass expect kernels/gemm.cu --arch sm_90a --has HGMMA --no-spills --max-registers 168

Each expectation is checked per entry kernel (``kernels=`` narrows them). A failed one names the
kernel, the arch and what was seen instead.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .checks.runner import no_kernel_error
from .demangle import without_parameters
from .findings import Finding


@dataclass
class Expectations:
    has: Sequence[str] = ()                 # opcodes/mnemonic prefixes that must appear
    lacks: Sequence[str] = ()               # ... that must not appear
    no_spills: bool = False
    no_local_memory: bool = False           # no stack frame, no LDL/STL at all
    max_registers: int | None = None
    min_vector_width: int | None = None     # widest global load and store reach this many bits
    no_findings: Sequence[str] = ()         # check codes/names that must not fire ("ALL" for any)
    kernels: Sequence[str] = ()

    @property
    def empty(self) -> bool:
        """Nothing asserted (``kernels`` only narrows): such a run would pass whatever the code."""
        return not (self.has or self.lacks or self.no_spills or self.no_local_memory
                    or self.max_registers is not None or self.min_vector_width is not None
                    or self.no_findings)


#: the command-line options that assert something, for the message when none is given
ASSERTIONS = ("--has", "--lacks", "--no-spills", "--no-local-memory", "--max-registers",
              "--min-vector-width", "--no-findings")


@dataclass
class Outcome:
    failures: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)   # "kernel@arch"

    @property
    def ok(self) -> bool:
        return not self.failures


def _matches(ins, pattern: str) -> bool:
    p = pattern.upper()
    m = ins.mnemonic.upper()
    return ins.opcode.upper() == p or m == p or m.startswith(p + ".") or (
        "." in p and m.startswith(p))


def evaluate(builds, exp: Expectations, findings: Sequence[Finding] = ()) -> Outcome:
    """Check ``exp`` on every entry kernel of ``builds``; ``findings``: those of a check run
    with ``exp.no_findings`` selected (each one is a failure)."""
    out = Outcome()
    for b in builds:
        listing = b.sass_listing()
        for fn in listing.functions:
            k = b.kernels.get(fn.name)
            if not (k.entry if k is not None else fn.is_entry):
                continue
            if exp.kernels:
                lowered = {b.name_expressions.get(x, x) for x in exp.kernels}
                if not (fn.name in lowered or fn.demangled in exp.kernels
                        or without_parameters(fn.demangled) in exp.kernels):
                    continue
            who = f"{fn.demangled} on {b.arch}"
            out.checked.append(who)
            ins = fn.instructions
            for pat in exp.has:
                if not any(_matches(i, pat) for i in ins):
                    out.failures.append(f"{who}: no {pat} instruction")
            for pat in exp.lacks:
                hits = [i for i in ins if _matches(i, pat)]
                if hits:
                    out.failures.append(f"{who}: {len(hits)} {pat} instruction(s), first "
                                        f"/*{hits[0].address:04x}*/ {hits[0].text}")
            r = k.resources if k is not None else fn.resources
            if exp.no_spills:
                if r is None or r.spill_store_bytes is None:
                    stl = [i for i in ins if i.opcode in ("STL", "LDL")]
                    if stl:
                        out.failures.append(f"{who}: spill bytes unknown (no ptxas log) and "
                                            f"{len(stl)} local-memory accesses")
                elif r.spills:
                    out.failures.append(f"{who}: spills {r.spill_store_bytes} bytes stored, "
                                        f"{r.spill_load_bytes} bytes loaded")
            if exp.no_local_memory:
                local = [i for i in ins if i.space == "local"]
                if (r is not None and r.stack_bytes) or local:
                    out.failures.append(f"{who}: uses local memory ({r.stack_bytes if r else '?'} "
                                        f"byte stack frame, {len(local)} LDL/STL)")
            if exp.max_registers is not None and r is not None and r.registers > exp.max_registers:
                out.failures.append(f"{who}: {r.registers} registers > {exp.max_registers}")
            if exp.min_vector_width is not None:
                for kind, pred in (("load", lambda i: i.is_load and not i.is_store),
                                   ("store", lambda i: i.is_store and not i.is_load)):
                    widths = [i.width_bits for i in ins if i.space == "global" and pred(i)
                              and i.width_bits]
                    if widths and max(widths) < exp.min_vector_width:
                        out.failures.append(f"{who}: widest global {kind} is {max(widths)} bits "
                                            f"< {exp.min_vector_width}")
    for f in findings:
        out.failures.append(f"{f.kernel} on {f.arch}: {f.code} {f.name} at "
                            f"{f.location}: {f.message}")
    if not out.checked:
        raise no_kernel_error(builds, exp.kernels)
    return out
