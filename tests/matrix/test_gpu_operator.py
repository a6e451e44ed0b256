"""A SparseMatrix as SciPy, cupyx and torch users meet it, on the GPU: transposes (stored and scattered),
the LinearOperator contract, result-type promotion, cupyx's solvers, torch tensors, autograd and graphs.

SciPy on the host is the oracle.  Marked ``gpu``: skipped where CuPy sees no CUDA device.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import cocktail
from cocktail import SparseMatrix

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy") if cocktail.arrays.cuda_available() else None

#: Padded formats get room for a random matrix; the transpose is built with the same options.
PARAMS = {"dia": {"max_fill": None}, "ell": {"max_fill": None}, "sell": {"max_fill": None}}


def _rect(m=900, n=700, seed=0, dtype=np.float64, density=0.01):
    """Rows of varied lengths, more rows than a block of threads, and a few dense-ish rows."""
    rng = np.random.default_rng(seed)
    R = sp.random_array((m, n), density=density, format="csr", rng=rng)
    R = (R + sp.random_array((m, n), density=0.2, format="csr", rng=rng).multiply(
        (np.arange(m) % 97 == 0)[:, None])).tocsr()
    if np.dtype(dtype).kind == "c":
        R = (R + 1j * sp.random_array((m, n), density=density, format="csr", rng=rng)).tocsr()
    return R.astype(dtype)


def _spd(n=2000, seed=1):
    rng = np.random.default_rng(seed)
    R = sp.random_array((n, n), density=0.003, format="csr", rng=rng)
    return ((R + R.T) + sp.eye_array(n) * 6.0).tocsr()


def _tol(dtype):
    return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-11


@pytest.mark.parametrize("fmt", ["auto", "csr", "coo", "ell", "sell", "dia", "bcsr", "hyb"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stored_transpose_matches_scipy(fmt, dtype):
    R = _rect(dtype=dtype)
    A = SparseMatrix(R, format=fmt, **PARAMS.get(fmt, {}))
    rng = np.random.default_rng(2)
    u = rng.standard_normal(R.shape[0]).astype(dtype)
    U = rng.standard_normal((R.shape[0], 5)).astype(dtype)
    tol = _tol(dtype)
    np.testing.assert_allclose((A.T @ cupy.asarray(u)).get(), R.T @ u, rtol=tol, atol=tol)
    np.testing.assert_allclose(A.rmatmat(cupy.asarray(U)).get(), R.T @ U, rtol=tol, atol=tol)
    np.testing.assert_allclose((cupy.asarray(u) @ A).get(), u @ R, rtol=tol, atol=tol)
    assert A.T.T is A and A.H is A.T
    if fmt != "auto":
        assert A.T.format == fmt and A.T.executor == A.executor


def test_transpose_of_auto_is_planned_for_itself():
    """A tall matrix with one dense column: its transpose has one dense row, and is planned as such."""
    R = _rect(m=20000, n=3000, density=0.001)
    R = sp.hstack([R, sp.csr_array(np.ones((R.shape[0], 1)))]).tocsr()
    A = SparseMatrix(R)
    assert A.T.auto is not None  # the planner ran on the transpose
    x = cupy.asarray(np.linspace(-1, 1, R.shape[0]))
    np.testing.assert_allclose((A.T @ x).get(), R.T @ x.get(), rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("fmt", ["csr", "dia", "ell", "coo"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_scatter_transpose_matches_scipy(fmt, dtype):
    R = _rect(dtype=dtype)
    A = SparseMatrix(R, format=fmt, transpose="scatter", **PARAMS.get(fmt, {}))
    rng = np.random.default_rng(3)
    u = rng.standard_normal(R.shape[0]).astype(dtype)
    tol = _tol(dtype)
    B = A.H
    assert B.storage is A.storage  # nothing stored: the scatter reads A's arrays
    assert B.kernel == ("csr_scatter_transpose" if fmt == "csr" else "entries_scatter_transpose")
    np.testing.assert_allclose((A.T @ cupy.asarray(u)).get(), R.T @ u, rtol=tol, atol=tol)
    np.testing.assert_allclose((B @ cupy.asarray(u)).get(), R.conj().T @ u, rtol=tol, atol=tol)
    y = cupy.ones(R.shape[1], dtype=dtype)
    B.matvec(cupy.asarray(u), out=y, alpha=2, beta=-1)
    np.testing.assert_allclose(y.get(), 2 * (R.conj().T @ u) - 1, rtol=tol, atol=tol)
    assert not B.deterministic and "atomic" in B.explain()


def test_scatter_transpose_is_refused_with_deterministic():
    with pytest.raises(ValueError, match="transpose='scatter'"):
        SparseMatrix(_rect(), format="csr", transpose="scatter", deterministic=True)


@pytest.mark.parametrize("transpose", ["store", "scatter"])
def test_bound_transposed_product_replays(transpose):
    R = _rect()
    A = SparseMatrix(R, format="csr", transpose=transpose)
    x = cupy.zeros(R.shape[0])
    y = cupy.zeros(R.shape[1])
    p = A.T.bind(x, out=y)
    for seed in range(3):
        u = np.random.default_rng(seed).standard_normal(R.shape[0])
        x[...] = cupy.asarray(u)
        p()
        np.testing.assert_allclose(y.get(), R.T @ u, rtol=1e-11, atol=1e-11)
    p.close()


def test_linear_operator_contract_on_the_gpu():
    R = _rect(dtype=np.float32)
    A = SparseMatrix(R)
    x = cupy.asarray(np.linspace(-1, 1, R.shape[1]))  # float64 on a float32 matrix
    y = A @ x
    assert y.dtype == np.float64 and isinstance(y, cupy.ndarray)
    np.testing.assert_allclose(y.get(), R.astype(np.float64) @ x.get(), rtol=1e-12)
    col = A.matvec(x.astype(np.float32)[:, None])
    assert col.shape == (R.shape[0], 1)
    z = (x * (1 - 2j)).astype(np.complex64)
    np.testing.assert_allclose((A @ z).get(), R @ z.get(), rtol=1e-4, atol=1e-4)
    assert (A * 2).dtype == np.float32 and (-A).nnz == A.nnz
    csr = A.tocsr()
    import cupyx.scipy.sparse as csp

    assert isinstance(csr, csp.csr_matrix) and abs(csr.get() - R).max() == 0
    assert isinstance(A.toarray(), cupy.ndarray)
    assert A.trace() == pytest.approx(R.diagonal().sum(), rel=1e-5)


# --- cupyx's solvers ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["cg", "gmres", "minres", "lsmr", "eigsh", "svds", "lobpcg"])
def test_cupyx_solver_takes_a_sparse_matrix(name):
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as cla

    S = _spd()
    A, C = SparseMatrix(S), csp.csr_matrix(S)
    b = cupy.asarray(np.random.default_rng(4).standard_normal(S.shape[0]))
    if name in ("cg", "gmres", "minres"):
        kwargs = {"tol": 1e-10} if name == "minres" else {"rtol": 1e-10}
        x, info = getattr(cla, name)(A, b, **kwargs)
        assert info == 0
        np.testing.assert_allclose((C @ x).get(), b.get(), atol=1e-7)
    elif name == "lsmr":
        R = _rect()
        r = cupy.asarray(np.random.default_rng(5).standard_normal(R.shape[0]))
        ours = cla.lsmr(SparseMatrix(R), r, atol=1e-12, btol=1e-12)[0]
        theirs = cla.lsmr(csp.csr_matrix(R), r, atol=1e-12, btol=1e-12)[0]
        np.testing.assert_allclose(ours.get(), theirs.get(), rtol=1e-8, atol=1e-10)
    elif name == "eigsh":
        got = cla.eigsh(A, k=4, which="LM")[0]
        want = cla.eigsh(C, k=4, which="LM")[0]
        np.testing.assert_allclose(np.sort(got.get()), np.sort(want.get()), rtol=1e-8)
    elif name == "svds":
        R = _rect()
        got = cla.svds(SparseMatrix(R), k=3, which="LM", return_singular_vectors=False)
        want = cla.svds(csp.csr_matrix(R), k=3, which="LM", return_singular_vectors=False)
        np.testing.assert_allclose(np.sort(got.get()), np.sort(want.get()), rtol=1e-6)
    elif name == "lobpcg":
        X0 = cupy.asarray(np.random.default_rng(6).standard_normal((S.shape[0], 3)))
        got = cla.lobpcg(A, X0, tol=1e-8, maxiter=300)[0]
        want = cla.lobpcg(C, X0, tol=1e-8, maxiter=300)[0]
        np.testing.assert_allclose(np.sort(got.get()), np.sort(want.get()), rtol=1e-6)


def test_cupyx_lsqr_needs_its_own_csr():
    """cupyx's lsqr is a direct QR of a cupyx CSR (no products): it takes ``A.tocsr()``; lsmr takes ``A``."""
    import cupyx.scipy.sparse.linalg as cla

    S = _spd(n=300)
    A = SparseMatrix(S)
    b = cupy.asarray(np.ones(S.shape[0]))
    x = cla.lsqr(A.tocsr(), b)[0]
    np.testing.assert_allclose((A @ x).get(), b.get(), atol=1e-8)


