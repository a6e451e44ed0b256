"""Cocktail never writes what it is given: inputs, ``x``, and ``out`` beyond its logical extent.

Every public entry point (the ``SparseMatrix`` constructor from each accepted input and in
each format, ``matvec``, ``matmat``, ``@``, ``bind``, ``to_scipy``, ``explain``,
``read_matrix``, ``write_matrix``, each format's ``from_csr``/``to_csr`` and
``reference.spmv``) runs on snapshotted arguments, which must come back bit for bit, layout
flags included.  ``out`` is a window into a larger buffer filled with a sentinel: nothing
outside the window may change.  Each test runs on the CPU and, marked ``gpu``, on the GPU with
CuPy arrays (where every GPU kernel also gets its own test).
"""

from __future__ import annotations

import functools
import gzip
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail import SparseMatrix, formats, kernels, read_matrix, reference, write_matrix
from cocktail.formats import CSR
from oracle import assert_csr_identical, build_params, few_values, one_value, unbounded
from snapshots import assert_unchanged, host, take
from zoo import raw_csr

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
M, N, K = 67, 45, 3  # m not a multiple of any slice height or block: padded rows must not reach out's frame
LEAD, TAIL = 3, 61  # sentinel elements before and after a 1-D out
#: A quiet NaN with a payload: a write of any computed value (or of a plain NaN) changes its bits.
SENTINEL = np.array([0x7FF8_0000_0BAD_F00D], dtype=np.uint64).view(np.float64)[0]
COCKTAIL_PARTS = [("dia", {"max_fill": None}, ("diagonals", [0])), ("csr", {}, ("rest",))]
FORMATS = formats.names() + ["auto"]
NAMED = formats.names()


def xp_of(device):
    """NumPy for the CPU; CuPy (imported only here) for the GPU."""
    return np if device == "cpu" else pytest.importorskip("cupy")


def format_kwargs(name: str) -> dict:
    """What ``SparseMatrix`` needs besides the format name: no fill guard, the Cocktail's parts."""
    if name == "auto":
        return {}
    if name == "cocktail":
        return {"parts": COCKTAIL_PARTS}
    return unbounded(name, {})


@functools.lru_cache(maxsize=1)
def _raw_stored():
    rng = np.random.default_rng(11)
    lengths = rng.integers(0, 7, size=M)
    lengths[::13] = 0
    lengths[5] = 40
    rows = np.repeat(np.arange(M), lengths)
    cols = rng.integers(0, N, size=rows.size)  # drawn with replacement: duplicates
    vals = few_values(rng.standard_normal(rows.size))  # few distinct values: dia_vi's table
    vals[::9] = 0.0
    vals[4] = -0.0
    return raw_csr(rows, cols, vals, (M, N), rng, shuffle=True)


@functools.lru_cache(maxsize=1)
def _raw_one_value():
    data, indices, indptr = _raw_stored()
    return one_value(data, indices, indptr, (M, N)), indices, indptr


#: The raw arrays every helper reads: the stored values, or (for a format that stores one value) one value.
_raw_host = _raw_stored


@pytest.fixture(autouse=True)
def _one_value_for_a_pattern_format(request, monkeypatch):
    """A test of a format that stores one value for all entries (csr_pattern) takes the same matrix with every
    entry holding one value: :func:`raw` and everything built from it."""
    callspec = getattr(request.node, "callspec", None)
    fmt = callspec.params.get("fmt") if callspec else None
    if fmt in NAMED and formats.get(fmt).max_values == 1:
        monkeypatch.setattr(sys.modules[__name__], "_raw_host", _raw_one_value)
        matrix.cache_clear()
        yield
        matrix.cache_clear()  # its matrix holds one value: no other test may take it from the cache
        return
    yield


def raw():
    """Fresh raw CSR arrays (int64 indices) as a user might pass them: unsorted rows, duplicates,
    explicit zeros (-0.0 too), empty rows and one long row."""
    return tuple(a.copy() for a in _raw_host())


def scipy_csr():
    """The canonical SciPy matrix of :func:`raw` (duplicates summed, explicit zeros kept)."""
    S = sp.csr_array(raw(), shape=(M, N))
    S.sum_duplicates()
    return S


@functools.lru_cache(maxsize=None)
def matrix(fmt: str, device: str, executor=None) -> SparseMatrix:
    """One matrix per format and device, shared by the product tests (which never change it)."""
    return SparseMatrix(scipy_csr(), format=fmt, device=device, executor=executor, **format_kwargs(fmt))


