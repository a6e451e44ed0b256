"""``cocktail calibrate --spmm``: the SpMM samples of the device profile, which the block planner costs from.

For every format with block kernels, on synthetic matrices of its calibration pattern
(:func:`.calibration.synthetic`, a grid of rows and entries per row, :data:`SPMM_GRIDS`), each SpMV
kernel of the format that a block kernel extends is timed once, and each block choice any of them
offers (its own block kernel, cuSPARSE's SpMM algorithms; not one product per column) once per layout
of ``X`` and ``Y`` (``row``: C-ordered, ``col``: Fortran-ordered) and ``k`` (:data:`SPMM_SAMPLE_K`),
as the block planner races them (:func:`.block_plans._time_choices`, CUDA graph replays).  The profile
keeps, per SpMV kernel and block choice it offers (:func:`.profile.spmm_key`), the ratio of the block
product's time to that SpMV's: the planner times one SpMV of a matrix and scales it.  A ``k`` whose
``X`` and ``Y`` would pass :data:`MAX_BLOCK_BYTES` is skipped at that point.  The copy of a row-major
block to its transpose (a product per column of row-major blocks makes two) is timed once per dtype.

Times go to ``<cache>/profiles/<device key>.spmm.samples.json`` as each point is done: an interrupted
run resumes where it stopped (``restart`` discards them).  :func:`merge` puts the ratios into a
profile: this GPU's in the user cache (made from the shipped one of the same GPU where there is none),
or a file named (a shipped profile).
"""

from __future__ import annotations

import time

from .._cache import write_json
from ..tuning.kernel_rules import SPMM_K_BUCKETS
from . import profile as _profile
from . import variants as _variants
from .calibration import WARM_UP_SECONDS, Point, _base_csr, _read, sampled_values, synthetic

#: The k of the samples: every bucket of k (the rule ``spmm_bucket``) past one column.
SPMM_SAMPLE_K = tuple(k for k in SPMM_K_BUCKETS if k > 1)
#: Grid of each mode: rows, entries per row, k.
SPMM_GRIDS = {
    "full": ((1 << 14, 1 << 17, 1 << 20), (4, 16, 64), SPMM_SAMPLE_K),
    "quick": ((1 << 14, 1 << 20), (4, 64), (2, 8, 32, 128)),
}
#: The layouts of X and Y sampled (strided blocks are planned on scratch blocks of one of them).
LAYOUTS = ("row", "col")
#: Most bytes of X and Y together at one sample: a larger k is skipped at that point.
MAX_BLOCK_BYTES = 2 << 30
#: Block shape of the blocked formats' synthetic matrices (their variants' one of that shape).
SAMPLE_BLOCK = (4, 4)
#: Rows and columns of the block whose copy to its transpose is timed.
TRANSPOSE_SHAPE = (1 << 20, 64)


def spmm_formats() -> list[str]:
    """The formats some block kernel multiplies, in the format registry's order; not a pattern-only one (csr_pattern:
    the kernels of its value-holding form, sampled there)."""
    from .. import formats, kernels

    blocked = {f for name in kernels.block_names() for f in kernels.get_block(name).formats}
    return [f for f in formats.names() if f in blocked and not formats.get(f).pattern_only]


def sample_kernels(fmt: str) -> list[str]:
    """The SpMV kernels of ``fmt`` that a block kernel extends: the executors whose block choices are sampled."""
    from .. import kernels

    return [spec.name for spec in kernels.for_format(fmt) if kernels.blocks_for(fmt, spec)]


def sample_variant(fmt: str):
    """The variant whose pattern, format parameters and value table ``fmt``'s matrices are drawn with: the
    format's first, of block shape :data:`SAMPLE_BLOCK` for a blocked format."""
    return next(v for v in _variants.VARIANTS if v.format == fmt and v.block in (None, SAMPLE_BLOCK))


def points(fmt: str, mode: str) -> list[Point]:
    """The synthetic matrices of ``fmt`` in ``mode``: its variant's pattern over the grid's rows and entries per
    row (at least a block's width)."""
    v = sample_variant(fmt)
    rows, per_row, _ = SPMM_GRIDS[mode]
    return [Point(v.pattern, m, k, v.block, sampled_values(v)) for k in per_row for m in rows
            if v.block is None or k >= v.block[1]]