# --- torch ------------------------------------------------------------------------------------------

torch = None


def _torch():
    global torch
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    return torch


def test_torch_tensors_in_and_out_without_copies():
    t = _torch()
    R = _rect()
    A = SparseMatrix(R)
    x = t.linspace(-1, 1, R.shape[1], dtype=t.float64, device="cuda")
    y = A @ x
    assert isinstance(y, t.Tensor) and y.device == x.device and y.dtype == t.float64
    np.testing.assert_allclose(y.cpu().numpy(), R @ x.cpu().numpy(), rtol=1e-11)
    out = t.empty(R.shape[0], dtype=t.float64, device="cuda")
    assert A.matvec(x, out=out) is out
    np.testing.assert_allclose(out.cpu().numpy(), R @ x.cpu().numpy(), rtol=1e-11)
    X = t.randn(R.shape[1], 6, dtype=t.float64, device="cuda")
    np.testing.assert_allclose((A @ X).cpu().numpy(), R @ X.cpu().numpy(), rtol=1e-11, atol=1e-12)
    u = t.randn(R.shape[0], dtype=t.float64, device="cuda")
    np.testing.assert_allclose((u @ A).cpu().numpy(), u.cpu().numpy() @ R, rtol=1e-11, atol=1e-12)
    dense = A.to_torch().to_dense().cpu().numpy()
    np.testing.assert_array_equal(dense, R.toarray())


