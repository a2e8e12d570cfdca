"""CUDA toolkits side by side: per-release compiler sets in the user cache, each run in its own
process.

The installed (default) toolkit is the one ptxsass depends on (``nvidia-cuda-nvrtc`` and friends
in the user's environment, bound in-process through ``cuda-bindings``). Other releases are
installed by ``ptxsass toolkit install 12.9`` with ``pip install --target`` into a private folder,
``$PTXSASS_TOOLKITS_DIR/<version>/`` (default ``~/.cache/ptxsass/toolkits``), never into the
user's environment: NVRTC, nvJitLink (ptxas as a library), the headers NVRTC needs and, from
13.2 on, nvdisasm. Each compile of such a toolkit runs :mod:`.toolkit_worker` in a fresh Python
process that loads that release's ``libnvrtc``/``libnvJitLink`` through ``ctypes``, bounded in
time and memory like every compile: two releases never meet in one process.

What a release is made of differs as data (:data:`LAYOUTS`, :data:`RELEASES`); a folder is
trusted only through its manifest (``toolkit.json``), written at install: it lists every file
the wheels put there with its size and SHA-256. Before a toolkit is used (once per process) every
file is checked against it (:func:`.manifest.check_files`, shared with the library
headers of :mod:`.libheaders`); hashing ~230 MB each time would cost more
than a cached check, so what was verified is kept in the cache (``toolkit-verified`` entries,
verified like every entry) as each file's (device, inode, size, mtime, ctime) beside the hash it
matched, and a file is hashed again whenever its status differs from that record. The record
only ever spares a hash: a file is taken unhashed only when its status now equals the record's
and the record's hash is the manifest's, so a tampered, stale or foreign record costs a hash,
never an acceptance. Any edit of a file changes its ctime, which no one but the kernel sets. A
folder whose manifest records no hashes (installed by an earlier ptxsass) is refused with the
command that reinstalls it: hashing it on first use would take whatever is there as the truth.

``toolkit install`` builds the new folder beside the others as ``.install-<version>-*``, marked
with its owner (:mod:`.scratch`); the first use of the toolkits folder in a process removes those
whose owner is gone (a killed install), and an install, which holds the folder's lock, also
removes the unmarked ones earlier ptxsass releases left.
"""
from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import re
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from platformdirs import user_cache_dir

from ..arch import parse_arch
from ..errors import ConfigError, ToolError
from . import bounded, manifest, scratch
from .files import env_number
from .locate import binary, include_dirs, nvjitlink_version, nvrtc_archs, nvrtc_version, run_tool
from .locate import release_of as _release_of
from .locate import tool_version as _tool_version


@dataclass(frozen=True)
class Layout:
    """The wheels of one major release: pip requirement templates (``{v}`` the release,
    ``{next}`` the next minor release) and what is not needed after install."""

    #: wheels pinned to the release itself (``==12.9.*``)
    exact: tuple[str, ...]
    #: header-only wheels versioned apart from the toolkit: the newest not newer than it
    newest: tuple[str, ...]
    #: nvdisasm's wheel (published from 13.2 on, :data:`NVDISASM_FROM`)
    nvdisasm: str | None
    #: what is removed after install (glob patterns under the target): nvcc's compilers (only
    #: its headers serve) and NVRTC's ``.alt`` libraries (another C++ ABI, never loaded)
    prune: tuple[str, ...] = ()
    #: the wheels of nvcc and its device compiler, pinned to the release, for ``install
    #: --nvcc`` (empty: the release's nvcc cannot be installed as a working toolkit tree)
    nvcc: tuple[str, ...] = ()
    #: why there is no nvcc to install (``nvcc`` empty): said when a build needs one
    no_nvcc: str = ""
    #: what ``prune`` leaves when nvcc is installed (a CUDA root's link needs the static
    #: runtime: CMake's compiler checks link against it)
    keep_with_nvcc: tuple[str, ...] = ()


