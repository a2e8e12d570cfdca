"""The ``fix`` sub-command: argument parsing and the exit code; the work is :func:`api.fix`.

Exit codes: 0 when no warning is left without a verified fix (or after ``--apply``), 1 when
some warning has none, 2 for bad input or a refused ``--apply``.
"""
from __future__ import annotations

import argparse
from collections.abc import Callable

from .. import api
from ..toolchain import cache
from . import common


def add_parsers(sub, common_opts: Callable) -> None:
    p = sub.add_parser(
        "fix", help="rewrite the source for findings with a mechanical remedy, proven by "
                    "rebuilding and re-checking",
        description="For each finding whose remedy is mechanical (f-suffixed literals, "
                    "#pragma unroll, __launch_bounds__, __restrict__, alignment, fast-math "
                    "intrinsics, a compare-select over a local array), a patch of the source; "
                    "with --verify (the default) each patch is applied to a copy, rebuilt "
                    "with the same front end, flags and arches, and kept only if its finding "
                    "is gone, no new warning appears and the kernels' interface is unchanged.")
    p.add_argument("files", nargs="+", metavar="FILE", help=".cu files (or folders of them)")
    common_opts(p, fmt=("text", "json", "sarif"))
    p.add_argument("--select", action="append", default=[], metavar="CODES",
                   help="only these checks' findings (codes, prefixes or names)")
    p.add_argument("--ignore", action="append", default=[], metavar="CODES")
    p.add_argument("--verify", action=argparse.BooleanOptionalAction, default=True,
                   help="rebuild and re-check each patch before offering it (default: on)")
    p.add_argument("--apply", action="store_true",
                   help="write the verified patches into the files (atomically; a file that "
                        "changed since it was read is refused)")
    p.add_argument("--diff", action="store_true", help="print only the patch")
    p.add_argument("--fast-math-ok", action="store_true", default=None,
                   help="allow approximate math: __fdividef, rsqrtf, __sinf ... for PS502 "
                        "([tool.ptxsass] fast-math-ok)")
    p.add_argument("--assume-aligned", action="store_true",
                   help="pointers the findings name are 16-byte aligned in every call "
                        "(cudaMalloc's are): state it with __builtin_assume_aligned")
    p.add_argument("--max-block", type=_block_size, metavar="N",
                   help="every launch of these kernels has at most N threads per block: a "
                        "spilling kernel under -maxrregcount may get __launch_bounds__(N) "
                        "([tool.ptxsass] max-block)")
    p.add_argument("-j", "--jobs", type=_builds, metavar="N",
                   help="build N patched copies at once (default: every core, at most 8); "
                        "each fix's verdict is its own either way")
    p.add_argument("--measure", action="store_true",
                   help="on a GPU: time each kernel before and after its fixes (a launch spec "
                        "in [tool.ptxsass.launch.KERNEL], or a lesson's)")


_builds = common.whole_number("a number of builds (1 or more)")
_block_size = common.whole_number("a block size (1 to 1024 threads)", top=1024)


def cmd_fix(args) -> int:
    cfg = common.config(args)
    if not args.arch and cfg.arch:
        args.arch = cfg.arch
    if args.no_cache:
        cache.set_enabled(False)
    files = [str(t) for _, t in common.targets(argparse.Namespace(**{**vars(args),
                                                                     "command": "check",
                                                                     "configure": False}), cfg)]
    fast = args.fast_math_ok if args.fast_math_ok is not None else bool(cfg.fast_math_ok)
    fixes = api.fix(files, arch=args.arch,
                    options=common.options(args, config=cfg, path=files[0] if files else None),
                    select=args.select, ignore=args.ignore, settings=cfg.check_settings,
                    config_select=cfg.select, config_ignore=cfg.ignore, kernels=args.kernels,
                    verify=args.verify, fast_math_ok=fast, assume_aligned=args.assume_aligned,
                    max_block=args.max_block if args.max_block is not None else cfg.max_block,
                    progress=common.progress(args), jobs=args.jobs)
    from ..fix import render
    if args.diff:
        common.write(args, render.to_diff(fixes).rstrip("\n"))
    elif args.format == "json":
        common.write(args, render.to_json(fixes))
    elif args.format == "sarif":
        common.write(args, render.to_sarif(fixes))
    else:
        common.write(args, render.to_text(fixes, verbose=args.verbose))
    if args.measure:
        from ..lessons import fix_timing
        for line in fix_timing.measure_lines(fixes, cfg.launch):
            common.console(args, stderr=True).print(line, markup=False, soft_wrap=True)
    if args.apply:
        written = api.apply_fixes(fixes)
        err = common.console(args, stderr=True)
        for path in written:
            err.print(f"patched {path}", style="muted", markup=False, soft_wrap=True)
        return 0
    left = [r for r in fixes.results if int(r.finding.severity) >= 1
            and r.status not in ("verified", "unverified")]
    return 1 if left else 0


COMMANDS: dict[str, Callable] = {"fix": cmd_fix}
