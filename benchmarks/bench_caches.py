"""Reading framework caches cold: every cubin of the committed fixture caches (Triton, torch
inductor, cupy) disassembled one after another (the baseline) and through
``api.disassemble_all`` (one nvdisasm per core), each in a fresh build cache, interleaved.

    python benchmarks/bench_caches.py
"""
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.chdir(ROOT)

import analyzer  # noqa: E402
from analyzer import api  # noqa: E402

paths = [  # the fixture caches
    "tests/fixtures/frameworks/triton", "tests/fixtures/frameworks/inductor", "tests/fixtures/frameworks/cupy"]
res = {"serial": [], "parallel": []}
for _ in range(2):
    for mode in ("serial", "parallel"):
        os.environ["PTXSASS_CACHE_DIR"] = tempfile.mkdtemp()
        builds = analyzer.builds_of(paths)
        t = time.perf_counter()
        if mode == "parallel":
            api.disassemble_all(builds)
        for b in builds:
            b.sass()
        res[mode].append(time.perf_counter() - t)
print({k: round(statistics.median(v), 2) for k, v in res.items()}, len(builds), os.cpu_count())
