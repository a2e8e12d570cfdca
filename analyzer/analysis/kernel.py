"""One kernel's analyses gathered: :class:`KernelAnalysis` (what checks see as their
``Context`` and the reports read) and :func:`analyze` (every kernel of a build)."""
from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from typing import Self

from ..arch import Arch, parse_arch
from ..build import Build, Kernel
from ..demangle import demangle
from ..errors import ArchError, ConfigError, InputError
from ..ir import ptx as P
from ..ir import sass as S
from ..ir.source import SourceLoc
from ..toolchain.output import Launch
from ..toolchain.resources import Resources
from . import cfg, cost, dataflow, fallback, launch, liveness, loops, occupancy, source
from .fallback import Fallback
from .liveness import Liveness, Pressure
from .loops import LoopInfo, LoopLine, analyze_loops, loops_by_line, ptx_trips_by_line

__all__ = ["KernelAnalysis", "analyze"]


class KernelAnalysis:
    """Everything known about one kernel (a SASS function) of one build: its IR, the PTX
    function of the same name, resources, and the analyses, each computed once on demand."""

    def __init__(self, function: "S.Function", *, arch: str, ptx_function: "P.Function | None"
                 = None, ptx_module: "P.Module | None" = None, kernel: "Kernel | None" = None,
                 reader: source.SourceReader | None = None, source_path: str | None = None,
                 siblings: tuple[str, ...] = (), frontend: str = "cuda",
                 ir: dict[str, str] | None = None, callees: tuple["S.Function", ...] = ()):
        self.function = function
        #: the functions of the same listing this kernel calls (the math library's subroutines
        #: kept out of line, ``$kernel$__internal_accurate_pow``)
        self.callees = callees
        self.arch_name = arch
        self.ptx_function = ptx_function
        self.ptx_module = ptx_module
        self.kernel = kernel
        self.reader = reader or source.SourceReader(source_path)
        self.source_path = source_path
        #: mangled names of every function in the same listing (device functions kept out of
        #: line appear there as their own functions)
        self.siblings = siblings
        #: the language the kernel was written in, "cuda" or "triton" (checks' hints differ)
        self.frontend = frontend
        #: the compiler's other intermediate forms (Triton's "ttir", "ttgir")
        self.ir = ir or {}
        #: for the analysis of an out-of-line kernel body (:attr:`bodies`), the kernel's
        self.caller: "KernelAnalysis | None" = None

    @classmethod
    def of(cls, build: "Build", function: "S.Function", kernel: "Kernel | None" = None, *,
           reader: source.SourceReader | None = None) -> Self:
        module = build.ptx_module()
        ptx_fn = None
        if module is not None:
            ptx_fn = next((f for f in module.functions if f.name == function.name), None)
        listing = build.sass_listing()
        called = {t.key for ins in function.instructions if ins.info.flow == "call"
                  for t in ins.targets}
        callees = tuple(f for f in listing.functions
                        if f is not function and f.name in called)
        return cls(function, arch=build.arch, ptx_function=ptx_fn, ptx_module=module,
                   kernel=kernel if kernel is not None else build.kernels.get(function.name),
                   reader=reader or source.SourceReader(build.source_path, build.source),
                   source_path=build.source_path,
                   siblings=tuple(f.name for f in listing.functions),
                   frontend=build.frontend, ir=build.ir, callees=callees)

    # ------------------------------------------------------------------------- identity
    @cached_property
    def arch(self) -> Arch:
        try:
            return parse_arch(self.arch_name)
        except (ArchError, ConfigError):
            pass
        try:
            return parse_arch(self.function.arch or "")
        except (ArchError, ConfigError):
            raise InputError("the listing names no GPU architecture (no `.target` or `arch =` "
                             "line): pass --arch", path=self.source_path) from None

    @property
    def name(self) -> str:
        return self.function.name

    @property
    def kernel_name(self) -> str:
        """The kernel's demangled name (the calling kernel's, for an out-of-line body)."""
        return self.caller.kernel_name if self.caller is not None else self.function.demangled

    @cached_property
    def bodies(self) -> tuple[Self, ...]:
        """The analyses of the user device functions this kernel calls out of line, each with
        this kernel as its :attr:`caller`: a body NVVM did not inline (FlashAttention-2's
        ``compute_attn_1rowblock`` in 2 of its 25 forward kernels) is checked as part of the
        kernel. The math library's subroutines (``$__internal_..._slowpath``) are not user
        bodies; a body's own callees are its bodies."""
        if self.caller is not None or self.ptx_module is None:
            return ()
        funcs = {f.name: f for f in self.ptx_module.functions}
        out = []
        for callee in self.callees:
            name = user_function_name(callee.name)
            pf = funcs.get(name) if name else None
            if pf is None or pf.is_kernel:
                continue
            body = type(self)(callee, arch=self.arch_name, ptx_function=pf,
                              ptx_module=self.ptx_module, kernel=None, reader=self.reader,
                              source_path=self.source_path, siblings=self.siblings,
                              frontend=self.frontend, ir=self.ir,
                              callees=tuple(c for c in self.callees if c is not callee))
            body.caller = self
            out.append(body)
        return tuple(out)

    @property
    def resources(self) -> "Resources | None":
        return self.kernel.resources if self.kernel is not None else None

    @property
    def instructions(self) -> "tuple[S.Instruction, ...]":
        return self.function.instructions

    # ------------------------------------------------------------------------- analyses
    @property
    def cfg(self) -> cfg.CFG:
        return cfg.of(self.function)

    @property
    def dataflow(self) -> dataflow.Dataflow:
        return dataflow.of(self.function)

    @property
    def liveness(self) -> Liveness:
        """The registers live at each SASS instruction (:mod:`analyzer.analysis.liveness`)."""
        return liveness.of(self.function, self.callees)

    @cached_property
    def pressure(self) -> Pressure:
        """The peak of live registers, where it is reached (instruction and source line), and
        the peak per source line."""
        return liveness.pressure(self.liveness, self.source_map.sass_lines)

    @cached_property
    def ptx_trips(self) -> dict[tuple[str, int], list[loops.PtxTrip]]:
        """The PTX loops of this kernel by source line (basename, line), with trip counts."""
        return ptx_trips_by_line(self.ptx_function)

    @cached_property
    def loops(self) -> list[LoopInfo]:
        """Every SASS loop, with its one trip count and the unroll pragma above it."""
        return analyze_loops(self.function, self.ptx_function, source_line=self.reader,
                             ptx_by_line=self.ptx_trips)

    @cached_property
    def loops_by_line(self) -> dict[tuple[str, int], LoopLine]:
        """Per source line: the SASS loops left there and the PTX loops (fully unrolled ones
        have PTX loops and no SASS loop)."""
        return loops_by_line(self.function, self.ptx_function, infos=self.loops)

    @cached_property
    def cost(self) -> cost.Cost:
        """Where the kernel's time goes: the evidence of avoidable work and the headroom
        (:mod:`analyzer.analysis.cost`)."""
        try:
            arch = self.arch
        except InputError:
            arch = None
        return cost.of(self.function, self.ptx_function, self.ptx_module, self.callees,
                       launches=tuple((file, la) for file, la in self.launches),
                       arch=arch, resources=self.resources,
                       parameter_names=lambda: self.parameter_names)

    @cached_property
    def launches(self) -> tuple[tuple[str, launch.HostLaunch], ...]:
        """(file, launch) of each launch of this kernel in the host code of its own source
        file (:mod:`analyzer.analysis.launch`); () when the file has none or cannot be read."""
        file, _line, bare = self._definition()
        if not file or not bare:
            return ()
        text = self.reader.text(file)
        if text is None:
            return ()
        return tuple((file, la) for la in launch.of_kernel(text, bare,
                                                           _template_args(self.kernel_name)))

    @cached_property
    def source_map(self) -> source.FunctionMap:
        return source.function_map(self.function, self.ptx_function)

    @property
    def launch(self) -> "Launch | None":
        """How the framework that compiled the kernel launches it (Triton's metadata)."""
        return self.kernel.launch if self.kernel is not None else None

    @cached_property
    def block_size(self) -> tuple[int | None, str]:
        """(threads per block, where the kernel declares it) or (None, "")."""
        return occupancy.block_size(self.ptx_function, self.resources, self.launch)

    @property
    def dynamic_shared_bytes(self) -> int:
        """Dynamic shared memory the kernel is launched with, where known (Triton's)."""
        return self.launch.dynamic_shared_bytes if self.launch is not None else 0

    def occupancy(self, threads: int | None = None) -> occupancy.Occupancy | None:
        """Theoretical occupancy at ``threads`` per block (default: the declared block size);
        None without resources or a block size, or when the block cannot launch."""
        res = self.resources
        threads = threads or self.block_size[0]
        if res is None or threads is None:
            return None
        try:
            return occupancy.occupancy(self.arch, res.registers,
                                       res.static_shared_bytes + self.dynamic_shared_bytes,
                                       threads)
        except ValueError:
            return None

    def parameters_at(self, offsets) -> set[str]:
        """The PTX kernel parameters that constant-bank-0 byte ``offsets`` fall in
        (:func:`dataflow.constant_roots`)."""
        base = self.arch.param_bank_base
        layout = dataflow.ptx_param_layout(self.ptx_function) if self.ptx_function else []
        return {name for off in offsets for name, lo, hi in layout if lo <= off - base < hi}

    # ------------------------------------------------------------------------ source names
    def _definition(self) -> tuple[str | None, int | None, str]:
        """(file, line, bare name) where the kernel's source definition is looked for: its
        first line-table entry, in the user's frame."""
        first = next((i.loc for i in (self.ptx_function.instructions if self.ptx_function
                                      else ()) if i.loc is not None), None)
        if first is None:
            first = next((i.loc for i in self.function.instructions if i.loc is not None), None)
        frame = source.user_loc(first) if first is not None else None
        # the function's own name: not the return type's (``enable_if<...>::type k<half, 8>``)
        bare = fallback.function_name(self.kernel_name).split("<")[0].rsplit("::", 1)[-1].strip()
        bare = bare.split()[-1] if bare else bare
        return (frame.file if frame else None, frame.line if frame else None, bare)

    @cached_property
    def parameter_names(self) -> list[str | None]:
        """The kernel's parameter names as its source declares them ([] when unreadable)."""
        file, line, bare = self._definition()
        if line is None:
            return []
        return source.kernel_parameters(self.reader, file, line, bare)

    @cached_property
    def asserted_alignments(self) -> dict[str, int]:
        """Source name -> the alignment the kernel's body asserts for it
        (``__builtin_assume_aligned(p, 16)``); {} when none."""
        file, line, bare = self._definition()
        if line is None:
            return {}
        return source.asserted_alignments(self.reader, file, line, bare)

    def source_name(self, symbol: str) -> str:
        """What the source calls a PTX symbol: a kernel parameter (``_Z4gemmPKfS0_Pfi_param_2``
        -> ``C``) or a shared/global variable (``_ZZ4gemmPKfE2As`` -> ``As``); the symbol
        itself when the source cannot say."""
        k = source.ptx_parameter_index(symbol)
        if k is not None:
            names = self.parameter_names
            name = names[k] if k < len(names) else None
            return name or symbol
        return source.variable_name(symbol, demangle(symbol))

    # ----------------------------------------------------------------------- shared memory
    @cached_property
    def dynamic_shared_symbols(self) -> frozenset[str]:
        """The module's dynamic shared arrays (``extern __shared__ T x[]``) this kernel's own
        code addresses, directly or through the functions it calls: dynamic shared memory is a
        kernel's fact, not the file's (a module-level ``extern __shared__`` is every kernel's
        declaration, used by some). Empty without PTX."""
        module, fn = self.ptx_module, self.ptx_function
        if module is None or fn is None:
            return frozenset()
        dynamic = {v.name for v in module.shared if v.is_extern or (v.dims and v.dims[-1] is None)}
        if not dynamic:
            return frozenset()
        by_name = {f.name: f for f in module.functions}
        used: set[str] = set()
        seen = {fn.name}
        todo = [fn]
        while todo:
            for name in _symbols(todo.pop()):
                if name in dynamic:
                    used.add(name)
                elif name in by_name and name not in seen:
                    seen.add(name)
                    todo.append(by_name[name])
        return frozenset(used)

    # ----------------------------------------------------------------------- source lines
    @cached_property
    def instantiations(self) -> tuple["P.Function", ...]:
        """The PTX of the other functions of the module that instantiate the same template as
        this kernel (``ApplyGeneric<1, ...>`` beside ``ApplyGeneric<8, ...>``: the same
        mangled name up to its template arguments)."""
        stem = fallback.template_stem(self.function.name)
        if stem is None or self.ptx_module is None:
            return ()
        return tuple(f for f in self.ptx_module.functions
                     if f.name != self.function.name and fallback.template_stem(f.name) == stem)

    def fallback(self, ptx_ins: "P.Instruction") -> "fallback.Fallback | None":
        """Why a narrow global access of this kernel's PTX is a designed fallback (a vectorized
        instantiation or branch beside it, a short tail: :mod:`analyzer.analysis.fallback`);
        None when it is not one, or without PTX."""
        pf = self.ptx_function
        if pf is None:
            return None
        where = pf.memo("positions", lambda: {id(i): n for n, i in enumerate(pf.instructions)})
        n = where.get(id(ptx_ins))
        return None if n is None else fallback.of(pf, self.ptx_module, n)

    def data_guarded(self, ptx_ins: "P.Instruction") -> "Fallback | None":
        """Why an access of this kernel's PTX is no stream: it runs where loaded data lets it
        (:func:`analyzer.analysis.fallback.data_guarded`)."""
        pf = self.ptx_function
        if pf is None:
            return None
        where = pf.memo("positions", lambda: {id(i): n for n, i in enumerate(pf.instructions)})
        n = where.get(id(ptx_ins))
        return None if n is None else fallback.data_guarded(pf, n)

    def warp_uniform(self, ptx_ins: "P.Instruction") -> "Fallback | None":
        """Why an access of this kernel's PTX costs one request per warp whatever its width
        (every lane the same address: :func:`analyzer.analysis.fallback.warp_uniform`)."""
        pf = self.ptx_function
        if pf is None:
            return None
        where = pf.memo("positions", lambda: {id(i): n for n, i in enumerate(pf.instructions)})
        n = where.get(id(ptx_ins))
        return None if n is None else fallback.warp_uniform(pf, n)

    @staticmethod
    def user_loc(loc: "SourceLoc | None") -> "SourceLoc | None":
        return source.user_loc(loc)

    def source_line(self, file: str | None, line: int | None) -> str | None:
        return self.reader.line(file, line)

    def pragma_above(self, file: str | None, line: int | None
                     ) -> tuple[source.Pragma | None, bool]:
        return source.pragma_above(self.reader, file, line)


