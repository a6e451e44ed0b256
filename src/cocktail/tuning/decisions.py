"""The decision cache of ``tune="measure"``: plans kept on disk, keyed by structure, device and dtype.

A key is the structure fingerprint (shape, entries, row-length histogram:
:func:`~cocktail.tuning.features.structure_fingerprint`), the device key of the profile
module, the value and index dtypes, whether only deterministic kernels were allowed and the
planner's version.  A second matrix with the same
key reuses the measured plan without measuring.  The file is ``<cache>/decisions.json``, or
``$COCKTAIL_DECISIONS``; ``COCKTAIL_DECISIONS=off`` turns the cache off (the benchmark does, so
that every ``cocktail-measured`` record pays its own measurement).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from .. import _cache
from .planner import Plan

#: Bumped whenever plans from an older planner must not be reused.
PLANNER_VERSION = "planner-v2"
FILE_NAME = "decisions.json"


OFF = "off"


def path():
    """The decision cache file, or None when ``COCKTAIL_DECISIONS=off``."""
    chosen = os.environ.get("COCKTAIL_DECISIONS")
    if chosen == OFF:
        return None
    return Path(chosen) if chosen else _cache.cache_dir() / FILE_NAME


def key(fingerprint: str, device_key: str, dtype, index_dtype, deterministic: bool = False,
        vendor: bool = True) -> str:
    """The cache key of one structure on one device in one pair of dtypes, with or without ``deterministic=True``
    and the vendor's kernels."""
    import numpy as np

    order = "deterministic" if deterministic else "any-order"
    return "|".join([PLANNER_VERSION, fingerprint, device_key, np.dtype(dtype).name, np.dtype(index_dtype).name,
                     order, "vendor" if vendor else "own"])


def _read() -> dict:
    if path() is None:
        return {}
    try:
        return json.loads(path().read_text())
    except (OSError, ValueError):
        return {}  # no cache yet, or an unreadable one: decide afresh


def lookup(k: str) -> Plan | None:
    """The cached plan of key ``k``, or None."""
    entry = _read().get(k)
    if not entry:
        return None
    try:
        return Plan.from_json(entry["plan"])
    except (KeyError, TypeError, ValueError):
        return None


def store(k: str, plan: Plan) -> None:
    """Keep ``plan`` under key ``k`` (the whole file is rewritten atomically)."""
    if path() is None:
        return
    entries = _read()
    entries[k] = {"plan": plan.to_json(), "saved": time.strftime("%Y-%m-%dT%H:%M:%S")}
    _cache.write_json(path(), entries)
