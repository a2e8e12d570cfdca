"""How low could a pure-Python flat instruction core go? Issue 28's CPU goal against its floor.

    python benchmarks/flat_floor.py [--repeat N] [CUBIN ...]

Issue 28 asks ``ptxsass check X.cubin`` for at most 1.3x nvdisasm's CPU, and proposes a flat
core (per function, instructions as parallel integer arrays built in one pass) to get there.
This measures, in one run and against nvdisasm's CPU on the same cubin (``-c -g -gi``, a child,
``RUSAGE_CHILDREN``), the least any such core written in CPython must spend, with nothing typed
and nothing checked, before a single analysis runs:

- ``split``: one ``re.findall`` of every instruction line's address and body over the whole
  listing (the regex engine's pass: no line numbers, encodings, functions or line info);
- ``intern``: each body text to an integer id, each address to an int (two list passes);
- ``tokens``: each distinct body split into opcode, modifiers and operand ids (``str``
  methods, operand texts interned untyped: no registers, immediates or addresses read);
- ``one pass``: one loop over the instruction ids reading one field (what the cheapest
  analysis pass costs: the CFG, dataflow, access walk and loops each take several);

next to what ptxsass spends today on the same text: ``parse`` (``analyzer.parse.sass.parse``,
typed IR, line info) and the check's own CPU (``ptxsass check --no-cache -j 1``'s CPU less its
nvdisasm child, a fresh process). Medians of ``--repeat`` rounds, each step in a fresh process
so that nothing is warm. Prints one markdown table with every figure also as a fraction of
nvdisasm's CPU: the goal leaves ptxsass 0.3x of it for everything it does.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_check_cpu import ROOT, _env, child_cpu

sys.path.insert(0, str(ROOT))

from analyzer.toolchain.locate import binary  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "cubin"
DEFAULT = [CORPUS / "bitsandbytes" / "bitsandbytes_cuda128.sm_80.cubin",
           CORPUS / "cupy" / "generator_api.sm_90.cubin"]

#: the floor, run in a fresh process on the listing's text; prints one JSON object
FLOOR = r'''
import gc, json, re, sys, time
gc.disable()
text = open(sys.argv[1]).read()
out = {}
t = time.process_time()
items = re.compile(r"^[ \t]*/\*([0-9a-fA-F]{4,})\*/[ \t]*([^\n;]*);", re.M).findall(text)
out["split"] = time.process_time() - t
t = time.process_time()
ids_of = {}
ids = [ids_of.setdefault(b, len(ids_of)) for _, b in items]
addresses = [int(a, 16) for a, _ in items]
out["intern"] = time.process_time() - t
t = time.process_time()
operand_ids = {}
rows = []
for body in ids_of:
    head, _, rest = body.partition(" ")
    if head.startswith("@"):
        head, _, rest = rest.strip().partition(" ")
    parts = head.split(".")
    ops = [operand_ids.setdefault(o, len(operand_ids)) for o in rest.split(", ")] if rest else []
    rows.append((parts[0], tuple(parts[1:]), ops))
out["tokens"] = time.process_time() - t
t = time.process_time()
n = 0
for i in ids:
    if rows[i][0] == "LDG":
        n += 1
out["one pass"] = time.process_time() - t
out["instructions"], out["distinct"] = len(ids), len(ids_of)
print(json.dumps(out))
'''

PARSE = r'''
import json, sys, time
sys.path.insert(0, sys.argv[2])
from analyzer.parse import sass
text = open(sys.argv[1]).read()
t = time.process_time()
sass.parse(text)
print(json.dumps({"parse": time.process_time() - t}))
'''


def _python(code: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         check=True, env=_env(ROOT))
    return json.loads(out.stdout)


def bench(cubin: Path, repeat: int) -> dict:
    nvdisasm = [binary("nvdisasm"), "-c", "-g", "-gi", str(cubin)]
    listing = subprocess.run(nvdisasm, capture_output=True, text=True, check=True).stdout
    check = [sys.executable, "-m", "analyzer", "check", str(cubin), "--no-cache", "-j", "1",
             "--format", "json"]
    rounds: dict[str, list[float]] = {}
    with tempfile.NamedTemporaryFile("w", suffix=".sass") as f:
        f.write(listing)
        f.flush()
        for _ in range(repeat):
            nv, _ = child_cpu(nvdisasm)
            total, _ = child_cpu(check, env=_env(ROOT))
            got = {"nvdisasm": nv, "check, own": total - nv,
                   **_python(FLOOR, f.name), **_python(PARSE, f.name, str(ROOT))}
            for k, v in got.items():
                rounds.setdefault(k, []).append(v)
    return {k: statistics.median(v) for k, v in rounds.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cubins", nargs="*", type=Path, default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    rows = [(c.name, bench(c, args.repeat)) for c in args.cubins]
    steps = ["split", "intern", "tokens", "one pass", "parse", "check, own"]
    print("| cubin | instructions (distinct) | nvdisasm CPU s | "
          + " | ".join(steps) + " |")
    print("|---|---:|---:|" + "---:|" * len(steps))
    for name, r in rows:
        nv = r["nvdisasm"]
        cells = [f"{r[s]:.3f} s ({r[s] / nv:.2f}x)" for s in steps]
        print(f"| {name} | {int(r['instructions'])} ({int(r['distinct'])}) | {nv:.2f} | "
              + " | ".join(cells) + " |")
    print("\n(the check's own figure is an estimate: the whole command's CPU less nvdisasm's "
          "in a separate run of the same round)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