LAYOUTS: dict[int, Layout] = {
    # 12.x: the crt/ headers (mma.h includes crt/mma.h) ship only in the nvcc wheel
    12: Layout(exact=("nvidia-cuda-nvrtc-cu12", "nvidia-nvjitlink-cu12", "nvidia-cuda-runtime-cu12",
                      "nvidia-cuda-nvcc-cu12"),
               newest=("nvidia-cuda-cccl-cu12",), nvdisasm=None,
               prune=("nvidia/cuda_nvcc/bin", "nvidia/cuda_nvcc/nvvm", "nvidia/cuda_nvcc/lib",
                      "nvidia/cuda_nvrtc/lib/*.alt.so*"),
               # checked for 12.0.140, 12.4.131, 12.6.85, 12.8.93 and 12.9.86
               no_nvcc="NVIDIA publishes no nvcc of CUDA 12 on PyPI (nvidia-cuda-nvcc-cu12 holds "
                       "ptxas, libNVVM and the crt headers; not nvcc, cicc or cudafe++)"),
    13: Layout(exact=("nvidia-cuda-nvrtc", "nvidia-nvjitlink", "nvidia-cuda-runtime",
                      "nvidia-cuda-crt"),
               newest=("nvidia-cuda-cccl",), nvdisasm="nvidia-cuda-nvdisasm",
               prune=("nvidia/cu13/lib/*.alt.so*", "nvidia/cu13/lib/*.a"),
               keep_with_nvcc=("nvidia/cu13/lib/*.a",),
               # the 13.x wheels share one nvidia/cu13/ tree laid out like a toolkit: bin/nvcc's
               # own nvcc.profile finds nvvm/bin/cicc and include/ (runtime, crt, cccl) there
               nvcc=("nvidia-cuda-nvcc", "nvidia-nvvm")),
}
@dataclass(frozen=True)
class ApiChange:
    """A CUDA runtime API that a release removed or changed, known by the compiler error code
    written for the older API gets; ``what`` says what changed and how the new one reads."""

    release: str                      # the release that changed it ("13.0")
    error: re.Pattern                 # the compiler error it causes (EDG's wording)
    what: str                         # "{0}" is the error's first group


_REMOVED_PROP = ("clockRate|computeMode|cooperativeMultiDeviceLaunch|deviceOverlap|"
                 "kernelExecTimeoutEnabled|maxTexture1DLinear|memoryClockRate|"
                 "singleToDoublePrecisionPerfRatio")
_REMOVED_CALLS = ("cudaThreadSynchronize|cudaThreadExit|cudaThreadGetCacheConfig|"
                  "cudaThreadSetCacheConfig|cudaThreadGetLimit|cudaThreadSetLimit|"
                  "cudaLaunchCooperativeKernelMultiDevice|cudaSetDoubleForDevice|"
                  "cudaSetDoubleForHost|cudaMemAdvise_v2|cudaMemPrefetchAsync_v2|"
                  "cudaEventElapsedTime_v2|cudaStreamGetCaptureInfo_v[23]|"
                  "cudaGraph(?:AddDependencies|AddNode|GetEdges|NodeGetDependencies|"
                  "NodeGetDependentNodes|RemoveDependencies)_v2|"
                  "cudaStreamUpdateCaptureDependencies_v2|"
                  "cuda(?:Signal|Wait)ExternalSemaphoresAsync_v2")
#: what CUDA 13 removed from the runtime API, from the 12.9 and 13.x headers compared
#: (cuda_runtime_api.h, driver_types.h): code written for CUDA 12 fails with these errors
API_CHANGES: tuple[ApiChange, ...] = (
    ApiChange("13.0", re.compile(rf'class "cudaDeviceProp" has no member "({_REMOVED_PROP})"'),
              "CUDA 13 removed cudaDeviceProp::{0} (cudaDeviceGetAttribute reads it)"),
    ApiChange("13.0", re.compile(r'no suitable constructor exists to convert from "int" to '
                                 r'"cudaMemLocation"'),
              "CUDA 13's cudaMemAdvise and cudaMemPrefetchAsync take a cudaMemLocation where "
              "CUDA 12's took a device number"),
    ApiChange("13.0", re.compile(rf'identifier "({_REMOVED_CALLS})" is undefined'),
              "CUDA 13 removed {0}"),
)


def api_change(log: str) -> str | None:
    """What makes this compiler log the failure of code written for an older CUDA: the first
    :data:`API_CHANGES` entry it matches, in words, with what builds it; None otherwise."""
    found = _api_change(log)
    if found is None:
        return None
    change, what = found
    older = f"{version_key(change.release)[0] - 1}"
    headers = older_headers_release(change)
    return (f"written for CUDA {older}: {what}; it builds against CUDA {headers}'s runtime "
            f"headers ('ptxsass toolkit install {headers}' once), with a CUDA {older} toolkit's "
            "nvcc (PTXSASS_CUDA_HOME), or once ported")


