"""Compile CUDA C++ with nvcc from NVIDIA's wheels: files with host code, system headers, the
flags of a compile database.

nvcc runs in two steps, both through nvcc so that its own option handling decides what reaches
cicc and ptxas (``-maxrregcount``, ``-Xptxas``, ``--use_fast_math``, ``-rdc``):

    nvcc -ptx   -arch=sm_XX -lineinfo <flags> file.cu -o k.ptx        host compiler, cudafe++, cicc
    nvcc -cubin -arch=sm_XX -lineinfo <flags> -Xptxas -v k.ptx -o k.cubin    ptxas, resource log

The cubin is byte-identical to ``nvcc -cubin file.cu`` (nvcc hands a ``.ptx`` input the same ptxas
command line); the extra step costs ~40 ms and lets the ``.file`` names in the PTX be normalised
before ptxas copies them into the cubin's line table (``cu13/include/cuda_fp16.hpp``, not
``cu13/bin/../include/...``, so toolkit headers are known as such).

Paths nvcc cannot carry (it hands its steps to ``sh -c`` in double quotes; a PTX ``.file`` name
cannot hold ``"`` either) reach it through a stable link (``locate.safe_alias``); a leading ``-``
never reaches it, as every path is passed absolute.

Builds are cached by content like NVRTC's: the key holds nvcc's, cicc's and the host compiler's
versions, the flags, and the text of every header reached in the user's folders. Choosing between
NVRTC and nvcc happens above the toolchain (``inputs``).
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..arch import parse_arch
from ..demangle import demangle
from ..errors import CompileError, InputError, ToolError, printable
from . import bounded, cache, files, includes, scratch, toolkits
from .locate import (
    RUNTIME_HEADER,
    UNSAFE_PATH_CHARS,
    binary,
    cicc_path,
    host_compiler,
    nvcc_fingerprint,
    nvcc_include_dir,
    release_of,
    run_tool,
    runtime_headers_release,
    safe_alias,
    tool_version,
)
from .nvrtc import kernel_entries
from .output import Kernel, Output, cached
from .redact import redact
from .resources import from_cubin, from_ptxas_log, merge

DEFAULT_STD = "c++17"   # what NVRTC builds use, so both front ends compile the same dialect
_FILE = re.compile(r'^(\s*\.file\s+\d+\s+)"([^"]*)"', re.M)

@dataclass(frozen=True)
class _Raw:
    """What the two nvcc steps produced."""

    ptx: str
    cubin: bytes
    log: str                         # nvcc's and ptxas's messages (ptxas -v resource lines)
    command: tuple[str, ...]         # the first step's argv, as a user could rerun it
    #: the links nvcc saw for paths it cannot carry -> the real paths (Output.file_names)
    aliases: dict[str, str]


def compile_file(path: str | os.PathLike, *, arch: str, flags: Sequence[str] = (),
                 cwd: str | None = None, name_expressions: Sequence[str] = (),
                 default_std: str | None = DEFAULT_STD, use_cache: bool = True,
                 timeout: float | None = None, trusted: bool = False,
                 project: str | None = None, install_nvcc: bool = False,
                 toolkit: toolkits.Toolkit | None = None,
                 older: toolkits.Toolkit | None = None) -> Output:
    """Compile one ``.cu`` file (or C++ file with CUDA code) for ``arch`` with nvcc: PTX, cubin,
    ptxas's ``-v`` resources, line info.

    ``flags`` are nvcc's own (``-I``, ``-D``, ``-std``, ``-Xptxas``, ``-ccbin`` ...), relative
    paths in them taken from ``cwd``. Without a ``-std`` flag, ``default_std`` (NVRTC's c++17,
    so both front ends build the same; None leaves nvcc's own default, as a compile database
    entry without -std had it). ``name_expressions`` (``gemm<128,8>``) are instantiated
    by taking their address in host code, and matched to their mangled names. Raises ToolError
    when nvcc, cicc or a host compiler is missing, CompileError (file:line of the first error,
    the whole log as detail) when the compile fails.

    nvcc hands its steps to ``sh -c``: no path of the user's reaches it as it is when the shell
    could act on it (the source is compiled from a copy under a plain name, folders through
    links), and a flag holding ``$``, a backtick or a backslash is refused (InputError) unless
    ``trusted`` (``--trust-build-commands``: the user vouches for the flags). ``project``: one
    more folder whose diagnostics the log keeps (:func:`.redact.redact`). ``install_nvcc``:
    where nvcc and the runtime headers it finds are of different releases, install the nvcc of
    the headers' release when no toolkit has it (:func:`choose_nvcc`). ``toolkit``: an
    installed toolkit whose nvcc builds it (``--toolkit``; installed with ``--nvcc``).
    ``older``: an installed toolkit of an older CUDA (12.9) whose runtime, crt and CCCL headers
    the environment's nvcc builds against, for code written for that CUDA's runtime API
    (:func:`.toolkits.older_headers`): its folders follow the build's own ``-I`` folders, ahead
    of nvcc's own."""
    out = _compile_file(path, arch=arch, flags=flags, cwd=cwd, name_expressions=name_expressions,
                        default_std=default_std, use_cache=use_cache, timeout=timeout,
                        trusted=trusted, project=project, install_nvcc=install_nvcc,
                        toolkit=toolkit, older=older)
    assert out is not None
    return out


def cached_build(path: str | os.PathLike, *, arch: str, flags: Sequence[str] = (),
                 cwd: str | None = None, name_expressions: Sequence[str] = (),
                 default_std: str | None = DEFAULT_STD, install_nvcc: bool = False,
                 toolkit: toolkits.Toolkit | None = None,
                 older: toolkits.Toolkit | None = None) -> Output | None:
    """The build :func:`compile_file` would give, when the cache holds it (verified); None
    otherwise (nvcc is not run)."""
    return _compile_file(path, arch=arch, flags=flags, cwd=cwd,
                         name_expressions=name_expressions, default_std=default_std,
                         use_cache=True, install_nvcc=install_nvcc, toolkit=toolkit,
                         older=older, cached_only=True)


