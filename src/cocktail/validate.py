"""Input validation: every check runs before any work and names the broken invariant.

Nothing here writes to the arrays it is given.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from .arrays import get_xp
from .precision import PRODUCT_DTYPES, compute_dtype, dtype_named, is_value_dtype

VALUE_DTYPES = PRODUCT_DTYPES
INDEX_DTYPES = (np.dtype("int32"), np.dtype("int64"))
INT32_MAX = int(np.iinfo(np.int32).max)


def _names(dtypes) -> str:
    return ", ".join(d.name for d in dtypes)


def value_dtype(dtype, what: str = "matrix values") -> np.dtype:
    """Return ``dtype`` as a NumPy dtype if Cocktail computes in it, else raise ``TypeError``."""
    try:
        dt = dtype_named(dtype)
    except TypeError as exc:
        raise TypeError(f"{what}: {dtype!r} is not a dtype ({exc})") from exc
    if dt not in VALUE_DTYPES:
        raise TypeError(
            f"{what}: dtype {dt.name} is not supported; supported value dtypes are "
            f"{_names(VALUE_DTYPES)} (convert with .astype(...) or pass dtype=)"
        )
    return dt


def index_dtype(dtype, what: str = "index array") -> np.dtype:
    """Return ``dtype`` if it is a supported index dtype (int32, int64), else raise ``TypeError``."""
    dt = np.dtype(dtype)
    if dt.kind not in "iu":
        raise TypeError(f"{what}: index arrays must have an integer dtype, got {dt.name}")
    return dt


def choose_index_dtype(largest: int, requested=None) -> np.dtype:
    """Pick int32 when ``largest`` (every index and count to be stored) fits in it, else int64.

    ``requested`` forces a dtype; forcing int32 for values that do not fit raises ``ValueError``.
    """
    if requested is None:
        return np.dtype(np.int32) if largest <= INT32_MAX else np.dtype(np.int64)
    dt = np.dtype(requested)
    if dt not in INDEX_DTYPES:
        raise TypeError(f"index_dtype must be one of {_names(INDEX_DTYPES)}, got {dt.name}")
    if dt == np.int32 and largest > INT32_MAX:
        raise ValueError(
            f"index_dtype=int32 cannot hold {largest} (largest index or count of this matrix); use int64"
        )
    return dt


def index_itemsize(largest: int, requested=None) -> int:
    """Bytes per index that :func:`choose_index_dtype` picks, for a memory check made before the
    input is validated: 8 when ``requested`` is not a valid choice (the build then names it)."""
    try:
        return choose_index_dtype(largest, requested).itemsize
    except (TypeError, ValueError):
        return 8


def shape2d(shape) -> tuple[int, int]:
    """Validate a matrix shape: two non-negative integers."""
    try:
        m, n = shape
    except (TypeError, ValueError) as exc:
        raise ValueError(f"shape must be a pair (rows, cols), got {shape!r}") from exc
    if not all(isinstance(v, numbers.Integral) or (hasattr(v, "dtype") and v.dtype.kind in "iu") for v in (m, n)):
        raise TypeError(f"shape must hold integers, got {shape!r}")
    m, n = int(m), int(n)
    if m < 0 or n < 0:
        raise ValueError(f"shape must be non-negative, got ({m}, {n})")
    return m, n


def _first_bad(mask, values):
    """Position and value of the first True in ``mask`` (host scalars)."""
    xp = get_xp(mask)
    pos = int(xp.argmax(mask))
    return pos, values[pos].item()


def _device_arrays_hold(data, indices, indptr, n: int) -> bool:
    """On the GPU, whether every value invariant of :func:`csr_arrays` holds, read back in one synchronisation
    (each check alone would synchronise); False on the host, or when one fails: the checks one by one then
    name it."""
    xp = get_xp(indptr)
    if xp is np or indices.shape[0] != data.shape[0]:
        return False
    nnz = indices.shape[0]
    holds = [indptr[:1] == 0, indptr[-1:] == nnz]
    if indptr.shape[0] > 1:
        holds.append(((indptr[1:] - indptr[:-1]) >= 0).all().reshape(1))
    if nnz:
        holds += [(indices.min() >= 0).reshape(1), (indices.max() < n).reshape(1)]
    return bool(xp.concatenate(holds).all().get())


def csr_arrays(data, indices, indptr, shape) -> tuple[int, int]:
    """Check the CSR invariants of ``(data, indices, indptr)`` for ``shape``; return the shape.

    Raises ``TypeError`` for a wrong dtype or dimensionality and ``ValueError``, naming the
    invariant and the first offending position, for anything else.
    Unsorted indices, duplicates and explicit zeros are valid.
    """
    shape = csr_layout(data, indices, indptr, shape)
    csr_values(data, indices, indptr, shape)
    return shape


def csr_layout(data, indices, indptr, shape) -> tuple[int, int]:
    """The checks of :func:`csr_arrays` that read no array's values (types, dimensions, the pointers' length);
    returns the shape."""
    m, n = shape2d(shape)
    for name, arr in (("data", data), ("indices", indices), ("indptr", indptr)):
        if not hasattr(arr, "dtype") or not hasattr(arr, "ndim"):
            raise TypeError(f"CSR {name} must be an array, got {type(arr).__name__}")
        if arr.ndim != 1:
            raise ValueError(f"CSR {name} must be 1-D, got {arr.ndim}-D with shape {arr.shape}")
    value_dtype(data.dtype, "CSR data")
    index_dtype(indices.dtype, "CSR indices")
    index_dtype(indptr.dtype, "CSR indptr")
    if indptr.shape[0] != m + 1:
        raise ValueError(f"CSR indptr must have rows+1 = {m + 1} entries, got {indptr.shape[0]}")
    return m, n


def csr_values(data, indices, indptr, shape) -> None:
    """The checks of :func:`csr_arrays` that read the pointers and indices, for a ``shape`` and arrays that
    passed :func:`csr_layout`."""
    m, n = shape
    if _device_arrays_hold(data, indices, indptr, n):
        return
    if int(indptr[0]) != 0:
        raise ValueError(f"CSR indptr[0] must be 0, got {int(indptr[0])}")
    xp = get_xp(indptr)
    if m:
        steps = xp.diff(indptr)
        if bool((steps < 0).any()):
            pos, _ = _first_bad(steps < 0, steps)
            raise ValueError(
                f"CSR indptr must be non-decreasing: indptr[{pos + 1}] = {int(indptr[pos + 1])} "
                f"< indptr[{pos}] = {int(indptr[pos])}"
            )
    end = int(indptr[-1])
    if end != indices.shape[0] or end != data.shape[0]:
        raise ValueError(
            f"CSR indptr[-1] must equal len(indices) and len(data): indptr[-1] = {end}, "
            f"len(indices) = {indices.shape[0]}, len(data) = {data.shape[0]}"
        )
    if indices.shape[0]:
        neg = indices < 0
        if bool(neg.any()):
            pos, val = _first_bad(neg, indices)
            raise ValueError(f"CSR indices must be non-negative: indices[{pos}] = {val}")
        big = indices >= n
        if bool(big.any()):
            pos, val = _first_bad(big, indices)
            raise ValueError(f"CSR indices must be < cols = {n}: indices[{pos}] = {val}")


def dia_offsets(offsets, shape) -> None:
    """Check DIA offsets: 1-D integers, no duplicates (a duplicate would be summed twice)."""
    m, n = shape2d(shape)
    index_dtype(offsets.dtype, "DIA offsets")
    xp = get_xp(offsets)
    if offsets.ndim != 1:
        raise ValueError(f"DIA offsets must be 1-D, got shape {offsets.shape}")
    srt = xp.sort(offsets)
    dup = srt[1:] == srt[:-1]
    if offsets.shape[0] > 1 and bool(dup.any()):
        pos, val = _first_bad(dup, srt[1:])
        raise ValueError(f"DIA offsets must be unique: offset {val} appears more than once")


def scalar(value, dtype: np.dtype, name: str):
    """Validate ``alpha``/``beta``: a number representable in the matrix's value dtype."""
    if isinstance(value, bool) or not isinstance(value, numbers.Number):
        if not (hasattr(value, "dtype") and getattr(value, "ndim", 1) == 0):
            raise TypeError(f"{name} must be a scalar number, got {type(value).__name__}")
        if hasattr(value, "__cuda_array_interface__"):
            raise TypeError(f"{name} is a 0-d array in GPU memory: pass a host number (reading it would "
                            "synchronise with the GPU)")
        value = value.item()
    if isinstance(value, complex) or np.iscomplexobj(value):
        if dtype.kind != "c" and complex(value).imag != 0:
            raise TypeError(f"{name} = {value!r} is complex but the matrix dtype {dtype.name} is real")
        if dtype.kind != "c":
            value = complex(value).real
    try:
        with np.errstate(over="ignore"):
            converted = dtype.type(value)
    except OverflowError:
        raise ValueError(f"{name} = {_short(value)} does not fit the matrix dtype {dtype.name}") from None
    given = complex(value)
    if np.isfinite(given) and not np.all(np.isfinite(converted)):
        largest = float(_largest(dtype))
        raise ValueError(f"{name} = {value!r} overflows the matrix dtype {dtype.name} (largest {largest:.4g})")
    return converted