def vector(xp, kind: str, n: int = N, seed: int = 1):
    """``(x, holder)``: an ``x`` of the given kind and the caller's array that holds it (for the snapshot).

    ``plain`` (contiguous float64, a -0.0 in it), ``read_only`` (the same, not writeable, on the
    CPU), ``float32`` (converted by the product) or ``strided`` (every other element of a buffer).
    """
    values = np.random.default_rng(seed).standard_normal(n)
    values[2] = -0.0
    if kind == "strided":
        buf = xp.full(2 * n, -7.0)
        buf[::2] = xp.asarray(values)
        return buf[::2], buf
    x = xp.asarray(values.astype(np.float32) if kind == "float32" else values)
    if kind == "read_only" and xp is np:
        x.flags.writeable = False
    return x, x


def block(xp, kind: str, k: int = K, seed: int = 2):
    """``(X, holder)`` for matmat: ``plain``, ``read_only`` (CPU), ``float32`` or ``fortran`` order."""
    values = np.random.default_rng(seed).standard_normal((N, k))
    values[1, 0] = -0.0
    if kind == "float32":
        values = values.astype(np.float32)
    X = xp.asarray(np.asfortranarray(values) if kind == "fortran" else values)
    if kind == "fortran" and not X.flags.f_contiguous:
        X = xp.asfortranarray(X)
    if kind == "read_only" and xp is np:
        X.flags.writeable = False
    return X, X


class Frame:
    """``out`` as a window into a larger buffer of sentinels; :meth:`check` asserts the rest is untouched."""

    def __init__(self, xp, full_shape, window, order="C", values=None):
        self.buf = xp.empty(full_shape, dtype=np.float64, order=order)
        self.buf[...] = SENTINEL
        self.out = self.buf[window]
        if values is not None:
            self.out[...] = xp.asarray(values)
        self._outside = np.ones(full_shape, dtype=bool)
        self._outside[window] = False
        self._before = host(self.buf).copy()
        self._layout = _layout(self.buf)

    @classmethod
    def vector(cls, xp, m: int = M, strided=False, values=None):
        """A 1-D ``out`` of length m: contiguous ``buf[LEAD:LEAD+m]`` or every other element."""
        step = 2 if strided else 1
        return cls(xp, (LEAD + step * m + TAIL,), (slice(LEAD, LEAD + step * m, step),), values=values)

    @classmethod
    def block(cls, xp, m: int = M, k: int = K, order="C", values=None):
        """A 2-D ``out`` (m, k) cut from the middle of a wider and taller buffer (in ``order``)."""
        return cls(xp, (m + 5, k + 4), (slice(2, 2 + m), slice(3, 3 + k)), order=order, values=values)

    def check(self) -> None:
        """Nothing outside the window changed (bit for bit), nor the buffer's dtype, shape or layout."""
        assert _layout(self.buf) == self._layout, "out's buffer changed its layout"
        now = host(self.buf).view(np.uint64)[self._outside]
        changed = now != self._before.view(np.uint64)[self._outside]
        assert not changed.any(), f"{int(changed.sum())} sentinel(s) outside out were written"


def _layout(a) -> tuple:
    return a.dtype, a.shape, a.strides, a.flags.c_contiguous, a.flags.f_contiguous


def expected(x, alpha=1.0, beta=0.0, y0=None):
    """``alpha*A@x + beta*y0`` by SciPy in float64."""
    y = alpha * (scipy_csr() @ host(x).astype(np.float64))
    return y if y0 is None or beta == 0 else y + beta * y0


def assert_close(got, want):
    np.testing.assert_allclose(host(got), want, rtol=1e-12, atol=1e-12)


# --- construction ------------------------------------------------------------------------

def _tuple(xp, index_dtype=np.int64):
    data, indices, indptr = raw()
    return tuple(xp.asarray(a) for a in (data, indices.astype(index_dtype), indptr.astype(index_dtype)))


def _read_only_tuple(xp):
    arrays = raw()
    for a in arrays:
        a.flags.writeable = False
    return arrays


def _coo(cls):
    data, indices, indptr = raw()
    rows = np.repeat(np.arange(M), np.diff(indptr))
    return cls((data, (rows, indices)), shape=(M, N))  # unsorted, duplicates kept


def _cupyx_csr():
    """A cupyx CSR matrix of device arrays (made whatever the matrix's device)."""
    cupy = pytest.importorskip("cupy")
    import cupyx.scipy.sparse as csp

    return csp.csr_matrix(_tuple(cupy, np.int32), shape=(M, N))


