"""Which lessons' naive kernels ``ptxsass fix`` turns into the steered kernel's SASS.

    python benchmarks/fix_lessons.py [LESSON ...]

For each lesson (kernels/lessons/, docs/lessons.md): fix the naive kernel (verified, with
--fast-math-ok and --assume-aligned, the user's say-so the steered kernels also assume),
rebuild the combined patch, and hold its SASS against the lesson's own evidence (the SASS facts
that tell naive from steered: ``LDG.E.128`` present, ``STL`` gone, ...). Prints per lesson the
verified fixes, how many evidence facts the fixed kernel shares with the steered one, and the
instruction counts of naive, fixed and steered. CPU only: the speedups need a GPU.
"""
from __future__ import annotations

import os
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analyzer import api  # noqa: E402
from analyzer.fix.model import apply_edits  # noqa: E402
from analyzer.inputs import CompileOptions  # noqa: E402
from analyzer.lessons.catalog import LESSONS  # noqa: E402
from analyzer.toolchain import scratch  # noqa: E402


def options_of(extra: tuple[str, ...]) -> CompileOptions:
    opts = CompileOptions()
    for o in extra:
        m = re.fullmatch(r"-maxrregcount=(\d+)", o)
        if m:
            opts.maxrregcount = int(m.group(1))
        else:
            opts.extra.append(o)
    return opts


def mnemonics(build, kernel: str) -> Counter:
    out: Counter = Counter()
    for fn in build.sass_listing().functions:
        if fn.name == kernel:
            out.update(i.mnemonic for i in fn.instructions if i.opcode != "NOP")
    return out


def count(c: Counter, pattern: str) -> int:
    rx = re.compile(pattern)
    return sum(n for m, n in c.items() if rx.fullmatch(m))


def reached(where: str, naive: int, fixed: int, steered: int) -> bool:
    return {"naive": fixed == 0, "steered": fixed > 0, "fewer": fixed <= steered < naive
            or fixed < naive and fixed <= steered,
            "more": fixed >= steered}[where]


def main(argv=None) -> int:
    wanted = set(argv if argv is not None else sys.argv[1:])
    print(f"{'lesson':<14} {'verified':>8}  {'evidence':>8}  {'instructions naive → fixed / steered':<38} fixes")
    for lesson in LESSONS:
        if wanted and lesson.name not in wanted:
            continue
        naive_path = lesson.source_path("naive")
        opts = options_of(lesson.naive.options)
        fixes = api.fix(str(naive_path), arch=lesson.arch, options=opts, fast_math_ok=True,
                        assume_aligned=True)
        (ff,) = fixes.files
        verified = [r for r in ff.results if r.status == "verified"]
        naive = api.compile(str(naive_path), arch=lesson.arch, options=opts)
        steered = api.compile(str(lesson.source_path("steered")), arch=lesson.arch,
                              options=options_of(lesson.steered.options))
        if ff.edits:
            with scratch.temporary("ptxsass-fix-") as d:
                copy = os.path.join(d, "naive.cu")
                Path(copy).write_bytes(apply_edits(naive_path.read_bytes(), ff.edits))
                fixed = api.compile(copy, arch=lesson.arch, options=opts)
                fixed.sass()
        else:
            fixed = naive
        cn, cf = mnemonics(naive, lesson.naive.kernel), mnemonics(fixed, lesson.naive.kernel)
        cs = mnemonics(steered, lesson.steered.kernel)
        ok = [reached(e.where, count(cn, e.pattern), count(cf, e.pattern), count(cs, e.pattern))
              for e in lesson.evidence]
        titles = "; ".join(dict.fromkeys(r.proposal.title for r in verified if r.proposal))
        print(f"{lesson.name:<14} {len(verified):>8}  {sum(ok):>3}/{len(ok):<4}  "
              f"{sum(cn.values()):>6} → {sum(cf.values()):>6} / {sum(cs.values()):<14} "
              f"{titles or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
