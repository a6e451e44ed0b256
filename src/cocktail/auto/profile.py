"""The device profile: sampled kernel times that the planner interpolates (clSpMV §3.2).

``cocktail calibrate`` (:mod:`cocktail.auto.calibration`) times every kernel variant of
:mod:`.variants` on synthetic matrices over rows and entries per row, and measures the fixed
cost of one launch.  It writes the profile as JSON, keyed by GPU name, compute capability and
CUDA version, in the user cache directory.  Measured profiles of the H100 and the H200 ship in
the package (``auto/profiles/``); on another GPU the nearest shipped one is used, with a
notice.

A profile answers one question: the predicted time of a variant on ``rows`` rows reading
``slots`` value slots (:meth:`Profile.predict_us`), with gathers of ``x`` as scattered as
``scatter`` says (0: the samples' rows of adjacent columns; 1: the flat variants' second set of
samples, ``scattered``, on the same rows and lengths with columns spread uniformly over ``x``;
between them the two times are blended linearly).  Between samples it interpolates
log-time bilinearly in (log rows, log slots per row); past the largest sampled size time
grows in proportion; below the smallest it is the smallest sample's.  The samples include
each kernel's own launches, and no prediction is below ``launches x launch_us``.

A profile may also hold SpMM samples (``cocktail calibrate --spmm``, :mod:`.block_calibration`):
for each SpMV kernel and each block choice it offers (:func:`spmm_key`), layout of ``X`` and ``Y``
(``row`` or ``col``) and ``k``, the time of one block product over the time of one SpMV of the same
kernel on the same synthetic matrix.  :meth:`Profile.predict_block_ratio` interpolates log(ratio)
bilinearly in (log rows, log slots per row) at each sampled ``k``, clamped at the sampled edges (a
ratio does not grow with size as a time does), then linearly in log ``k`` between the two nearest
sampled ``k`` (clamped outside them).  They leave :attr:`Profile.digest` alone: it keys SpMV plans,
which they do not change.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import json
import math
import re
import warnings
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from .. import _cache
from . import variants as _variants
from .profile_surfaces import _Surface, _Table, _at

SCHEMA = 1


class ProfileNotice(UserWarning):
    """No profile was measured on this GPU: the planner uses the nearest shipped one."""


def device_key(name: str, compute_capability, cuda_version: int) -> str:
    """File-name key of a device: ``nvidia-h100-80gb-hbm3-sm90-cuda13000``."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    major, minor = compute_capability
    return f"{slug}-sm{major}{minor}-cuda{int(cuda_version)}"


def key_of(device: dict) -> str:
    """:func:`device_key` of a device description (``name``, ``compute_capability``, ``cuda``)."""
    return device_key(device["name"], device["compute_capability"], device["cuda"])


class Predictions:
    """:meth:`Profile.predict_us` of one dtype over arrays: :meth:`Profile.predictions` builds it once per dtype.

    ``index[key]``: a sampled variant's number, the argument :meth:`us` takes."""

    def __init__(self, profile: Profile, dt: str):
        keys = [k for k, samples in profile.samples.get(dt, {}).items() if samples]
        self.index = {k: i for i, k in enumerate(keys)}
        own = [profile._surface(profile.samples, "rows", dt, k) for k in keys]
        blends = profile.blends(dt)
        spread = [profile._surface(profile.scattered, "scattered", dt, k) if blends else None for k in keys]
        extra = [s for s in spread if s is not None]
        self._table = _Table(own + extra)  # the own surfaces, then the scattered ones
        self._spread = np.full(len(keys), -1, dtype=np.int64)
        at = len(own)
        for i, s in enumerate(spread):
            if s is not None:
                self._spread[i], at = at, at + 1
        launch = profile.launch_us.get(dt, 0.0)
        self._floor = np.array([_variants.get(k).launches * launch if k in _variants._BY_KEY else launch
                                for k in keys], dtype=float)
        # each variant's own surface and its scattered one (its own where it has none), for RowPredictions
        self._blends = bool((self._spread >= 0).any())
        self._pairs = np.stack([np.arange(len(keys)), np.where(self._spread >= 0, self._spread, np.arange(len(keys)))])

    def us(self, variant, rows, slots, scatter: float = 0.0) -> np.ndarray:
        """Predicted µs of the variants ``variant`` (an int array of :attr:`index` numbers) on ``rows`` rows
        reading ``slots`` value slots (float arrays of its length): :meth:`Profile.predict_us` of each."""
        n = len(variant)
        spread = self._spread[variant] if scatter > 0 else self._spread[:0]
        has = np.nonzero(spread >= 0)[0]
        t = self._table.at(np.concatenate([variant, spread[has]]), np.concatenate([rows, rows[has]]),
                           np.concatenate([slots, slots[has]]))
        own = t[:n]
        if len(has):
            own[has] = (1.0 - scatter) * own[has] + scatter * t[n:]
        return np.maximum(own, self._floor[variant])

    def read(self, rows: float) -> tuple:
        """Every surface read on ``rows`` rows (:meth:`_Table.read`), for :meth:`on_rows`."""
        return self._table.read(rows)

    def on_rows(self, *rows) -> RowPredictions:
        """:meth:`us` on each of ``rows`` (a number of rows, or its :meth:`read`), the surfaces read on them once:
        for many questions on one matrix."""
        return RowPredictions(self, [self.read(r) if np.isscalar(r) else r for r in rows])


