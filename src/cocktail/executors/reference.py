"""The ``reference`` executor: the product that reads the format's own arrays.

On the CPU it is the NumPy reference product of :mod:`cocktail.reference` (the test oracle).
On the GPU it gathers and scatters over the format's entries (row, column and position in one
of the format's own value arrays, found once at construction): a scaling of ``y`` and one
elementwise kernel per value array, with no host synchronisation, no copy to the host and no
allocation per product, so it can be captured in a CUDA graph from its first call.  It runs
every format and dtype (complex too) that has no GPU kernel.
"""

from __future__ import annotations

import functools

from .. import reference
from ..precision import is_half
from ..reference.entries import entries_of
from .base import Executor


def combine(y, t, alpha, beta) -> None:
    """``y = alpha*t + beta*y`` in place, ``t`` scratch; ``beta == 0`` never reads ``y``.  A ``t`` wider than
    ``y`` (the float32 sums of a half matrix) takes ``beta*y`` in its own dtype, and ``y`` is rounded once."""
    if alpha != 1:
        t *= alpha
    if beta == 0:
        y[...] = t
    elif t.dtype != y.dtype:
        if beta != 1:
            t += y.astype(t.dtype) * beta
        else:
            t += y
        y[...] = t
    else:
        if beta != 1:
            y *= beta
        y += t


class HostReference(Executor):
    """NumPy's reference product of the format (the CPU ``reference`` executor)."""

    name = "reference"
    kernel = "reference"
    overlap_safe = True

    def __init__(self, storage):
        self.storage = storage
        self._wide = reference.arithmetic_form(storage)  # storage itself unless half or stored narrower
        self._product = reference.product_for(storage)

    def _multiply(self, X):
        return self._product(self._wide, X.astype(self._wide.dtype, copy=False))

    def run(self, x, y, alpha, beta) -> None:
        """``y = alpha*A@x + beta*y`` through the format's reference product."""
        combine(y, self._multiply(x[:, None])[:, 0], alpha, beta)

    def own_reads_once(self, k: int) -> tuple[bool, ...]:
        """One product for the whole block."""
        return (True,)

    def own_block_kernels(self, k: int, row_major: bool = True) -> tuple[str, ...]:
        """The reference product of the whole block."""
        return ("reference",)

    def run_block(self, X, Y, alpha, beta) -> None:
        """The same for a block of vectors, in one reference product."""
        combine(Y, self._multiply(X), alpha, beta)


def no_device_path(storage) -> str:
    """Why a half or narrower-stored matrix of a format with no kernel for it cannot run on the GPU, and which
    formats can."""
    from .. import kernels
    from ..kernels.spec import precision_words, type_names

    wanted = type_names(storage)[0]
    able = sorted({f for name in kernels.names() for f in kernels.get(name).formats
                   if wanted in kernels.get(name).precisions and f != storage.name})
    return (f"no GPU kernel multiplies {storage.name} matrices of {precision_words(storage)}, and the device "
            f"reference path sums in the matrix dtype only; store it as one of {', '.join(able)} "
            "(or format='auto')")


ATOMIC_ADD = r"""
__device__ __forceinline__ void cocktail_atomic_add(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void cocktail_atomic_add(double* p, double v) { atomicAdd(p, v); }
template <typename R>
__device__ __forceinline__ void cocktail_atomic_add(complex<R>* p, complex<R> v) {
    R* parts = reinterpret_cast<R*>(p);
    atomicAdd(parts, v.real());
    atomicAdd(parts + 1, v.imag());
}
"""


@functools.lru_cache(maxsize=None)
def device_kernels():
    """The two elementwise kernels of the device path: scale ``y`` by ``beta``, scatter-add the entries."""
    import cupy

    scale = cupy.ElementwiseKernel("T beta", "T y", "y = (beta == T(0)) ? T(0) : y * beta", "cocktail_reference_scale")
    scatter = cupy.ElementwiseKernel(
        "raw I rows, raw I cols, raw I pos, raw T values, raw T x, T alpha", "raw T y",
        "cocktail_atomic_add(&y[rows[i]], alpha * values[pos[i]] * x[cols[i]])",
        "cocktail_reference_scatter", preamble=ATOMIC_ADD)
    return scale, scatter


class DeviceReference(Executor):
    """Gather/scatter over the format's entries on the GPU (the GPU ``reference`` executor)."""

    name = "reference"
    kernel = "reference"
    nondeterministic = ("reference",)  # the scatter adds with atomics

    def __init__(self, storage):
        import cupy

        if storage.value_dtype != storage.dtype or is_half(storage.dtype):
            raise TypeError(no_device_path(storage))
        self.storage = storage
        self.entries = tuple(e for e in entries_of(storage) if e.rows.shape[0])
        self._scale, self._scatter = device_kernels()
        self._warm_up(cupy)

    def _warm_up(self, cupy) -> None:
        """Compile both kernels for this dtype now, so that no first product compiles (or syncs) inside a capture."""
        dtype = self.storage.dtype
        one = cupy.zeros(1, dtype=dtype)
        self._scale(dtype.type(1), one)
        index = cupy.zeros(1, dtype=cupy.int64)
        self._scatter(index, index, index, one, one, dtype.type(0), one, size=1)

    @property
    def nbytes(self) -> int:
        """Bytes of the entry index arrays kept beside the format."""
        return int(sum(e.rows.nbytes + e.cols.nbytes + e.pos.nbytes for e in self.entries))

    def run(self, x, y, alpha, beta) -> None:
        """``y = beta*y`` (zeros when ``beta == 0``), then every entry adds ``alpha*value*x[col]`` to its row."""
        dtype = self.storage.dtype
        if beta != 1:
            self._scale(dtype.type(beta), y)
        alpha = dtype.type(alpha)
        for e in self.entries:
            self._scatter(e.rows, e.cols, e.pos, e.values, x, alpha, y, size=e.rows.shape[0])
