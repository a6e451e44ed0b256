"""Value precisions: the dtypes a matrix's values are stored in, the dtype of its operands, and the arithmetic
a product runs in.

A matrix has one **dtype**, that of ``x``, ``y``, ``alpha`` and ``beta``.  Its values are stored in that dtype,
or, opted into with ``value_dtype=``, in a narrower one (:data:`NARROWER`): float32 values under float64
products, float16 or bfloat16 values under float32 products.  Every product widens the stored values
exactly and sums in the **compute dtype**: the dtype itself, or float32 for the half types (float16,
bfloat16), as cuSPARSE's half-precision SpMV does.  bfloat16 is NumPy's and CuPy's through the optional
``ml_dtypes`` package; without it only float16 is a half type here.

Error bound of a product (real dtypes; ``u``: unit roundoff of the compute dtype, ``u_y`` of the dtype,
``n_i`` the stored entries of row i, ``gamma(n) = n u / (1 - n u)``)::

    |y_i - y*_i| <= gamma(n_i + 2) * (|alpha| sum_j |a_ij x_j| + |beta y_i|) + u_y |y*_i|

where ``y*`` is the exact product of the stored values (a narrower storage also rounded each value once,
relative error at most the storage's unit roundoff, when the matrix was built).  The ``u_y`` term is
the final rounding of a half result.  Kernels that store part of a row's sum in a half ``y`` and add the rest
later (csr_merge's carries, the COO kernels, a Cocktail's later parts) round each partial sum too: add
``u_y (|alpha| sum_j |a_ij x_j| + |beta y_i|)`` per such write.
"""

from __future__ import annotations

import numpy as np

try:  # optional: NumPy's and CuPy's bfloat16
    import ml_dtypes as _ml_dtypes
except ImportError:  # pragma: no cover - depends on the environment
    _ml_dtypes = None

FLOAT16 = np.dtype(np.float16)
FLOAT32 = np.dtype(np.float32)
FLOAT64 = np.dtype(np.float64)
#: bfloat16, or None without ml_dtypes.
BFLOAT16 = np.dtype(_ml_dtypes.bfloat16) if _ml_dtypes is not None else None

#: The half types this process has: float16, and bfloat16 with ml_dtypes.
HALF_DTYPES = tuple(d for d in (FLOAT16, BFLOAT16) if d is not None)

#: The real and complex dtypes a product can be in (its operands' dtype).
PRODUCT_DTYPES = (*HALF_DTYPES, FLOAT32, FLOAT64, np.dtype(np.complex64), np.dtype(np.complex128))

#: ``dtype -> the narrower dtypes its values may be stored in`` (``value_dtype=``).
NARROWER = {FLOAT64: (FLOAT32,), FLOAT32: HALF_DTYPES}

#: Unit roundoff (half an ulp of 1) of each real dtype.
_UNIT_ROUNDOFF = {FLOAT16: 2.0**-11, FLOAT32: 2.0**-24, FLOAT64: 2.0**-53}
if BFLOAT16 is not None:
    _UNIT_ROUNDOFF[BFLOAT16] = 2.0**-8


def dtype_named(name) -> np.dtype:
    """The dtype ``name`` spells (``"bfloat16"`` through ml_dtypes, a clear ``TypeError`` without it).  ``None`` is
    a ``TypeError`` too, never NumPy's float64 (``np.dtype(None)``): a missing dtype must not pass for one."""
    if name is None:
        raise TypeError("a dtype is needed here, got None")
    if isinstance(name, str) and name.strip().lower() == "bfloat16":
        if BFLOAT16 is None:
            raise TypeError("bfloat16 needs the optional package ml_dtypes (pip install ml_dtypes)")
        return BFLOAT16
    return np.dtype(name)


#: Bytes per value of each value dtype, by name: what a saved record's dtype weighs in any install (a bfloat16
#: record read where ml_dtypes is missing too).
ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "complex64": 8, "complex128": 16}


