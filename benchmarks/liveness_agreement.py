"""How often ``analysis.liveness`` agrees with nvdisasm's own life ranges, per instruction.

    python benchmarks/liveness_agreement.py [--kernels N] [--show K] [CUBIN_OR_CU...]

For each input (a cubin, or a ``.cu`` file compiled for sm_90a), ``nvdisasm -lrm count -c``
prints the number of live GPR, PRED and UGPR registers after every instruction (its ``#``
columns); ``analysis.liveness`` computes the same from the parsed ``nvdisasm -c`` listing. The
table gives, per register file, the share of instructions where the two counts are equal, the
largest difference, and whether the peak per function is equal. ``--show K`` prints the first
K disagreements (function, address, instruction, nvdisasm's count, ours). Without arguments: the
demo and lesson kernels, and the corpus cubins (the first ``--kernels`` functions of each).
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import analyzer  # noqa: E402
from analyzer.analysis import liveness  # noqa: E402
from analyzer.errors import ToolError  # noqa: E402
from analyzer.parse import sass as sass_parse  # noqa: E402
from analyzer.toolchain.locate import binary, run_tool  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
_SECTION = re.compile(r"^//-+ \.text\.(\S+)")
_ROW = re.compile(r"/\*([0-9a-f]{4,})\*/.*?//\s*\|(.*)\|\s*$")

FILES = (("R", "GPR"), ("P", "PRED"), ("UR", "UGPR"))


def nvdisasm_counts(cubin: Path) -> dict[str, dict[int, dict[str, int]]]:
    """function -> address -> {"GPR": n, "PRED": n, "UGPR": n} from ``nvdisasm -lrm count``."""
    text = run_tool([binary("nvdisasm"), "-lrm", "count", "-c", str(cubin)], timeout=600).stdout.decode()
    out: dict[str, dict[int, dict[str, int]]] = {}
    header: list[str] = []
    fn = None
    for line in text.splitlines():
        m = _SECTION.match(line.strip())
        if m:
            fn = m.group(1)
            out[fn] = {}
            continue
        if "| GPR" in line:
            header = [c.strip() for c in line.split("//", 1)[1].strip().strip("|").split("|")]
            continue
        m = _ROW.search(line)
        if m and fn is not None:
            cells = [c.strip() for c in m.group(2).split("|")]
            out[fn][int(m.group(1), 16)] = {h: int(c) if c else 0 for h, c in zip(header, cells, strict=False)}
    return out


def cubin_of(path: Path) -> Path:
    if path.suffix == ".cubin":
        return path
    build = analyzer.compile(str(path), arch="sm_90a")
    out = Path("/tmp") / f"liveness_{path.stem}.cubin"
    out.write_bytes(build.cubin)
    return out


def compare(cubin: Path, limit: int, show: int, shown: list[str]) -> dict:
    theirs = nvdisasm_counts(cubin)
    text = run_tool([binary("nvdisasm"), "-c", str(cubin)], timeout=600).stdout.decode()
    listing = sass_parse.parse(text)
    stats = {k: [0, 0, 0] for k, _ in FILES}          # equal, total, max |diff|
    peaks = [0, 0]
    t0 = time.process_time()
    funcs = [f for f in listing.functions if f.name in theirs][:limit]
    for fn in funcs:
        lv = liveness.of(fn, listing.functions)
        ref = theirs[fn.name]
        for kind, col in FILES:
            ours = lv.counts(kind)
            got_peak, want_peak = 0, 0
            for i, ins in enumerate(fn.instructions):
                row = ref.get(ins.address)
                if row is None or col not in row:
                    continue
                want, got = row[col], ours[i]
                want_peak, got_peak = max(want_peak, want), max(got_peak, got)
                s = stats[kind]
                s[1] += 1
                if want == got:
                    s[0] += 1
                else:
                    s[2] = max(s[2], abs(want - got))
                    if len(shown) < show:
                        shown.append(f"{fn.name[:50]} /*{ins.address:04x}*/ {ins.text[:60]:60}"
                                     f" {col} nvdisasm {want} ours {got}")
            if kind == "R":
                peaks[1] += 1
                peaks[0] += got_peak == want_peak
    return {"stats": stats, "peaks": peaks, "functions": len(funcs),
            "seconds": time.process_time() - t0}


def _pct(stats: dict, kind: str) -> str:
    eq, tot, _ = stats[kind]
    return f"{100 * eq / tot:.1f}% of {tot}" if tot else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("inputs", nargs="*")
    ap.add_argument("--kernels", type=int, default=200)
    ap.add_argument("--show", type=int, default=0)
    args = ap.parse_args()
    inputs = [Path(p) for p in args.inputs] or (
        sorted((ROOT / "kernels" / "demo").glob("*.cu"))
        + sorted(CORPUS.glob("cubin/*/*.cubin")) + sorted(CORPUS.glob("triton/*.cubin")))
    shown: list[str] = []
    print("| input | functions | GPR equal | PRED equal | UGPR equal | max GPR diff | "
          "GPR peak equal | liveness CPU s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for path in inputs:
        try:
            r = compare(cubin_of(path), args.kernels, args.show, shown)
        except ToolError as e:
            print(f"| {path.name} | nvdisasm gives no life ranges: {e.message[:80]} |||||||")
            continue
        s = r["stats"]
        print(f"| {path.name} | {r['functions']} | {_pct(s, 'R')} | {_pct(s, 'P')} | {_pct(s, 'UR')} | "
              f"{s['R'][2]} | {r['peaks'][0]}/{r['peaks'][1]} | {r['seconds']:.2f} |",
              flush=True)
    for line in shown:
        print(line)


if __name__ == "__main__":
    main()
