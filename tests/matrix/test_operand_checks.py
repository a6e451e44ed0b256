"""Product operands: each bad ``x``, ``X`` or ``out`` gets one clear error naming it and what is wrong.

Wrong length, dimensionality or dtype, a read-only or (for ``bind``) strided ``out``, an array
on the other device, and ``out`` overlapping ``x``; what is accepted instead (safe dtype casts,
strided and Fortran-ordered operands, ``k = 0`` blocks) gives the right product.  A refusal
leaves ``x`` and ``out`` as they were.  Each test runs on the CPU and, marked ``gpu``, on the GPU.
"""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail import SparseMatrix, formats
from oracle import few_values, unbounded
from snapshots import assert_unchanged, host, take

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
M, N, K = 9, 6, 2  # rows differ from columns: a length error must name the right one
COCKTAIL_PARTS = [("dia", {"max_fill": None}, ("diagonals", [0])), ("csr", {}, ("rest",))]


def xp_of(device):
    """NumPy for the CPU; CuPy (imported only here) for the GPU."""
    return np if device == "cpu" else pytest.importorskip("cupy")


def kwargs_of(fmt: str) -> dict:
    if fmt == "cocktail":
        return {"parts": COCKTAIL_PARTS}
    return {} if fmt == "auto" else unbounded(fmt, {})


def scipy_matrix(m=M, n=N, dtype=np.float64, limit=None):
    """A random matrix with few distinct values (``limit`` 1: one)."""
    S = few_values(sp.random_array((m, n), density=0.4, format="csr", random_state=7)) + sp.eye_array(m, n)
    return sp.csr_array(few_values(S, limit) if limit == 1 else S, dtype=dtype)


@functools.lru_cache(maxsize=None)
def matrix(device, dtype="float64", fmt="csr", square=False) -> SparseMatrix:
    limit = formats.get(fmt).max_values if fmt != "auto" else None
    S = scipy_matrix(M, M if square else N, np.dtype(dtype), limit)
    return SparseMatrix(S, format=fmt, device=device, **kwargs_of(fmt))


def refused(call, exc, pattern: str, *untouched):
    """``call()`` raises ``exc`` matching ``pattern`` from its start, unchained, and leaves ``untouched`` alone."""
    shots = [take(a) for a in untouched]
    with pytest.raises(exc) as info:
        call()
    assert re.match(pattern, str(info.value)), f"{str(info.value)!r} does not start with {pattern!r}"
    assert info.value.__cause__ is None and info.value.__context__ is None, "not one clear error"
    for a, shot in zip(untouched, shots):
        assert_unchanged(a, shot, "operand")


# --- matvec ------------------------------------------------------------------------------

#: id -> (x maker(xp), exception, message start)
BAD_X = {
    "too_long": (lambda xp: xp.ones(N + 1), ValueError, rf"x has {N + 1} rows but the matrix has {N} columns"),
    "too_short": (lambda xp: xp.ones(N - 1), ValueError, rf"x has {N - 1} rows but the matrix has {N} columns"),
    "2d": (lambda xp: xp.ones((N, 2)), ValueError, rf"matvec takes a 1-D x of shape \({N},\), got shape \({N}, 2\)"),
    "0d": (lambda xp: xp.ones(()), ValueError, r"matvec takes a 1-D x of shape \(\d+,\), got shape \(\)"),
    "text": (lambda xp: np.array(["a"] * N), TypeError, r"(x must be numeric|x is a numpy.ndarray in host memory)"),
}

#: id -> (out maker(xp), exception, message start)
BAD_OUT = {
    "too_long": (lambda xp: xp.zeros(M + 1), ValueError,
                 rf"out must have shape \({M},\) for this product, got \({M + 1},\)"),
    "2d": (lambda xp: xp.zeros((M, 1)), ValueError, rf"out must have shape \({M},\) for this product, got \({M}, 1\)"),
    "float32": (lambda xp: xp.zeros(M, dtype=np.float32), TypeError,
                r"out must have the matrix dtype float64, got float32"),
    "int64": (lambda xp: xp.zeros(M, dtype=np.int64), TypeError, r"out must have the matrix dtype float64, got int64"),
    "complex": (lambda xp: xp.zeros(M, dtype=np.complex128), TypeError,
                r"out must have the matrix dtype float64, got complex128"),
}


@pytest.mark.parametrize("case", BAD_X)
@pytest.mark.parametrize("device", DEVICES)
def test_matvec_names_a_bad_x(device, case):
    make, exc, pattern = BAD_X[case]
    xp = xp_of(device)
    x, out = make(xp), xp.full(M, 3.0)
    refused(lambda: matrix(device).matvec(x, out=out), exc, pattern, x, out)
    refused(lambda: matrix(device) @ x if x.ndim == 1 else matrix(device).matvec(x), exc, pattern, x)


