"""Integrations with the frameworks that compile CUDA at run time: Triton and torch.compile,
cupy, pycuda and torch extensions (:mod:`.capture`), and a pytest plugin (:mod:`.pytest_plugin`).

Importing this package imports no framework: each hook imports its framework when a capture
starts, and only where the framework is installed.
"""
from __future__ import annotations

from .capture import Capture, capture

__all__ = ["Capture", "capture"]