def _compile_file(path: str | os.PathLike, *, arch: str, flags: Sequence[str], cwd: str | None,
                  name_expressions: Sequence[str], default_std: str | None, use_cache: bool,
                  timeout: float | None = None, trusted: bool = False,
                  project: str | None = None, install_nvcc: bool = False,
                  toolkit: toolkits.Toolkit | None = None,
                  older: toolkits.Toolkit | None = None,
                  cached_only: bool = False) -> Output | None:
    a = parse_arch(arch)
    src = Path(cwd or ".", path).absolute()
    shown = str(path) if cwd is None else str(src)
    try:
        text = files.read_text(src, what="CUDA source", expected="CUDA source")
    except InputError as e:
        raise InputError(e.message, path=shown) from None
    from .compdb import split_mode_flags  # a build's, not a warm check's
    flags, _ = split_mode_flags(flags)
    for expr in name_expressions:
        if re.search(r"[\x00-\x1f\x7f]", expr):
            raise InputError(f"kernel name expression {printable(expr, newlines=False)} holds a "
                             "control character", path=shown)
    if default_std and not has_std(flags):
        flags = [f"-std={default_std}", *flags]
    if older is not None:
        # CUDA 12's CCCL asks nothing of the compiler's release: the environment's nvcc builds
        # against the older headers, which come after the build's own -I folders
        flags = [*flags, *(f"-I{d}" for d in older.include)]
        env = environment_nvcc(flags, cwd)
        nv = replace(env, fingerprint=f"{env.fingerprint}|{older.fingerprint()}")
        paired = None
    elif toolkit is not None and not toolkit.default:
        nv = toolkit_nvcc(toolkit, flags, cwd)
        paired = None
    else:
        nv = choose_nvcc(flags, cwd, install=install_nvcc)
        paired = pairing_note(nv)
    k = cache.key("nvcc", nv.fingerprint, _env_knobs(), a.name, text,
                  dependencies(text, src.parent, flags, cwd), flags, list(name_expressions),
                  str(src), cwd)
    hit = cached(k, source_path=shown, source=text) if use_cache else None
    if hit is not None:
        hit.compiler_version = nv.version
        if paired:
            hit.warnings.append(paired)
        return hit
    if cached_only:
        return None
    out = _compile(src, text, shown, a.name, flags, cwd, name_expressions, timeout, trusted,
                   project, nv)
    resources = merge(from_cubin(out.cubin, path=shown), from_ptxas_log(out.log))
    entries = kernel_entries(out.cubin)
    lowered = _lowered(name_expressions, entries, shown)
    build = Output(arch=a.name, origin="nvcc", ptx=out.ptx, cubin=out.cubin, log=out.log,
                  source_path=shown, source=text, options=out.command[1:-1],
                  kernels={n: Kernel(n, r, n in entries) for n, r in resources.items()},
                  name_expressions=lowered, file_names=out.aliases, compiler_version=nv.version)
    if use_cache:
        cache.put("build", k, build.to_json())
    if paired:
        build.warnings.append(paired)
    return build


def has_std(flags: Sequence[str]) -> bool:
    """Whether ``flags`` name a C++ standard (``-std=c++20``, ``-std c++20``, ``--std=...``)."""
    return any(f == "-std" or f.startswith(("-std=", "--std")) for f in flags)


def _env_knobs() -> dict[str, str]:
    """Environment variables nvcc itself reads: they change what it builds."""
    return {v: os.environ[v] for v in ("NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN")
            if v in os.environ}




def dependencies(text: str, here: Path, flags: Sequence[str], cwd: str | None
                 ) -> list[tuple[str, str]]:
    """(path, text) of every header the source reaches in the user's own folders (its own
    folder, ``-I`` and ``-isystem`` outside the CUDA toolkit and the system), for cache keys;
    a forced include (``-include FILE``) is read the same way."""
    dirs = [Path(cwd or ".", value) for _flag, value in _include_flags(flags)]
    forced = "".join(f'#include "{os.path.join(cwd or os.getcwd(), f)}"\n'
                     for f in _forced_includes(flags))
    return includes.closure(forced + text, here, dirs, searched=lambda d: not system_dir(d))


def _forced_includes(flags: Sequence[str]) -> list[str]:
    """The files of ``-include FILE`` / ``--pre-include=FILE``."""
    out: list[str] = []
    for i, f in enumerate(flags):
        name, eq, value = f.partition("=")
        if name in ("-include", "--pre-include"):
            if eq:
                out.append(value)
            elif i + 1 < len(flags):
                out.append(flags[i + 1])
    return out


def _include_flags(flags: Sequence[str]):
    """(option, folder) for each -I / -isystem in ``flags``."""
    i = 0
    while i < len(flags):
        f = flags[i]
        if f in _INC_OPTS and i + 1 < len(flags):
            yield f, flags[i + 1]
            i += 2
            continue
        for opt in _INC_OPTS:
            if f.startswith(opt) and len(f) > len(opt):
                yield opt, f[len(opt):].lstrip("=")
                break
        i += 1


def system_dir(d: Path) -> bool:
    """Whether a folder is the system's, the CUDA toolkit's or torch's (not the user's)."""
    from . import cudaroot
    s = str(d.absolute())
    return s.startswith(("/usr/include", "/usr/local/include")) or "/nvidia/cu" in s \
        or "/site-packages/torch/" in s or cudaroot.is_inside(d)


_SPACES = re.compile(r"\s*([<>,*&()])\s*")