@pytest.mark.parametrize("case", BAD_OUT)
@pytest.mark.parametrize("device", DEVICES)
def test_matvec_names_a_bad_out(device, case):
    make, exc, pattern = BAD_OUT[case]
    xp = xp_of(device)
    x, out = xp.ones(N), make(xp)
    refused(lambda: matrix(device).matvec(x, out=out, beta=1.0), exc, pattern, x, out)


@pytest.mark.parametrize("device", DEVICES)
def test_float32_matrix_refuses_an_out_narrower_than_the_result(device):
    xp = xp_of(device)
    A = matrix(device, "float32")
    x64, out32 = xp.ones(N), xp.zeros(M, dtype=np.float32)
    refused(lambda: A.matvec(x64, out=out32), TypeError,
            r"out must have the result dtype float64 \(numpy.result_type of the matrix's float32 and x's float64\), "
            "got float32", x64, out32)
    assert A.matvec(xp.ones(N, dtype=np.int32)).dtype == np.float64  # numpy.result_type, as SciPy
    out64 = xp.zeros(M)
    refused(lambda: A.matvec(xp.ones(N, dtype=np.float32), out=out64), TypeError,
            r"out must have the matrix dtype float32, got float64", out64)


def test_read_only_out_is_refused():
    x, out = np.ones(N), np.full(M, 3.0)
    out.flags.writeable = False
    refused(lambda: matrix("cpu").matvec(x, out=out), ValueError, r"out is read-only", x, out)
    refused(lambda: matrix("cpu").matmat(x[:, None], out=out[:, None]), ValueError, r"out is read-only", out)
    refused(lambda: matrix("cpu").bind(x, out=out), ValueError, r"bind: out is read-only", out)


@pytest.mark.parametrize("device", DEVICES)
def test_matvec_accepts_what_converts_without_loss(device):
    xp = xp_of(device)
    A, S = matrix(device), scipy_matrix()
    want = S @ np.arange(N, dtype=np.float64)
    spaced = xp.full(2 * N, -1.0)
    spaced[::2] = xp.arange(N, dtype=np.float64)
    for x in (xp.arange(N, dtype=np.int32), xp.arange(N, dtype=np.float32), spaced[::2]):
        np.testing.assert_allclose(host(A @ x), want, rtol=1e-12)
    wide = xp.zeros((M, 3))
    column = wide[:, 1]
    assert A.matvec(xp.arange(N, dtype=np.float64), out=column) is column
    np.testing.assert_allclose(host(column), want, rtol=1e-12)
    assert not host(wide[:, [0, 2]]).any()
    if device == "cpu":
        x = np.arange(N, dtype=np.float64)
        x.flags.writeable = False
        np.testing.assert_allclose(A @ x, want, rtol=1e-12)


# --- matmat ------------------------------------------------------------------------------

BAD_X_BLOCK = {
    "1d": (lambda xp: xp.ones(N), ValueError, rf"matmat takes a 2-D X of shape \({N}, k\), got shape \({N},\)"),
    "3d": (lambda xp: xp.ones((N, K, 1)), ValueError, rf"matmat takes a 2-D X of shape \({N}, k\), got shape"),
    "wrong_rows": (lambda xp: xp.ones((N + 1, K)), ValueError, rf"X has {N + 1} rows but the matrix has {N} columns"),
    "text": (lambda xp: np.array([["a"] * K] * N), TypeError, r"(X must be numeric|X is a numpy.ndarray in host memory)"),
}

BAD_OUT_BLOCK = {
    "1d": (lambda xp: xp.zeros(M), ValueError, rf"out must have shape \({M}, {K}\) for this product, got \({M},\)"),
    "wrong_k": (lambda xp: xp.zeros((M, K + 1)), ValueError, rf"out must have shape \({M}, {K}\) for this product"),
    "wrong_rows": (lambda xp: xp.zeros((M + 1, K)), ValueError, rf"out must have shape \({M}, {K}\) for this product"),
    "float32": (lambda xp: xp.zeros((M, K), dtype=np.float32), TypeError,
                r"out must have the matrix dtype float64, got float32"),
}


@pytest.mark.parametrize("case", BAD_X_BLOCK)
@pytest.mark.parametrize("device", DEVICES)
def test_matmat_names_a_bad_X(device, case):
    make, exc, pattern = BAD_X_BLOCK[case]
    xp = xp_of(device)
    X, out = make(xp), xp.full((M, K), 3.0)
    refused(lambda: matrix(device).matmat(X, out=out), exc, pattern, X, out)