def itemsize(name) -> int:
    """Bytes per value of the value dtype ``name`` (a name or a dtype), without needing the dtype itself."""
    return ITEMSIZE[name if isinstance(name, str) else np.dtype(name).name]


def is_bfloat16(dtype) -> bool:
    """Whether ``dtype`` is bfloat16 (never without ml_dtypes).  Not ``dtype == BFLOAT16``: without ml_dtypes that
    is ``dtype == None``, which NumPy reads as ``dtype == float64`` (``np.dtype(None)`` is float64)."""
    return BFLOAT16 is not None and np.dtype(dtype) == BFLOAT16


def is_half(dtype) -> bool:
    """Whether ``dtype`` is float16 or bfloat16."""
    return dtype_named(dtype) in HALF_DTYPES


def is_value_dtype(dtype) -> bool:
    """Whether arrays of ``dtype`` hold matrix values (floating or complex), not indices or codes."""
    dt = dtype_named(dtype)
    return dt.kind in "fc" or dt in HALF_DTYPES


def compute_dtype(dtype) -> np.dtype:
    """The dtype a product in ``dtype`` sums in: float32 for a half type, else ``dtype`` itself."""
    dt = dtype_named(dtype)
    return FLOAT32 if dt in HALF_DTYPES else dt


def sampled_dtype(dtype) -> np.dtype:
    """The real dtype whose device-profile samples cost a product in ``dtype`` (the planner scales them by the bytes
    an entry moves): float32 for the half types and complex64, float64 for complex128, else ``dtype`` itself."""
    dt = compute_dtype(dtype)
    return np.dtype(dt.char.lower()) if dt.kind == "c" else dt


def unit_roundoff(dtype) -> float:
    """Half an ulp of 1 in the real ``dtype`` (or a complex dtype's parts)."""
    dt = dtype_named(dtype)
    if dt.kind == "c":
        dt = np.dtype(dt.char.lower())
    return _UNIT_ROUNDOFF[dt]


def rounded(data, dtype):
    """``data`` converted to ``dtype``, each value rounded once to nearest even.  ml_dtypes converts float64 to
    bfloat16 through float32, rounding twice (``1 + 2**-8 + 2**-30`` would become 1): here float64 goes to float32
    rounded to odd first (toward zero, the last bit set when inexact), which a second rounding to bfloat16's 8 bits
    cannot spoil."""
    dtype = np.dtype(dtype)
    if not is_bfloat16(dtype) or data.dtype != FLOAT64:
        return data.astype(dtype)
    from .arrays import get_xp

    xp = get_xp(data)
    with np.errstate(over="ignore", invalid="ignore"):
        near = data.astype(np.float32)
        wide = near.astype(np.float64)
        above = xp.abs(wide) > xp.abs(data)  # rounded away from zero: step back toward it
        near = xp.where(above & xp.isfinite(data), xp.nextafter(near, np.float32(0)), near)
        inexact = near.astype(np.float64) != data
        bits = near.view(np.uint32) | inexact.astype(np.uint32)
    return bits.view(np.float32).astype(dtype)


def stored_dtype(dtype, value_dtype) -> np.dtype:
    """The dtype values of a ``dtype`` matrix are stored in: ``dtype`` itself for ``value_dtype=None``, else
    ``value_dtype``, which must be one of :data:`NARROWER`'s for ``dtype`` (``ValueError`` naming them)."""
    dt = np.dtype(dtype)
    if value_dtype is None:
        return dt
    st = dtype_named(value_dtype)
    if st == dt:
        return dt
    allowed = NARROWER.get(dt, ())
    if st not in allowed:
        names = ", ".join(d.name for d in allowed) or "none"
        raise ValueError(f"value_dtype={st.name} for a {dt.name} matrix: values may be stored in a narrower dtype "
                         f"than the matrix's only, here {names}")
    return st