#: name -> (factory(xp, device) -> the input, extra constructor arguments).
SOURCES = {
    "csr_array": (lambda xp, d: sp.csr_array(raw(), shape=(M, N)), {}),
    "csr_matrix": (lambda xp, d: sp.csr_matrix(raw(), shape=(M, N)), {}),
    "csc_array": (lambda xp, d: sp.csc_array(raw(), shape=(N, M)), {}),  # the raw CSR of A is the CSC of A.T
    "csc_matrix": (lambda xp, d: sp.csc_matrix(raw(), shape=(N, M)), {}),
    "coo_array": (lambda xp, d: _coo(sp.coo_array), {}),
    "coo_matrix": (lambda xp, d: _coo(sp.coo_matrix), {}),
    "dia_array": (lambda xp, d: sp.dia_array(scipy_csr()), {}),
    "dia_matrix": (lambda xp, d: sp.dia_matrix(scipy_csr()), {}),
    "tuple": (lambda xp, d: _tuple(xp), {"shape": (M, N)}),
    "tuple_int32": (lambda xp, d: _tuple(xp, np.int32), {"shape": (M, N)}),
    "tuple_read_only": (lambda xp, d: _read_only_tuple(xp), {"shape": (M, N)}),
    "tuple_float32_converted": (lambda xp, d: (xp.asarray(raw()[0].astype(np.float32)), *_tuple(xp)[1:]),
                                {"shape": (M, N), "dtype": np.float64}),
    "sparse_matrix": (lambda xp, d: SparseMatrix(scipy_csr(), format="sell", device=d, max_fill=None), {}),
}
SOURCE_PARAMS = [*SOURCES, pytest.param("cupyx_csr", marks=pytest.mark.gpu)]


def _source(name, xp, device):
    if name == "cupyx_csr":
        return _cupyx_csr(), {}
    factory, kwargs = SOURCES[name]
    return factory(xp, device), kwargs


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("source", SOURCE_PARAMS)
@pytest.mark.parametrize("device", DEVICES)
def test_construction_leaves_its_input_alone(device, source, fmt):
    xp = xp_of(device)
    S, kwargs = _source(source, xp, device)
    before = take(S)
    A = SparseMatrix(S, format=fmt, device=device, **kwargs, **format_kwargs(fmt))
    assert_unchanged(S, before, source)
    want = scipy_csr().T if source.startswith("csc") else scipy_csr()
    ones = xp.ones(want.shape[1])
    np.testing.assert_allclose(host(A @ ones), want @ np.ones(want.shape[1]), rtol=1e-12, atol=1e-12)


# --- products ----------------------------------------------------------------------------

#: id -> (x kind, out: None / "framed" / "strided", alpha, beta, call).
MATVEC_CASES = {
    "new": ("plain", None, 1, 0, "matvec"),
    "matmul_read_only_x": ("read_only", None, 1, 0, "@"),
    "alpha_strided_x": ("strided", None, -2.5, 0, "matvec"),
    "out": ("plain", "framed", 1, 0, "matvec"),
    "out_alpha_beta_float32_x": ("float32", "framed", 2.0, -0.5, "matvec"),
    "strided_out_beta_read_only_x": ("read_only", "strided", 1, 0.5, "matvec"),
}


def run_matvec(A, xp, case):
    """One matvec case on ``A``: checks x (and its buffer), out's frame and the result."""
    x_kind, out_kind, alpha, beta, call = case
    m, n = A.shape
    x, holder = vector(xp, x_kind, n)
    shot = take(holder)
    y0 = np.linspace(-1.0, 1.0, m)
    frame = None if out_kind is None else Frame.vector(xp, m, strided=out_kind == "strided", values=y0)
    if call == "@":
        y = A @ x
    else:
        y = A.matvec(x, out=None if frame is None else frame.out, alpha=alpha, beta=beta)
    if frame is not None:
        assert y is frame.out
        frame.check()
    assert_unchanged(holder, shot, "x")
    assert_close(y, expected(x, alpha, beta, y0))


@pytest.mark.parametrize("case", MATVEC_CASES)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("device", DEVICES)
def test_matvec_leaves_x_and_the_frame_around_out(device, fmt, case):
    A = matrix(fmt, device)
    before = take(A)
    run_matvec(A, xp_of(device), MATVEC_CASES[case])
    assert_unchanged(A, before, "A")