def test_torch_product_runs_on_torchs_current_stream():
    t = _torch()
    R = _rect()
    A = SparseMatrix(R)
    x = t.ones(R.shape[1], dtype=t.float64, device="cuda")
    side = t.cuda.Stream()
    side.wait_stream(t.cuda.current_stream())
    with t.cuda.stream(side):
        t.cuda._sleep(50_000_000)  # the side stream is busy: a product on it waits
        y = A @ x
    assert not side.query()  # the product was queued behind the sleep, on the side stream
    side.synchronize()
    np.testing.assert_allclose(y.cpu().numpy(), R @ np.ones(R.shape[1]), rtol=1e-11)


@pytest.mark.parametrize("block", [False, True])
def test_autograd_gradcheck_float64(block):
    t = _torch()
    R = _rect(m=300, n=200)
    A = SparseMatrix(R)
    shape = (R.shape[1], 3) if block else (R.shape[1],)
    x = t.randn(*shape, dtype=t.float64, device="cuda", requires_grad=True)
    assert t.autograd.gradcheck(lambda v: A @ v, (x,))
    y = (A @ x).sum()
    y.backward()
    want = R.T @ np.ones(R.shape[0])
    got = x.grad.cpu().numpy()
    np.testing.assert_allclose(got[:, 0] if block else got, want, rtol=1e-11)


def test_autograd_refuses_in_place_products():
    t = _torch()
    A = SparseMatrix(_rect())
    x = t.ones(A.shape[1], dtype=t.float64, device="cuda", requires_grad=True)
    with pytest.raises(TypeError, match="requires grad"):
        A.matvec(x, out=t.empty(A.shape[0], dtype=t.float64, device="cuda"))


def test_torch_cuda_graph_captures_the_product():
    t = _torch()
    R = _rect()
    A = SparseMatrix(R)
    x = t.zeros(R.shape[1], dtype=t.float64, device="cuda")
    A @ x  # first product outside the capture (torch's own warm-up rule)
    t.cuda.synchronize()
    graph = t.cuda.CUDAGraph()
    with t.cuda.graph(graph):
        y = A @ x
    for seed in range(3):
        u = np.random.default_rng(seed).standard_normal(R.shape[1])
        x.copy_(t.from_numpy(u))
        graph.replay()
        t.cuda.synchronize()
        np.testing.assert_allclose(y.cpu().numpy(), R @ u, rtol=1e-11, atol=1e-12)


def test_torch_compile_keeps_the_product_on_the_gpu():
    t = _torch()
    from cocktail import torch_ops

    R = _rect()
    A = SparseMatrix(R)
    x = t.randn(R.shape[1], dtype=t.float64, device="cuda")
    f = t.compile(lambda v: t.relu(torch_ops.matmul(A, v)) * 2, fullgraph=True)
    np.testing.assert_allclose(f(x).cpu().numpy(), np.maximum(R @ x.cpu().numpy(), 0) * 2, rtol=1e-11)
