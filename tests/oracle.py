"""Helpers that compare Cocktail's products and round trips with SciPy in high precision."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from cocktail.formats import get
from cocktail.tuning.format_rules import format_params


def fake_props(*, sm_count=132, max_block=1024, shared=49152, warp=32, cc=(9, 0)):
    """H100-like device properties for the host-side launch rules (no GPU needed)."""
    from cocktail.kernels.device import DeviceProps

    return DeviceProps(0, "fake", sm_count, max_block, 2048, shared, 232448, 2**31 - 1, warp, 50 << 20, cc)


def unbounded(name: str, params: dict) -> dict:
    """``params`` with ``max_fill=None`` added for formats that have a fill guard."""
    if "max_fill" in get(name).defaults and "max_fill" not in params:
        return {**params, "max_fill": None}
    return params


def build_params(name: str, params: dict, dtype) -> dict:
    """``unbounded(name, params)`` completed with the tuning rules, as ``SparseMatrix`` does."""
    return format_params(name, dtype, unbounded(name, params))


def value_limited(name: str, params: dict) -> int | None:
    """The most distinct values format ``name`` (a Cocktail: the fewest of its parts') stores, None when any number:
    dia_vi's codes address a table of a few hundred, csr_pattern holds one; either refuses the zoo's random values."""
    if name == "cocktail":
        limits = [value_limited(part, {}) for part, _, _ in params.get("parts", ())]
        return min((v for v in limits if v), default=None)
    return get(name).max_values


#: The distinct values :func:`few_values` leaves by default: a value table's worth.
TABLE_VALUES = 256


def few_values(data, limit: int = TABLE_VALUES):
    """``data`` (an array, or a SciPy sparse matrix's values) moved onto a grid of halves, the real and
    imaginary parts each: signs and zeros (-0.0 too) kept, a few dozen distinct values in the zoo; with
    ``limit`` 1 (a pattern format), every value set to one (0.75, complex 0.75 - 0.25j)."""
    if sp.issparse(data):
        out = data.copy()
        out.data = few_values(out.data, limit)
        return out
    if limit == 1:
        return np.full_like(data, 0.75 - 0.25j if np.iscomplexobj(data) else 0.75)
    if np.iscomplexobj(data):
        return (few_values(data.real) + 1j * few_values(data.imag)).astype(data.dtype)
    return np.where(data == 0, data, np.sign(data) * (np.floor(np.abs(data) * 2) + 1) / 2).astype(data.dtype)


def one_value(data, indices, indptr, shape):
    """Raw CSR values (possibly unsorted, with duplicates) made into one value per canonical entry: every value
    0.75 (:func:`few_values` with limit 1) and the repeats of a (row, col) 0, since duplicates are summed."""
    data = few_values(data, 1)
    rows = np.repeat(np.arange(shape[0]), np.diff(indptr))
    keys = rows.astype(np.int64) * max(shape[1], 1) + indices
    _, first = np.unique(keys, return_index=True)
    repeat = np.ones(keys.shape[0], dtype=bool)
    repeat[first] = False
    data[repeat] = 0
    return data


def raw_arrays(zm, dtype, index_dtype, few=None):
    """Fresh copies of a zoo matrix's raw CSR arrays in the given dtypes (``few``: values by :func:`few_values`,
    at most that many distinct)."""
    data = zm.data.astype(dtype)
    if np.dtype(dtype).kind == "c":
        data = data + 1j * np.linspace(-1, 1, data.shape[0]).astype(data.dtype)
    if few:
        data = few_values(data, few)
    if few == 1:
        data = one_value(data, zm.indices, zm.indptr, zm.shape)
    return data, zm.indices.astype(index_dtype), zm.indptr.astype(index_dtype)


def canonical_scipy(data, indices, indptr, shape):
    """SciPy's canonical form (sorted, duplicates summed, explicit zeros kept) as float64/complex128."""
    wide = np.complex128 if np.iscomplexobj(data) else np.float64
    S = sp.csr_array((data.astype(wide), indices.astype(np.int64), indptr.astype(np.int64)), shape=shape)
    S.sum_duplicates()
    return S


def random_operand(rng, shape, dtype):
    """Random values (complex when ``dtype`` is) that are never all zero."""
    x = rng.standard_normal(shape) + 0.5
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def assert_product_close(got, data, indices, indptr, shape, x, alpha=1, beta=0, y0=None):
    """``got`` must equal ``alpha*A@x + beta*y0`` (computed in float64) within a bound scaled by row length.

    The bound is 4 * eps * (entries in the row + 2) * (|alpha| |A||x| + |beta| |y0|), the
    classical forward-error bound of a dot product with some slack for reordering.
    """
    wide = np.complex128 if np.iscomplexobj(data) or np.iscomplexobj(x) else np.float64
    A = sp.csr_array((data.astype(wide), indices.astype(np.int64), indptr.astype(np.int64)), shape=shape)
    absA = sp.csr_array((np.abs(data).astype(np.float64), indices.astype(np.int64), indptr.astype(np.int64)), shape=shape)
    xw = x.astype(wide)
    want = alpha * (A @ xw)
    scale = abs(alpha) * (absA @ np.abs(xw))
    if y0 is not None and beta != 0:
        want = want + beta * y0.astype(wide)
        scale = scale + abs(beta) * np.abs(y0.astype(wide))
    lengths = np.diff(indptr.astype(np.int64)).astype(np.float64)
    if x.ndim == 2:
        lengths = lengths[:, None]
    eps = np.finfo(got.dtype).eps
    bound = 4 * eps * (lengths + 2) * scale + np.finfo(got.dtype).tiny
    assert got.shape == want.shape, (got.shape, want.shape)
    assert not np.isnan(got).any() or np.isnan(want).any(), "NaN in the product"
    err = np.abs(got.astype(wide) - want)
    worst = np.argmax(err - bound) if err.size else 0
    assert (err <= bound).all(), f"error {err.flat[worst]:.3g} > bound {bound.flat[worst]:.3g} at flat index {worst}"


def assert_same_arrays(a, b):
    """Bit-for-bit equality of two arrays (dtype, shape, values incl. the sign of zero)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.tobytes() == b.tobytes()


def assert_csr_identical(got, want):
    """Two Cocktail CSR objects are identical: shape, dtypes, and every array bit for bit."""
    assert got.shape == want.shape
    assert got.nnz == want.nnz
    for name in ("indptr", "indices", "data"):
        assert_same_arrays(getattr(got, name), getattr(want, name))


def unit_roundoff(dtype) -> float:
    """``u`` of a real dtype: 2**-24 for float32, 2**-53 for float64."""
    return float(np.finfo(dtype).eps) / 2


def gamma(k, dtype):
    """Higham's ``γ_k = k·u / (1 − k·u)`` (elementwise over an array ``k``)."""
    ku = np.asarray(k, dtype=np.float64) * unit_roundoff(dtype)
    return ku / (1 - ku)


def gamma_bound(A, x, dtype, alpha=1, beta=0, y0=None):
    """Per-row bound on ``|computed − exact|`` of ``alpha*A@x + beta*y0`` computed in ``dtype`` in any
    summation order: ``γ_{k_i+2} · (|alpha| |A||x| + |beta| |y0|)_i``, ``k_i`` the stored entries of row i.

    ``A`` is the matrix as stored (a SciPy sparse matrix, canonical: duplicates summed in the storage
    dtype), ``x`` and ``y0`` the operands in ``dtype``.  Every term passes through at most two
    multiplications (alpha, the entry) and ``k_i`` additions (``k_i + 1`` terms with ``beta*y0``);
    padding zeros add nothing, exactly.  An underflow allowance of ``k_i + 2`` smallest normals is added.
    """
    k = np.diff(sp.csr_array(A).indptr).astype(np.float64)
    return gamma(k + 2, dtype) * magnitude(A, x, alpha, beta, y0) + (k + 2) * float(np.finfo(dtype).tiny)


def magnitude(A, x, alpha=1, beta=0, y0=None):
    """``|alpha| |A||x| + |beta| |y0|`` per row, in float64 (real operands, or the magnitudes of complex ones)."""
    A = sp.csr_array(A)
    absA = sp.csr_array((np.abs(A.data).astype(np.float64), A.indices, A.indptr), shape=A.shape)
    scale = abs(float(alpha)) * (absA @ np.abs(np.asarray(x, dtype=np.float64)))
    if y0 is not None and beta != 0:
        scale = scale + abs(float(beta)) * np.abs(np.asarray(y0, dtype=np.float64))
    return scale


def _assert_rows_within(got, want, bound, A, what, bound_name="γ bound"):
    """``got`` has ``want``'s shape, no NaN, and every row within ``bound`` of ``want``; else the worst row named."""
    assert got.shape == want.shape, (got.shape, want.shape, what)
    assert not np.isnan(got).any(), f"NaN in the product; {what}"
    err = np.abs(got - want)
    if err.size and not (err <= bound).all():
        i = int(np.argmax(err - bound))
        raise AssertionError(f"row {i}: error {err[i]:.3g} > {bound_name} {bound[i]:.3g} "
                             f"({int(np.diff(sp.csr_array(A).indptr)[i])} entries); {what}")


def exact_product(A, x, alpha=1, beta=0, y0=None):
    """``alpha*A@x + beta*y0`` in float64 from the stored matrix ``A`` (its own error: :func:`gamma_bound` in float64)."""
    A = sp.csr_array(A).astype(np.float64)
    want = float(alpha) * (A @ np.asarray(x, dtype=np.float64))
    if y0 is not None and beta != 0:
        want = want + float(beta) * np.asarray(y0, dtype=np.float64)
    return want


def assert_within_gamma(got, want, A, x, dtype, alpha=1, beta=0, y0=None, want_dtype=np.float64, what=""):
    """``got`` (computed in ``dtype``) and ``want`` (computed in ``want_dtype``) differ per row by at most the
    sum of their :func:`gamma_bound`\\ s: both are within their bound of the exact product."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    bound = gamma_bound(A, x, dtype, alpha, beta, y0) + gamma_bound(A, x, want_dtype, alpha, beta, y0)
    _assert_rows_within(got, want, bound, A, what)


def assert_within_precision(got, A, x, dtype, alpha=1, beta=0, y0=None, rounds=1, what=""):
    """``got``, a product in ``dtype`` (:mod:`cocktail.precision`: a half one sums in float32), is within the
    stated bound of the exact ``alpha*A@x + beta*y0`` of the stored values ``A`` (a SciPy matrix; any dtype
    SciPy has, widened exactly): ``γ_{k_i+2}`` in the arithmetic dtype times ``|alpha||A||x| + |beta||y0|``,
    plus ``rounds`` roundings to a half ``dtype``: the result's (``u_y |y|``), and those of partial sums a kernel
    stored and added to (``u_y`` times their bound, ``|alpha||A||x| + |beta||y0|``), each with half a subnormal."""
    from cocktail import precision

    dtype = precision.dtype_named(dtype) if isinstance(dtype, str) else np.dtype(dtype)
    arithmetic = precision.compute_dtype(dtype)
    wide = np.complex128 if dtype.kind == "c" else np.float64
    x = np.asarray(x, dtype=wide)
    y0 = None if y0 is None else np.asarray(y0, dtype=wide)
    if dtype.kind == "c":  # a complex product: two roundings more per term, sqrt(2) for the parts (Higham §3.6)
        A = sp.csr_array(A).astype(np.complex128)
        want = complex(alpha) * (A @ x) + (complex(beta) * y0 if y0 is not None and beta != 0 else 0)
        bound = np.sqrt(2) * gamma_bound(A, np.abs(x), np.dtype(arithmetic.char.lower()), abs(alpha), abs(beta),
                                         None if y0 is None else np.abs(y0))
        bound = bound + np.sqrt(2) * 2 * precision.unit_roundoff(arithmetic) * (bound + np.abs(want))
    else:
        want = exact_product(A, x, alpha, beta, y0)
        bound = gamma_bound(A, x, arithmetic, alpha, beta, y0)
    if precision.is_half(dtype):
        # the last rounding to the half dtype: u_y of the result; an earlier one (a row's partial sum stored, then
        # the rest added) u_y of a partial sum, at most |alpha||A||x| + |beta||y0| (cancellation may follow)
        scale = magnitude(A, x, alpha, beta, y0)
        u = precision.unit_roundoff(dtype)
        bound = bound + u * (np.abs(want) + bound) + (rounds - 1) * u * (scale + bound) + rounds * 2.0**-25
    _assert_rows_within(np.asarray(got, dtype=wide), want, bound, A, what, f"{dtype.name} bound")
