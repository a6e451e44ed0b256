"""Time the CPU reference executor for every format on a set of matrices."""

from __future__ import annotations

import time
import numpy as np

from .. import SparseMatrix, formats
from ..errors import FormatFillError
from .record import Record


def _median_time(fn, repeat: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def run(matrices: dict, format_names=None, dtype="float64", repeat: int = 20, progress=None) -> list[Record]:
    """Benchmark the reference SpMV of each format on each matrix; returns one record per pair."""
    names = list(format_names or formats.names())
    records = []
    rng = np.random.default_rng(0)
    for mname, S in matrices.items():
        S = S.astype(dtype)
        x = rng.standard_normal(S.shape[1]).astype(dtype)
        want = S.astype(np.float64) @ x.astype(np.float64)
        for fname in names:
            rec = Record(mname, S.shape[0], S.shape[1], S.nnz, np.dtype(dtype).name, fname)
            try:
                A = SparseMatrix(S, format=fname, device="cpu")
            except FormatFillError as exc:
                rec.note = f"refused: fill {exc.fill:.1f} > max_fill {exc.max_fill:g}"
                records.append(rec)
                if progress:
                    progress(rec)
                continue
            y = A @ x
            seconds = _median_time(lambda: A @ x, repeat)
            rec.time_us = seconds * 1e6
            rec.gflops = 2 * A.nnz / seconds / 1e9 if seconds > 0 else None
            rec.gbps = A.storage.spmv_bytes() / seconds / 1e9 if seconds > 0 else None
            rec.padding_ratio = A.storage.padding_ratio
            rec.spmv_bytes = A.storage.spmv_bytes()
            norm = float(np.linalg.norm(want))
            rec.rel_err = float(np.linalg.norm(y - want) / norm) if norm else float(np.linalg.norm(y))
            records.append(rec)
            if progress:
                progress(rec)
    return records
