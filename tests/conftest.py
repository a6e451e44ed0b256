"""Shared test configuration: GPU tests skip themselves when no CUDA GPU is present."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from cocktail._xp import cuda_available  # noqa: E402


def pytest_configure(config):
    # Under compute-sanitizer, CuPy's memory pool would hide out-of-bounds accesses inside pooled blocks.
    if os.environ.get("COCKTAIL_NO_CUPY_POOL") and cuda_available():
        import cupy

        cupy.cuda.set_allocator(None)
        cupy.cuda.set_pinned_memory_allocator(None)


def pytest_collection_modifyitems(config, items):
    if cuda_available():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU (CuPy missing or no device)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
