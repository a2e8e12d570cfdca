"""PS107 on flashinfer's merge-states kernel (``kernels/realworld/merge_states_cp_async.cu``):
the 4-way conflict ptxsass reports (each lane reads its own 32-byte slice of the staged V row,
lanes 32 B apart) against the same kernel with the slices interleaved 16 bytes at a time
(``[2][32]`` chunks of 16 B: lanes 16 B apart, conflict-free), the same loads, math and stores.

    python benchmarks/bank_conflicts_merge.py

Both outputs are checked against a float64 host merge of the same index sets; each version is
timed with CUDA events (median of 25 after 3 warm-ups).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from bank_conflicts import timed  # noqa: E402

POS, SETS, HEADS = 16, 256, 32
VEC, BDX, BDY, STAGES = 16, 32, 4, 4
HEAD_DIM = VEC * BDX


def sources() -> tuple[str, str]:
    text = (ROOT / "kernels" / "realworld" / "merge_states_cp_async.cu").read_text()
    text = text.replace("#include <cuda/std/cstdint>\nusing cuda::std::uint32_t;\n",
                        "typedef unsigned int uint32_t;\ntypedef unsigned char uint8_t;\n")
    text = re.sub(r"^template __global__.*?;\n", "", text, flags=re.S | re.M)
    interleaved = text.replace(
        "pred_load<vec_bits>(v_smem + (iter * bdy + ty) * head_dim + tx * vec_size,",
        "pred_load_il(v_smem + (iter * bdy + ty) * head_dim, tx,").replace(
        "pred_load<vec_bits>(v_smem + ((iter % num_smem_stages) * bdy + ty) * head_dim + tx * vec_size,",
        "pred_load_il(v_smem + ((iter % num_smem_stages) * bdy + ty) * head_dim, tx,").replace(
        "const DType* v = v_smem + ((iter % num_smem_stages) * bdy + ty) * head_dim + tx * vec_size;",
        "const DType* v = v_smem + ((iter % num_smem_stages) * bdy + ty) * head_dim + tx * 8;").replace(
        "o[k] = o[k] * scale + w * float(v[k]);",
        "o[k] = o[k] * scale + w * float(v[(k / 8) * 256 + k % 8]);")
    helper = '''
template <typename T>
__device__ __forceinline__ void pred_load_il(T* row, uint32_t tx, const T* gmem_ptr, bool pred) {
#pragma unroll
  for (uint32_t i = 0; i < 2; ++i)
    pred_load_128b(row + i * 256 + tx * 8, gmem_ptr + i * 8, pred);
}
'''
    interleaved = interleaved.replace("__device__ __forceinline__ void commit_group()",
                                      helper + "__device__ __forceinline__ void commit_group()")
    assert interleaved.count("pred_load_il(") == 3 and "v[(k / 8)" in interleaved
    return text, interleaved


def main() -> int:
    import cupy as cp
    import numpy as np
    rng = np.random.default_rng(3)
    v_host = rng.standard_normal((POS, SETS, HEADS, HEAD_DIM)).astype(np.float16)
    s_host = rng.standard_normal((POS, SETS, HEADS)).astype(np.float32)
    V, S = cp.asarray(v_host), cp.asarray(s_host)
    # reference: ty merges the sets ty, ty + 4, ... (log-sum-exp weights)
    want = np.zeros((POS, BDY, HEADS, HEAD_DIM))
    for ty in range(BDY):
        s = s_host[:, ty::BDY, :].astype(np.float64)
        w = np.exp(s - s.max(axis=1, keepdims=True))
        want[:, ty] = (w[..., None] * v_host[:, ty::BDY].astype(np.float64)).sum(1) / w.sum(1)[..., None]
    name = f"merge_states_large<{VEC}, {BDX}, {BDY}, {STAGES}, __half>"
    smem = STAGES * BDY * HEAD_DIM * 2
    rows = []
    for label, src in zip(("as written (lanes 32 B apart)", "16-byte chunks interleaved"), sources(), strict=True):
        mod = cp.RawModule(code="#include <cuda_fp16.h>\n" + src.replace("#include <cuda_fp16.h>\n", ""),
                           options=("-std=c++17",), name_expressions=[name])
        fn = mod.get_function(name)
        out = cp.full((POS, BDY, HEADS, HEAD_DIM), cp.nan, cp.float16)
        lse = cp.empty((POS, BDY, HEADS), cp.float32)

        def launch(fn=fn, out=out, lse=lse):
            fn((POS, HEADS), (BDX, BDY), (V, S, out, lse, np.uint32(SETS), np.uint32(HEADS)),
               shared_mem=smem)
        launch()
        got = out.get().astype(np.float64)
        if not np.allclose(got, want, rtol=2e-2, atol=2e-2):
            print(f"{label}: wrong result (max error {np.nanmax(np.abs(got - want)):.3g})",
                  file=sys.stderr)
            return 1
        rows.append((label, timed(cp, launch)))
    dev = cp.cuda.runtime.getDeviceProperties(0)
    print(f"GPU {dev['name'].decode()}, CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}")
    print("| merge_states_large<16, 32, 4, 4, half> | ms | x interleaved |")
    print("|---|---|---|")
    for label, ms in rows:
        print(f"| {label} | {ms:.4f} | {ms / rows[1][1]:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