#: id -> (X kind, out: None / "C" / "F" / "flat" (contiguous, inside a 1-D buffer), alpha, beta, call).
MATMAT_CASES = {
    "new": ("plain", None, 1, 0, "matmat"),
    "matmul_fortran_X": ("fortran", None, 1, 0, "@"),
    "out_window_read_only_X": ("read_only", "C", 2.0, 0, "matmat"),
    "out_window_beta": ("plain", "C", 1, -1.5, "matmat"),
    "fortran_out_window_beta_float32_X": ("float32", "F", 1, 0.5, "matmat"),
    "contiguous_out_in_flat_buffer": ("plain", "flat", 0.5, 2.0, "matmat"),
}


def _block_frame(xp, kind, m, k, values):
    if kind == "flat":
        frame = Frame(xp, (LEAD + m * k + TAIL,), (slice(LEAD, LEAD + m * k),), values=values.reshape(-1))
        frame.out = frame.out.reshape(m, k)  # contiguous: a view of the same window
        return frame
    return Frame.block(xp, m, k, order=kind, values=values)


def run_matmat(A, xp, case, k=K):
    """One matmat case on ``A``: checks X, out's frame and the result."""
    x_kind, out_kind, alpha, beta, call = case
    m, n = A.shape
    X, holder = block(xp, x_kind, k)
    shot = take(holder)
    y0 = np.linspace(-1.0, 1.0, m * k).reshape(m, k)
    frame = None if out_kind is None else _block_frame(xp, out_kind, m, k, y0)
    if call == "@":
        Y = A @ X
    else:
        Y = A.matmat(X, out=None if frame is None else frame.out, alpha=alpha, beta=beta)
    if frame is not None:
        assert Y is frame.out
        frame.check()
    assert_unchanged(holder, shot, "X")
    assert_close(Y, expected(X, alpha, beta, y0))


@pytest.mark.parametrize("case", MATMAT_CASES)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("device", DEVICES)
def test_matmat_leaves_X_and_the_frame_around_out(device, fmt, case):
    A = matrix(fmt, device)
    before = take(A)
    run_matmat(A, xp_of(device), MATMAT_CASES[case])
    assert_unchanged(A, before, "A")


def run_bind(A, xp):
    """A bound product replayed twice into a framed out, then a refused strided out."""
    m, n = A.shape
    x, holder = vector(xp, "read_only", n)
    shot = take(holder)
    y0 = np.linspace(-1.0, 1.0, m)
    frame = Frame.vector(xp, m, values=y0)
    with A.bind(x, out=frame.out, alpha=2.0, beta=0.5) as p:
        assert p() is frame.out
        p()
    once = expected(x, 2.0, 0.5, y0)
    assert_close(frame.out, expected(x, 2.0, 0.5, once))
    frame.check()
    strided = Frame.vector(xp, m, strided=True, values=y0)
    with pytest.raises(ValueError, match="bind: out must be contiguous"):
        A.bind(x, out=strided.out)
    strided.check()
    assert_close(strided.out, y0)
    assert_unchanged(holder, shot, "x")


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("device", DEVICES)
def test_bind_leaves_x_and_the_frame_around_out(device, fmt):
    A = matrix(fmt, device)
    before = take(A)
    run_bind(A, xp_of(device))
    assert_unchanged(A, before, "A")


@pytest.mark.parametrize("fmt", ["csr", "sell", "hyb", "bcsr", "cocktail"])
@pytest.mark.parametrize("device", DEVICES)
def test_reference_executor_leaves_its_operands_alone(device, fmt):
    A = matrix(fmt, device, "reference")
    assert A.executor == "reference"
    xp = xp_of(device)
    before = take(A)
    run_matvec(A, xp, MATVEC_CASES["out_alpha_beta_float32_x"])
    run_matmat(A, xp, MATMAT_CASES["out_window_beta"])
    run_bind(A, xp)
    assert_unchanged(A, before, "A")


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", kernels.names())
def test_every_kernel_leaves_x_and_the_frame_around_out(kernel):
    cupy = pytest.importorskip("cupy")
    fmt = kernels.get(kernel).formats[0]  # csr for the csr kernels: csr_pattern's runs are the fmt tests'
    A = SparseMatrix(scipy_csr(), format=fmt, device="cuda", kernel=kernel, **format_kwargs(fmt))
    assert A.kernel == kernel
    before = take(A)
    for case in MATVEC_CASES.values():
        run_matvec(A, cupy, case)
    for case in MATMAT_CASES.values():
        run_matmat(A, cupy, case)
    run_bind(A, cupy)
    assert_unchanged(A, before, "A")


# --- conversion, description, the reference product and the format classes ---------------