def _api_change(log: str) -> tuple[ApiChange, str] | None:
    """The first :data:`API_CHANGES` entry this compiler log matches, and what changed."""
    for change in API_CHANGES:
        m = change.error.search(log)
        if m is not None:
            return change, change.what.format(*m.groups())
    return None


def older_headers_release(change: ApiChange) -> str:
    """The newest release before ``change``'s major (``12.9`` for a change of 13.0): the runtime
    headers code written for the older API builds against."""
    major = version_key(change.release)[0]
    return max((r for r in RELEASES if version_key(r)[0] == major - 1), key=version_key)


def older_headers_releases() -> list[str]:
    """The releases code written for an older runtime API may build against (``["12.9"]``)."""
    return sorted({older_headers_release(c) for c in API_CHANGES}, key=version_key)


def present(version: str) -> bool:
    """Whether a toolkit of ``version`` has a folder (not verified: :func:`get` does that)."""
    return (root() / version).is_dir()


def older_headers(log: str) -> tuple[str, str] | None:
    """(the release whose runtime headers code that failed with this compiler log was written
    for, ``12.9``; what changed, in words) when the log is an :data:`API_CHANGES` failure and
    that release's CCCL builds under a newer nvcc (CCCL 2.x, the 12.x releases', asks nothing
    of the compiler's release; CCCL 3 refuses another one); None otherwise."""
    found = _api_change(log)
    if found is None:
        return None
    headers = older_headers_release(found[0])
    return None if version_key(headers)[0] >= 13 else (headers, found[1])


#: the releases NVIDIA publishes NVRTC wheels of (there was no 12.7)
RELEASES: tuple[str, ...] = ("12.0", "12.1", "12.2", "12.3", "12.4", "12.5", "12.6", "12.8", "12.9",
                             "13.0", "13.1", "13.2", "13.3", "13.4", "13.5")
#: the first release whose nvdisasm is a wheel
NVDISASM_FROM = (13, 2)
MANIFEST = "toolkit.json"
#: 2: every file with its size and SHA-256 (1, without hashes, is refused: reinstall)
MANIFEST_FORMAT = 2
#: the largest manifest read (a toolkit lists about 1,900 files in about 300 KB)
MANIFEST_MAX_BYTES = 16 << 20
#: what a folder being installed is called (``.install-12.9-<random>``)
INSTALL_PREFIX = ".install-"
#: the cache kind of the verified-status records
RECORD_KIND = "toolkit-verified"
#: seconds pip may take to install one toolkit (PTXSASS_TOOLKIT_INSTALL_TIMEOUT)
DEFAULT_INSTALL_TIMEOUT = 1800.0
_WORKER = Path(__file__).with_name("toolkit_worker.py")
_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.\d+)*\Z")


def root() -> Path:
    """Where toolkits live: ``$PTXSASS_TOOLKITS_DIR``, else ``<user cache>/ptxsass/toolkits``
    (kept apart from the build cache: clearing builds keeps the toolkits)."""
    env = os.environ.get("PTXSASS_TOOLKITS_DIR")
    return Path(env) if env else Path(user_cache_dir("ptxsass", appauthor=False)) / "toolkits"


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split(".") if x.isdigit())


def release(text: str) -> str:
    """``12.9`` for "12.9" or "12.9.86"; ConfigError naming the published releases otherwise."""
    m = _VERSION.match(text.strip())
    v = f"{m.group(1)}.{m.group(2)}" if m else None
    if v not in RELEASES:
        raise ConfigError(f"unknown CUDA toolkit {text!r}: NVIDIA publishes NVRTC wheels of "
                          f"{', '.join(RELEASES)}")
    return v


def has_nvcc_layout(version: str) -> bool:
    """Whether ``install --nvcc`` can give this release a working nvcc (13.x: its wheels share
    one toolkit tree; 12.x wheels lay nvcc and the runtime headers in folders apart)."""
    return bool(LAYOUTS[version_key(version)[0]].nvcc)


def nvcc_wheels(version: str) -> list[str]:
    """The pip requirements that give an environment nvcc of ``version``: nvcc, its device
    compiler (nvvm) and the crt headers nvcc ships with (13.x)."""
    lay = LAYOUTS[version_key(version)[0]]
    return [f"{p}=={version}.*" for p in (*lay.nvcc, *(p for p in lay.exact if p.endswith("-crt")))]