def fits(rows: int, columns: int, k: int, itemsize: int) -> bool:
    """Whether X (``columns`` x ``k``) and Y (``rows`` x ``k``) take at most :data:`MAX_BLOCK_BYTES`."""
    return (rows + columns) * k * itemsize <= MAX_BLOCK_BYTES


def operands_of(layout: str, k: int, shape):
    """The :class:`~cocktail.kernels.block_operands.BlockOperands` of C-ordered (``row``) or Fortran-ordered
    (``col``) X and Y of ``k`` columns for a matrix of ``shape``."""
    from ..kernels.block_operands import BlockOperands

    return BlockOperands.of_width(k, shape, layout == "row")


def ratios(points_done: dict) -> dict:
    """``{dtype: {spmm_key: {layout: [[rows, slots per row, k, ratio], ...]}}}`` from the sampled points
    (``"dtype|format|rows|per_row"`` -> :func:`sample_point`'s record, or None where it did not fit)."""
    out = {}
    for key, record in sorted(points_done.items()):
        if not record:
            continue
        dt = key.split("|")[0]
        for timed, us in record["block"].items():
            label, layout, k = timed.rsplit("|", 2)
            for kernel, labels in record["offers"].items():
                spmv = record["spmv"].get(kernel)
                if us and spmv and label in labels:
                    table = out.setdefault(dt, {}).setdefault(_profile.spmm_key(kernel, label), {})
                    ratio = round(us / spmv, 5)
                    table.setdefault(layout, []).append([record["rows"], record["per_row"], int(k), ratio])
    return out


def sample_point(fmt: str, point: Point, dtype: str, ks, progress=None) -> dict:
    """The times at one synthetic matrix of ``fmt``: ``rows``, ``per_row`` (value slots per row as stored),
    ``spmv`` (kernel -> µs of one SpMV), ``offers`` (kernel -> labels of the block choices it offers) and
    ``block`` (``"label|layout|k"`` -> µs of one block product, None where it did not fit in GPU memory)."""
    import cupy

    from .. import _memory, executors, formats, kernels
    from ..tuning.format_rules import format_params
    from .block_plans import _time_choices, spmv_us

    rows = point.rows
    csr = _base_csr(synthetic(point, dtype), rows)
    params = format_params(fmt, dtype, dict(sample_variant(fmt).format_params))
    storage = formats.get(fmt).from_csr(csr, **params)
    del csr
    built = {name: executors.create(None, storage, "cuda", kernels.get(name), {}) for name in sample_kernels(fmt)
             if kernels.get(name).runs_here()}
    record = {"rows": rows, "per_row": storage.stored_slots / rows,
              "spmv": {name: spmv_us(ex) for name, ex in built.items()}, "offers": {}, "block": {}}
    itemsize = storage.dtype.itemsize
    for layout in LAYOUTS:
        for k in ks:
            if not fits(storage.shape[0], storage.shape[1], k, itemsize):
                continue
            operands = operands_of(layout, k, storage.shape)
            for name, ex in built.items():
                offered = [c for c in ex.block_choices(operands) if c.spec is not None]
                labels = record["offers"].setdefault(name, [])
                labels += [c.label(name) for c in offered if c.label(name) not in labels]
                todo = [c for c in offered if f"{c.label(name)}|{layout}|{k}" not in record["block"]]
                if not todo:  # every choice it offers was timed on another kernel's executor
                    continue
                try:
                    times = _time_choices(ex, operands, todo)
                except Exception as exc:
                    if not _memory.gpu_out_of_memory(exc):
                        raise
                    times = {}
                cupy.get_default_memory_pool().free_all_blocks()
                record["block"].update({f"{c.label(name)}|{layout}|{k}": times.get(c) for c in todo})
            if progress:
                progress(f"{dtype} {fmt} rows={rows} k={point.per_row} {layout} X of {k} columns")
    return record


def transpose_gbps(dtype) -> float:
    """GB/s (read plus written) of copying a C-ordered block of :data:`TRANSPOSE_SHAPE` to its transpose."""
    import cupy

    from ..timing import replay_us

    n, k = TRANSPOSE_SHAPE
    X = cupy.random.default_rng(0).standard_normal((n, k)).astype(dtype)
    Xt = cupy.empty((k, n), dtype=dtype)
    stream = cupy.cuda.Stream(non_blocking=True)
    built = cupy.cuda.Event()
    built.record(cupy.cuda.get_current_stream())
    stream.wait_event(built)
    with stream:
        us = replay_us(lambda: cupy.copyto(Xt, X.T), 4, 5)
    stream.synchronize()
    return 2 * X.nbytes / (us * 1e3)