class RowPredictions:
    """:meth:`Predictions.us` on a few numbers of rows (:meth:`Predictions.on_rows`): the planner asks its questions
    on a matrix's rows and on its tail's."""

    def __init__(self, predictions: Predictions, read: list):
        self._predictions, self._surfaces = predictions, len(predictions._table.bins)
        self._rows = np.concatenate([rows for rows, _ in read])
        self._segments = np.concatenate([segments for _, segments in read], axis=1)
        self._each_rows = np.arange(len(read)) * self._surfaces  # each number of rows' first surface

    def each(self, variant, slots, scatter: float = 0.0) -> np.ndarray:
        """``Predictions.us(variant, rows, slots[r], scatter)`` on each number of ``rows``, ``r``-th (a list of one
        array per number of rows): every question on every one, and on the scattered surfaces where they blend in."""
        predictions, n = self._predictions, len(variant)
        blend = scatter > 0 and predictions._blends
        surfaces = predictions._pairs[:, variant].ravel() if blend else variant
        s = np.concatenate([surfaces] * len(slots))
        asked = np.concatenate([a for a in slots for _ in range(1 + blend)])
        t = predictions._table.at_read(s, s + np.repeat(self._each_rows, len(surfaces)), self._rows, self._segments,
                                       asked).reshape(len(slots), 1 + blend, n)
        if blend:
            t = np.where(predictions._spread[variant] >= 0, (1.0 - scatter) * t[:, 0] + scatter * t[:, 1], t[:, 0])
        return np.maximum(t.reshape(len(slots), n), predictions._floor[variant])