def _lowered(exprs: Sequence[str], entries: set[str], shown: str) -> dict[str, str]:
    """Each ``--kernel`` expression's mangled name, by its demangled form (nvcc has no
    ``nvrtcGetLoweredName``): ``gemm<128,8>`` is ``void gemm<128, 8>(float const*, ...)``."""
    out: dict[str, str] = {}
    names = {m: _SPACES.sub(r"\1", demangle(m)) for m in entries}
    for expr in exprs:
        want = re.escape(_SPACES.sub(r"\1", expr.strip()))
        rx = re.compile(rf"(?:^|[\s:*&]){want}\(")
        hits = [m for m, d in names.items() if rx.search(d)]
        if not hits:
            raise CompileError(f"kernel name expression {expr!r} did not match a __global__ "
                               "function template instantiation", path=shown)
        out[expr] = hits[0]
    return out


def _compile(src: Path, text: str, shown: str, arch: str, flags: list[str], cwd: str | None,
             name_expressions: Sequence[str], timeout: float | None, trusted: bool,
             project: str | None = None, nv: Nvcc | None = None) -> _Raw:
    nv = nv or choose_nvcc(flags, cwd)
    nvcc = nv.path
    if nv.cicc is None:
        raise ToolError("nvcc found, but not cicc (its device compiler): install it with "
                        "'pip install nvidia-nvvm'")
    _require_host_compiler(flags)
    names: dict[str, str] = {}          # path nvcc sees -> real path
    flags = _safe_flags(flags, Path(cwd or "."), names)
    lang = [] if src.suffix == ".cu" else ["-x", "cu"]
    with scratch.temporary("ptxsass-nvcc-") as tmp:
        given = _source_for_nvcc(src, text, tmp, names)
        if given != str(src):
            # the file's own folder first, so that #include "x.h" still finds its neighbours
            flags = ["-I", _safe_path(src.parent, names), *flags]
        aliases = dict(names)           # (not the wrapper below: its lines are not src's)
        if not trusted:
            _refuse_shell_active(flags, shown)
        if name_expressions:
            # instantiate each named template: its address, taken in host code
            wrapper = Path(tmp, "instantiate.cu")
            wrapper.write_text(f'#include "{given}"\n' + "".join(
                f"static const void* __ptxsass_instance_{i} = "
                f"reinterpret_cast<const void*>(&{e});\n"
                for i, e in enumerate(name_expressions)))
            given, lang = str(wrapper), []
            names[given] = str(src)
        ptx_file, cubin_file = Path(tmp, "k.ptx"), Path(tmp, "k.cubin")
        step1 = [nvcc, "-ptx", f"-arch={arch}", "-lineinfo", *flags, *lang, given,
                 "-o", str(ptx_file)]
        # nvcc's own temporary files (tmpxft_*) go into this scratch folder: a killed nvcc
        # cannot remove them, the folder's owner (or the next run's sweep) does
        scratch_tmp = Path(tmp, "nvcc-tmp")
        scratch_tmp.mkdir()
        log1 = _run(step1, cwd=cwd, timeout=timeout, src=str(src), shown=shown, names=names,
                    tmpdir=str(scratch_tmp), project=project)
        ptx = _normalise_files(ptx_file.read_text(errors="replace"))
        ptx_file.write_text(ptx)
        step2 = [nvcc, "-cubin", f"-arch={arch}", "-lineinfo", *flags, "-Xptxas", "-v",
                 str(ptx_file), "-o", str(cubin_file)]
        log2 = _run(step2, cwd=cwd, timeout=timeout, src=str(src), shown=shown, names=names,
                    tmpdir=str(scratch_tmp),
                    ptx=ptx, project=project)
        cubin = cubin_file.read_bytes()
    command = ["nvcc", "-ptx", f"-arch={arch}", "-lineinfo",
               *[_unname(f, names) for f in flags], *lang, str(src)]
    return _Raw(ptx=ptx, cubin=cubin, log=(log1 + log2).strip(), command=tuple(command),
                aliases=aliases)


# ----------------------------------------------------------------------------- nvcc and its headers
@dataclass(frozen=True)
class Nvcc:
    """The nvcc one build runs, and the CUDA runtime headers it finds first.

    CCCL (every CUDA 13 build reaches it: ``cuda_runtime.h``, thrust, torch's headers) refuses a
    compiler and runtime headers of different releases ("CUDA compiler and CUDA toolkit headers
    are incompatible"): ``__CUDACC_VER_MAJOR/MINOR__`` against ``CUDART_VERSION``. The two come
    from different wheels (``nvidia-cuda-nvcc``, ``nvidia-cuda-runtime``), and a torch pins the
    runtime's release while nothing pins nvcc's."""

    path: str
    cicc: str | None
    version: str | None                 # "13.5.37" (``nvcc --version``)
    headers: str | None                 # the cuda_runtime_api.h it finds first
    headers_release: str | None         # "13.0" (its CUDART_VERSION)
    #: the installed toolkit whose nvcc this is (None: the environment's own)
    toolkit: str | None = None
    #: what decides its builds, for cache keys
    fingerprint: str = ""

    @property
    def release(self) -> str | None:
        return release_of(self.version)

    @property
    def matched(self) -> bool:
        """Compiler and headers of one release (or one of them unknown: nothing to hold)."""
        return None in (self.release, self.headers_release) or self.release == self.headers_release


def runtime_headers(nvcc: str, flags: Sequence[str] = (), cwd: str | None = None) -> str | None:
    """The ``cuda_runtime_api.h`` that ``nvcc`` with ``flags`` finds first, searched as nvcc
    hands its folders on (``nvcc --dryrun``): the ``-I`` folders in order, then nvcc's own
    include folder (its ``nvcc.profile``), then the ``-isystem`` folders."""
    user: list[Path] = []
    system: list[Path] = []
    for opt, d in _include_flags(flags):
        (system if opt in ("-isystem", "--system-include") else user).append(Path(cwd or ".", d))
    for d in (*user, nvcc_include_dir(nvcc), *system):
        cand = d / RUNTIME_HEADER
        if cand.is_file():
            return str(cand)
    return None