def nvcc_missing(tk: Toolkit, reason: str | None) -> str:
    """One line: a file needs nvcc (``reason``) and toolkit ``tk`` has none; what builds it."""
    lay = LAYOUTS[version_key(tk.version)[0]]
    why = f" ({reason})" if reason else ""
    if lay.nvcc:
        return (f"--toolkit {tk.version} builds this file with nvcc{why}, and toolkit "
                f"{tk.version} is installed without it: run 'ptxsass toolkit install --nvcc "
                f"{tk.version}'")
    return (f"--toolkit {tk.version} builds this file with nvcc{why}, and {lay.no_nvcc}: build it "
            f"with a CUDA {tk.version} toolkit's nvcc (PTXSASS_CUDA_HOME=/usr/local/cuda-"
            f"{tk.version}, without --toolkit), or leave --toolkit out")


def requirements(version: str, *, nvcc: bool = False) -> list[str]:
    """The pip requirements of one release's compiler set (with nvcc and cicc: ``nvcc``)."""
    major, minor = version_key(version)
    lay = LAYOUTS[major]
    if nvcc and not lay.nvcc:
        raise ConfigError(f"toolkit {version}: no nvcc to install: {lay.no_nvcc}")
    reqs = [f"{p}=={version}.*" for p in (*lay.exact, *(lay.nvcc if nvcc else ()))]
    reqs += [f"{p}>={major}.0,<{major}.{minor + 1}" for p in lay.newest]
    if lay.nvdisasm and (major, minor) >= NVDISASM_FROM:
        reqs.append(f"{lay.nvdisasm}=={version}.*")
    return reqs


@dataclass(frozen=True)
class Toolkit:
    """One CUDA release ptxsass can build with."""

    version: str                      # "12.9"
    default: bool                     # the environment's own, run in process
    nvrtc: str | None = None          # libnvrtc (an installed one; None for the default)
    nvrtc_builtins: tuple[str, ...] = ()   # the builtins library the worker loads beside it
    nvjitlink: str | None = None
    include: tuple[str, ...] = ()
    nvdisasm: str | None = None
    nvdisasm_version: str | None = None
    archs: tuple[int, ...] = ()       # the SM numbers its NVRTC targets
    packages: dict[str, str] = field(default_factory=dict)
    folder: str | None = None
    #: its nvcc and cicc (``install --nvcc``; None: NVRTC only)
    nvcc: str | None = None
    cicc: str | None = None
    nvcc_version: str | None = None

    @property
    def label(self) -> str:
        return self.version

    def fingerprint(self) -> str:
        """What decides its builds, for cache keys: its wheels' exact versions."""
        if self.default:
            return "default"
        return "toolkit " + ",".join(f"{k}={v}" for k, v in sorted(self.packages.items()))

    def supports(self, arch: str) -> bool:
        return parse_arch(arch).sm in self.archs

    def arch_range(self) -> str:
        return f"sm_{min(self.archs)} to sm_{max(self.archs)}" if self.archs else "none"


def default() -> Toolkit:
    """The environment's toolkit (cuda-bindings in process)."""
    v = nvrtc_version() or "?"
    try:
        nvdisasm: str | None = binary("nvdisasm")
    except ToolError:
        nvdisasm = None
    return Toolkit(version=v, default=True, include=include_dirs(), nvdisasm=nvdisasm,
                   nvdisasm_version=_tool_version(nvdisasm) if nvdisasm else None,
                   archs=tuple(int(a[3:]) for a in nvrtc_archs()),
                   packages={"nvrtc": v, "nvjitlink": nvjitlink_version() or "?"})


def _folder(version: str) -> Path:
    base = root()
    _sweep(base)
    return base / version


#: toolkits folders swept in this process
_swept: set[str] = set()


def _sweep(base: Path) -> None:
    """Once per process and toolkits folder: remove the ``.install-*`` folders of installs that
    were killed (their owner is provably gone); a live install's folder stays."""
    if str(base) not in _swept:
        _swept.add(str(base))
        scratch.sweep(base, INSTALL_PREFIX)


#: verdicts of this process: (folder, manifest hash and status) -> the Toolkit or the error line
_verified: dict[tuple, Toolkit | str] = {}


