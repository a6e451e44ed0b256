"""``transpose="scatter"``: ``A.T @ x`` (or ``A.H @ x``) from ``A``'s own arrays, no transpose stored.

The default transposed product builds the transpose once and plans it like any matrix (the
fastest, and it costs a second copy of the matrix).  This one is for memory-tight users: every
stored entry ``A[i, j]`` adds ``A[i, j] * x[i]`` (conjugated for ``A.H``) to ``y[j]`` with an
atomic add, so its sums are not deterministic and the scattered writes make it slower than a
product of the stored transpose.

- On the GPU a CSR matrix is read where it lies: one thread per stored entry finds its row by a
  binary search of the row pointers, so nothing beside the matrix is kept.  Other formats scatter
  over their entries (:mod:`cocktail.reference.entries`: three index arrays beside the format).
- On the CPU SciPy multiplies by the transpose of the format's SciPy view where it has one (csr,
  coo and bcsr are transposed without a copy); other formats go through a SciPy COO of their entries.
"""

from __future__ import annotations

import functools

import numpy as np

from ..kernels.spec import precision_words
from ..precision import is_half
from ..formats.csr import CSR
from ..reference.entries import entries_of
from .base import Executor
from .reference import ATOMIC_ADD, combine, device_kernels

_VALUE = r"""
template <typename T> __device__ __forceinline__ T cocktail_value(T v) { return v; }
template <typename R> __device__ __forceinline__ complex<R> cocktail_value(complex<R> v) {
    return COCKTAIL_CONJUGATE ? conj(v) : v;
}
"""


@functools.lru_cache(maxsize=None)
def _kernels(conjugate: bool):
    """Scatter a CSR by a search of its row pointers; scatter listed entries (the reference path's ``y`` scaling
    serves both)."""
    import cupy

    preamble = ATOMIC_ADD + f"#define COCKTAIL_CONJUGATE {int(conjugate)}\n" + _VALUE
    suffix = "_conj" if conjugate else ""
    csr = cupy.ElementwiseKernel(
        "raw I indptr, raw I indices, raw T data, raw T x, T alpha, int64 rows", "raw T y",
        """
        long long lo = 0, hi = rows;  // the row r with indptr[r] <= i < indptr[r + 1]
        while (hi - lo > 1) {
            long long mid = (lo + hi) / 2;
            if ((long long)indptr[mid] <= (long long)i) lo = mid; else hi = mid;
        }
        cocktail_atomic_add(&y[indices[i]], alpha * cocktail_value(data[i]) * x[lo]);
        """,
        "cocktail_csr_scatter_transpose" + suffix, preamble=preamble)
    entries = cupy.ElementwiseKernel(
        "raw I rows, raw I cols, raw I pos, raw T values, raw T x, T alpha", "raw T y",
        "cocktail_atomic_add(&y[cols[i]], alpha * cocktail_value(values[pos[i]]) * x[rows[i]])",
        "cocktail_entries_scatter_transpose" + suffix, preamble=preamble)
    return csr, entries


class DeviceScatterTranspose(Executor):
    """``y = alpha * A.T @ x + beta * y`` (``A.H`` with ``conjugate``) on the GPU, scattered with atomics."""

    name = "cuda"

    def __init__(self, storage, conjugate: bool):
        import cupy

        self.storage = storage
        self._scale = device_kernels()[0]
        self._csr, self._entries = _kernels(bool(conjugate and storage.dtype.kind == "c"))
        if isinstance(storage, CSR):
            self.kernel, self.entries = "csr_scatter_transpose", ()
        else:
            self.kernel = "entries_scatter_transpose"
            self.entries = tuple(e for e in entries_of(storage) if e.rows.shape[0])
        self.nondeterministic = (self.kernel,)
        y = cupy.zeros(storage.shape[1], dtype=storage.dtype)  # compile now, never inside a capture
        self.run(cupy.zeros(storage.shape[0], dtype=storage.dtype), y, 1, 0)

    def run(self, x, y, alpha, beta) -> None:
        """``y = beta*y`` (zeros when ``beta == 0``), then every stored entry adds ``alpha*value*x[row]`` to
        ``y[col]``."""
        dtype = self.storage.dtype
        if beta != 1:
            self._scale(dtype.type(beta), y)
        alpha = dtype.type(alpha)
        s = self.storage
        if isinstance(s, CSR):
            if s.nnz:
                self._csr(s.indptr, s.indices, s.data, x, alpha, s.shape[0], y, size=s.nnz)
            return
        for e in self.entries:
            self._entries(e.rows, e.cols, e.pos, e.values, x, alpha, y, size=e.rows.shape[0])


class HostScatterTranspose(Executor):
    """The same on the CPU: SciPy's product with the transpose of the format's SciPy view (or of its entries)."""

    name = "cpu"
    kernel = "scipy"
    overlap_safe = True

    def __init__(self, storage, conjugate: bool):
        import scipy.sparse as sp

        from ..reference import arithmetic_form
        from ..reference.scipy_layout import scipy_matrix

        storage = arithmetic_form(storage)  # SciPy has no half dtype: values widened exactly
        self._arithmetic = storage.dtype
        view = scipy_matrix(storage)
        if view is None:  # no SciPy layout: a COO of the format's entries
            parts = entries_of(storage)
            rows, cols = (np.concatenate([getattr(e, f) for e in parts]) for f in ("rows", "cols"))
            view = sp.coo_array((np.concatenate([e.vals() for e in parts]), (rows, cols)), shape=storage.shape)
        view = view.T
        self._scipy = view.conj() if conjugate and storage.dtype.kind == "c" else view

    def run(self, x, y, alpha, beta) -> None:
        """``y = alpha*A.T@x + beta*y`` with SciPy's product."""
        combine(y, (self._scipy @ x.astype(self._arithmetic, copy=False)).reshape(y.shape), alpha, beta)

    def own_reads_once(self, k: int) -> tuple[bool, ...]:
        """One product for the whole block."""
        return (True,)

    def own_block_kernels(self, k: int, row_major: bool = True) -> tuple[str, ...]:
        """SciPy's product of the whole block."""
        return (self.kernel,)

    def run_block(self, X, Y, alpha, beta) -> None:
        """The same for a block of vectors in one call."""
        combine(Y, self._scipy @ X.astype(self._arithmetic, copy=False), alpha, beta)


def refusal(storage, device: str) -> str | None:
    """Why ``storage`` on ``device`` cannot have a scatter transpose, or None: the GPU's adds in the matrix dtype with
    atomics, which a half or narrower-stored matrix has no kernel for."""
    if device == "cuda" and (storage.value_dtype != storage.dtype or is_half(storage.dtype)):
        return (f"transpose='scatter' on the GPU adds in the matrix dtype with atomics; a matrix of "
                f"{precision_words(storage)} needs transpose='store' (its transpose is a matrix of its own)")
    return None


def create(storage, device: str, conjugate: bool) -> Executor:
    """The scatter executor of ``A.T`` (``A.H`` with ``conjugate``) for ``A`` stored as ``storage`` on ``device``."""
    if device == "cuda":
        refused = refusal(storage, device)
        if refused:
            raise ValueError(refused)
        return DeviceScatterTranspose(storage, conjugate)
    return HostScatterTranspose(storage, conjugate)
