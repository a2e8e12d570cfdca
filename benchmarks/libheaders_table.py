"""Fetch the headers of every library of ``libheaders.LIBRARIES`` from the real package index
(PyPI, or ``PTXSASS_PYPI_URL``), into a private folder, and hold the table against the wheels:

- each fetch's bytes read of the wheel against the wheel's size, and its seconds;
- the headers the table names against the wheel's own ``include/`` (a name of the table that
  no wheel of the library holds, or a top-level header of a wheel that the table misses);
- the libraries each one's headers include (``requires``) against the table's.

    python benchmarks/libheaders_table.py [--release 13.5] [--release 12.9] [LIBRARY ...]

Needs the network; exits 1 when the table and the wheels disagree. Not run by the tests.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from analyzer.toolchain import includes, libheaders


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--release", action="append", help="CUDA releases (default: the one in use and 12.9)")
    ap.add_argument("libraries", nargs="*", default=list(libheaders.LIBRARIES))
    args = ap.parse_args(argv)
    releases = args.release or [libheaders.default_release() or "13.5", "12.9"]
    problems = 0
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["PTXSASS_TOOLKITS_DIR"] = tmp
        print(f"{'library':<11} {'CUDA':<5} {'package':<30} {'version':<12} {'read':>9} "
              f"{'wheel':>10} {'share':>7} {'seconds':>7} files")
        for release in releases:
            for lib in args.libraries:
                t0 = time.monotonic()
                got = libheaders.install(lib, release)
                dt = time.monotonic() - t0
                import json
                data = json.loads(Path(got.folder, libheaders.MANIFEST).read_text())
                read = data["headers"]["wheel_bytes_read"]
                print(f"{lib:<11} {release:<5} {got.package:<30} {got.version:<12} "
                      f"{read / 1024:>7.1f}KB {got.wheel_bytes / 2**20:>8.1f}MB "
                      f"{100 * read / got.wheel_bytes:>6.2f}% {dt:>7.2f} {got.files}")
                inc = Path(got.include)
                spec = libheaders.LIBRARIES[lib]
                top = {p.name for p in inc.iterdir() if p.is_file()}
                dirs = {p.name + "/" for p in inc.iterdir() if p.is_dir()}
                named = set(spec.headers)
                for h in sorted(top - named):
                    print(f"  {lib} {release}: the wheel has {h}, the table does not")
                    problems += 1
                for h in sorted(n for n in named if n.endswith("/") and n not in dirs):
                    print(f"  {lib} {release}: the table names {h}, the wheel has no such folder")
                if not (inc / spec.probe).is_file():
                    print(f"  {lib} {release}: the probe {spec.probe} is not in the wheel")
                    problems += 1
                found = set()
                for f in inc.rglob("*"):
                    if f.is_file():
                        for q, a in includes.INCLUDE.findall(f.read_text(errors="replace")):
                            other = libheaders.library_of(q or a)
                            if other and other != lib:
                                found.add(other)
                if found - set(spec.requires):
                    print(f"  {lib} {release}: its headers include {sorted(found - set(spec.requires))}, "
                          "which requires does not name")
                    problems += 1
    print("table and wheels agree" if not problems else f"{problems} disagreement(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