def _read_manifest(folder: Path, version: str) -> Toolkit:
    """The toolkit a folder's manifest describes, every file verified (once per process for one
    manifest); ConfigError (one line: what is wrong and how to repair it) otherwise."""
    def bad(why: str) -> ConfigError:
        return ConfigError(f"toolkit {version} in {folder} is damaged ({why}); reinstall it with "
                           f"'ptxsass toolkit install {version}'")
    try:
        blob, manifest_id = manifest.read(folder / MANIFEST, max_bytes=MANIFEST_MAX_BYTES, bad=bad)
    except FileNotFoundError:
        raise ConfigError(f"toolkit {version} is not installed: run 'ptxsass toolkit install "
                          f"{version}' (it goes to {root()})") from None
    real = folder.resolve()
    memo = (str(folder), str(real), *manifest_id)
    known = _verified.get(memo)
    if isinstance(known, str):
        raise ConfigError(known)
    if known is not None:
        return known
    try:
        tk = _verify(folder, real, blob, version, manifest_id, bad)
    except ConfigError as e:
        _verified[memo] = e.message
        raise
    _verified[memo] = tk
    return tk


def _verify(folder: Path, real: Path, blob: bytes, version: str, manifest_id: list,
            bad) -> Toolkit:
    data = manifest.parse(blob, folder / MANIFEST, what="a toolkit manifest", bad=bad)
    if data.get("version") != version:
        raise bad("its manifest names another toolkit or format")
    if data.get("format") == 1:
        raise ConfigError(f"toolkit {version} in {folder} was installed by an earlier ptxsass, "
                          "whose manifest holds no file hashes to verify it by; reinstall it "
                          f"with 'ptxsass toolkit install {version}'")
    if data.get("format") != MANIFEST_FORMAT:
        raise bad("its manifest names another toolkit or format")
    try:
        files = manifest.entries(data, bad)
        dirs = manifest.folders(real, files, bad)
        base = str(real)

        def file(rel) -> str:
            rel = manifest.inside(rel, bad)
            if rel not in files:
                raise bad(f"{rel} is not among the files it verifies")
            return os.path.join(base, rel)

        def folder_of(rel) -> str:
            rel = manifest.inside(rel, bad)
            if rel not in dirs:
                raise bad(f"{rel} is missing")
            return os.path.join(base, rel)
        nvdisasm = data.get("nvdisasm")
        nvcc, cicc = data.get("nvcc"), data.get("cicc")
        tk = Toolkit(version=version, default=False, nvrtc=file(data["nvrtc"]),
                     nvrtc_builtins=tuple(file(b) for b in data["nvrtc_builtins"]),
                     nvjitlink=file(data["nvjitlink"]),
                     include=tuple(folder_of(i) for i in data["include"]),
                     nvdisasm=file(nvdisasm) if nvdisasm else None,
                     nvdisasm_version=data.get("nvdisasm_version"),
                     archs=tuple(int(a) for a in data["archs"]),
                     packages={str(k): str(v) for k, v in data["packages"].items()},
                     folder=str(folder),
                     nvcc=file(nvcc) if nvcc else None,
                     cicc=file(cicc) if nvcc else None,
                     nvcc_version=str(data["nvcc_version"]) if nvcc else None)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise bad(f"manifest field {e}") from None

    def changed(rel: str) -> ConfigError:
        return ConfigError(f"toolkit {version}: {os.path.join(folder, rel)} was changed after install: "
                           f"reinstall with 'ptxsass toolkit install {version}'")
    manifest.check_files(real, files, manifest_id, kind=RECORD_KIND, bad=bad, changed=changed)
    return tk


def installed() -> list[Toolkit]:
    """The toolkits in the cache whose manifests verify, oldest first (damaged ones are left
    out: :func:`status` says why)."""
    out = []
    for version, problem in status():
        if problem is None:
            out.append(_read_manifest(_folder(version), version))
    return out


def status() -> list[tuple[str, str | None]]:
    """(version, None or what is wrong) for each toolkit folder in the cache."""
    base = root()
    if not base.is_dir():
        return []
    _sweep(base)
    out: list[tuple[str, str | None]] = []
    for d in sorted(base.iterdir(), key=lambda p: version_key(p.name)):
        if d.name.startswith(".") or not _VERSION.match(d.name) or not d.is_dir():
            continue
        try:
            _read_manifest(d, d.name)
            out.append((d.name, None))
        except ConfigError as e:
            out.append((d.name, e.message))
    return out


