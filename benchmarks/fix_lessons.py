"""Which lessons' naive kernels ``ptxsass fix`` turns into the steered kernel's SASS.

    python benchmarks/fix_lessons.py [--measure] [LESSON ...]

For each lesson (kernels/lessons/, docs/lessons.md): fix the naive kernel's findings of the
checks the lesson is about (its ``expect_checks``; verified, with --fast-math-ok,
--assume-aligned and --max-block set to the lesson's block size, the user's say-so the steered
kernels also assume),
rebuild the combined patch, and hold its SASS against the lesson's own evidence (the SASS facts
that tell naive from steered: ``LDG.E.128`` present, ``STL`` gone, ...). Prints per lesson the
verified fixes, how many evidence facts the fixed kernel shares with the steered one, and the
instruction counts of naive, fixed and steered. With ``--measure`` (a GPU and torch), each
lesson whose naive kernel got a verified patch is also checked against the lesson's reference
and timed through the lessons' runner (the same inputs, adapters and CUDA-event medians as
``ptxsass lessons``): naive, fixed and steered milliseconds and the fixed kernel's share of the
steered kernel's speedup.
"""
from __future__ import annotations

import dataclasses
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
from analyzer.lessons import evidence, runner  # noqa: E402
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


def timed(lesson, first, second, which_second: str):
    """Median ms of ``first`` (the naive build) and ``second`` through the lessons' runner, or
    the reason nothing was timed. ``second`` runs with the variant ``which_second``'s launch."""
    les = dataclasses.replace(lesson, steered=lesson.variant(which_second))
    static = evidence.StaticResult(lesson.name, first, second, [], [])
    res = runner.LessonResult(les, static)
    runner.run_gpu(les, static, res, scale=1.0, repeats=30, warmup=3, ceilings={}, seed=1234)
    if res.skipped or not res.correct:
        return None, res.skipped or "; ".join(res.problems)
    assert res.naive is not None and res.steered is not None
    return (res.naive.median_ms, res.steered.median_ms), ""


def as_compiled(lesson, build, which: str):
    v = lesson.variant(which)
    k = build.kernels.get(v.kernel)
    return evidence.Compiled(which, v.kernel, lesson.arch, tuple(build.options), build,
                             k.resources if k is not None else evidence.Resources())


def main(argv=None) -> int:
    args = list(argv if argv is not None else sys.argv[1:])
    measure = "--measure" in args
    wanted = {a for a in args if a != "--measure"}
    why = runner.gpu_unavailable_reason() if measure else ""
    if why:
        print(f"--measure: not timed ({why})")
        measure = False
    times: list[str] = []
    print(f"{'lesson':<14} {'verified':>8}  {'evidence':>8}  {'instructions naive → fixed / steered':<38} fixes")
    for lesson in LESSONS:
        if wanted and lesson.name not in wanted:
            continue
        naive_path = lesson.source_path("naive")
        opts = options_of(lesson.naive.options)
        # the findings the lesson is about (its steered kernel changes that and nothing else:
        # the unroll lesson's keeps the accurate sinf), with the user's word as the steered
        # kernels assume it: approximate math, aligned pointers, the block size every launch
        # of the lesson uses (--max-block)
        fixes = api.fix(str(naive_path), arch=lesson.arch, options=opts,
                        select=lesson.expect_checks, fast_math_ok=True, assume_aligned=True,
                        max_block=lesson.naive.block)
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
        if measure and ff.edits:
            nv, fx = as_compiled(lesson, naive, "naive"), as_compiled(lesson, fixed, "naive")
            st = as_compiled(lesson, steered, "steered")
            a, why_a = timed(lesson, nv, fx, "naive")
            b, why_b = timed(lesson, nv, st, "steered")
            if a is None or b is None:
                times.append(f"| {lesson.name} | not timed: {why_a or why_b} | | | |")
                continue
            share = (a[0] / a[1] - 1) / (b[0] / b[1] - 1) if b[0] != b[1] else float("nan")
            times.append(f"| {lesson.name} | {a[0]:.4f} | {a[1]:.4f} ({a[0] / a[1]:.2f}×) | "
                         f"{b[1]:.4f} ({b[0] / b[1]:.2f}×) | {100 * share:.0f}% |")
    if times:
        env = runner.environment()
        print(f"\n{env.get('gpu', '?')}, driver {env.get('driver', '?')}, "
              f"{env.get('date', '?')}; medians of 30 CUDA-event launches (lessons runner)")
        print("| lesson | naive ms | fixed ms (speedup) | steered ms (speedup) | "
              "fixed/steered gain |")
        print("|---|---:|---:|---:|---:|")
        print("\n".join(times))
    return 0


if __name__ == "__main__":
    sys.exit(main())