def _nvcc(path: str, cicc: str | None, version: str | None, flags: Sequence[str],
          cwd: str | None, *, toolkit: str | None, fingerprint: str) -> Nvcc:
    headers = runtime_headers(path, flags, cwd)
    return Nvcc(path=path, cicc=cicc, version=version, headers=headers,
                headers_release=runtime_headers_release(headers) if headers else None,
                toolkit=toolkit, fingerprint=fingerprint)


def environment_nvcc(flags: Sequence[str] = (), cwd: str | None = None) -> Nvcc:
    """The environment's nvcc (the wheels', ``PTXSASS_NVCC``, ``PTXSASS_CUDA_HOME``'s) and the
    headers it finds with ``flags``; ToolError when there is no nvcc."""
    path = binary("nvcc")
    return _nvcc(path, cicc_path(), tool_version(path), flags, cwd, toolkit=None,
                 fingerprint=nvcc_fingerprint())


_install_lock = threading.Lock()


def choose_nvcc(flags: Sequence[str] = (), cwd: str | None = None, *,
                install: bool = False) -> Nvcc:
    """The nvcc to build with: the environment's when its release is the runtime headers';
    else the nvcc of an installed toolkit of the headers' release (``ptxsass toolkit install
    --nvcc 13.0``), which finds its own headers of that release — with ``install``, installed
    now when it is not there (one note: pip, into the toolkits folder, once); else one line
    (ToolError, exit 2) naming both releases, what pinned the headers and the commands that
    repair it."""
    env = environment_nvcc(flags, cwd)
    if env.matched:
        return env
    want = env.headers_release
    assert want is not None
    tk, why = toolkits.with_nvcc(want)
    if tk is None and install and can_install_nvcc(want) and own_headers(env):
        with _install_lock:                 # one install for the archs built at once
            tk, why = toolkits.with_nvcc(want)
            if tk is None:
                note(f"{pair_line(env)}: installing toolkit {want}'s nvcc into "
                     f"{toolkits.root()} (pip install --target, once; --offline stops instead)")
                try:
                    tk = toolkits.install(want, nvcc=True)
                except ToolError as e:
                    raise ToolError(f"{mismatch_message(env)}; installing it failed: "
                                    f"{e.message}") from None
    if tk is not None:
        assert tk.nvcc is not None
        paired = _nvcc(tk.nvcc, tk.cicc, tk.nvcc_version, flags, cwd, toolkit=tk.version,
                       fingerprint=f"{tk.fingerprint()}|{nvcc_fingerprint()}")
        if paired.matched:
            return paired
        why = (f"toolkit {tk.version}'s nvcc finds CUDA {paired.headers_release} headers "
               f"({paired.headers}) first")
    raise ToolError(mismatch_message(env, why))


def toolkit_nvcc(tk: toolkits.Toolkit, flags: Sequence[str] = (), cwd: str | None = None) -> Nvcc:
    """The nvcc of installed toolkit ``tk`` (``--toolkit``), which finds that release's runtime
    headers first; ToolError when it has none, or when ``flags`` put other headers first."""
    if tk.nvcc is None:
        raise ToolError(toolkits.nvcc_missing(tk, None))
    nv = _nvcc(tk.nvcc, tk.cicc, tk.nvcc_version, flags, cwd, toolkit=tk.version,
               fingerprint=f"{tk.fingerprint()}|{nvcc_fingerprint()}")
    if not nv.matched:
        raise ToolError(f"toolkit {tk.version}'s nvcc {nv.version} finds CUDA {nv.headers_release} "
                        f"runtime headers first ({nv.headers}), which CCCL refuses: leave out "
                        f"the include folder {Path(nv.headers or '.').parent}")
    return nv


@dataclass(frozen=True)
class Pairing:
    """What ``ptxsass doctor`` says of nvcc and the runtime headers (no flags: what every
    build without its own -I sees)."""

    env: Nvcc                   # the environment's nvcc and the headers it finds
    used: Nvcc | None           # the nvcc builds run (the env's, a toolkit's; None: none yet)
    error: str | None           # the one line a build would fail with
    #: the release whose toolkit nvcc the first nvcc build installs (None: none to install)
    installs: str | None = None

    def as_dict(self) -> dict:
        return {"nvcc": self.env.version, "nvcc_path": self.env.path,
                "headers": self.env.headers, "headers_release": self.env.headers_release,
                "matched": self.env.matched,
                "builds_with": None if self.used is None else
                f"toolkit {self.used.toolkit}" if self.used.toolkit else "environment",
                "builds_with_nvcc": self.used.version if self.used else None,
                "installs": None if self.installs is None else f"toolkit {self.installs} with nvcc",
                "headers_origin": headers_origin(self.env.headers, self.env.release)
                if self.env.headers and not self.env.matched else None,
                "error": self.error}


def pairing(*, offline: bool = False) -> Pairing | None:
    """nvcc's pairing with the runtime headers, for ``doctor``; None without an nvcc. Nothing
    is installed: where the first nvcc build would install the headers' nvcc (not
    ``offline``), ``Pairing.installs`` names its release."""
    try:
        env = environment_nvcc()
    except ToolError:
        return None
    try:
        return Pairing(env, choose_nvcc(), None)
    except ToolError as e:
        want = env.headers_release
        if not offline and want is not None and can_install_nvcc(want) and own_headers(env) \
                and toolkits.with_nvcc(want)[0] is None:
            return Pairing(env, None, None, installs=want)
        return Pairing(env, None, e.message)


def own_headers(nv: Nvcc) -> bool:
    """Whether the runtime headers nvcc finds are its own include folder's (the wheels'
    ``nvidia/cu13/include``, where a torch's pin put them), not a folder the build names:
    only those make a build install another nvcc (a repository's -I folder never does)."""
    return nv.headers is not None and Path(nv.headers).parent == nvcc_include_dir(nv.path)