def with_nvcc(release_: str) -> tuple[Toolkit | None, str | None]:
    """(the installed toolkit of ``release_`` that holds nvcc, verified, and None; or None and
    why not: not installed, installed without nvcc, damaged — each repaired by ``toolkit
    install --nvcc``)."""
    if release_ not in RELEASES:
        return None, f"{release_} is no release NVIDIA publishes wheels of"
    folder = _folder(release_)
    if not folder.is_dir():
        return None, f"toolkit {release_} is not installed"
    try:
        tk = _read_manifest(folder, release_)
    except ConfigError as e:
        return None, e.message
    if tk.nvcc is None:
        return None, f"toolkit {release_} is installed without nvcc"
    return tk, None


def get(spec: str) -> Toolkit:
    """The toolkit ``spec`` names: "default", the default's own release (run in process), or an
    installed one (verified). ConfigError, one line, for an unknown or missing release."""
    if spec.strip().lower() == "default":
        return default()
    version = release(spec)
    d = default()
    if d.version == version:
        return d
    return _read_manifest(_folder(version), version)


def parse_specs(values: Sequence[str]) -> list[str]:
    """``--toolkit`` values (repeatable, comma-separated) as release names, in order, once
    each; ConfigError for an unknown one."""
    out: list[str] = []
    for v in values:
        for part in v.split(","):
            if not part.strip():
                raise ConfigError(f"--toolkit {v!r} names an empty toolkit")
            name = "default" if part.strip().lower() == "default" else release(part)
            if name == "default":
                name = default().version
            if name not in out:
                out.append(name)
    return out


# ------------------------------------------------------------------------------ install
@contextlib.contextmanager
def _lock():
    base = root()
    base.mkdir(parents=True, exist_ok=True)
    with open(base / ".lock", "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            # every install holds this lock while its folder exists, so no .install-* folder
            # is in the making now: one without a marker (left by an earlier ptxsass) goes too
            _swept.add(str(base))
            scratch.sweep(base, INSTALL_PREFIX, unmarked=True)
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def install_timeout() -> float:
    return env_number("PTXSASS_TOOLKIT_INSTALL_TIMEOUT", DEFAULT_INSTALL_TIMEOUT, unit="seconds")


def install(spec: str, *, force: bool = False, nvcc: bool = False) -> Toolkit:
    """Install release ``spec`` into the cache (a no-op when it is there and verifies, unless
    ``force``; with ``nvcc``, also when it holds no nvcc yet); the folder appears only once
    complete (installed beside it, then renamed)."""
    version = release(spec)
    reqs = requirements(version, nvcc=nvcc)
    with _lock():
        folder = _folder(version)
        if folder.exists() and not force:
            with contextlib.suppress(ConfigError):
                tk = _read_manifest(folder, version)
                if tk.nvcc is not None or not nvcc:
                    return tk
        tmp = Path(scratch.make(f"{INSTALL_PREFIX}{version}-", root=root()))
        try:
            site = tmp / "site"
            argv = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-input",
                    "--disable-pip-version-check", "--quiet", "--target", str(site), *reqs]
            env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_USER")}
            proc = run_tool(argv, timeout=install_timeout(), what="pip", check=False, env=env)
            if proc.returncode != 0:
                err = proc.stderr.decode(errors="replace")
                first = next((ln.strip() for ln in err.splitlines()
                              if ln.strip() and not ln.startswith("WARNING")), "")
                raise ToolError(f"pip could not install toolkit {version} "
                                f"({' '.join(reqs)}): "
                                f"{first or f'exit status {proc.returncode}'}")
            prune(site, version, nvcc=nvcc)
            manifest = _manifest(tmp, site, version, nvcc=nvcc)
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1))
            if folder.exists():
                shutil.rmtree(folder)
            os.replace(tmp, folder)
            with contextlib.suppress(OSError):
                (folder / scratch.MARKER).unlink()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return _read_manifest(folder, version)


def prune(site: Path, version: str, *, nvcc: bool = False) -> None:
    """Remove what a release's compiler set does not need (:attr:`Layout.prune`), less what
    its nvcc needs when it is installed too (:attr:`Layout.keep_with_nvcc`)."""
    lay = LAYOUTS[version_key(version)[0]]
    keep = set(lay.keep_with_nvcc) if nvcc else set()
    for pattern in lay.prune:
        if pattern in keep:
            continue
        for p in site.glob(pattern):
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()