@pytest.mark.parametrize("case", BAD_OUT_BLOCK)
@pytest.mark.parametrize("device", DEVICES)
def test_matmat_names_a_bad_out(device, case):
    make, exc, pattern = BAD_OUT_BLOCK[case]
    xp = xp_of(device)
    X, out = xp.ones((N, K)), make(xp)
    refused(lambda: matrix(device).matmat(X, out=out, beta=1.0), exc, pattern, X, out)


@pytest.mark.parametrize("device", DEVICES)
def test_matmat_takes_any_memory_order(device):
    xp = xp_of(device)
    A, S = matrix(device), scipy_matrix()
    values = np.arange(N * K, dtype=np.float64).reshape(N, K)
    want = S @ values
    X_f = xp.asfortranarray(xp.asarray(values))
    out_f = xp.zeros((M, K), order="F")
    assert A.matmat(X_f, out=out_f) is out_f
    assert out_f.flags.f_contiguous
    np.testing.assert_allclose(host(out_f), want, rtol=1e-12)
    wide = xp.zeros((M, K + 2))
    window = wide[:, 1:1 + K]
    assert A.matmat(xp.asarray(values), out=window, alpha=2.0) is window
    np.testing.assert_allclose(host(window), 2.0 * want, rtol=1e-12)
    assert not host(wide[:, [0, K + 1]]).any()
    strided = xp.zeros((2 * N, K))
    strided[::2] = xp.asarray(values)
    np.testing.assert_allclose(host(A @ strided[::2]), want, rtol=1e-12)


@pytest.mark.parametrize("fmt", formats.names() + ["auto"])
@pytest.mark.parametrize("device", DEVICES)
def test_matmat_with_zero_columns(device, fmt):
    xp = xp_of(device)
    A = matrix(device, fmt=fmt)
    Y = A @ xp.ones((N, 0))
    assert Y.shape == (M, 0) and Y.dtype == A.dtype
    out = xp.empty((M, 0))
    assert A.matmat(xp.ones((N, 0)), out=out, alpha=2.0, beta=1.0) is out


# --- bind --------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_bind_names_what_it_cannot_take_without_copying(device):
    xp = xp_of(device)
    A = matrix(device)
    x, buf = xp.ones(N), xp.full(2 * M, 3.0)
    refused(lambda: A.bind(x, out=buf[::2]), ValueError, r"bind: out must be contiguous", x, buf)
    refused(lambda: A.bind(xp.ones(2 * N)[::2], out=buf[:M]), ValueError, r"bind: x must be contiguous", buf)
    refused(lambda: A.bind(x, out=buf[:M + 1]), ValueError, rf"bind: out must have shape \({M},\)", x, buf)
    refused(lambda: A.bind(x.astype(np.float32), out=buf[:M]), TypeError, r"bind: x must have the matrix dtype", buf)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bind_refuses_an_operand_without_a_dtype_in_every_dtype(dtype):
    """An operand with a shape and no dtype is refused by name for a float64 matrix too: the check once read
    ``getattr(x, "dtype", None) != float64``, which NumPy answers False (``np.dtype(None)`` is float64)."""
    A = matrix("cpu").astype(dtype)

    class Shaped:  # a shape, no dtype, no __array__: nothing to take without a copy
        shape = (N,)

    refused(lambda: A.bind(Shaped(), out=np.zeros(M, dtype=dtype)), TypeError,
            r"bind: x must have the matrix dtype .* got None")


# --- devices -----------------------------------------------------------------------------

@pytest.mark.gpu
def test_cupy_operands_for_a_cpu_matrix_are_refused():
    cupy = pytest.importorskip("cupy")
    A = matrix("cpu")
    x, out = cupy.ones(N), cupy.full(M, 3.0)
    refused(lambda: A.matvec(x), TypeError, r"x is a CuPy array but the matrix is on the CPU; pass a NumPy array", x)
    refused(lambda: A.matvec(np.ones(N), out=out), TypeError, r"out is a CuPy array but the matrix is on the CPU", out)
    refused(lambda: A.matmat(cupy.ones((N, K))), TypeError, r"X is a CuPy array but the matrix is on the CPU")
    refused(lambda: A.bind(x, out=np.zeros(M)), TypeError, r"x is a CuPy array but the matrix is on the CPU", x)


