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


class _Curve:
    """log(time) against log(rows) for one entries-per-row value: sorted samples.  ``grows``: past the largest
    sample time grows in proportion to rows (else it stays the largest sample's, as a ratio does)."""

    def __init__(self, points, grows: bool = True):
        points = sorted(points)
        self.log_rows = [math.log(r) for r, _ in points]
        self.log_us = [math.log(max(us, 1e-3)) for _, us in points]
        self.grows = grows

    def at(self, log_rows: float) -> float:
        xs, ys = self.log_rows, self.log_us
        if log_rows <= xs[0]:
            return ys[0]
        if log_rows >= xs[-1]:
            return ys[-1] + (log_rows - xs[-1]) * self.grows  # time proportional to rows past the largest sample
        i = bisect.bisect_right(xs, log_rows)
        w = (log_rows - xs[i - 1]) / (xs[i] - xs[i - 1])
        return ys[i - 1] + w * (ys[i] - ys[i - 1])


class _Surface:
    """Interpolated log-time over (rows, slots per row) for one variant and dtype (``grows``: as :class:`_Curve`'s,
    past the longest rows too)."""

    def __init__(self, samples, grows: bool = True):
        # Samples of nearly the same slots per row (within an eighth of an octave) share a curve.
        by_bin = {}
        for rows, per_row, us in samples:
            by_bin.setdefault(round(8 * math.log2(max(per_row, 1e-9))), []).append((rows, per_row, us))
        bins = sorted(by_bin)
        self.log_k = [sum(math.log(max(k, 1e-9)) for _, k, _ in by_bin[b]) / len(by_bin[b]) for b in bins]
        self.curves = [_Curve([(r, us) for r, _, us in by_bin[b]], grows) for b in bins]
        self.min_rows = min(r for r, _, _ in samples)
        self.grows = grows

    def log_us(self, rows: float, per_row: float) -> float:
        lr = math.log(max(rows, 1.0))
        lk = math.log(max(per_row, 1e-9))
        ks = self.log_k
        if lk <= ks[0]:
            return self.curves[0].at(lr)
        if lk >= ks[-1]:
            return self.curves[-1].at(lr) + (lk - ks[-1]) * self.grows  # time proportional to slots past them
        i = bisect.bisect_right(ks, lk)
        w = (lk - ks[i - 1]) / (ks[i] - ks[i - 1])
        return (1 - w) * self.curves[i - 1].at(lr) + w * self.curves[i].at(lr)