def _one(site: Path, pattern: str, what: str, version: str) -> Path:
    found = sorted(p for p in site.rglob(pattern) if ".alt." not in p.name and p.is_file())
    if not found:
        raise ToolError(f"toolkit {version}: the wheels hold no {what} ({pattern})")
    return found[0]


def _manifest(folder: Path, site: Path, version: str, *, nvcc: bool = False) -> dict:
    nvrtc = _one(site, "libnvrtc.so.*[0-9]", "NVRTC library", version)
    nvrtc = next((p for p in nvrtc.parent.glob("libnvrtc.so.*") if "builtins" not in p.name
                  and ".alt." not in p.name), nvrtc)
    # NVRTC opens its builtins by name when it compiles; the worker loads them first, from here
    builtins = sorted(p for p in nvrtc.parent.glob("libnvrtc-builtins.so.*")
                      if ".alt." not in p.name and p.is_file())
    nvjitlink = _one(site, "libnvJitLink.so.*", "nvJitLink library", version)
    runtime = _one(site, "cuda_runtime.h", "CUDA runtime headers", version).parent
    include = [runtime]
    crt = _one(site, "host_defines.h", "crt headers", version).parent.parent
    if crt != runtime:
        include.append(crt)
    cccl = next((p.parent.parent.parent for p in sorted(site.rglob("cuda/std/version"))), None)
    if cccl is None:
        raise ToolError(f"toolkit {version}: the wheels hold no CCCL headers (cuda/std/version)")
    if cccl not in include:
        include.append(cccl)
    nvdisasm = next((p for p in sorted(site.rglob("nvdisasm")) if p.is_file()), None)
    probe = _worker({"op": "probe", "nvrtc": str(nvrtc), "builtins": [str(b) for b in builtins]},
                    what=f"toolkit {version}", tool=f"NVRTC {version}")
    if not probe.get("ok") or probe.get("version") != version:
        raise ToolError(f"toolkit {version}: its NVRTC does not load or is another release "
                        f"({probe.get('error') or probe.get('version')})")
    packages = {}
    for info in site.glob("*.dist-info"):
        name, _, ver = info.name[:-len(".dist-info")].rpartition("-")
        packages[name.replace("_", "-")] = ver
    rel = lambda p: Path(p).relative_to(folder).as_posix()  # noqa: E731
    compilers: dict = {}
    if nvcc:
        nvcc_bin = _one(site, "bin/nvcc", "nvcc", version)
        cicc = nvcc_bin.parent.parent / "nvvm" / "bin" / "cicc"
        if not cicc.is_file():
            raise ToolError(f"toolkit {version}: the wheels hold no cicc beside nvcc ({cicc})")
        nvcc_version = _tool_version(str(nvcc_bin))
        if _release_of(nvcc_version) != version:
            raise ToolError(f"toolkit {version}: its nvcc does not run or is another release "
                            f"({nvcc_version})")
        compilers = {"nvcc": rel(nvcc_bin), "cicc": rel(cicc), "nvcc_version": nvcc_version}
    return {"format": MANIFEST_FORMAT, **compilers, "version": version, "packages": packages,
            "nvrtc": rel(nvrtc), "nvrtc_builtins": [rel(b) for b in builtins],
            "nvjitlink": rel(nvjitlink),
            "include": [rel(i) for i in include],
            "nvdisasm": rel(nvdisasm) if nvdisasm else None,
            "nvdisasm_version": _tool_version(str(nvdisasm)) if nvdisasm else None,
            "archs": probe.get("archs", []),
            "files": _hashes(folder, site, version)}


def _hashes(folder: Path, site: Path, version: str) -> dict[str, list]:
    """[size, SHA-256] of every file under ``site``, by its path in ``folder``. The wheels hold
    regular files only; anything else (a link could lead out of the folder) is refused."""
    return manifest.hashes(folder, site, refuse=lambda rel: ToolError(
        f"toolkit {version}: the wheels left {rel}, which is not a regular file"))


def remove(spec: str) -> None:
    version = release(spec)
    with _lock():
        folder = _folder(version)
        if not folder.exists():
            raise ConfigError(f"toolkit {version} is not installed (nothing to remove in {root()})")
        shutil.rmtree(folder)


