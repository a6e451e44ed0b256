"""The decision cache of ``format="auto"``: plans kept on disk, keyed by structure, device and dtype.

A key is the structure fingerprint (shape, entries, row-length histogram:
:func:`~cocktail.auto.features.structure_fingerprint`), the device key of the profile
module, the value and index dtypes, whether only deterministic kernels and the vendor's were
allowed, how the plan was decided (``tune``), the profile's digest (a recalibrated profile
decides afresh) and the planner's version.  A second matrix with the
same key reuses the plan without features, planning or timing: a Jacobian rebuilt every Newton
step, or any matrix of one structure built again, costs the fingerprint and the conversion.
The file is ``<cache>/decisions.json``, or ``$COCKTAIL_DECISIONS``; ``COCKTAIL_DECISIONS=off``
turns the cache off (the benchmark does, so that every record pays its own decision).  The
file is read once per process and again only when it changes; it keeps :data:`MAX_ENTRIES`
decisions, evicting modelled ones before measured ones, then the oldest.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .. import _cache
from .candidates import Plan

#: Bumped whenever plans from an older planner must not be reused.
PLANNER_VERSION = "planner-v4"
FILE_NAME = "decisions.json"
#: The most decisions the file keeps (the latest saved): every ``format="auto"`` matrix of a new
#: structure stores one, and each store rewrites the file.
MAX_ENTRIES = 256


OFF = "off"


def path():
    """The decision cache file, or None when ``COCKTAIL_DECISIONS=off``."""
    chosen = os.environ.get("COCKTAIL_DECISIONS")
    if chosen == OFF:
        return None
    return Path(chosen) if chosen else _cache.cache_dir() / FILE_NAME


def key(fingerprint: str, device_key: str, dtype, index_dtype, deterministic: bool = False,
        vendor: bool = True, tune: str = "measure", profile_digest: str = "", one_value: bool = False,
        value_dtype=None, coded: bool = False, yielding: bool = False) -> str:
    """The cache key of one structure on one device in one pair of dtypes, with or without ``deterministic=True``
    and the vendor's kernels, for plans decided by ``tune`` from the profile of ``profile_digest``
    (:attr:`~cocktail.auto.profile.Profile.digest`: a recalibrated profile decides afresh); ``one_value``: every
    entry holds one value (its plan may store parts pattern-only, which a matrix of other values cannot reuse);
    ``value_dtype``: the values are stored in this dtype, narrower than ``dtype`` (its plan's kernels take that);
    ``coded``: its values fit a coded format's table (its plan may store parts coded, as with ``one_value``);
    ``yielding``: its race was timed with yielding grids (the launch policy of
    :func:`cocktail.kernels.device.for_launches`)."""
    import numpy as np

    order = "deterministic" if deterministic else "any-order"
    return "|".join([PLANNER_VERSION, fingerprint, device_key, np.dtype(dtype).name, np.dtype(index_dtype).name,
                     order, "vendor" if vendor else "own", tune, profile_digest]
                    + (["one-value"] if one_value else [])
                    + (["coded"] if coded else [])
                    + (["yielding"] if yielding else [])
                    + ([f"values-{np.dtype(value_dtype).name}"] if value_dtype is not None
                       and np.dtype(value_dtype) != np.dtype(dtype) else []))


#: The file's entries as last read or written: ``(path, stamp, entries)``.
_memo = (None, None, {})


def _stamp(where: Path):
    stat = where.stat()
    return (stat.st_ino, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size)


def _read(where=None) -> dict:
    """The cache file's entries (``where``: that file, default :func:`path`), read again only when it changed."""
    global _memo
    where = path() if where is None else where
    if where is None:
        return {}
    try:
        stamp = _stamp(where)
    except OSError:
        return {}  # no cache yet
    if _memo[0] == where and _memo[1] == stamp:
        return _memo[2]
    try:
        entries = json.loads(where.read_text())
    except (OSError, ValueError):
        entries = {}  # an unreadable cache: decide afresh
    if not isinstance(entries, dict):
        entries = {}
    _memo = (where, stamp, entries)
    return entries


def lookup(k: str) -> Plan | None:
    """The cached plan of key ``k``, or None (decisions stored a moment ago included: :func:`flush`)."""
    flush()
    entry = _read().get(k)
    if not isinstance(entry, dict):
        return None
    try:
        return Plan.from_json(entry["plan"])
    except (KeyError, TypeError, ValueError):
        return None


def _age(k: str, entry) -> tuple:
    """Eviction order: modelled decisions before measured or tuned ones (cheaper to make again), then the oldest."""
    saved = entry.get("saved_ns", 0) if isinstance(entry, dict) else 0
    return ("|measure|" in k or "|auto|" in k, saved if isinstance(saved, int) else 0)


def store(k: str, plan: Plan) -> None:
    """Keep ``plan`` under key ``k`` now (the whole file is rewritten atomically); past :data:`MAX_ENTRIES`
    the modelled decisions go first, then the oldest."""
    flush()
    where = path()
    if where is not None:
        _write(where, k, plan.to_json())


def store_later(k: str, plan: Plan) -> None:
    """:func:`store`, written by a thread of its own: rewriting the file takes milliseconds that a matrix's
    construction (or the product on which its tuning ends) should not wait for.  The file is the one
    :func:`path` names now; :func:`lookup` and :func:`store` wait for what is pending, and so does the
    interpreter's exit."""
    global _writer
    where = path()
    if where is None:
        return
    with _pending_lock:
        if _writer is None:
            _writer = ThreadPoolExecutor(1, thread_name_prefix="cocktail-decisions")
        _pending.append(_writer.submit(_write_aside, where, k, plan.to_json()))


def flush() -> None:
    """Wait until every decision :func:`store_later` was given is written (a failed write raises here)."""
    with _pending_lock:
        waiting = list(_pending)
        _pending.clear()
    for future in waiting:
        future.result()


def _write_aside(where: Path, k: str, plan_json) -> None:
    """:func:`_write` on the writer's thread: a file that cannot be written is a warning, not a failure of
    whatever waits next (the cache only saves work)."""
    try:
        _write(where, k, plan_json)
    except OSError as exc:
        warnings.warn(f"the decision cache {where} was not written: {exc}", RuntimeWarning, stacklevel=1)


def _write(where: Path, k: str, plan_json) -> None:
    """Add ``plan_json`` under ``k`` to the file ``where`` and rewrite it."""
    global _memo
    entries = dict(_read(where))
    entries[k] = {"plan": plan_json, "saved": time.strftime("%Y-%m-%dT%H:%M:%S"), "saved_ns": time.time_ns()}
    if len(entries) > MAX_ENTRIES:
        kept = sorted(entries.items(), key=lambda item: (item[0] == k, _age(*item)))[-MAX_ENTRIES:]
        entries = dict(kept)
    _cache.write_json(where, entries)
    try:
        _memo = (where, _stamp(where), entries)
    except OSError:
        _memo = (None, None, {})


_writer = None  # the thread pool of store_later, made on first use
_pending = []  # its futures not yet waited for
_pending_lock = threading.Lock()


@contextlib.contextmanager
def using(where):
    """Within the block the decision cache is the file ``where`` (a path), or off (:data:`OFF`)."""
    before = os.environ.get("COCKTAIL_DECISIONS")
    os.environ["COCKTAIL_DECISIONS"] = str(where)
    try:
        yield
    finally:
        flush()  # what was stored within the block is written before the block's file may go
        if before is None:
            os.environ.pop("COCKTAIL_DECISIONS", None)
        else:
            os.environ["COCKTAIL_DECISIONS"] = before