@dataclass
class Profile:
    """Sampled times of the kernel variants on one GPU (see the module docstring).

    ``samples[dtype][variant key]`` lists ``[rows, slots per row, microseconds]`` (and
    ``scattered`` the same on scattered columns);
    ``launch_us[dtype]`` is the fixed cost of one launch; ``device`` names the GPU
    (``name``, ``compute_capability``, ``cuda``, ``sm_count``); ``source`` says where the
    profile was read from and ``notice`` why it stands in for another GPU's (empty when it
    was measured on this one).
    """

    device: dict
    launch_us: dict
    samples: dict
    mode: str = "quick"
    meta: dict = field(default_factory=dict)
    source: str = ""
    notice: str = ""
    #: ``scattered[dtype][variant key]``: samples as ``samples``' on rows whose columns are spread
    #: uniformly over ``x`` (flat variants only; empty in a profile measured before them).
    scattered: dict = field(default_factory=dict)
    #: SpMM samples (empty in a profile measured before them): ``ratios[dtype][spmm_key][layout]`` lists
    #: ``[rows, slots per row, k, block product µs / SpMV µs]``; ``transpose_gbps[dtype]``: bytes read and
    #: written per ns by the copy of a row-major block to its transpose; ``mode`` and ``meta`` of their run.
    spmm: dict = field(default_factory=dict)

    def __post_init__(self):
        self._surfaces = {}
        self._predictions = {}
        #: What a user of the profile derives from it once (the planner's tables: :mod:`.cost_model`), by its key.
        self.memo = {}
        self._blends = {}
        self._ratio_surfaces = {}

    @property
    def key(self) -> str:
        """The device key this profile was measured for."""
        return key_of(self.device)

    @functools.cached_property
    def digest(self) -> str:
        """A hash (16 hex digits) of the samples and launch costs: a recalibrated profile has another
        (computed once: a profile is not changed after loading)."""
        text = json.dumps([self.launch_us, self.samples, self.scattered], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def has(self, variant: str, dtype) -> bool:
        """True when ``variant`` was sampled for ``dtype``."""
        return bool(self.samples.get(_dtype_name(dtype), {}).get(variant))

    def blends(self, dtype) -> bool:
        """Whether predictions in ``dtype`` blend in scattered samples: only when every flat variant
        sampled has them, so that none is spared the cost of scattered gathers the others pay."""
        dt = _dtype_name(dtype)
        if dt not in self._blends:
            flat = [key for key in self.samples.get(dt, {}) if _is_flat(key)]
            self._blends[dt] = bool(flat) and all(self.has_scattered(key, dt) for key in flat)
        return self._blends[dt]

    def has_scattered(self, variant: str, dtype) -> bool:
        """True when ``variant`` was also sampled on scattered columns for ``dtype``."""
        return bool(self.scattered.get(_dtype_name(dtype), {}).get(variant))

    def _surface(self, table: dict, which: str, dt: str, variant: str):
        key = (which, dt, variant)
        surface = self._surfaces.get(key)
        if surface is None:
            samples = table.get(dt, {}).get(variant)
            if not samples:
                return None
            surface = self._surfaces[key] = _Surface(samples)
        return surface

    def predict_us(self, variant: str, dtype, rows: float, slots: float, scatter: float = 0.0) -> float | None:
        """Predicted microseconds of ``variant`` on ``rows`` rows reading ``slots`` value slots, or None if
        unsampled; ``scatter`` in [0, 1] blends in the scattered samples where the variant has them."""
        dt = _dtype_name(dtype)
        surface = self._surface(self.samples, "rows", dt, variant)
        if surface is None:
            return None
        t = _at(surface, rows, slots)
        if scatter > 0 and self.blends(dt):
            spread = self._surface(self.scattered, "scattered", dt, variant)
            if spread is not None:
                t = (1.0 - scatter) * t + scatter * _at(spread, rows, slots)
        floor = _variants.get(variant).launches * self.launch_us.get(dt, 0.0)
        return max(t, floor)

    def predictions(self, dtype) -> Predictions:
        """:meth:`predict_us` over arrays for ``dtype`` (its tables built on the first call)."""
        dt = _dtype_name(dtype)
        found = self._predictions.get(dt)
        if found is None:
            found = self._predictions[dt] = Predictions(self, dt)
        return found

    def has_spmm(self, dtype, layout: str | None = None) -> bool:
        """True when SpMM ratios were sampled for ``dtype`` (in ``layout``, ``"row"`` or ``"col"``, if given)."""
        table = self.spmm.get("ratios", {}).get(_dtype_name(dtype), {})
        return any(layout is None or by_layout.get(layout) for by_layout in table.values())

    def predict_block_ratio(self, key: str, layout: str, dtype, rows: float, per_row: float, k: int) -> float | None:
        """Predicted µs of one block product of ``k`` columns over µs of one SpMV, for the block choice
        ``key`` (:func:`spmm_key`) in ``layout`` (``"row"``: X and Y C-ordered, ``"col"``: Fortran-ordered; a
        strided block is planned on scratch blocks of one of them and takes its samples) on ``rows`` rows of
        ``per_row`` value slots; None where not sampled (see the module docstring)."""
        by_k = self._ratio_surfaces_of(_dtype_name(dtype), key, layout)
        if not by_k:
            return None
        ks = sorted(by_k)
        k = max(float(k), 1.0)

        def at(sampled):
            return by_k[sampled].log_us(max(float(rows), 1.0), max(float(per_row), 1e-9))

        if k <= ks[0] or len(ks) == 1:
            return math.exp(at(ks[0]))
        if k >= ks[-1]:
            return math.exp(at(ks[-1]))
        i = bisect.bisect_right(ks, k)
        lo, hi = ks[i - 1], ks[i]
        w = (math.log(k) - math.log(lo)) / (math.log(hi) - math.log(lo))
        return math.exp((1 - w) * at(lo) + w * at(hi))

    def _ratio_surfaces_of(self, dt: str, key: str, layout: str) -> dict:
        """``{k: _Surface}`` of the SpMM ratios of ``key`` in ``layout`` (clamped: a ratio does not grow)."""
        found = self._ratio_surfaces.get((dt, key, layout))
        if found is None:
            by_k = {}
            for rows, per_row, k, ratio in self.spmm.get("ratios", {}).get(dt, {}).get(key, {}).get(layout, []):
                by_k.setdefault(int(k), []).append((rows, per_row, ratio))
            found = self._ratio_surfaces[(dt, key, layout)] = {k: _Surface(s, grows=False) for k, s in by_k.items()}
        return found

    def transpose_gbps(self, dtype) -> float | None:
        """GB/s (read plus written) of copying a row-major block to its transpose, as sampled; None if not."""
        got = self.spmm.get("transpose_gbps", {}).get(_dtype_name(dtype))
        return float(got) if got else None

    def to_json(self) -> dict:
        """The JSON document ``cocktail calibrate`` writes."""
        doc = {"schema": SCHEMA, "device": self.device, "launch_us": self.launch_us, "mode": self.mode,
               "meta": self.meta, "samples": self.samples}
        if self.scattered:
            doc["scattered"] = self.scattered
        if self.spmm:
            doc["spmm"] = self.spmm
        return doc

    @classmethod
    def from_json(cls, doc: dict, source: str = "") -> Profile:
        """A profile from its JSON document; ``ValueError`` for another schema."""
        if doc.get("schema") != SCHEMA:
            raise ValueError(f"device profile {source or ''}: schema {doc.get('schema')!r}, expected {SCHEMA}")
        return cls(doc["device"], doc["launch_us"], doc["samples"], doc.get("mode", "quick"), doc.get("meta", {}),
                   source=source, scattered=doc.get("scattered", {}), spmm=doc.get("spmm", {}))

    @classmethod
    def load(cls, path) -> Profile:
        """Read a profile file."""
        path = Path(path)
        return cls.from_json(json.loads(path.read_text()), source=str(path))

    def save(self, path) -> None:
        """Write the profile atomically."""
        _cache.write_json(Path(path), self.to_json())


def merged(base: Profile, new: Profile, keys, patterns: str = "all") -> Profile:
    """``base`` with the samples of the variants ``keys`` taken from ``new`` (measured on the same GPU):
    how a shipped profile gains variants sampled later (``cocktail calibrate --variants ... --merge-into``).
    ``patterns`` says which of ``new``'s tables were sampled (``all``, ``own`` or ``scattered``): those
    replace ``base``'s for the keys, the others stay.  ``meta["merged"]`` lists each merge: its
    variants, date, commit and CuPy."""
    if base.device["name"] != new.device["name"]:
        raise ValueError(f"cannot merge samples of {new.device['name']} into a profile of {base.device['name']}")
    if base.mode != new.mode:
        raise ValueError(f"cannot merge {new.mode!r} samples into a {base.mode!r} profile: the grids differ")
    tables = []
    for sampled, mine, theirs in ((patterns != "scattered", base.samples, new.samples),
                                  (patterns != "own", base.scattered, new.scattered)):
        table = {dt: dict(by_variant) for dt, by_variant in mine.items()}
        if sampled:
            for dt in set(table) | set(theirs):
                for key in keys:
                    table.setdefault(dt, {}).pop(key, None)  # re-measured: none of the old samples stay
                    if key in theirs.get(dt, {}):
                        table[dt][key] = theirs[dt][key]
        tables.append(table)
    samples, scattered = tables
    meta = dict(base.meta)
    earlier = meta.get("merged", [])
    meta["merged"] = (earlier if isinstance(earlier, list) else [earlier]) + [
        {**{k: new.meta.get(k) for k in ("date", "commit", "cupy")}, "variants": sorted(keys), "patterns": patterns}]
    return Profile(dict(base.device), dict(base.launch_us), samples, base.mode, meta, source=base.source,
                   scattered=scattered, spmm=base.spmm)


def spmm_key(kernel: str, label: str) -> str:
    """The key of a block choice's SpMM samples: the SpMV kernel whose time its ratios divide by, and the
    choice's label (:meth:`~cocktail.executors.cuda.BlockChoice.label`), e.g. ``csr_vector:csr_spmm``,
    ``coo_atomic:cusparse_spmm(alg=2)`` (a label alone names cuSPARSE's CSR and COO algorithms alike)."""
    return f"{kernel}:{label}"


def merged_spmm(base: Profile, new: dict, device_name: str) -> Profile:
    """``base`` with the SpMM section ``new`` (measured on ``device_name``) merged in (``cocktail calibrate
    --spmm``): each block choice's ratios in a dtype ``new`` sampled replace ``base``'s, the others stay; its SpMV
    samples, and so its digest, unchanged."""
    if base.device["name"] != device_name:
        raise ValueError(f"cannot merge SpMM samples of {device_name} into a profile of {base.device['name']}")
    ratios = {dt: dict(by_key) for dt, by_key in base.spmm.get("ratios", {}).items()}
    for dt, by_key in new.get("ratios", {}).items():
        ratios.setdefault(dt, {}).update(by_key)
    spmm = {**base.spmm, **{name: new[name] for name in ("mode", "meta") if name in new}, "ratios": ratios,
            "transpose_gbps": {**base.spmm.get("transpose_gbps", {}), **new.get("transpose_gbps", {})}}
    return Profile(dict(base.device), dict(base.launch_us), base.samples, base.mode, dict(base.meta),
                   source=base.source, scattered=base.scattered, spmm=spmm)


def _is_flat(key: str) -> bool:
    """Whether ``key`` names a flat variant (the ``rows`` pattern); unknown keys (an older profile's) are not."""
    try:
        return _variants.get(key).pattern == "rows"
    except ValueError:
        return False


def _dtype_name(dtype) -> str:
    if isinstance(dtype, str):
        return dtype
    import numpy as np

    return np.dtype(dtype).name


def user_dir() -> Path:
    """Where ``cocktail calibrate`` writes profiles: ``<cache>/profiles``."""
    return _cache.cache_dir() / "profiles"


def user_path(key: str) -> Path:
    """The user profile file of device ``key``."""
    return user_dir() / f"{key}.json"


def shipped() -> list[Profile]:
    """The profiles measured by the project and shipped in the package."""
    out = []
    folder = resources.files(__package__).joinpath("profiles")
    if not folder.is_dir():
        return out
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".json"):
            out.append(Profile.from_json(json.loads(entry.read_text()), source=f"shipped:{entry.name}"))
    return out