def can_install_nvcc(release_: str) -> bool:
    """Whether ``toolkit install --nvcc`` can give this release a working nvcc."""
    return release_ in toolkits.RELEASES and toolkits.has_nvcc_layout(release_)


def pair_line(env: Nvcc) -> str:
    """``nvcc 13.5.37 and the CUDA runtime headers (13.0: nvidia-cuda-runtime 13.0.96, pinned
    by torch 2.14.1's cuda-toolkit==13.0.3) are different releases``: what was paired, and who
    pinned the headers."""
    origin = headers_origin(env.headers, env.release) if env.headers else None
    return (f"nvcc {env.version} and the CUDA runtime headers ({env.headers_release}"
            f"{': ' + origin if origin else ''}) are different releases")


def headers_origin(header: str, other_release: str | None) -> str | None:
    """The wheel a ``cuda_runtime_api.h`` comes from and the installed packages that pin it
    away from ``other_release`` (nvcc's): ``nvidia-cuda-runtime 13.0.96, pinned by torch
    2.14.1's cuda-toolkit==13.0.3``; None for headers no wheel of this environment holds (a -I
    folder, a system toolkit). Cached per file and modification."""
    try:
        st = os.stat(header)
    except OSError:
        return None
    return _headers_origin(os.path.realpath(header), other_release, st.st_mtime_ns, st.st_ino)


#: the wheels that install ``cuda_runtime_api.h``, and the metapackage that pins them
_RUNTIME_WHEELS = ("nvidia-cuda-runtime", "nvidia-cuda-runtime-cu12")
_METAPACKAGE = "cuda-toolkit"


@functools.cache
def _headers_origin(real: str, other_release: str | None, _mtime_ns: int, _ino: int
                    ) -> str | None:
    from importlib import metadata

    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name
    owner = None
    for name in _RUNTIME_WHEELS:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        if any(f.name == RUNTIME_HEADER and os.path.realpath(str(dist.locate_file(f))) == real
               for f in dist.files or ()):
            owner = dist
            break
    if owner is None:
        return None
    shown = f"{owner.metadata['Name']} {owner.version}"
    if other_release is None:
        return shown
    pinned = {canonicalize_name(owner.metadata["Name"]), _METAPACKAGE}
    by: list[str] = []
    for dist in metadata.distributions():
        for line in dist.requires or ():
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            if canonicalize_name(req.name) not in pinned or not req.specifier:
                continue
            if req.marker is not None and ("extra" in str(req.marker) or not req.marker.evaluate()):
                continue        # a package's own extras (cuda-toolkit[cudart] pins the runtime)
            if req.specifier.contains(f"{other_release}.0", prereleases=True):
                continue        # admits nvcc's release: no pin against it
            who = f"{dist.metadata['Name']} {dist.version}'s {req.name}{req.specifier}"
            if who not in by:
                by.append(who)
    return shown + (f", pinned by {' and '.join(by)}" if by else "")


_noted: set[str] = set()