class _Table:
    """Surfaces padded into flat arrays, so that :meth:`at` evaluates :func:`_at` of many (surface, rows, slots) at
    once, with :class:`_Surface`'s and :class:`_Curve`'s arithmetic in the same order (equal to theirs but for the
    last bits of ``log`` and ``exp``).

    Surface ``s`` has ``bins[s]`` bins from curve ``first[s]`` on; bin ``b``'s log slots per row are
    ``log_k[s, b]`` (``+inf`` past the bins), its curve ``c``'s samples ``log_rows[c]``, ``log_us[c]`` (``+inf``
    rows past its ``points[c]``)."""

    def __init__(self, surfaces: list):
        curves = [c for s in surfaces for c in s.curves] or [_Curve([(1, 1.0)])]
        bins = max((len(s.log_k) for s in surfaces), default=1)
        self.width = max(len(c.log_rows) for c in curves)
        self.log_k = np.full((max(len(surfaces), 1), bins), np.inf)
        self.bins = np.array([len(s.log_k) for s in surfaces] or [1], dtype=np.int64)
        self.first = np.cumsum([0] + [len(s.curves) for s in surfaces])[:max(len(surfaces), 1)]
        self.min_rows = np.array([s.min_rows for s in surfaces] or [1.0], dtype=float)
        self.grows = np.array([float(s.grows) for s in surfaces] or [1.0])
        for i, s in enumerate(surfaces):
            self.log_k[i, :len(s.log_k)] = s.log_k
        self.k_first, self.k_last = self.log_k[:, 0], self.log_k[np.arange(len(self.bins)), self.bins - 1]
        self.log_rows = np.full((len(curves), self.width), np.inf)
        log_us = np.zeros((len(curves), self.width))
        for i, c in enumerate(curves):
            self.log_rows[i, :len(c.log_rows)], log_us[i, :len(c.log_us)] = c.log_rows, c.log_us
        self._x, self._y = self.log_rows.ravel(), log_us.ravel()
        points = np.array([len(c.log_rows) for c in curves], dtype=np.int64)
        self.last_inside = np.maximum(points - 1, 1)  # the last sample an interpolation may end on
        ends = np.arange(len(curves)) * self.width
        self.x_first, self.y_first = self._x[ends], self._y[ends]
        self.x_last, self.y_last = self._x[ends + points - 1], self._y[ends + points - 1]
        # every curve's samples as sorted keys (curve, log rows): one search counts a curve's samples at or below
        self._ends, self._every = ends, np.arange(len(curves))
        self._sample_keys = _keys(np.repeat(self._every, points), self.log_rows[self.log_rows < np.inf])
        self._first_sample = np.cumsum(points) - points
        self._segment_tables()

    def _segment_tables(self):
        """What :meth:`read` and :meth:`at_read` look up.  Each curve's surface (a bin's curve), the place of its
        bin in the flat ``log_k`` and the surface's growth.  The segments between a bin and the next (the last bin:
        itself), a column each (surface by bin): their log slots per row, the surface's first and last, its growth
        (read adds the two bins' log µs).  And the bins as sorted keys (surface, log slots per row) with a last key
        (surface, +inf) a surface, and the segment a search of (surface, value) lands on among them: at or below the
        first bin, the first segment; past the last, the last one (as :meth:`at` picks ``lo``)."""
        surfaces, width = len(self.bins), self.log_k.shape[1]
        self._surface = np.repeat(np.arange(surfaces), self.bins)
        self._bin_at = self._surface * width + self._every - self.first[self._surface]
        self._grows = self.grows[self._surface]
        top = np.maximum(self.bins - 1, 1)  # the highest bin a segment may end on (one bin: its own)
        self._next = (np.arange(surfaces)[:, None] * width
                      + np.minimum(np.arange(width) + 1, np.maximum(self.bins - 1, 0)[:, None])).ravel()
        k, every = self.log_k.ravel(), np.ones((surfaces, width))
        self._segments = np.stack([k, k[self._next], *((every * a[:, None]).ravel()
                                                        for a in (self.k_first, self.k_last, self.grows))])
        real = self.log_k < np.inf
        owner = np.concatenate([np.nonzero(real)[0], np.arange(surfaces)])
        keys = _keys(owner, np.concatenate([self.log_k[real], np.full(surfaces, np.inf)]))
        order = np.argsort(keys, kind="stable")
        self._segment_keys, owner = keys[order], owner[order]
        below = np.arange(len(order)) - np.searchsorted(owner, owner)  # the surface's bins before each key
        self._segment_of = owner * width + np.minimum(np.maximum(below, 1), top[owner]) - 1

    def _curves(self, c, lr, grows):
        """:meth:`_Curve.at` of curves ``c`` (an index array, or ``slice(None)``: every one) at log rows ``lr`` (arrays
        of one length)."""
        below = self._sample_keys.searchsorted(_keys(self._every[c], lr), side="right") - self._first_sample[c]
        hi = np.minimum(np.maximum(below, 1), self.last_inside[c])
        at = self._ends[c] + hi
        x0, x1, y0, y1 = self._x[at - 1], self._x[at], self._y[at - 1], self._y[at]
        with np.errstate(divide="ignore", invalid="ignore"):
            inside = y0 + (lr - x0) / (x1 - x0) * (y1 - y0)
        x_last = self.x_last[c]
        return np.where(lr <= self.x_first[c], self.y_first[c],
                        np.where(lr >= x_last, self.y_last[c] + (lr - x_last) * grows, inside))

    def at(self, s, rows, slots):
        """``_at(surface, rows, slots)`` of surfaces ``s`` (index array) at ``rows`` and ``slots`` (arrays)."""
        rows = np.maximum(rows, self.min_rows[s])
        lr = np.log(np.maximum(rows, 1.0))
        lk = np.log(np.maximum(np.maximum(slots, 0.0) / rows, 1e-9))
        nk, grows = self.bins[s], self.grows[s]
        hi = np.minimum(np.maximum((self.log_k[s] <= lk[:, None]).sum(1), 1), nk - 1)
        lo = np.maximum(hi - 1, 0)
        n = len(s)
        both = self._curves(np.concatenate([self.first[s] + lo, self.first[s] + hi]), np.concatenate([lr, lr]),
                            np.concatenate([grows, grows]))
        c0, c1 = both[:n], both[n:]
        k0, k1, k_last = self.log_k[s, lo], self.log_k[s, hi], self.k_last[s]
        with np.errstate(divide="ignore", invalid="ignore"):
            w = (lk - k0) / (k1 - k0)
            inside = (1 - w) * c0 + w * c1
        log_us = np.where(lk <= self.k_first[s], c0, np.where(lk >= k_last, c1 + (lk - k_last) * grows, inside))
        return np.exp(log_us)

    def read(self, rows: float) -> tuple:
        """Every curve read on ``rows`` rows, once for many questions (:meth:`at_read`): ``(rows, segments)``, each
        surface's rows (clamped to its fewest sampled, as :meth:`at` clamps them) and its segments between bins with
        their log µs at those rows (:meth:`_segment_tables`)."""
        rows = np.maximum(float(rows), self.min_rows)
        log_us = np.zeros(self.log_k.size)
        log_us[self._bin_at] = self._curves(slice(None), np.log(np.maximum(rows, 1.0))[self._surface], self._grows)
        return rows, np.concatenate([self._segments, log_us[None, :], log_us[None, self._next]])

    def at_read(self, s, at, rows, segments, slots):
        """:meth:`at` of surfaces ``s`` reading ``slots`` on curves already read (:meth:`read`, several side by side):
        question ``i``'s are ``rows[at[i]]`` and the segments from ``(at[i] - s[i]) * width`` on."""
        lk = np.log(np.maximum(np.maximum(slots, 0.0) / rows[at], 1e-9))
        segment = self._segment_of[self._segment_keys.searchsorted(_keys(s, lk), side="right")]
        k0, k1, k_first, k_last, grows, c0, c1 = segments.take((at - s) * self.log_k.shape[1] + segment, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            w = (lk - k0) / (k1 - k0)
            inside = (1 - w) * c0 + w * c1
        return np.exp(np.where(lk <= k_first, c0, np.where(lk >= k_last, c1 + (lk - k_last) * grows, inside)))


def _keys(owners, values) -> np.ndarray:
    """``owners + i * values``, each part exactly as given: complex keys, which NumPy sorts and searches by owner,
    then value."""
    keys = np.empty(len(values), dtype=complex)
    keys.real, keys.imag = owners, values
    return keys


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
        #: What a user of the profile derives from it once (the planner's tables: :mod:`.planner`), by its key.
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


def _at(surface: _Surface, rows: float, slots: float) -> float:
    """The surface's time at ``rows`` and ``slots``.  Fewer rows than sampled: as many slots on the fewest
    rows sampled (a thread or warp per row would be slower still; the planner's tail bound covers that)."""
    rows = max(float(rows), float(surface.min_rows))
    return math.exp(surface.log_us(rows, max(float(slots), 0.0) / rows))


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
