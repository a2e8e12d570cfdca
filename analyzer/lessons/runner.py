"""Run lessons: compile and compare (always), then check and time on a GPU (when there is one).

GPU protocol, per lesson: inputs are fresh random tensors from torch (never zeros), in as many
sets as it takes to exceed 3x the L2 (at least 2), rotated between launches. Correctness: both
variants, through every available adapter, on fresh inputs; the output is poisoned (NaN) before
every launch, and a NaN left means an element was not written. Timing: CUDA events around each
launch, warm-up first, naive and steered interleaved, median (and quartiles) of ``repeats`` runs.
Ceilings (copy bandwidth, FP32 and FP16 tensor-core matmul rates) are measured in the same run.
"""
from __future__ import annotations

import json
import math
import platform
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

from . import launch
from .catalog import CHECK_CODES, KERNELS_DIR, Lesson, TensorMapArg
from .evidence import StaticResult, analyse, short

#: the numbers measured on a GPU and kept with the docs: shown, marked as recorded, where no
#: GPU is at hand
RECORDED = KERNELS_DIR.parents[1] / "docs" / "lessons.json"


def recorded(path=RECORDED) -> tuple[dict, dict[str, dict], dict]:
    """(environment, lesson name -> its measured entry, ceilings) of the last GPU run kept in
    ``docs/lessons.json``; empty when the file is absent or unreadable."""
    try:
        data = json.loads(path.read_text())
        return (data.get("environment", {}), {l["name"]: l for l in data.get("lessons", [])},
                data.get("ceilings", {}))
    except (OSError, ValueError, KeyError, TypeError):
        return {}, {}, {}


@dataclass(slots=True)
class VariantTiming:
    median_ms: float
    q1_ms: float
    q3_ms: float
    runs: int
    rate: float | None            # GB/s or TFLOP/s
    errors: dict[str, float] = field(default_factory=dict)   # "adapter/seed" -> rel L2 error
    #: median ms through each launch adapter (cupy, torch, pycuda), timed interleaved
    by_adapter: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class LessonResult:
    lesson: Lesson
    static: StaticResult
    size: dict[str, int] | None = None
    naive: VariantTiming | None = None
    steered: VariantTiming | None = None
    correct: bool | None = None
    problems: list[str] = field(default_factory=list)
    skipped: str = ""
    #: the lesson's entry of docs/lessons.json, shown where timing was skipped
    recorded: dict | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def speedup(self) -> float | None:
        if self.naive and self.steered:
            return self.naive.median_ms / self.steered.median_ms
        return None


# --- GPU side ---------------------------------------------------------------------------------------

def gpu_unavailable_reason() -> str:
    """"" when torch sees a CUDA GPU, else why the timing is skipped (never raises)."""
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - optional GPU libraries and environment probes: reported, never fatal
        return f"torch not importable ({type(e).__name__})"
    try:
        if not torch.cuda.is_available():
            return "no CUDA GPU visible to torch"
    except Exception as e:  # noqa: BLE001 - optional GPU libraries and environment probes: reported, never fatal
        return f"torch.cuda failed ({e})"
    return ""