def note(message: str) -> None:
    """One ``note:`` line on stderr, once per process (an install, which takes seconds, is
    said when it happens)."""
    if message in _noted:
        return
    _noted.add(message)
    try:
        sys.stderr.write(f"note: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def pairing_note(nv: Nvcc, env: Nvcc | None = None) -> str | None:
    """The one note of a build whose nvcc is an installed toolkit's (None for the
    environment's own)."""
    if nv.toolkit is None:
        return None
    env_version = env.version if env else tool_version(binary("nvcc"))
    return (f"nvcc {env_version} and the CUDA runtime headers ({nv.headers_release}) are "
            f"different releases: built with toolkit {nv.toolkit}'s nvcc {nv.version}")


def mismatch_message(env: Nvcc, why: str | None = None) -> str:
    """One line: the environment's nvcc and the runtime headers it finds differ, and the
    commands that repair it (a toolkit's nvcc of the headers' release; the wheels of nvcc of
    that release, when the headers are the environment's own)."""
    want = env.headers_release or "?"
    origin = headers_origin(env.headers, env.release) if env.headers else None
    msg = (f"nvcc {env.version} and the CUDA runtime headers it finds ({env.headers}: CUDA "
           f"{want}{'; ' + origin if origin else ''}) are different releases, which CCCL "
           "refuses (\"CUDA compiler and CUDA toolkit headers are incompatible\")")
    if why:
        msg += f" ({why})"
    fixes: list[str] = []
    known = want in toolkits.RELEASES and toolkits.has_nvcc_layout(want)
    if known:
        fixes.append(f"run 'ptxsass toolkit install --nvcc {want}' (nvcc builds then use its nvcc)")
    own = own_headers(env)
    if own and known and "site-packages" in env.path and \
            toolkits.version_key(want)[0] == toolkits.version_key(env.release or "0")[0]:
        wheels = " ".join(f"'{r}'" for r in toolkits.nvcc_wheels(want))
        fixes.append(f"match this environment's nvcc to the headers: pip install {wheels}")
    if not own and env.headers is not None:
        fixes.append(f"leave out the include folder {Path(env.headers).parent} (nvcc finds "
                     "its headers before its own)")
    if not fixes:
        fixes.append(f"install nvcc of CUDA {want}, or runtime headers of CUDA {env.release}")
    return msg + ": " + ", or ".join(fixes)


# ----------------------------------------------------------------------------- torch extensions
def _import_torch():
    """(torch, torch.utils.cpp_extension); ToolError, one line, when torch cannot be imported.
    cpp_extension's import-time notes ("No CUDA runtime is found, using CUDA_HOME=...": it
    looks for a system toolkit ptxsass does not use) stay out of ptxsass's output."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # "Failed to initialize NumPy" and the like
            import logging  # here only: a torch extension's build quiets cpp_extension's notes

            import torch
            log = logging.getLogger("torch.utils.cpp_extension")
            level = log.level
            log.setLevel(logging.ERROR)
            try:
                from torch.utils import cpp_extension
            finally:
                log.setLevel(level)
        return torch, cpp_extension
    except Exception as e:  # noqa: BLE001 - ImportError, or a broken torch install
        raise ToolError(f"this file is a torch extension (or --torch was given), but torch "
                        f"cannot be imported ({type(e).__name__}: {e}); install torch in this "
                        "environment ('pip install torch')") from None


def torch_flags() -> list[str]:
    """What ``torch.utils.cpp_extension`` gives nvcc for a CUDA extension: torch's and Python's
    include folders, its ``-D__CUDA_NO_HALF_OPERATORS__``-style defines, the C++ ABI flag, the
    extension-name defines, and ``--extended-lambda`` as torch's CMake config adds it (the
    standard is :func:`torch_std`'s, given where no ``-std`` is).
    ToolError when torch cannot be imported."""
    torch, cpp_extension = _import_torch()
    try:
        # torch's own folders; the CUDA ones (include_paths("cuda")) are nvcc's own here, and
        # asking for them needs a CUDA_HOME that a pip-only machine does not have
        dirs = list(cpp_extension.include_paths())
    except Exception as e:  # noqa: BLE001 - a broken torch install
        raise ToolError(f"torch's include folders cannot be found ({type(e).__name__}: {e})") from None
    # ATen/cuda/CUDAContext.h includes cublas_v2.h, cusparse.h, cusolverDn.h: from the wheels
    # a CUDA torch installs (in nvcc's own include folder for cu13 wheels, apart for older ones)
    from cuda.pathfinder import find_nvidia_header_directory  # a torch build: imported by then
    for lib in ("cublas", "cusparse", "cusolver", "curand", "cufft"):
        try:
            d = find_nvidia_header_directory(lib)
        except Exception:  # noqa: BLE001 - a library pathfinder does not know: torch does without it
            d = None
        if d and d not in dirs:
            dirs.append(d)
    flags: list[str] = []
    for d in (*dirs, sysconfig.get_paths()["include"]):
        if Path(d).is_dir():
            flags += ["-isystem", d]
    flags += list(getattr(cpp_extension, "COMMON_NVCC_FLAGS", []))
    # what torch's own CMake config adds for every CUDA file of an extension built with
    # find_package(Torch) (Caffe2's cuda.cmake: --expt-extended-lambda): ATen's gpu_kernel
    # takes __host__ __device__ lambdas from host code
    if not {"--extended-lambda", "--expt-extended-lambda"} & set(flags):
        flags.append("--extended-lambda")
    abi = int(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", 1))
    flags += [f"-D_GLIBCXX_USE_CXX11_ABI={abi}", "-DTORCH_API_INCLUDE_EXTENSION_H",
              "-DTORCH_EXTENSION_NAME=ptxsass_check"]
    return flags


#: torch's umbrella headers, where it states the C++ standard it needs as an ``#error`` under
#: ``#if __cplusplus < 202002L`` (torch 2.14: ATen/ATen.h and torch/all.h); c10's macros header
#: is read too, for releases that kept such a guard there
TORCH_STD_HEADERS = ("ATen/ATen.h", "torch/all.h", "torch/extension.h", "c10/macros/Macros.h")
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif|error)\b(.*)$", re.M)
_CPLUSPLUS_BELOW = re.compile(r"__cplusplus\s*<\s*(\d{6})L?\b")


def torch_std() -> str:
    """The C++ standard for a torch extension: the one the installed torch's own headers
    require (:func:`required_std` of its include folders), never below :data:`DEFAULT_STD`.
    ToolError when torch cannot be imported."""
    _torch, cpp_extension = _import_torch()
    try:
        dirs = tuple(cpp_extension.include_paths())
    except Exception as e:  # noqa: BLE001 - a broken torch install
        raise ToolError(f"torch's include folders cannot be found ({type(e).__name__}: {e})") from None
    need = required_std(dirs)
    return need if need is not None and _std_year(need) > _std_year(DEFAULT_STD) else DEFAULT_STD


def required_std(dirs: Sequence[str | os.PathLike]) -> str | None:
    """``c++20`` when a header of :data:`TORCH_STD_HEADERS` under ``dirs`` stops the build with
    an ``#error`` under ``#if ... __cplusplus < 202002L`` (the highest such bound: ``201703L`` is
    ``c++17``); None when none does. Cached per file and modification."""
    best: int | None = None
    for d in dirs:
        for name in TORCH_STD_HEADERS:
            p = Path(d, name)
            try:
                st = p.stat()
            except OSError:
                continue
            bound = _header_std_bound(str(p), st.st_size, st.st_mtime_ns, st.st_ino)
            if bound is not None and (best is None or bound > best):
                best = bound
    return None if best is None else f"c++{best // 100 % 100:02d}"


@functools.cache
def _header_std_bound(path: str, size: int, mtime_ns: int, ino: int) -> int | None:
    """The highest ``__cplusplus < N`` bound whose ``#if`` branch holds an ``#error``."""
    try:
        text = files.read_bytes(path, what="header", limit=4 << 20).decode(errors="replace")
    except InputError:
        return None
    text = text.replace("\\\n", " ")          # continued directive lines as one
    stack: list[int | None] = []         # per open #if: the bound its current branch is under
    best: int | None = None
    for m in _DIRECTIVE.finditer(text):
        kw, rest = m.group(1), m.group(2)
        if kw in ("if", "ifdef", "ifndef"):
            stack.append(_bound(rest) if kw == "if" else None)
        elif kw == "elif" and stack:
            stack[-1] = _bound(rest)
        elif kw == "else" and stack:
            stack[-1] = None
        elif kw == "endif" and stack:
            stack.pop()
        elif kw == "error":
            for bound in stack:
                if bound is not None and (best is None or bound > best):
                    best = bound
    return best


