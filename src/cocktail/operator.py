"""SciPy's LinearOperator protocol and sparse-array conveniences on a ``SparseMatrix``.

``SparseMatrix`` is a ``scipy.sparse.linalg.LinearOperator`` through :class:`OperatorProtocol`, so
SciPy's solvers take it as it is (``aslinearoperator`` returns it unchanged, block products
included) and cupyx's wrap its ``matvec`` and ``rmatvec``.  What this adds to the products:

- transposes: ``A.T``, ``A.H``, ``A.transpose()``, ``A.adjoint()``, ``A.conj()``, ``A.rmatvec``,
  ``A.rmatmat`` and the row-vector product ``x @ A``; each transpose is a matrix of its own, built
  once on first use (:meth:`SparseMatrix._transposed`), and ``A.T.T is A``;
- new matrices from this one: ``A * 2``, ``-A``, ``A / 4``, ``A.astype``, ``A.copy``, ``A.conj()``;
- conversions: ``A.tocsr()``, ``A.tocsc()``, ``A.tocoo()`` (SciPy on the CPU, cupyx on the GPU),
  ``A.toarray()``, ``A.to_torch()``, ``A.diagonal()``, ``A.trace()``;
- SciPy's lazy algebra of operators (``A + B``, ``A - B``, ``A @ B`` and ``A ** p`` with ``B`` a LinearOperator);
- a clear ``TypeError`` for what SciPy's sparse arrays do and an operator does not (``A + B`` with an array,
  ``A[i, j]``, ``A.multiply``, ``np.asarray(A)``), naming what to call instead.
"""

from __future__ import annotations

import functools
import numbers

import numpy as np
from scipy.sparse.linalg import LinearOperator

from .formats.csr import converted
from .precision import compute_dtype, dtype_named, is_half, is_value_dtype

#: SciPy sparse-array methods a SparseMatrix does not have: each raises a TypeError that says what to call.
SCIPY_ONLY = ("multiply", "power", "sum", "mean", "maximum", "minimum", "nonzero", "count_nonzero", "setdiag",
              "eliminate_zeros", "sort_indices", "sum_duplicates", "resize", "getrow", "getcol", "tolil", "todok",
              "todia", "tobsr", "log1p", "sqrt", "sign", "floor", "ceil")


def _refusal(what: str) -> TypeError:
    return TypeError(f"SparseMatrix does not support {what}: it is a fixed operator for fast products "
                     "(A @ x, A.T @ x, A * 2, A.astype, A.tocsr()); do this on A.tocsr() (SciPy on the CPU, "
                     "cupyx on the GPU) and build a SparseMatrix of the result where you need its products")


def _rows_check(matrix, x, what: str) -> None:
    """The adjoint products take vectors of the matrix's rows: say so in its own shape, not its transpose's."""
    rows = getattr(x, "shape", (None,))[0] if getattr(x, "ndim", 0) else None
    if rows is not None and rows != matrix.shape[0]:
        raise ValueError(f"{what}: x has {rows} rows but the matrix has {matrix.shape[0]} rows (shape "
                         f"{tuple(matrix.shape)}; {what} multiplies by its conjugate transpose)")


def _is_scalar(value) -> bool:
    return isinstance(value, numbers.Number) or (getattr(value, "ndim", None) == 0 and hasattr(value, "dtype"))


@functools.lru_cache(maxsize=None)
def _namespace(device: str):
    """The array namespace SciPy's LinearOperator (1.18 on) compares its operands' with: SciPy's wrapped NumPy or
    CuPy where SciPy has array-API support, the module itself before."""
    if device == "cuda":
        import cupy as module
    else:
        module = np
    try:
        from scipy._lib._array_api import array_namespace
    except ImportError:  # SciPy before array-API support
        return module
    return array_namespace(module.empty(0))