@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("device", DEVICES)
def test_to_scipy_and_explain_leave_the_matrix_alone(device, fmt):
    A = matrix(fmt, device)
    before = take(A)
    S = A.to_scipy()
    assert (S != scipy_csr()).nnz == 0
    S.data[:] = 99.0  # the copy is the caller's: writing it changes nothing in A
    S.indices[:] = 0
    text = A.explain()
    assert A.format in text
    assert_unchanged(A, before, "A")
    assert (A.to_scipy() != scipy_csr()).nnz == 0


@pytest.mark.parametrize("with_out", [False, True], ids=["new", "out"])
@pytest.mark.parametrize("fmt", NAMED)
@pytest.mark.parametrize("device", DEVICES)
def test_reference_spmv_leaves_its_operands_alone(device, fmt, with_out):
    xp = xp_of(device)
    storage = matrix(fmt, device).storage
    before = take(storage)
    x, holder = vector(xp, "read_only")
    shot = take(holder)
    y0 = np.linspace(-1.0, 1.0, M)
    if with_out:
        frame = Frame.vector(xp, values=y0)
        assert reference.spmv(storage, x, out=frame.out, alpha=1.5, beta=-2.0) is frame.out
        frame.check()
        assert_close(frame.out, expected(x, 1.5, -2.0, y0))
    else:
        assert_close(reference.spmv(storage, x), expected(x))
    assert_unchanged(holder, shot, "x")
    assert_unchanged(storage, before, "fmt")


@pytest.mark.parametrize("fmt", NAMED)
@pytest.mark.parametrize("device", DEVICES)
def test_from_csr_and_to_csr_leave_their_input_alone(device, fmt):
    xp = xp_of(device)
    csr = CSR.from_arrays(*(xp.asarray(a) for a in raw()), (M, N))
    want = CSR.from_arrays(*raw(), (M, N))
    csr_before = take(csr)
    stored = formats.get(fmt).from_csr(csr, **build_params(fmt, format_kwargs(fmt), csr.dtype))
    assert_unchanged(csr, csr_before, "csr")
    stored_before = take(stored)
    back = stored.to_csr()
    assert_unchanged(stored, stored_before, fmt)
    assert_csr_identical(back.to_xp(np), want)


# --- files -------------------------------------------------------------------------------

WRITE_INPUTS = {
    "csr_array": lambda: sp.csr_array(raw(), shape=(M, N)),
    "csc_matrix": lambda: sp.csc_matrix(raw(), shape=(N, M)),
    "coo_array": lambda: _coo(sp.coo_array),
}


@pytest.mark.parametrize("suffix", [".mtx", ".mtx.gz", ".npz"])
@pytest.mark.parametrize("source", WRITE_INPUTS)
def test_write_matrix_leaves_its_input_alone(tmp_path, source, suffix):
    S = WRITE_INPUTS[source]()
    before = take(S)
    path = write_matrix(tmp_path / f"a{suffix}", S)
    assert_unchanged(S, before, source)
    assert (read_matrix(path) != sp.csr_array(S)).nnz == 0


@pytest.mark.parametrize("device", DEVICES)
def test_write_matrix_leaves_a_sparse_matrix_alone(tmp_path, device):
    A = matrix("ell", device)
    before = take(A)
    path = write_matrix(tmp_path / "a.npz", A)
    assert_unchanged(A, before, "A")
    assert (read_matrix(path) != scipy_csr()).nnz == 0


def _matrix_market_text(S) -> str:
    """``S`` as Matrix Market text written here, so that the read tests do not depend on ``write_matrix``."""
    C = sp.coo_array(S)
    entries = "".join(f"{r + 1} {c + 1} {float(v)!r}\n" for r, c, v in zip(C.row, C.col, C.data))
    return f"%%MatrixMarket matrix coordinate real general\n{C.shape[0]} {C.shape[1]} {C.nnz}\n{entries}"


@pytest.mark.parametrize("suffix", [".mtx", ".mtx.gz", ".npz"])
def test_read_matrix_leaves_the_file_alone(tmp_path, suffix):
    path = tmp_path / f"a{suffix}"
    if suffix == ".npz":
        sp.save_npz(path, scipy_csr())
    else:
        text = _matrix_market_text(scipy_csr()).encode()
        path.write_bytes(gzip.compress(text) if suffix.endswith(".gz") else text)
    content, stat = path.read_bytes(), path.stat()
    S = read_matrix(path)
    assert path.read_bytes() == content
    assert (path.stat().st_mode, path.stat().st_mtime_ns) == (stat.st_mode, stat.st_mtime_ns)
    assert (S != scipy_csr()).nnz == 0