def samples_path(key: str):
    """Where the times of a run on the device ``key`` are kept as they are taken."""
    return _profile.user_dir() / f"{key}.spmm.samples.json"


def run(mode: str = "quick", dtypes=("float32", "float64"), only=None, restart: bool = False,
        progress=None) -> dict:
    """Sample every format's block choices (``only``: those formats) and return the profile's SpMM section
    (:attr:`.profile.Profile.spmm`); resumes the run the samples file holds unless ``restart``."""
    import cupy

    if mode not in SPMM_GRIDS:
        raise ValueError(f"calibrate --spmm: mode must be one of {', '.join(SPMM_GRIDS)}, got {mode!r}")
    unknown = set(only or ()) - set(spmm_formats())
    if unknown:
        raise ValueError(f"calibrate --spmm: no block kernel multiplies {', '.join(sorted(unknown))}; the formats "
                         f"are {', '.join(spmm_formats())}")
    with cupy.cuda.Stream(non_blocking=True):
        return _run(mode, tuple(dtypes), only, restart, progress)


def _run(mode, dtypes, only, restart, progress) -> dict:
    import cupy

    from ..provenance import commit
    from ..timing import spin

    device = _profile.current_device()
    partial = samples_path(_profile.key_of(device))
    state = {} if restart or not partial.exists() else _read(partial, mode)
    state["mode"] = mode
    done_points = state.setdefault("points", {})
    gbps = state.setdefault("transpose_gbps", {})
    _, _, ks = SPMM_GRIDS[mode]
    jobs = [(dt, fmt, p) for dt in dtypes for fmt in spmm_formats() if only is None or fmt in only
            for p in points(fmt, mode)]
    done = len([1 for dt, fmt, p in jobs if _point_key(dt, fmt, p) in done_points])
    if progress:
        progress(done, len(jobs), "resuming" if done else "starting")
    spin(WARM_UP_SECONDS, cupy.cuda.get_current_stream())  # clocks up before the first sample
    for dt in dtypes:
        if dt not in gbps:
            gbps[dt] = transpose_gbps(dt)
    for dt, fmt, point in jobs:
        key = _point_key(dt, fmt, point)
        if key in done_points:
            continue
        step = (lambda text: progress(done, len(jobs), text)) if progress else None
        try:
            done_points[key] = sample_point(fmt, point, dt, ks, step)
        except (MemoryError, cupy.cuda.memory.OutOfMemoryError):
            done_points[key] = None
        cupy.get_default_memory_pool().free_all_blocks()
        done += 1
        write_json(partial, state)
        if progress:
            progress(done, len(jobs), f"{dt} {fmt} rows={point.rows} k={point.per_row}")
    sampled = {k: v for k, v in done_points.items() if k.split("|")[0] in dtypes}
    return {"ratios": ratios(sampled), "transpose_gbps": {dt: gbps[dt] for dt in dtypes}, "mode": mode,
            "meta": {"date": time.strftime("%Y-%m-%d"), "commit": commit(), "cupy": cupy.__version__,
                     "grid": [list(axis) for axis in SPMM_GRIDS[mode]]}}


def merge(section: dict, into=None) -> _profile.Profile:
    """Write ``section`` (:func:`run`'s) into the profile at ``into``, or else into this GPU's profile in the user
    cache (made from the shipped profile of this GPU where there is none yet); returns the profile written."""
    from pathlib import Path

    device = _profile.current_device()
    if into is not None:
        target = Path(into)
        base = _profile.Profile.load(target)
    else:
        target = _profile.user_path(_profile.key_of(device))
        if target.exists():
            base = _profile.Profile.load(target)
        else:
            base = next((p for p in _profile.shipped() if p.device["name"] == device["name"]), None)
            if base is None:
                raise ValueError(f"no profile of {device['name']} to add SpMM samples to: run `cocktail calibrate` "
                                 "first, or give --merge-into")
    merged = _profile.merged_spmm(base, section, device["name"])
    merged.save(target)
    merged.source = str(target)
    _profile.forget()
    return merged


def _point_key(dtype: str, fmt: str, point: Point) -> str:
    return f"{dtype}|{fmt}|{point.rows}|{point.per_row}"