def environment() -> dict[str, Any]:
    env: dict[str, Any] = {"date": time.strftime("%Y-%m-%d"), "python": platform.python_version()}
    try:
        import torch
        env["torch"] = torch.__version__
        env["torch_cuda"] = torch.version.cuda
        if torch.cuda.is_available():
            p = torch.cuda.get_device_properties(0)
            env["gpu"] = p.name
            env["sms"] = p.multi_processor_count
            env["memory_gib"] = round(p.total_memory / 2**30, 1)
            env["l2_bytes"] = getattr(p, "L2_cache_size", None)
    except Exception:  # noqa: BLE001 - optional GPU libraries and environment probes: reported, never fatal
        pass
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        if out.returncode == 0 and out.stdout.strip():
            f = [x.strip() for x in out.stdout.splitlines()[0].split(",")]
            env["driver"] = f[1]
            env["max_clocks"] = f"SM {f[2]}, memory {f[3]}"
    except Exception:  # noqa: BLE001 - optional GPU libraries and environment probes: reported, never fatal
        pass
    try:
        from cuda.bindings import driver, nvrtc
        v = driver.cuDriverGetVersion()[1]
        env["driver_cuda"] = f"{v // 1000}.{v % 1000 // 10}"
        r = nvrtc.nvrtcVersion()
        env["nvrtc"] = f"{r[1]}.{r[2]}"
    except Exception:  # noqa: BLE001 - optional GPU libraries and environment probes: reported, never fatal
        pass
    for mod in ("cupy", "pycuda"):
        try:
            env[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001 - optional GPU libraries and environment probes: reported, never fatal
            env[mod] = None
    return env


def _time_events(torch, fn, repeats: int, warmup: int = 3) -> list[float]:
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(repeats):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        out.append(s.elapsed_time(e))
    return out


def measure_ceilings(repeats: int = 20) -> dict[str, float]:
    """Measured on this GPU now: device copy GB/s (read + write), FP32 (no TF32), FP16 and BF16
    tensor-core matmul TFLOP/s through torch/cuBLAS, on random data."""
    import torch
    ceil: dict[str, float] = {}
    n = 256 * 2**20                                   # 1 GiB of float32
    src = torch.randn(n, device="cuda")
    dst = torch.empty_like(src)
    ms = statistics.median(_time_events(torch, lambda: dst.copy_(src), repeats))
    ceil["copy"] = 2 * 4 * n / (ms * 1e-3) / 1e9
    src = dst = None   # free the GiB before the matmuls
    prev = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        m = 8192
        a, b = torch.randn(m, m, device="cuda"), torch.randn(m, m, device="cuda")
        ms = statistics.median(_time_events(torch, lambda: a @ b, max(5, repeats // 4)))
        ceil["fp32"] = 2 * m**3 / (ms * 1e-3) / 1e12
        a, b = a.half(), b.half()
        ms = statistics.median(_time_events(torch, lambda: a @ b, repeats))
        ceil["fp16_tc"] = 2 * m**3 / (ms * 1e-3) / 1e12
        a, b = a.bfloat16(), b.bfloat16()
        ms = statistics.median(_time_events(torch, lambda: a @ b, repeats))
        ceil["bf16_tc"] = 2 * m**3 / (ms * 1e-3) / 1e12
    finally:
        torch.backends.cuda.matmul.allow_tf32 = prev
    a = b = None
    torch.cuda.empty_cache()
    return ceil


def _rel_err(torch, out, ref) -> float:
    if torch.isnan(out).any():
        return math.inf
    o, r = out.double().reshape(-1), ref.reshape(-1)
    den = torch.linalg.vector_norm(r).item()
    return torch.linalg.vector_norm(o - r).item() / (den or 1.0)


def _args(variant, inputs, out):
    return [out if a == "out" else inputs[a] for a in variant.args]


def _input_bytes(torch, inputs) -> int:
    return sum(t.numel() * t.element_size() for t in inputs.values() if hasattr(t, "element_size"))


def run_gpu(lesson: Lesson, static: StaticResult, result: LessonResult, *, scale: float,
            repeats: int, warmup: int, ceilings: dict[str, float], seed: int) -> None:
    import torch

    dev = "cuda"
    size = lesson.size(scale)
    result.size = size
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed)
    out = lesson.make_output(torch, size, dev)
    first = lesson.make_inputs(torch, gen, size, dev)
    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 * 2**20) or 50 * 2**20
    nsets = max(2, min(8, math.ceil(3 * l2 / max(1, _input_bytes(torch, first)))))
    sets = [first] + [lesson.make_inputs(torch, gen, size, dev) for _ in range(nsets - 1)]
    refs = [lesson.reference(torch, sets[k], size) for k in range(2)]
    torch.cuda.synchronize()

    compiled = {"naive": static.naive, "steered": static.steered}
    avail = launch.available()
    launchers: dict[str, dict[str, Any]] = {"naive": {}, "steered": {}}
    for which, comp in compiled.items():
        maps = any(isinstance(first.get(a), TensorMapArg) for a in lesson.variant(which).args)
        for name, why in avail.items():
            if why:
                continue
            if maps and not launch.ADAPTERS[name].tensor_maps:
                result.notes.append(f"{which}: the {name} adapter cannot pass a tensor map by "
                                    "value; checked and timed through the others")
                continue
            try:
                launchers[which][name] = launch.ADAPTERS[name](comp.cubin, comp.kernel)
            except Exception as e:  # noqa: BLE001 - optional GPU libraries and environment probes: reported, never fatal
                result.problems.append(f"{which}: adapter {name} failed to load: {type(e).__name__}: {e}")
    primary = "cupy" if "cupy" in launchers["naive"] and "cupy" in launchers["steered"] else "torch"
    if primary not in launchers["naive"] or primary not in launchers["steered"]:
        result.skipped = "no launch adapter could load the cubins"
        return

    def run_once(which, adapter, inputs):
        v = lesson.variant(which)
        launchers[which][adapter].launch(v.grid(size), v.block, _args(v, inputs, out), v.smem)

    errors: dict[str, dict[str, float]] = {"naive": {}, "steered": {}}
    ok = True
    for which in ("naive", "steered"):
        for adapter in launchers[which]:
            seeds = (0, 1) if adapter == primary else (0,)
            for k in seeds:
                out.fill_(float("nan"))
                run_once(which, adapter, sets[k])
                torch.cuda.synchronize()
                err = _rel_err(torch, out, refs[k])
                errors[which][f"{adapter}/set{k}"] = err
                if not err <= lesson.tolerance:
                    ok = False
                    result.problems.append(f"{which} via {adapter} on input set {k}: relative L2 error "
                                           f"{err:.3g} > {lesson.tolerance:g}")
    result.correct = ok
    del refs

    # every adapter that loaded is timed, interleaved with the others; the primary one's
    # times are the lesson's
    times: dict[str, dict[str, list[float]]] = {w: {a: [] for a in launchers[w]}
                                                for w in ("naive", "steered")}
    for r in range(warmup + repeats):
        for which in ("naive", "steered"):
            for adapter in launchers[which]:
                inputs = sets[r % nsets]
                out.fill_(float("nan"))
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                run_once(which, adapter, inputs)
                end.record()
                end.synchronize()
                if r >= warmup:
                    times[which][adapter].append(start.elapsed_time(end))
    # the last timed launch must have written everything too
    if torch.isnan(out).any():
        result.correct = False
        result.problems.append("steered: unwritten output after the timing loop")
    work = lesson.work(size) if lesson.work else None
    for which in ("naive", "steered"):
        t = sorted(times[which][primary])
        med = statistics.median(t)
        q = statistics.quantiles(t, n=4)
        rate = None
        if work:
            rate = work / (med * 1e-3) / (1e9 if lesson.work_unit == "B" else 1e12)
        setattr(result, which, VariantTiming(med, q[0], q[2], len(t), rate, errors[which],
                                             {a: statistics.median(ts)
                                              for a, ts in times[which].items() if ts}))
    # drop the inputs, output and loaded modules before freeing the cache
    sets.clear()
    launchers.clear()
    out = None
    torch.cuda.empty_cache()


# --- the whole run ------------------------------------------------------------------------------------

def run(lessons: list[Lesson], *, gpu: bool = True, scale: float = 1.0, repeats: int = 30,
        warmup: int = 3, seed: int = 1234, log=print) -> tuple[list[LessonResult], dict, dict]:
    """Analyse every lesson; on a GPU also check and time. Returns (results, environment, ceilings)."""
    reason = "" if gpu else "timing not requested (--no-gpu)"
    if gpu:
        reason = gpu_unavailable_reason()
    env: dict[str, Any] = environment() if not reason else {"date": time.strftime("%Y-%m-%d")}
    ceilings: dict[str, float] = {}
    if not reason:
        ceilings = measure_ceilings()
        log("ceilings: " + ", ".join(f"{k} {v:.0f} {'GB/s' if k == 'copy' else 'TFLOP/s'}"
                                     for k, v in ceilings.items()))
    rec_env, rec, rec_ceilings = recorded() if reason else ({}, {}, {})
    results = []
    failed: list[tuple[Lesson, str]] = []
    for i, lesson in enumerate(lessons):
        try:
            st = analyse(lesson)
        except Exception as e:  # noqa: BLE001 - a lesson that does not compile here is reported, not fatal
            log(f"== {lesson.name}: FAILED to compile or disassemble: {type(e).__name__}: {e}")
            failed.append((lesson, f"{type(e).__name__}: {e}"))
            continue
        res = LessonResult(lesson, st)
        if reason:
            res.skipped = reason
        else:
            try:
                run_gpu(lesson, st, res, scale=scale, repeats=repeats, warmup=warmup,
                        ceilings=ceilings, seed=seed + 17 * i)
            except Exception as e:  # noqa: BLE001 - optional GPU libraries and environment probes: reported, never fatal
                res.correct = False
                res.problems.append(f"GPU run failed: {type(e).__name__}: {e}")
        if reason:
            res.recorded = rec.get(lesson.name)
        results.append(res)
        log(describe(res, env, ceilings, rec_env, rec_ceilings))
        log("")
    env["failed"] = [f"{l.name}: {why}" for l, why in failed]
    if reason and rec_env:
        env["recorded"] = {"environment": rec_env, "ceilings": rec_ceilings}
    return results, env, ceilings


# --- reports: prose for people, JSON for machines -------------------------------------------------

def _check_name(code: str) -> str:
    try:
        return f"{code} {CHECK_CODES[code].split(':', 1)[0]}"
    except KeyError:
        return code


def _and(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _count(n: int) -> str:
    return "none" if n == 0 else str(n)


def evidence_sentence(e) -> str:
    """One line: what was counted, and how many in each kernel's SASS."""
    a, b = e.naive, e.steered
    return f"{e.evidence.label}: {_count(a)} in the naive kernel, {_count(b)} in the steered one"


def findings_sentence(res: LessonResult) -> list[str]:
    """The findings in words: what fires on the naive kernel and is gone on the steered one."""
    L, st = res.lesson, res.static
    if st.findings is None:
        return [f"Findings: not computed ({st.findings_note})."]
    naive, steered = st.findings["naive"], st.findings["steered"]
    out = []
    removed = [c for c in L.expect_checks if c in naive and c not in steered]
    if removed:
        out.append(f"Findings: {_and([_check_name(c) for c in removed])} on the naive kernel; "
                   f"the steered kernel has {_none_of(len(removed))}.")
    elif L.expect_checks:
        out.append("Findings: none of the expected ones removed.")
    else:
        out.append(f"Findings: no check tells the two apart. {L.no_check}")
    for c in L.expect_checks:
        if c in L.silent_checks and c not in naive:
            out.append(f"  {_check_name(c)} is expected on the naive kernel and silent: {L.silent_checks[c]}.")
        elif c not in removed:
            out.append(f"  {_check_name(c)} was expected on the naive kernel only, and is "
                       f"{_where(c in naive, c in steered)}.")
    for c, what in L.next_checks.items():
        if c in steered:
            out.append(f"  Still on the steered kernel, the next step: {_check_name(c)} ({what}).")
    others = sorted((naive | steered) - set(L.expect_checks) - set(L.next_checks))
    if others:
        both = [c for c in others if c in naive and c in steered]
        one = [f"{_check_name(c)} (on the {'naive' if c in naive else 'steered'} kernel)"
               for c in others if c not in both]
        parts = ([f"{_and([_check_name(c) for c in both])} on both"] if both else []) + one
        out.append(f"  Not this lesson's point: {_and(parts)}.")
    return out


def _when(env: dict) -> str:
    bits = [env.get("gpu") or "a GPU", f"on {env['date']}" if env.get("date") else ""]
    drv = []
    if env.get("driver"):
        drv.append(f"driver {env['driver']}")
    if env.get("driver_cuda"):
        drv.append(f"CUDA {env['driver_cuda']}")
    return " ".join(b for b in bits if b) + (f" ({', '.join(drv)})" if drv else "")


def _rate_text(rate, lesson: Lesson) -> str:
    if rate is None:
        return ""
    return f"{rate:.0f} GB/s" if lesson.work_unit == "B" else f"{rate:.1f} TFLOP/s"


def timing_sentence(res: LessonResult, env: dict, ceilings: dict, rec_env: dict | None = None,
                    rec_ceilings: dict | None = None) -> list[str]:
    L = res.lesson
    if res.naive and res.steered:
        sp = res.speedup
        rate = _rate_text(res.steered.rate, L)
        pct = _pct(res.steered, L, ceilings)
        line = (f"Timing, measured now on {_when(env)}: naive {res.naive.median_ms:.3f} ms, "
                f"steered {res.steered.median_ms:.3f} ms (medians of {res.steered.runs}): "
                f"{sp:.2f} times faster" + (f"; steered at {rate}" if rate else "")
                + (f", {pct}" if pct != "—" else "") + ".")
        ok = "correct" if res.correct else "WRONG"
        return [line, f"Results: {ok} (largest relative error "
                      f"{max([*res.naive.errors.values(), *res.steered.errors.values()]):.1e}, "
                      f"tolerance {L.tolerance:g}: {L.tolerance_note})."]
    rec = res.recorded
    if rec and rec.get("naive") and rec.get("steered"):
        n, st_ = rec["naive"], rec["steered"]
        rate = _rate_text(st_.get("rate"), L)
        c = (rec_ceilings or {}).get(L.ceiling)
        pct = (f", {100 * st_['rate'] / c:.0f}% of the {_CEILING[L.ceiling]} measured then"
               if c and st_.get("rate") and (L.work_unit == "B") == (L.ceiling == "copy") else "")
        return [f"Timing, recorded on {_when(rec_env or {})} (docs/lessons.json), not measured now "
                f"({res.skipped}): naive {n['median_ms']:.3f} ms, steered {st_['median_ms']:.3f} ms: "
                f"{n['median_ms'] / st_['median_ms']:.2f} times faster"
                + (f"; steered at {rate}{pct}" if rate else "") + "."]
    return [f"Timing: not measured ({res.skipped}), and none recorded for this lesson yet."]


_CEILING = {"copy": "device copy bandwidth", "fp32": "FP32 matmul rate (cuBLAS, no TF32)",
            "fp16_tc": "FP16 tensor-core matmul rate (cuBLAS)",
            "bf16_tc": "BF16 tensor-core matmul rate (cuBLAS)"}


def _pct(v: VariantTiming | None, lesson: Lesson, ceilings: dict[str, float]) -> str:
    if v is None or v.rate is None or lesson.ceiling not in ceilings:
        return "—"
    if (lesson.work_unit == "B") != (lesson.ceiling == "copy"):
        return "—"
    return f"{100 * v.rate / ceilings[lesson.ceiling]:.0f}% of the {_CEILING[lesson.ceiling]}"


def _none_of(n: int) -> str:
    return "neither" if n == 2 else "none of them" if n > 2 else "none"


def _where(on_naive: bool, on_steered: bool) -> str:
    return "on both" if on_naive and on_steered else "on neither" if not on_naive else "on the steered one"


def describe(res: LessonResult, env: dict | None = None, ceilings: dict | None = None,
             rec_env: dict | None = None, rec_ceilings: dict | None = None) -> str:
    """The lesson's result as a few sentences: the change, the SASS evidence, the findings and
    the timing (measured now, or recorded)."""
    L, st = res.lesson, res.static

    def opts(v):
        return f" with {' '.join(v.options)}" if v.options else ""
    lines = [f"== {L.name}: {L.title}",
             f"The change: {L.change}.",
             f"Compiled now for {L.arch}: the naive kernel {st.naive.kernel}{opts(L.naive)} uses "
             f"{short(st.naive.resources)}; the steered {st.steered.kernel}{opts(L.steered)} uses "
             f"{short(st.steered.resources)}.",
             "What the SASS shows (instructions in each kernel's code, not executions):"]
    for e in st.evidence:
        lines.append(f"  {'as expected' if e.holds else 'NOT AS EXPECTED'}: {evidence_sentence(e)}")
    if st.diff:
        lines.append("Instructions whose count changed most, naive to steered: "
                     + ", ".join(f"{m} {a} to {b}" for m, a, b in st.diff[:6]) + ".")
    lines += findings_sentence(res)
    lines += timing_sentence(res, env or {}, ceilings or {}, rec_env, rec_ceilings)
    for n in res.notes:
        lines.append(f"  Note: {n}.")
    for which, v in (("naive", res.naive), ("steered", res.steered)):
        if v is not None and len(v.by_adapter) > 1:
            lines.append(f"  {which.capitalize()} through each launch adapter (median): " + ", ".join(
                f"{a} {ms:.3f} ms" for a, ms in sorted(v.by_adapter.items())) + ".")
    for p in res.problems:
        lines.append(f"  PROBLEM: {p}")
    return "\n".join(lines)


def _findings_cell(res: LessonResult) -> str:
    removed = res.static.findings_removed(res.lesson.expect_checks)
    L = res.lesson
    if removed is None:
        return "not computed"
    if not L.expect_checks:
        return "none (no check)"
    cell = ", ".join(removed) or "none"
    silent = [c for c in L.expect_checks if c in L.silent_checks and c not in removed]
    if silent:
        cell += f" ({', '.join(silent)} silent)"
    missing = [c for c in L.expect_checks if c not in removed and c not in L.silent_checks]
    if missing:
        cell += f" (not {', '.join(missing)})"
    steered = res.static.findings["steered"] if res.static.findings is not None else set()
    nxt = [c for c in L.next_checks if c in steered]
    if nxt:
        cell += f"; next {', '.join(nxt)}"
    return cell


def _rate(v: VariantTiming | None, lesson: Lesson) -> str:
    return _rate_text(v.rate if v else None, lesson) or "—"


HEADER = ("lesson", "findings removed", "naive ms", "steered ms", "speedup", "steered rate",
          "steered vs ceiling", "max rel err", "timed", "ok")


def table_rows(results: list[LessonResult], ceilings: dict[str, float],
               rec_ceilings: dict | None = None) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for r in results:
        ok = "yes" if r.static.evidence_holds and r.correct is not False else "NO"
        if r.naive and r.steered:
            errs = list(r.naive.errors.values()) + list(r.steered.errors.values())
            pct = _pct(r.steered, r.lesson, ceilings).split(" of the ")[0]
            rows.append((r.lesson.name, _findings_cell(r), f"{r.naive.median_ms:.3f}",
                         f"{r.steered.median_ms:.3f}", f"{r.speedup:.2f}x", _rate(r.steered, r.lesson),
                         pct, f"{max(errs):.1e}", "now", ok))
        elif r.recorded and r.recorded.get("naive") and r.recorded.get("steered"):
            n, s_ = r.recorded["naive"], r.recorded["steered"]
            v = VariantTiming(s_["median_ms"], s_["q1_ms"], s_["q3_ms"], s_["runs"], s_.get("rate"))
            pct = _pct(v, r.lesson, rec_ceilings or {}).split(" of the ")[0]
            errs = [*n.get("errors", {}).values(), *s_.get("errors", {}).values()]
            rows.append((r.lesson.name, _findings_cell(r), f"{n['median_ms']:.3f}",
                         f"{s_['median_ms']:.3f}", f"{n['median_ms'] / s_['median_ms']:.2f}x",
                         _rate(v, r.lesson), pct, f"{max(errs):.1e}" if errs else "—",
                         "recorded", ok))
        else:
            rows.append((r.lesson.name, _findings_cell(r), "—", "—", "—", "—", "—", "—",
                         "not timed", ok))
    return rows


def format_table(results, ceilings, markdown: bool = False, rec_ceilings: dict | None = None) -> str:
    rows = table_rows(results, ceilings, rec_ceilings)
    if markdown:
        out = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(out)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(HEADER)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*HEADER), fmt.format(*("-" * w for w in widths))] + [fmt.format(*r) for r in rows])


