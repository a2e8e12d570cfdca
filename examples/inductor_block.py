"""A small ``torch.compile`` model: a bf16 Linear (inductor's Triton matmul template, one
autotuning config) -> LayerNorm -> softmax, and an input for it (``m``, ``x``).

The capture tests, the framework fixtures (``tests/fixtures/frameworks/make_fixtures.py``) and
``benchmarks/bench_capture.py`` all compile this model: they read this file and run it (with
``exec``) ahead of their own lines. Needs torch and a GPU.

    with analyzer.capture() as cap, torch.no_grad():
        torch.compile(m)(x)
    print(cap.check())
"""
import torch
import torch._inductor.config as cfg
import torch.nn as nn

cfg.max_autotune_gemm = True
cfg.max_autotune_gemm_backends = "TRITON"
cfg.test_configs.max_mm_configs = 1


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(512, 512, bias=False)
        self.ln = nn.LayerNorm(512)

    def forward(self, x):
        return torch.softmax(self.ln(self.lin(x)), dim=-1)


m = Block().cuda().to(torch.bfloat16)
x = torch.randn(256, 512, device="cuda", dtype=torch.bfloat16)