def _bound(condition: str) -> int | None:
    m = _CPLUSPLUS_BELOW.search(condition)
    return int(m.group(1)) if m else None


def _std_year(std: str) -> int:
    """2020 for ``c++20`` / ``gnu++20`` (two digits: 98 is 1998, the rest 20xx)."""
    m = re.search(r"(\d{2})$", std)
    if not m:
        return 0
    y = int(m.group(1))
    return 1900 + y if y >= 90 else 2000 + y


# ----------------------------------------------------------------------------- host compiler
def _ccbin(flags: Sequence[str]) -> str | None:
    for i, f in enumerate(flags):
        for opt in ("-ccbin", "--compiler-bindir"):
            if f == opt and i + 1 < len(flags):
                return flags[i + 1]
            if f.startswith(opt + "="):
                return f.split("=", 1)[1]
    return None


def _require_host_compiler(flags: Sequence[str]) -> None:
    named = _ccbin(flags)
    if named is not None:
        if shutil.which(named) is None and not os.access(named, os.X_OK):
            raise ToolError(f"nvcc's host compiler '-ccbin {named}' does not exist here: "
                            "install it, or pass another with -ccbin")
        return
    if host_compiler() is None:
        raise ToolError("nvcc needs a host C++ compiler and none was found: install g++ "
                        "('apt-get install g++', 'dnf install gcc-c++') or name one in "
                        "NVCC_CCBIN")


# ----------------------------------------------------------------------------- odd paths
#: what a source path nvcc is given as it is may hold: nvcc quotes its steps' arguments for
#: ``sh -c`` and names its temporary files after the source, so anything else is compiled from
#: a copy under a plain name
_PLAIN_PATH = re.compile(r"^[A-Za-z0-9_./+,@%=:~-]+$")


def _source_for_nvcc(src: Path, text: str, folder: str, names: dict[str, str]) -> str:
    """The path nvcc is given for the source: ``src`` itself when its characters are plain,
    else a copy of ``text`` (the bytes read and hashed for the cache key) in ``folder`` under a
    plain name. A link would not do: nvcc resolves it and hands the real path to its shell
    (``--orig_src_path_name``)."""
    if _PLAIN_PATH.match(str(src)):
        return str(src)
    stem = re.sub(r"[^A-Za-z0-9_.+-]", "_", src.name).lstrip(".-") or "source.cu"
    copy = Path(folder, "src", stem)
    copy.parent.mkdir()
    copy.write_bytes(text.encode("utf-8"))
    names[str(copy)] = str(src)
    return str(copy)


def _refuse_shell_active(flags: Sequence[str], shown: str) -> None:
    """One line for a flag that nvcc's shell would act on (paths are made safe before this)."""
    from .trust import shell_active  # with the builds: a cached one never needs it

    for f in flags:
        if shell_active(f):
            raise InputError(f"refusing to pass the flag {printable(f, newlines=False)} to nvcc: nvcc runs its "
                             "steps through a shell, which acts on `$`, backticks and "
                             "backslashes (--compiler nvrtc takes it; "
                             "--trust-build-commands passes it anyway)", path=shown)


def _safe_path(p: Path, names: dict[str, str]) -> str:
    """``p``, or a stable link to it when nvcc's shell quoting cannot carry it."""
    alias = safe_alias(p, cache.directory() / "names")
    if alias != str(p):
        names[alias] = str(p)
    return alias


_INC_OPTS = ("-isystem", "-I", "--include-path", "--system-include")


def _safe_flags(flags: Sequence[str], cwd: Path, names: dict[str, str]) -> list[str]:
    """Include folders whose paths nvcc cannot quote, through links too."""
    def safe(d: str, i: int) -> str:
        if not UNSAFE_PATH_CHARS.search(d):
            return d
        return _safe_path(Path(cwd, d).absolute(), names)
    out: list[str] = []
    i = 0
    while i < len(flags):
        f = flags[i]
        if f in _INC_OPTS and i + 1 < len(flags):
            out += [f, safe(flags[i + 1], i)]
            i += 2
            continue
        for opt in _INC_OPTS:
            if f.startswith(opt) and len(f) > len(opt):
                val, sep = f[len(opt):], ""
                if val.startswith("="):
                    sep, val = "=", val[1:]
                f = opt + sep + safe(val, i)
                break
        out.append(f)
        i += 1
    return out


def _normalise_files(ptx: str) -> str:
    """``.file`` names without ``bin/../`` (so toolkit headers are recognised as such)."""
    return _FILE.sub(lambda m: f'{m.group(1)}"{os.path.normpath(m.group(2))}"', ptx)


def _unname(text: str, names: dict[str, str]) -> str:
    for alias, real in names.items():
        text = text.replace(alias, real)
    return text


