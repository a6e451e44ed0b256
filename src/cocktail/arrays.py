"""Array-module helpers so format builders and reference products are written once.

Every function takes NumPy or CuPy arrays and answers with arrays of the same
module.  CuPy is imported lazily: the package works with NumPy alone.
"""

from __future__ import annotations

import functools

import numpy as np


def get_xp(*arrays):
    """Return ``cupy`` if any argument is a CuPy array, else ``numpy``."""
    for a in arrays:
        if type(a).__module__.startswith("cupy"):
            import cupy

            return cupy
    return np


def is_cupy_array(a) -> bool:
    """True when ``a`` is a ``cupy.ndarray`` (without importing CuPy)."""
    return type(a).__module__.startswith("cupy") and hasattr(a, "__cuda_array_interface__")


def to_numpy(a):
    """Copy a CuPy array to the host; NumPy arrays pass through unchanged."""
    if is_cupy_array(a):
        return a.get()
    return np.asarray(a)


@functools.lru_cache(maxsize=1)
def cuda_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # ImportError, CUDARuntimeError, missing driver libraries
        return False


def scatter_add(out, index, values):
    """``out[index[i]] += values[i]`` with repeated indices accumulated.

    Accumulation order is the order of ``index`` on the host (``np.add.at``);
    on the device CuPy uses atomics, which it has for real dtypes only: a complex ``out`` takes its real and
    imaginary parts (views) in turn.
    """
    xp = get_xp(out)
    if xp is not np and out.dtype.kind == "c":
        values = xp.asarray(values)
        scatter_add(out.real, index, values.real)
        scatter_add(out.imag, index, values.imag)
        return out
    if hasattr(xp.add, "at"):
        xp.add.at(out, index, values)
    else:  # CuPy before ufunc.at
        import cupyx

        cupyx.scatter_add(out, index, values)
    return out


def row_ids(indptr, nnz: int):
    """Expand a row-pointer array to one row index per stored entry."""
    xp = get_xp(indptr)
    # searchsorted rather than repeat: CuPy's repeat takes no array of counts.
    positions = xp.arange(nnz, dtype=indptr.dtype)
    return xp.searchsorted(indptr[1:], positions, side="right").astype(indptr.dtype)


def entry_rows(csr):
    """The row (int64) of every stored entry of ``csr``: :func:`row_ids` without its casts.

    A format builder computes these once and hands them to its helpers.  A builder that makes a CSR of its
    own (a Cocktail's part) may lend the part's rows to it as ``_entry_rows`` (the array, or a function that
    makes it on first use) for the part's builder to reuse; it takes them back when the part is built, so
    no CSR keeps them.  A user's CSR never carries them: they are an int64 per entry.
    """
    rows = getattr(csr, "_entry_rows", None)
    if rows is not None:
        return rows() if callable(rows) else rows
    xp = get_xp(csr.indptr)
    m, nnz = int(csr.indptr.shape[0]) - 1, int(csr.nnz)
    if xp is np:
        return np.repeat(np.arange(m, dtype=np.int64), np.diff(csr.indptr))
    # A row starts where a pointer points: count the starts at or before each entry (a scatter of the m - 1
    # inner pointers and a scan, where a search per entry read the pointers log2(m) times).
    import cupyx

    starts = xp.zeros(nnz + 1, dtype=xp.int64)
    if m > 1:
        cupyx.scatter_add(starts, csr.indptr[1:m], 1)
    return xp.cumsum(starts[:nnz])


def pointers_from_ids(ids, nsegments: int, dtype):
    """Inverse of :func:`row_ids` for sorted ``ids``: a pointer array of length nsegments+1."""
    xp = get_xp(ids)
    ptr = xp.zeros(nsegments + 1, dtype=dtype)
    if ids.shape[0]:
        ptr[1:] = xp.cumsum(xp.bincount(ids.astype(xp.int64), minlength=nsegments), dtype=dtype)
    return ptr


def stable_argsort(keys):
    """Stable argsort on a 1-D integer array (NumPy and CuPy)."""
    xp = get_xp(keys)
    if xp is np:
        return np.argsort(keys, kind="stable")
    return xp.argsort(keys)  # CuPy sorts with a stable radix sort


def bit_keys(values):
    """One unsigned or int64 key per value of a 1-D array, equal exactly when the values' bits are.

    Unlike the values themselves, ``-0.0`` and ``0.0`` (or a complex component of each) get
    different keys, and so do NaNs of different payloads.  Values of up to 8 bytes are their
    own bits; complex128's two halves are numbered separately and combined.
    """
    xp = get_xp(values)
    values = xp.ascontiguousarray(values)
    size = values.dtype.itemsize
    if size <= 8:
        return values.view(np.dtype(f"uint{8 * size}"))
    _, high = xp.unique(xp.ascontiguousarray(values.real).view(np.uint64), return_inverse=True)
    lows, low = xp.unique(xp.ascontiguousarray(values.imag).view(np.uint64), return_inverse=True)
    return high.reshape(-1).astype(xp.int64) * int(lows.shape[0]) + low.reshape(-1).astype(xp.int64)