def _largest(dtype):
    """The largest finite value of the real (or complex part) ``dtype``, bfloat16 included."""
    try:
        return np.finfo(dtype).max
    except ValueError:  # ml_dtypes' bfloat16 has its own finfo
        import ml_dtypes

        return ml_dtypes.finfo(dtype).max


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:16]}... ({len(text)} digits)"


def operand(x, shape, dtype: np.dtype, name: str = "x", allow_2d: bool = True):
    """Check the input vector or block of vectors ``x`` against an (m, n) matrix of ``dtype``.

    ``x`` must have ``n`` rows (1-D ``(n,)`` or 2-D ``(n, k)``) and a dtype that casts to the
    matrix dtype without loss (float32 into float64 is fine, float64 into float32 is not).
    """
    n = shape[1]
    if not hasattr(x, "dtype") or not hasattr(x, "shape"):
        raise TypeError(f"{name} must be an array, got {type(x).__name__}")
    if hasattr(x, "nnz") and hasattr(x, "toarray"):  # SciPy or cupyx sparse: NumPy would fail obscurely on it
        raise TypeError(f"{name} is a sparse {type(x).__name__}: pass a dense array ({name}.toarray())")
    if x.ndim not in ((1, 2) if allow_2d else (1,)):
        raise ValueError(f"{name} must be 1-D (n,) or 2-D (n, k), got shape {x.shape}")
    if x.shape[0] != n:
        raise ValueError(f"{name} has {x.shape[0]} rows but the matrix has {n} columns (shape {tuple(shape)})")
    if x.dtype.kind not in "biu" and not is_value_dtype(x.dtype):
        raise TypeError(f"{name} must be numeric, got dtype {x.dtype}")
    if not np.can_cast(x.dtype, dtype, "safe"):
        raise TypeError(
            f"{name} has dtype {x.dtype.name}, which does not cast safely to the matrix dtype "
            f"{dtype.name}; convert it with .astype({dtype.name!r}) or build the matrix in {x.dtype.name}"
        )