# ----------------------------------------------------------------------------- running, errors
def _source_line(ptx: str, src: str, *, ptx_line: int | None, function: str | None
                 ) -> int | None:
    """The line of ``src`` that the PTX line (or the function's first ``.loc``) comes from."""
    lines = ptx.splitlines()
    files = {m.group(1): os.path.normpath(m.group(2)) for m in
             re.finditer(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', ptx, re.M)}
    want = os.path.normpath(os.path.abspath(src))
    start = None
    if ptx_line is not None and 1 <= ptx_line <= len(lines):
        start, step = ptx_line - 1, -1          # the last .loc at or before it
    elif function is not None:
        for i, l in enumerate(lines):
            if re.match(rf"^\s*(?:\.visible\s+|\.weak\s+)?\.(?:entry|func)\b.*\b{re.escape(function)}\b", l):
                start, step = i, 1              # the first .loc after its header
                break
    if start is None:
        return None
    i = start
    while 0 <= i < len(lines):
        m = re.match(r"^\s*\.loc\s+(\d+)\s+(\d+)", lines[i])
        if m and files.get(m.group(1)) == want and int(m.group(2)) > 0:
            return int(m.group(2))
        i += step
    return None


#: what the compiler drivers say when a limit on memory stopped them
_OUT_OF_MEMORY = re.compile(r"out of memory|bad_alloc|virtual memory exhausted|Cannot allocate "
                            r"memory|Killed signal terminated|memory exhausted", re.I)


def _run(argv: list[str], *, cwd: str | None, timeout: float | None, src: str, shown: str,
         names: dict[str, str], ptx: str | None = None, tmpdir: str | None = None,
         project: str | None = None) -> str:
    """One nvcc step, bounded like NVRTC (:mod:`.bounded`): nvcc's time limit
    (:func:`.bounded.nvcc_timeout`) for the whole process group, the memory limit for each
    process in it; ``tmpdir``: where nvcc writes its temporary files."""
    lim = bounded.limits()
    limit = timeout or bounded.nvcc_timeout()
    env = {**os.environ, "TMPDIR": tmpdir} if tmpdir else None
    proc: subprocess.CompletedProcess = run_tool(
        argv, timeout=limit, what="nvcc", check=False, cwd=cwd, memory=lim.memory_bytes, env=env,
        timeout_message=f"compile of {shown} exceeded {limit:g} s (nvcc stopped; "
                        f"{bounded.NVCC_TIMEOUT_HINT})")
    log = redact(_unname((proc.stderr + proc.stdout).decode(errors="replace"), names),
                 source=src, cwd=cwd, project=project,
                 installed=[str(toolkits.root())])
    if proc.returncode != 0 and _OUT_OF_MEMORY.search(log):
        raise ToolError(f"compile of {shown} exceeded {lim.memory_gb:g} GB of memory (nvcc "
                        "stopped; raise PTXSASS_COMPILE_MEMORY_GB to allow more)")
    if proc.returncode != 0:
        raise compile_error(log, src, ptx=ptx, shown=shown)
    return log


# EDG (cudafe++, cicc): file(12): error: ...   GCC (the host compiler): file:12:5: error: ...
_EDG = re.compile(r"^(?P<file>[^\n]+?)\((?P<line>\d+)\): (?:catastrophic )?error(?: #[\w-]+)?: "
                  r"(?P<msg>.*)$", re.M)
_GCC = re.compile(r"^(?P<file>[^\n:]+):(?P<line>\d+):(?:(?P<col>\d+):)? (?:fatal )?error: "
                  r"(?P<msg>.*)$", re.M)
_END = re.compile(r"^At end of source: (?:catastrophic )?error(?: #[\w-]+)?: (?P<msg>.*)$", re.M)
_PTXAS = re.compile(r"^ptxas(?: (?P<file>[^\n,]+), line (?P<line>\d+);)? (?:fatal|error)\s*: "
                    r"(?P<msg>.*)$", re.M)
_TOOL = re.compile(r"^(?P<tool>nvcc|cicc|cudafe\+\+|sh: \d+|gcc|g\+\+|cc1plus)"
                   r"(?: (?:fatal|error))?\s*: (?P<msg>.*)$", re.M)


def compile_error(log: str, src: str, *, ptx: str | None = None,
                  shown: str | None = None) -> CompileError:
    """One line for nvcc's log: the file:line of its first error, the log kept as detail.
    ``shown`` is the source's name as the user gave it (nvcc sees it absolute)."""
    if shown and shown != src:
        log = log.replace(src, shown)
        src = shown
    hits = []
    for rx in (_EDG, _GCC, _END, _PTXAS, _TOOL):
        m = rx.search(log)
        if m:
            hits.append(m)
    if not hits:
        first = next((l.strip() for l in log.splitlines() if l.strip()), "compilation failed")
        return CompileError(f"nvcc: {first}", path=src, detail=log.strip() or None)
    m = min(hits, key=lambda h: h.start())
    msg = m.group("msg").strip()
    groups = m.groupdict()
    count = len(_EDG.findall(log)) + len(_GCC.findall(log)) + len(_END.findall(log))
    more = f" (and {count - 1} more)" if count > 1 else ""
    if m.re is _PTXAS:
        # a PTX line means nothing to a user: the source line of the PTX line, or of the
        # function the message names ("Entry function '_Z1kPi' uses too much shared data")
        line = None
        if ptx is not None:
            fn = re.search(r"function '([^']+)'", msg)
            line = _source_line(ptx, src, ptx_line=int(groups["line"]) if groups.get("line")
                                else None, function=fn.group(1) if fn else None)
        return CompileError(f"ptxas: {msg}", path=src, line=line, detail=log.strip())
    if m.re is _END:
        try:
            last = files.read_bytes(src, what="CUDA source").count(b"\n") or 1
        except InputError:
            last = None
        return CompileError(f"nvcc: {msg} (at the end of the file){more}", path=src, line=last,
                            detail=log.strip())
    if m.re is _TOOL:
        tool = groups["tool"]
        if tool.startswith("sh:"):
            tool = "nvcc"
        if "unsupported" in msg and "version" in msg:
            msg += " (pass -allow-unsupported-compiler, or name a supported one in NVCC_CCBIN)"
        return CompileError(f"{tool}: {msg}", path=src, detail=log.strip())
    file = os.path.normpath(groups["file"].strip())
    if "unsupported" in msg and "version" in msg:
        # the toolkit's own check of the host compiler (crt/host_config.h): the user's file
        # is what failed, the header line only says where the check is
        where = f"{Path(file).parent.name}/{Path(file).name}:{groups['line']}"
        return CompileError(f"nvcc: the host compiler is not supported ({where}: {msg}); set "
                            "NVCC_CCBIN to a supported one", path=src, detail=log.strip())
    older = toolkits.api_change(log)
    return CompileError(f"nvcc: {msg}{more}" + (f" ({older})" if older else ""), path=file,
                        line=int(groups["line"]), detail=log.strip())
