"""``cocktail calibrate``: the offline benchmarking stage (clSpMV §3.2) that writes the device profile.

Every kernel variant of :mod:`cocktail.auto.variants` is timed on synthetic matrices (its
pattern: rows of ``k`` adjacent entries, ``k`` adjacent dense diagonals, or ``k / c`` dense
blocks per super-row; the flat variants also on ``scattered`` rows, ``k`` columns per row, one
drawn uniformly in each ``k``-th of the columns, so that every gather of ``x`` is far from the
last) over rows ``2^10 .. 2^21`` and entries per row ``1 .. 64`` (up to
thousands for the variants that share a row among lanes), in float32 and float64, with the
benchmark's kernel timing (CUDA graph replays, :func:`cocktail.timing.time_gpu`).  The fixed cost of
one launch is the time of a product of a 1 x 1 matrix.  A format that stores a table of few
distinct values (DIA-VI) is sampled on the same patterns with values drawn from
:data:`TABLE_VALUES` distinct ones (it refuses the others' matrices); every other variant's
matrices are unchanged by it.

The run writes ``<cache>/profiles/<device key>.json``.  Samples go to a ``.samples.json``
beside it as they are taken and stay there: an interrupted run resumes where it stopped, and a
later run with ``--variants`` adds to them (``--restart`` discards them).  ``--quick`` samples
a coarser grid in a few minutes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .._cache import write_json
from . import profile as _profile
from . import variants as _variants
from .cost_model import work
from .features import compute
from ..timing import spin, time_gpu

#: Grid of each mode: rows, entries per row, longer rows for lane-shared variants, largest slot count.
GRIDS = {
    "full": ((1 << 10, 1 << 11, 1 << 12, 1 << 13, 1 << 14, 1 << 15, 1 << 16, 1 << 17, 1 << 18, 1 << 19, 1 << 20,
              1 << 21), (1, 2, 4, 8, 16, 32, 64), (128, 256, 512, 1024, 2048), 1 << 25),
    "quick": ((1 << 10, 1 << 13, 1 << 16, 1 << 19, 1 << 21), (1, 4, 16, 64), (256, 1024), 1 << 24),
}
#: Seconds of busy GPU before the first sample, so that no sample is taken at idle clocks.
WARM_UP_SECONDS = 0.3
#: Timing of one sample in each mode: least samples and least seconds (``time_gpu``).
TIMING = {"full": (10, 0.01), "quick": (5, 0.003)}
#: Distinct values of the synthetic matrices of a format with a value table (a stencil's few).
TABLE_VALUES = 8


@dataclass(frozen=True)
class Point:
    """One synthetic matrix: pattern, rows, entries per row (block shape for the block pattern), and the
    number of distinct values to draw its values from (None: standard normal values, all distinct)."""

    pattern: str
    rows: int
    per_row: int
    block: tuple | None = None
    values: int | None = None


def sampled_values(variant) -> int | None:
    """Distinct values of ``variant``'s synthetic matrices: :data:`TABLE_VALUES` for a format with a
    value table, else None."""
    from .. import formats

    return TABLE_VALUES if formats.get(variant.format).max_values is not None else None


#: Which patterns ``cocktail calibrate --patterns`` samples: each variant's own, the flat variants'
#: scattered one, or both.
PATTERNS = ("all", "own", "scattered")


def points(variant, mode: str, patterns: str = "all") -> list[Point]:
    """The sample points of ``variant`` in ``mode``: on its own pattern, and for a flat variant (the
    ``rows`` pattern) on the ``scattered`` one too (``patterns`` chooses, see :data:`PATTERNS`)."""
    kinds = []
    if patterns in ("all", "own"):
        kinds.append(variant.pattern)
    if patterns in ("all", "scattered") and variant.pattern == "rows":
        kinds.append("scattered")
    return _grid_points(variant, GRIDS[mode], kinds)


def _grid_points(variant, grid, kinds) -> list[Point]:
    """The points of ``grid`` (rows, entries per row, longer rows of lane-shared variants, largest slot
    count) for ``variant`` on each pattern of ``kinds``."""
    rows, per_row, longer, cap = grid
    ks = per_row + (longer if variant.long_rows else ())
    values = sampled_values(variant)
    out = []
    for pattern in kinds:
        for k in ks:
            if variant.block is not None and k < variant.block[1]:
                continue  # a block row holds at least c entries
            out += [Point(pattern, m, k, variant.block, values) for m in rows if m * k <= cap]
    return out


def synthetic(point: Point, dtype):
    """``(data, indices, indptr)`` CuPy arrays of the point's matrix (square, ``rows`` x ``rows``)."""
    import cupy

    m, k = point.rows, point.per_row
    rng = cupy.random.default_rng(point.rows * 131 + point.per_row)
    if point.pattern == "band":  # k adjacent diagonals centred on the main one, cut at the edges
        k = min(k, m)
        first = -(k // 2)
        rows = cupy.repeat(cupy.arange(m, dtype=cupy.int64), k)
        cols = rows + first + cupy.tile(cupy.arange(k, dtype=cupy.int64), m)
        keep = (cols >= 0) & (cols < m)
        rows, cols = rows[keep], cols[keep]
        indptr = cupy.zeros(m + 1, dtype=cupy.int64)
        indptr[1:] = cupy.cumsum(cupy.bincount(rows, minlength=m))
    elif point.pattern == "blocks":  # k / c dense r x c blocks per super-row, along the block diagonal
        r, c = point.block
        b = max(1, k // c)
        block_cols = max(1, m // c)
        b = min(b, block_cols)
        superrows = -(-m // r)
        sr = cupy.arange(superrows, dtype=cupy.int64)
        first = (sr * r) // c - b // 2
        bj = (first[:, None] + cupy.arange(b, dtype=cupy.int64)[None, :]) % block_cols  # (superrows, b)
        bj = cupy.sort(bj, axis=1)
        rows = (sr[:, None] * r + cupy.arange(r, dtype=cupy.int64)[None, :])  # (superrows, r)
        cols = bj[:, None, :, None] * c + cupy.arange(c, dtype=cupy.int64)[None, None, None, :]
        cols = cupy.broadcast_to(cols, (superrows, r, b, c)).reshape(superrows * r, b * c)
        rows = rows.reshape(-1)
        keep_rows = rows < m
        cols = cols[keep_rows]
        indptr = cupy.arange(m + 1, dtype=cupy.int64) * (b * c)
        cols = cols.reshape(-1)
    elif point.pattern == "scattered":  # k columns per row, one drawn uniformly in each k-th of the columns
        k = min(k, m)
        edges = (cupy.arange(k + 1, dtype=cupy.int64) * m) // k  # k strata of at least one column each
        width = (edges[1:] - edges[:-1])[None, :]
        draw = (rng.random((m, k)) * width).astype(cupy.int64)
        cols = (edges[:-1][None, :] + cupy.minimum(draw, width - 1)).reshape(-1)
        indptr = cupy.arange(m + 1, dtype=cupy.int64) * k
    else:  # k adjacent columns per row, wrapping at the last column
        k = min(k, m)
        start = cupy.arange(m, dtype=cupy.int64) - k // 2
        cols = cupy.sort((start[:, None] + cupy.arange(k, dtype=cupy.int64)[None, :]) % m, axis=1).reshape(-1)
        indptr = cupy.arange(m + 1, dtype=cupy.int64) * k
    if point.values is None:
        data = rng.standard_normal(int(cols.shape[0])).astype(dtype)
    else:
        table = rng.standard_normal(point.values).astype(dtype)
        data = table[rng.integers(0, point.values, int(cols.shape[0]))]
    return data, cols.astype(cupy.int32), indptr.astype(cupy.int32)


def _time(executor, shape, dtype, mode: str) -> float:
    """Kernel µs of one product of ``executor`` (graph replay over 4 input vectors, as the benchmark)."""
    import cupy

    m, n = shape
    xs = [cupy.random.default_rng(i).standard_normal(n).astype(dtype) for i in range(4)]
    y = cupy.zeros(m, dtype=dtype)
    run = executor.run
    calls = [(lambda x=x: run(x, y, 1, 0)) for x in xs]
    repeat, seconds = TIMING[mode]
    return time_gpu(calls, repeat=repeat, min_seconds=seconds).kernel_us


def _by_point(jobs) -> dict:
    """``{(dtype, point): [variant, ...]}`` of ``(dtype, variant, point)`` jobs: one synthetic matrix serves
    every variant timed on it."""
    out = {}
    for dt, v, p in jobs:
        out.setdefault((dt, p), []).append(v)
    return out


def _built(csr, fmt: str, kernel: str, format_params=None, kernel_params=None):
    """The executor of ``kernel`` on ``csr`` stored in ``fmt`` on the GPU (as ``SparseMatrix`` builds it)."""
    from .. import executors, formats, kernels
    from ..tuning.format_rules import format_params as resolved

    storage = formats.get(fmt).from_csr(csr, **resolved(fmt, csr.dtype, dict(format_params or {})))
    return executors.create(None, storage, "cuda", kernels.get(kernel), dict(kernel_params or {}))


def _base_csr(arrays, rows: int):
    """The canonical CSR on the GPU of ``(data, indices, indptr)``, a ``rows`` x ``rows`` matrix."""
    from ..formats.csr import CSR

    return CSR.from_arrays(*arrays, (rows, rows))


def _time_variant(csr, v, dtype, mode: str) -> float | None:
    """Kernel µs of variant ``v`` on the stored CSR ``csr`` (built in its format), or None when it does
    not fit in GPU memory."""
    import cupy

    from .._memory import gpu_build

    try:  # gpu_build: CuPy's and the runtime's out-of-memory errors alike, the failed build's arrays released
        executor = gpu_build(f"variant {v.key}", lambda: _built(csr, v.format, v.kernel, v.format_params,
                                                                  v.kernel_params))
        return _time(executor, csr.shape, dtype, mode)
    except (MemoryError, cupy.cuda.memory.OutOfMemoryError):
        return None


def _sample_key(dtype: str, variant: str, point: Point) -> str:
    key = f"{dtype}|{variant}|{point.rows}|{point.per_row}"
    return key + "|scattered" if point.pattern == "scattered" else key


def launch_cost(dtype, mode: str) -> float:
    """Kernel µs of one product of a 1 x 1 matrix: the fixed cost of one launch."""
    import cupy

    one = (cupy.ones(1, dtype=dtype), cupy.zeros(1, dtype=cupy.int32), cupy.asarray([0, 1], dtype=cupy.int32))
    return _time(_built(_base_csr(one, 1), "csr", "csr_scalar"), (1, 1), dtype, mode)


def run(mode: str = "quick", dtypes=("float32", "float64"), only=None, restart: bool = False, progress=None,
        out=None, patterns: str = "all") -> _profile.Profile:
    """Time every variant (or those named in ``only``) on ``patterns`` (:data:`PATTERNS`) and write the
    device profile; returns it."""
    import cupy

    if patterns not in PATTERNS:
        raise ValueError(f"calibrate: patterns must be one of {', '.join(PATTERNS)}, got {patterns!r}")
    with cupy.cuda.Stream(non_blocking=True):  # graph capture needs a stream of its own
        return _run(mode, dtypes, only, restart, progress, out, patterns)


def _run(mode, dtypes, only, restart, progress, out, patterns) -> _profile.Profile:
    import cupy

    from .. import kernels
    from ..provenance import commit

    if mode not in GRIDS:
        raise ValueError(f"calibrate: mode must be one of {', '.join(GRIDS)}, got {mode!r}")
    device = _profile.current_device()
    final = _profile.user_path(_profile.key_of(device)) if out is None else out
    partial = final.with_name(final.stem + ".samples.json")
    state = {} if restart or not partial.exists() else _read(partial, mode)
    chosen = [v for v in _variants.VARIANTS if (only is None or v.key in only) and v.kernel in kernels.names()]
    jobs = [(dt, v, p) for dt in dtypes for v in chosen for p in points(v, mode, patterns)]
    samples = state.setdefault("samples", {})
    launch = state.setdefault("launch_us", {})
    done = len([1 for dt, v, p in jobs if _sample_key(dt, v.key, p) in samples])
    if progress:
        progress(done, len(jobs), "resuming" if done else "starting")
    last_write = time.monotonic()
    spin(WARM_UP_SECONDS, cupy.cuda.get_current_stream())  # clocks up before the first sample
    for dt in dtypes:
        if dt not in launch:
            launch[dt] = launch_cost(dt, mode)
    for (dt, point), group in _by_point(jobs).items():
        rows, per_row = point.rows, point.per_row
        todo = [v for v in group if _sample_key(dt, v.key, point) not in samples]
        if not todo:
            continue
        arrays = synthetic(point, dt)
        csr = _base_csr(arrays, rows)
        feats = compute(csr)
        for v in todo:
            measured = _time_variant(csr, v, dt, mode)
            slots, _ = work(v, feats)  # the planner's slot count: a prediction here gives this sample back
            samples[_sample_key(dt, v.key, point)] = None if measured is None else [rows, slots / rows, measured]
            done += 1
            if progress:
                progress(done, len(jobs), f"{dt} {v.key} {point.pattern} rows={rows} k={per_row}")
        del csr, arrays
        cupy.get_default_memory_pool().free_all_blocks()
        if time.monotonic() - last_write > 10:
            state["mode"] = mode
            write_json(partial, state)
            last_write = time.monotonic()
    state["mode"] = mode
    write_json(partial, state)
    own, scattered = _grouped(samples)
    prof = _profile.Profile(device, launch, own, mode,
                            {"date": time.strftime("%Y-%m-%d"), "commit": commit(), "cupy": cupy.__version__},
                            scattered=scattered)
    prof.save(final)
    _profile.forget()
    prof.source = str(final)
    return prof


def _grouped(samples: dict) -> tuple[dict, dict]:
    """``({dtype: {variant: [[rows, per_row, µs], ...]}}, the same for the scattered pattern)`` from the
    flat sample keys."""
    own, scattered = {}, {}
    for key, value in samples.items():
        if value is None:
            continue
        dt, variant, *_, last = key.split("|")
        table = scattered if last == "scattered" else own
        table.setdefault(dt, {}).setdefault(variant, []).append(value)
    return own, scattered


def _read(path, mode: str) -> dict:
    import json

    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return state if state.get("mode") == mode else {}


#: ``cocktail calibrate --check``: rows and entries per row between the calibration grid's points (never
#: on them), the longer rows of the lane-shared variants, and the largest slot count.
CHECK_GRIDS = {
    "full": ((3_000, 24_000, 200_000, 1_500_000), (3, 6, 12, 24, 48), (384, 1536), 1 << 24),
    "quick": ((3_000, 200_000), (3, 12, 48), (384,), 1 << 23),
}


@dataclass(frozen=True)
class CheckRow:
    """One variant's predictions against its measured times at points off the calibration grid."""

    dtype: str
    variant: str
    points: int
    median_error: float  # |predicted / measured - 1|, median over the points
    worst_error: float
    worst_point: str  # "pattern rows=... k=..." of the worst

    def to_json(self) -> dict:
        return dict(self.__dict__)


def check_points(variant, mode: str) -> list[Point]:
    """The check points of ``variant``: its own pattern (and, flat, the scattered one) off the grid."""
    return _grid_points(variant, CHECK_GRIDS[mode], [variant.pattern] + (["scattered"] if variant.pattern == "rows"
                                                                          else []))


def prediction_errors(samples) -> tuple[float, float, int]:
    """``(median, worst, index of the worst)`` of ``|predicted / measured - 1|`` over ``(predicted, measured)``."""
    errors = [abs(p / m - 1.0) for p, m in samples]
    worst = max(range(len(errors)), key=errors.__getitem__)
    return float(np.median(errors)), errors[worst], worst


def check(prof, mode: str = "quick", dtypes=("float32", "float64"), only=None, progress=None) -> list[CheckRow]:
    """Each variant's (or ``only``'s) predicted time from ``prof`` against its measured time on synthetic
    matrices that were not calibration points (:data:`CHECK_GRIDS`), as the planner predicts it (the
    matrix's own slots, tail and ``x_scatter``); one :class:`CheckRow` per variant and dtype."""
    import cupy

    if mode not in CHECK_GRIDS:
        raise ValueError(f"calibrate --check: mode must be one of {', '.join(CHECK_GRIDS)}, got {mode!r}")
    with cupy.cuda.Stream(non_blocking=True):
        return _check(prof, mode, dtypes, only, progress)


def _check(prof, mode, dtypes, only, progress) -> list[CheckRow]:
    import cupy

    from .. import kernels
    from .cost_model import _Costing

    chosen = [v for v in _variants.VARIANTS if (only is None or v.key in only) and v.kernel in kernels.names()
              and all(prof.has(v.key, dt) for dt in dtypes)]
    jobs = [(dt, v, p) for dt in dtypes for v in chosen for p in check_points(v, mode)]
    timed = {}  # (dtype, variant) -> [(predicted, measured, point text)]
    done = 0
    spin(WARM_UP_SECONDS, cupy.cuda.get_current_stream())
    for (dt, point), group in _by_point(jobs).items():
        arrays = synthetic(point, dt)
        rows = point.rows
        base = _base_csr(arrays, rows)
        feats = compute(base)
        costing = _Costing(feats, prof, dt)
        for v in group:
            got = work(v, feats)
            measured = _time_variant(base, v, dt, mode)
            predicted = costing.time(v.key, got[0], got[1]) if got is not None else None
            if measured and predicted:
                timed.setdefault((dt, v.key), []).append(
                    (predicted, measured, f"{point.pattern} rows={rows} k={point.per_row}"))
            done += 1
            if progress:
                progress(done, len(jobs), f"check {dt} {v.key} {point.pattern} rows={rows} k={point.per_row}")
        del base, arrays
        cupy.get_default_memory_pool().free_all_blocks()
    out = []
    for (dt, key), rows in timed.items():
        median, worst, at = prediction_errors([(p, m) for p, m, _ in rows])
        out.append(CheckRow(dt, key, len(rows), median, worst, rows[at][2]))
    return out