@pytest.mark.gpu
def test_numpy_operands_for_a_gpu_matrix_are_refused():
    cupy = pytest.importorskip("cupy")
    A = matrix("cuda")
    x, out = np.ones(N), np.full(M, 3.0)
    host_memory = r"{} is a numpy\.ndarray in host memory but the matrix is on the GPU; pass a device array"
    refused(lambda: A.matvec(x), TypeError, host_memory.format("x"), x)
    refused(lambda: A.matvec(cupy.ones(N), out=out), TypeError, host_memory.format("out"), out)
    refused(lambda: A.matmat(np.ones((N, K))), TypeError, host_memory.format("X"))
    refused(lambda: A.matmat(cupy.ones((N, K)), out=np.zeros((M, K))), TypeError, host_memory.format("out"))
    refused(lambda: A.bind(x, out=cupy.zeros(M)), TypeError, host_memory.format("x"), x)
    refused(lambda: A.matvec([1.0] * N), TypeError, r"x is a builtins\.list in host memory")


def test_non_arrays_and_non_numbers_on_the_cpu():
    refused(lambda: matrix("cpu").matvec(np.array(list("abcdef"))), TypeError, r"x must be numeric, got dtype <U1")
    refused(lambda: matrix("cpu").matvec([1.0] * N), TypeError, r"x must be an array, got list")
    refused(lambda: matrix("cpu").matmat([[1.0]] * N), TypeError, r"X must be an array, got list")
    refused(lambda: matrix("cpu").matvec(np.ones(N), out=[0.0] * M), TypeError, r"out must be an array, got list")


# --- overlap -----------------------------------------------------------------------------

def _overlap_refused(A, device) -> bool:
    """Whether ``A`` refuses an ``out`` overlapping ``x``: on the GPU always; on the CPU for a Cocktail,
    whose parts add into ``out`` one after another (other host products compute into a temporary)."""
    return device == "cuda" or A.format == "cocktail"


@pytest.mark.parametrize("fmt", formats.names())
@pytest.mark.parametrize("device", DEVICES)
def test_out_overlapping_x(device, fmt):
    xp = xp_of(device)
    A, S = matrix(device, fmt=fmt, square=True), scipy_matrix(M, M, limit=formats.get(fmt).max_values)
    values = np.linspace(-1.0, 2.0, M)
    calls = {  # name -> the call on a fresh buffer holding values and one more element
        "matvec": lambda b: A.matvec(b[:M], out=b[:M], beta=0.5),
        "matvec_shifted": lambda b: A.matvec(b[:M], out=b[1:M + 1]),
        "matmat": lambda b: A.matmat(b[:M, None], out=b[:M, None], beta=0.5),
    }
    wants = {"matvec": S @ values + 0.5 * values, "matvec_shifted": S @ values, "matmat": S @ values + 0.5 * values}
    for name, call in calls.items():
        buf = xp.asarray(np.r_[values, 7.0])
        if _overlap_refused(A, device) and name != "matmat":  # a block product reads an overlapping X from a copy
            refused(lambda: call(buf), ValueError, r"x and out overlap in memory", buf)
        else:
            call(buf)
            got = host(buf)[1:M + 1] if name == "matvec_shifted" else host(buf)[:M]
            np.testing.assert_allclose(got, wants[name], rtol=1e-12, err_msg=name)


@pytest.mark.parametrize("device", DEVICES)
def test_matmat_takes_x_and_out_side_by_side_and_refuses_a_broadcast_out(device):
    xp = xp_of(device)
    A = matrix(device, square=True)
    W = xp.asarray(np.linspace(-1.0, 1.0, M * 6).reshape(M, 6))
    X_host = host(W[:, :3]).copy()
    assert A.matmat(W[:, :3], out=W[:, 3:]) is not None  # disjoint column windows of one array
    np.testing.assert_allclose(host(W[:, 3:]), scipy_matrix(M, M) @ X_host, rtol=1e-12)
    np.testing.assert_array_equal(host(W[:, :3]), X_host)
    out = xp.broadcast_to(xp.zeros((1, 3)), (M, 3))
    if device == "cuda":  # NumPy's broadcast views are read-only, refused as such
        refused(lambda: A.matmat(xp.ones((M, 3)), out=out), ValueError, r"out's elements may share memory")


@pytest.mark.parametrize("device", DEVICES)
def test_bind_with_out_overlapping_x(device):
    xp = xp_of(device)
    for fmt in ("csr", "cocktail"):
        A = matrix(device, fmt=fmt, square=True)
        buf = xp.ones(M)
        if _overlap_refused(A, device):
            refused(lambda: A.bind(buf, out=buf), ValueError, r"x and out overlap in memory", buf)
        else:
            with A.bind(buf, out=buf) as p:
                p()
            np.testing.assert_allclose(host(buf), scipy_matrix(M, M) @ np.ones(M), rtol=1e-12)
