"""Where a measurement was taken: device, software versions, commit and date."""

from __future__ import annotations

import datetime
import os
import subprocess
from pathlib import Path


def commit() -> str:
    """The commit measured: ``$COCKTAIL_COMMIT`` (for copies of the tree without .git), else git's HEAD."""
    if os.environ.get("COCKTAIL_COMMIT"):
        return os.environ["COCKTAIL_COMMIT"]
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent, capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 else "unknown"


def provenance(gpu: bool) -> dict:
    """``gpu``, ``cuda``, ``cupy``, ``commit`` and ``date`` (UTC, ISO 8601) for benchmark records."""
    info = {"gpu": "none (CPU)", "cuda": "", "cupy": "", "commit": commit(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    if gpu:
        import cupy

        from .kernels.device import current

        v = cupy.cuda.runtime.runtimeGetVersion()
        info.update(gpu=current().name, cuda=f"{v // 1000}.{v % 1000 // 10}", cupy=cupy.__version__)
    return info
