"""Shared test configuration: GPU tests skip themselves when no CUDA GPU is present."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from cocktail._xp import cuda_available  # noqa: E402


def pytest_collection_modifyitems(config, items):
    if cuda_available():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU (CuPy missing or no device)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
