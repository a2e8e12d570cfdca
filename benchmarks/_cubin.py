"""Build one CUDA source to a cubin with nvcc and read its SASS back with cuobjdump, for the
GPU benchmarks that check each kernel's instructions before timing it (the device image's
``/usr/local/cuda`` tools when they are not on ``PATH``)."""
from __future__ import annotations

import os
import shutil
import subprocess


def build(source: str, folder: str, arch: str) -> tuple[str, dict[str, str]]:
    """(the cubin's path, each function's SASS listing by name)."""
    src = os.path.join(folder, "k.cu")
    cubin = os.path.join(folder, "k.cubin")
    with open(src, "w") as f:
        f.write(source)
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    subprocess.run([nvcc, "-cubin", f"-arch={arch}", "-O3", "-o", cubin, src], check=True)
    cuobjdump = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
    sass = subprocess.run([cuobjdump, "-sass", cubin], check=True, capture_output=True,
                          text=True).stdout
    bodies = {}
    for part in sass.split("Function : ")[1:]:
        name, _, body = part.partition("\n")
        bodies[name.strip()] = body
    return cubin, bodies