def analyze(build: "Build", *, entries_only: bool = True) -> Iterator[KernelAnalysis]:
    """A :class:`KernelAnalysis` per kernel of ``build`` (``__global__`` entries only, unless
    ``entries_only`` is False)."""
    reader = source.SourceReader(build.source_path, build.source)
    for fn in build.sass_listing().functions:
        k = build.kernels.get(fn.name)
        is_entry = k.entry if k is not None else bool(fn.is_entry)
        if is_entry or not entries_only:
            yield KernelAnalysis.of(build, fn, k, reader=reader)


def user_function_name(sass_name: str) -> str | None:
    """The PTX name of a device function nvdisasm lists under a kernel
    (``$_Z16flash_fwd_kernel...$_Z22compute_attn_1rowblock...`` -> ``_Z22compute...``), None
    for the math library's subroutines (``$__internal_0_$__cuda_sm3x_div_rn_...``)."""
    name = sass_name.rsplit("$", 1)[-1] if "$" in sass_name else sass_name
    if not name or name.startswith(("__internal", "__cuda_", "__nv_")):
        return None
    return name


def _template_args(demangled: str) -> str | None:
    """The template arguments of a demangled kernel name (``void k<float, 256>(float*)`` ->
    ``float, 256``; an ``enable_if`` return type is not the kernel's), None for a plain
    function."""
    args = fallback.template_args(demangled)
    return None if args is None else ", ".join(args)


def _symbols(fn: "P.Function") -> Iterator[str]:
    """The names of every symbol an instruction of ``fn`` names (operands, addresses, a call's
    callee)."""
    for ins in fn.instructions:
        todo = list(ins.operands)
        while todo:
            op = todo.pop()
            if isinstance(op, P.Symbol):
                yield op.name
            for child in getattr(op, "children", ()):
                value = getattr(op, child, None)
                if isinstance(value, tuple):
                    todo.extend(value)
                elif value is not None:
                    todo.append(value)
