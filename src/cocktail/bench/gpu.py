"""Time the GPU kernels of every format on a set of matrices (CUDA events, median of many calls)."""

from __future__ import annotations

import numpy as np

from .. import SparseMatrix, formats, kernels
from ..errors import FormatFillError
from .record import Record
from .timing import time_gpu


def methods_for(format_names, all_kernels: bool):
    """(format, kernel or None) pairs: each format's default kernel, or every kernel of the format."""
    pairs = []
    for fname in format_names:
        specs = kernels.for_format(fname) if all_kernels else []
        pairs += [(fname, s.name) for s in specs] or [(fname, None)]
    return pairs


def run(matrices: dict, format_names=None, dtype="float64", repeat: int = 200, all_kernels: bool = False,
        progress=None) -> list[Record]:
    """One record per (matrix, format, kernel): time, GFLOP/s, effective GB/s, error against SciPy."""
    import cupy

    pairs = methods_for(list(format_names or formats.names()), all_kernels)
    records = []
    rng = np.random.default_rng(0)
    for mname, S in matrices.items():
        S = S.astype(dtype)
        x_host = rng.standard_normal(S.shape[1]).astype(dtype)
        want = S.astype(np.float64) @ x_host.astype(np.float64)
        norm = float(np.linalg.norm(want))
        x = cupy.asarray(x_host)
        y = cupy.empty(S.shape[0], dtype=dtype)
        for fname, kname in pairs:
            rec = Record(mname, S.shape[0], S.shape[1], S.nnz, np.dtype(dtype).name, kname or fname)
            try:
                A = SparseMatrix(S, format=fname, device="cuda", kernel=kname)
            except FormatFillError as exc:
                rec.note = f"refused: fill {exc.fill:.1f} > max_fill {exc.max_fill:g}"
            else:
                rec.kernel = A.kernel
                rec.method = A.kernel if A.kernel != "reference" else f"reference:{fname}"
                timing = time_gpu(lambda: A.matvec(x, out=y), repeat=repeat)
                seconds = timing.median_us * 1e-6
                rec.time_us = timing.median_us
                rec.gflops = 2 * A.nnz / seconds / 1e9
                rec.gbps = A.storage.spmv_bytes() / seconds / 1e9
                rec.padding_ratio = A.storage.padding_ratio
                rec.spmv_bytes = A.storage.spmv_bytes()
                got = (A @ x).get().astype(np.float64)
                rec.rel_err = float(np.linalg.norm(got - want) / norm) if norm else float(np.linalg.norm(got))
                del A
            records.append(rec)
            if progress:
                progress(rec)
    return records
