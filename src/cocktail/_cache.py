"""The user cache directory: generated suite matrices, device profiles and planner decisions."""

from __future__ import annotations

import json
import os
from pathlib import Path


def cache_dir() -> Path:
    """``$COCKTAIL_CACHE``, else ``$XDG_CACHE_HOME/cocktail``, else ``~/.cache/cocktail``."""
    if os.environ.get("COCKTAIL_CACHE"):
        return Path(os.environ["COCKTAIL_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "cocktail"


def write_json(path: Path, obj) -> None:
    """Write ``obj`` as JSON atomically: a killed process never leaves a truncated file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(obj, indent=1, sort_keys=True))
    tmp.replace(path)