class OperatorProtocol(LinearOperator):
    """The LinearOperator protocol and SciPy's conveniences, written on the matrix's own products.

    ``LinearOperator.__init__`` is never called (its ``shape`` and ``dtype`` are the matrix's properties); what it
    would set that SciPy's code reads (``ndim``, and from SciPy 1.18 the namespace ``_xp``) is declared here."""

    __array_ufunc__ = None  # NumPy defers x @ A, 2 * A, ... to the reflected methods below
    __array_priority__ = 100.0  # ... and so does CuPy
    ndim = 2
    args = ()

    @property
    def _xp(self):
        return _namespace(self.device)

    # --- what SciPy's LinearOperator machinery calls (sums, products and powers of operators) ---
    def _matvec(self, x):
        return self.matvec(x)

    def _matmat(self, X):
        return self.matmat(X)

    def _rmatvec(self, x):
        return self.rmatvec(x)

    def _rmatmat(self, X):
        return self.rmatmat(X)

    def _adjoint(self):
        return self.H

    def _transpose(self):
        return self.T

    # --- transposes ------------------------------------------------------------------
    @property
    def T(self):
        """The transpose, a matrix of its own with its own plan: built on first use and kept (``A.T.T is A``).
        With ``transpose="scatter"`` nothing is stored: its products scatter from this matrix's arrays."""
        return self._transposed(conjugate=False)

    @property
    def H(self):
        """The conjugate transpose (``A.T`` for real values), built on first use and kept, like :attr:`T`."""
        return self._transposed(conjugate=self.dtype.kind == "c")

    def transpose(self, axes=None, copy=False):
        """:attr:`T` (SciPy's signature: ``axes`` may only swap the two axes; ``copy`` is ignored: the transpose
        is always a matrix of its own)."""
        if axes is not None and tuple(axes) != (1, 0):
            raise ValueError(f"transpose: axes must be None or (1, 0) for a matrix, got {axes!r}")
        return self.T

    def adjoint(self):
        """:attr:`H`, the conjugate transpose."""
        return self.H

    def conj(self, copy=True):
        """The complex conjugate: this matrix itself for real values (it is never modified), else a new matrix."""
        if self.dtype.kind != "c":
            return self
        return self._derived("conj", lambda csr: csr.with_values(csr.data.conj()))

    conjugate = conj

    def rmatvec(self, x, out=None, alpha=1, beta=0):
        """``alpha * A.H @ x + beta * out``: the adjoint product of SciPy's LinearOperator, run by :attr:`H`."""
        _rows_check(self, x, "rmatvec")
        return self.H.matvec(x, out, alpha, beta)

    def rmatmat(self, X, out=None, alpha=1, beta=0):
        """``alpha * A.H @ X + beta * out`` for a block ``X`` of shape (rows, k), run by :attr:`H`."""
        _rows_check(self, X, "rmatmat")
        return self.H.matmat(X, out, alpha, beta)

    def dot(self, x):
        """``A @ x`` for an array, ``A * x`` (a scaled matrix) for a scalar, as SciPy's ``dot``."""
        if _is_scalar(x):
            return self * x
        if isinstance(x, LinearOperator):
            return LinearOperator.dot(self, x)
        if isinstance(x, (list, tuple)):  # array_like, as SciPy's dot takes it
            x = self._module.asarray(x)
        return self @ x

    def __call__(self, x):
        return self.dot(x)

    def __rmatmul__(self, x):
        """``x @ A``: a row vector (rows,) or a block (p, rows) times the matrix, run by :attr:`T`."""
        if isinstance(x, LinearOperator):
            return NotImplemented
        ndim = getattr(x, "ndim", None)
        if ndim in (1, 2) and x.shape[-1] != self.shape[0]:
            raise ValueError(f"x @ A: x has {x.shape[-1]} entries {'per row ' if ndim == 2 else ''}but the matrix "
                             f"has {self.shape[0]} rows (shape {tuple(self.shape)})")
        if ndim == 1:
            return self.T.matvec(x)
        if ndim == 2:
            return self.T.matmat(x.T).T
        raise TypeError(f"x @ A needs a 1-D or 2-D array, got {type(x).__name__} with ndim={ndim}")

    # --- new matrices from this one ----------------------------------------------------
    def _scaled(self, factor):
        """A new matrix of ``factor`` times this one's values, in ``result_type(A.dtype, factor)`` (NumPy's rules:
        a Python float keeps a float32 matrix float32)."""
        if is_half(self.dtype):  # a half matrix stays half for a real factor (NumPy would make bfloat16 float64)
            dtype = self.dtype if not isinstance(factor, complex) else np.dtype(np.complex64)
        else:
            dtype = np.result_type(self.dtype, factor)
        if not is_value_dtype(dtype):
            raise TypeError(f"A * {factor!r}: the product's dtype {dtype.name} is not a value dtype")
        wide = compute_dtype(dtype)  # a half matrix's values scaled in float32, then rounded once (overflow refused)
        return self._derived(None, lambda csr: csr.with_values(
            converted(csr.data.astype(wide) * wide.type(factor), dtype, f"A * {factor!r} in {dtype.name}",
                      "scale by less, or convert the matrix first (A.astype(...))")))

    def __mul__(self, other):
        if _is_scalar(other):
            return self._scaled(other)
        if isinstance(other, LinearOperator):
            return LinearOperator.__mul__(self, other)
        raise TypeError("A * x: SparseMatrix multiplies by a scalar with *; for the matrix product use A @ x "
                        "(SciPy's sparse arrays multiply elementwise with *, its sparse matrices multiply "
                        "matrices: the meaning differs between them)")

    def __rmul__(self, other):
        if _is_scalar(other):
            return self._scaled(other)
        if isinstance(other, LinearOperator):
            return NotImplemented
        raise TypeError("x * A: SparseMatrix multiplies by a scalar with *; for the row-vector product use x @ A")

    def __truediv__(self, other):
        if not _is_scalar(other):
            raise _refusal("division by an array")
        return self._scaled(1 / other)

    def __neg__(self):
        return self._scaled(-1)

    def __pos__(self):
        return self

    def __add__(self, other):
        if isinstance(other, LinearOperator):
            return LinearOperator.__add__(self, other)  # SciPy's lazy sum of operators
        raise _refusal("A + B")

    def __radd__(self, other):
        if isinstance(other, LinearOperator):
            return NotImplemented
        raise _refusal("B + A")

    def __sub__(self, other):
        if isinstance(other, LinearOperator):  # SciPy's lazy sum with other lazily negated (never a copy of it)
            return LinearOperator.__add__(self, LinearOperator.dot(other, -1))
        raise _refusal("A - B")

    def __rsub__(self, other):
        if isinstance(other, LinearOperator):
            return NotImplemented
        raise _refusal("B - A")

    def __pow__(self, p):
        """SciPy's lazy matrix power ``A ** p`` (an operator applying ``A`` ``p`` times), as any LinearOperator's."""
        return LinearOperator.__pow__(self, p)

    def __getitem__(self, key):
        raise _refusal("indexing A[...]")

    def __setitem__(self, key, value):
        raise _refusal("assigning to A[...]")

    def __array__(self, dtype=None, copy=None):
        raise TypeError("SparseMatrix is not a dense array: call A.toarray() for one (it holds rows x cols values)")

    def astype(self, dtype, casting="unsafe", copy=True):
        """The matrix with its values in ``dtype`` (float32, float64, complex64, complex128), planned anew;
        this matrix itself where ``dtype`` is its own and ``copy=False``."""
        dtype = dtype_named(dtype)  # "bfloat16" names ml_dtypes where it is missing
        if dtype == self.dtype and not copy:
            return self
        if not np.can_cast(self.dtype, dtype, casting):
            raise TypeError(f"astype: cannot cast {self.dtype.name} to {dtype.name} under casting={casting!r}")
        return self._derived(None, lambda csr: csr, dtype=dtype)

    def copy(self):
        """A new matrix of the same values, built with the same options (it shares nothing with this one: building
        a matrix copies what it is given)."""
        return self._derived(None, lambda csr: csr)

    # --- conversions -------------------------------------------------------------------
    def tocsr(self, copy=False):
        """The matrix as SciPy's ``csr_array`` (CPU) or cupyx's ``csr_matrix`` (GPU): a copy of its entries, in its
        dtype (values stored narrower widened back), a half matrix in float32 (neither library has half)."""
        csr = self._csr()
        if self.device == "cpu":
            return csr.to_scipy()
        import cupyx.scipy.sparse as csp

        data = csr.data.astype(compute_dtype(self.dtype))  # a copy
        return csp.csr_matrix((data, csr.indices.copy(), csr.indptr.copy()), shape=self.shape)

    def tocsc(self, copy=False):
        """:meth:`tocsr` converted to CSC."""
        return self.tocsr().tocsc()

    def tocoo(self, copy=False):
        """:meth:`tocsr` converted to COO."""
        return self.tocsr().tocoo()

    def toarray(self, order=None, out=None):
        """The dense matrix: a NumPy array (CPU) or a CuPy array (GPU) of rows x cols values."""
        from . import _memory

        m, n = self.shape
        _memory.require(f"a dense {m} x {n} copy of the matrix", [("its values", m * n * self.dtype.itemsize)],
                        self.device)
        dense = self.tocsr().toarray()
        if out is not None:
            out[...] = dense
            return out
        return dense

    def todense(self, order=None, out=None):
        """:meth:`toarray` (a plain array, never ``numpy.matrix``)."""
        return self.toarray(order, out)

    def to_torch(self):
        """A ``torch.sparse_csr_tensor`` of the matrix on its device (torch's CUDA device for a GPU matrix)."""
        from . import torch_ops

        return torch_ops.sparse_csr_tensor(self.tocsr(), self.device)

    def diagonal(self, k=0):
        """The ``k``-th diagonal's values (zeros where nothing is stored), on the matrix's device."""
        return self.tocsr().diagonal(k)

    def trace(self, offset=0):
        """The sum of the ``offset``-th diagonal (a Python number)."""
        return self.diagonal(offset).sum().item()


def _scipy_only(name: str):
    def refuse(self, *args, **kwargs):
        raise _refusal(f"A.{name}(...)")

    refuse.__name__ = name
    refuse.__doc__ = f"Not supported: a TypeError that says to call ``A.tocsr().{name}(...)`` instead."
    return refuse


for _name in SCIPY_ONLY:
    setattr(OperatorProtocol, _name, _scipy_only(_name))
del _name