def output(out, shape, dtype: np.dtype, ncols_x, name: str = "out"):
    """Check ``out``: exactly the matrix dtype and shape (m,) or (m, k) matching ``x``."""
    m = shape[0]
    want = (m,) if ncols_x is None else (m, ncols_x)
    if not hasattr(out, "dtype") or not hasattr(out, "shape"):
        raise TypeError(f"{name} must be an array, got {type(out).__name__}")
    if tuple(out.shape) != want:
        raise ValueError(f"{name} must have shape {want} for this product, got {tuple(out.shape)}")
    if out.dtype != dtype:
        raise TypeError(f"{name} must have the matrix dtype {dtype.name}, got {out.dtype.name}")
    if not getattr(out.flags, "writeable", True):  # CuPy arrays have no such flag
        raise ValueError(f"{name} is read-only")


class CheckedOperands(NamedTuple):
    """Operands of ``y = alpha*A@x + beta*out`` after :func:`product_operands`.

    ``X`` is 2-D (n, k) in the matrix dtype (a copy only when the dtype differed); ``ncols``
    is None for a vector ``x``.
    """

    X: object
    out: object
    alpha: object
    beta: object
    ncols: int | None

    def result_shape(self, m: int) -> tuple:
        """``(m,)`` for a vector product, ``(m, k)`` for a block."""
        return (m,) if self.ncols is None else (m, self.ncols)


def product_operands(shape, dtype: np.dtype, xp, x, out=None, alpha=1, beta=0) -> CheckedOperands:
    """Check ``x``, ``out``, ``alpha`` and ``beta`` of a product with an (m, n) matrix of ``dtype`` living in ``xp``.

    ``x`` is never modified: a dtype conversion makes a copy.  Raises ``TypeError`` or
    ``ValueError`` naming the problem.
    """
    operand(x, shape, dtype)
    if get_xp(x) is not xp:
        where = "GPU" if xp.__name__ == "cupy" else "CPU"
        raise TypeError(f"x is a {type(x).__module__}.{type(x).__name__} but the matrix lives on the {where}")
    alpha = scalar(alpha, compute_dtype(dtype), "alpha")  # float32 for a half matrix
    beta = scalar(beta, compute_dtype(dtype), "beta")
    ncols = None if x.ndim == 1 else int(x.shape[1])
    if out is None:
        if beta != 0:
            raise ValueError("beta != 0 needs out= holding the y to scale and add to")
    else:
        output(out, shape, dtype, ncols)
        if get_xp(out) is not xp:
            raise TypeError("out must live on the same device as the matrix")
    X = x.reshape(shape[1], 1 if ncols is None else ncols).astype(dtype, copy=False)
    return CheckedOperands(X, out, alpha, beta, ncols)


def may_repeat_elements(a) -> bool:
    """Whether two indices of the array ``a`` may address the same memory (a broadcast view, or strides that
    interleave): conservative, it answers True for some exotic views whose elements are in fact distinct."""
    dims = sorted((abs(stride), size) for stride, size in zip(a.strides, a.shape) if size > 1)
    if not dims or a.size == 0:
        return False
    extent = a.dtype.itemsize
    for stride, size in dims:
        if stride < extent:
            return True
        extent = stride * (size - 1) + extent
    return False