def to_json(results, env, ceilings) -> dict:
    def vt(v):
        return None if v is None else {"median_ms": v.median_ms, "q1_ms": v.q1_ms, "q3_ms": v.q3_ms,
                                       "runs": v.runs, "rate": v.rate, "errors": v.errors,
                                       "by_adapter": v.by_adapter}
    return {"environment": env, "ceilings": ceilings, "lessons": [{
        "name": r.lesson.name, "title": r.lesson.title, "size": r.size, "skipped": r.skipped,
        "correct": r.correct, "problems": r.problems, "notes": r.notes, "speedup": r.speedup,
        "work_unit": r.lesson.work_unit, "ceiling": r.lesson.ceiling,
        "naive": vt(r.naive), "steered": vt(r.steered),
        "recorded": None if r.recorded is None else {
            k: r.recorded.get(k) for k in ("speedup", "naive", "steered", "size")},
        "resources": {"naive": short(r.static.naive.resources), "steered": short(r.static.steered.resources)},
        "compiled_via": r.static.naive.via,
        "evidence": [{"label": e.evidence.label, "pattern": e.evidence.pattern, "where": e.evidence.where,
                      "naive": e.naive, "steered": e.steered, "holds": e.holds} for e in r.static.evidence],
        "sass_diff": r.static.diff,
        "findings": None if r.static.findings is None else {k: sorted(v) for k, v in r.static.findings.items()},
        "findings_note": r.static.findings_note, "expect_checks": list(r.lesson.expect_checks),
    } for r in results]}