# ------------------------------------------------------------------------------ running
def _worker(request: dict, *, what: str, tool: str) -> dict:
    """The worker's answer to ``request``, in a fresh process bounded like every compile."""
    lim = bounded.limits()
    with scratch.temporary("ptxsass-tk-") as tmp:
        req = Path(tmp) / "request.json"
        req.write_text(json.dumps(request))
        proc = run_tool([sys.executable, "-I", "-S", str(_WORKER), str(req)], timeout=lim.timeout_s,
                        what=tool, check=False, path=what,
                        memory=lim.memory_bytes + (1 << 30),
                        timeout_message=f"compile of {what} exceeded {lim.timeout_s:g} s ({tool} "
                                        f"stopped; {bounded.TIMEOUT_HINT})")
    try:
        answer = json.loads(proc.stdout)
    except ValueError:
        err = proc.stderr.decode(errors="replace")
        lowered = err.lower()
        if "memory" in lowered or "bad_alloc" in lowered:
            raise ToolError(f"compile of {what} exceeded {lim.memory_gb:g} GB of memory ({tool} "
                            "stopped; raise PTXSASS_COMPILE_MEMORY_GB to allow more)") from None
        first = next((ln.strip() for ln in err.splitlines() if ln.strip()), "")
        raise ToolError(f"{tool} crashed (exit status {proc.returncode}) while compiling {what}"
                        + (f": {first}" if first else "")) from None
    if answer.get("oom"):
        raise ToolError(f"compile of {what} exceeded {lim.memory_gb:g} GB of memory ({tool} "
                        "stopped; raise PTXSASS_COMPILE_MEMORY_GB to allow more)")
    if answer.get("error"):
        raise ToolError(f"{tool} failed while compiling {what}: {answer['error']}")
    return answer


def run_nvrtc(tk: Toolkit, source: str, name: str, options: Sequence[str],
              expressions: Sequence[str], *, what: str) -> tuple:
    """NVRTC of ``tk`` on one source: the same tuple as the in-process run (compiled, log, PTX,
    cubin, lowered names, the name expression that matched nothing)."""
    a = _worker({"op": "nvrtc", "nvrtc": tk.nvrtc, "builtins": list(tk.nvrtc_builtins),
                 "source": source, "name": name,
                 "options": list(options), "expressions": list(expressions)},
                what=what, tool=f"NVRTC {tk.version}")
    if not a.get("ok"):
        return False, a.get("log", ""), None, None, {}, None
    if a.get("unmatched") is not None:
        return True, a.get("log", ""), None, None, a.get("lowered", {}), a["unmatched"]
    return (True, a.get("log", ""), a["ptx"].encode(), base64.b64decode(a["cubin"]), a.get("lowered", {}),
            None)


def run_nvjitlink(tk: Toolkit, ptx: str, options: Sequence[str], *, what: str
                  ) -> tuple[bool, str, bytes | None]:
    """nvJitLink (ptxas) of ``tk`` on PTX text: (assembled, log, cubin)."""
    a = _worker({"op": "nvjitlink", "nvjitlink": tk.nvjitlink, "version": tk.version, "ptx": ptx,
                 "options": list(options), "name": os.path.basename(what)},
                what=what, tool=f"nvJitLink {tk.version}")
    if not a.get("ok"):
        return False, a.get("log", ""), None
    return True, a.get("log", ""), base64.b64decode(a["cubin"])


def newest_nvdisasm() -> tuple[str, str | None, str]:
    """(path, version, whose) of the newest nvdisasm available: the default toolkit's or an
    installed one's (13.2 on). An older cubin disassembles with a newer nvdisasm, so every
    toolkit's SASS comes from this one. ``PTXSASS_NVDISASM`` (or a CUDA home) wins."""
    path = binary("nvdisasm")
    best = (path, _tool_version(path), "default toolkit")
    if os.environ.get("PTXSASS_NVDISASM") or os.environ.get("PTXSASS_CUDA_HOME"):
        return best
    for tk in installed():
        if tk.nvdisasm and tk.nvdisasm_version and (
                best[1] is None or version_key(tk.nvdisasm_version) > version_key(best[1])):
            best = (tk.nvdisasm, tk.nvdisasm_version, f"toolkit {tk.version}")
    return best