def _nearest(device: dict, candidates: list[Profile]) -> Profile:
    """The shipped profile closest to ``device``: same name, then same architecture, then SM count."""
    def distance(p):
        same_name = p.device["name"] == device["name"]
        same_major = tuple(p.device["compute_capability"])[0] == tuple(device["compute_capability"])[0]
        return (not same_name, not same_major, abs(p.device.get("sm_count", 0) - device.get("sm_count", 0)))

    return min(candidates, key=distance)


_FOR_DEVICE: dict = {}


def for_device(device: dict) -> Profile | None:
    """The profile for ``device`` (``name``, ``compute_capability``, ``cuda``, ``sm_count``).

    The user's own (``cocktail calibrate``) when present, else the shipped one of the same GPU,
    else the nearest shipped one with a :class:`ProfileNotice`; None when none ships.
    """
    key = key_of(device)
    if key in _FOR_DEVICE:
        return _FOR_DEVICE[key]
    path = user_path(key)
    profile = None
    if path.exists():
        try:
            profile = Profile.load(path)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            warnings.warn(f"ignoring the unreadable device profile {path} ({exc}); run `cocktail calibrate` "
                          "again", ProfileNotice, stacklevel=3)
    if profile is None:
        candidates = shipped()
        profile = _nearest(device, candidates) if candidates else None
        if profile is not None and profile.device["name"] != device["name"]:
            profile.notice = (f"no profile measured on {device['name']}: planning with the shipped "
                              f"{profile.device['name']} profile; run `cocktail calibrate` to measure this GPU")
            warnings.warn(profile.notice, ProfileNotice, stacklevel=3)
    _FOR_DEVICE[key] = profile
    return profile


def forget() -> None:
    """Drop the memoised profiles (after ``cocktail calibrate`` writes a new one)."""
    _FOR_DEVICE.clear()


def current_device() -> dict:
    """``name``, ``compute_capability``, ``cuda`` (runtime version) and ``sm_count`` of CuPy's current GPU."""
    import cupy

    from ..kernels.device import current

    p = current()
    return {"name": p.name, "compute_capability": list(p.compute_capability),
            "cuda": int(cupy.cuda.runtime.runtimeGetVersion()), "sm_count": p.sm_count}
