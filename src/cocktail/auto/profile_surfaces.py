"""How a device profile answers between its samples: log-time surfaces over (rows, slots per row).

A :class:`_Surface` holds one variant's samples in one dtype as curves of log time against log rows
(:class:`_Curve`), one per entries-per-row bin, and interpolates between them bilinearly in (log rows, log
slots per row); :func:`_at` reads it at one size.  A :class:`_Table` pads many surfaces into flat arrays, so
that the :class:`~.profile.Predictions` of a profile evaluate many questions in one vectorised call.
"""

from __future__ import annotations

import bisect
import math

import numpy as np


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


def _at(surface: _Surface, rows: float, slots: float) -> float:
    """The surface's time at ``rows`` and ``slots``.  Fewer rows than sampled: as many slots on the fewest
    rows sampled (a thread or warp per row would be slower still; the planner's tail bound covers that)."""
    rows = max(float(rows), float(surface.min_rows))
    return math.exp(surface.log_us(rows, max(float(slots), 0.0) / rows))
