"""torch tensors on the CPU: in and out of a SparseMatrix's products, and autograd through ``A.H``.

Skipped where torch is not installed (it is optional); ``test_gpu_operator.py`` covers CUDA tensors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import cocktail

torch = pytest.importorskip("torch")
warnings.simplefilter("ignore", cocktail.CPUFallbackWarning)


def _rect(m=120, n=90, seed=0, dtype=np.float64):
    R = sp.random_array((m, n), density=0.08, format="csr", rng=np.random.default_rng(seed))
    if np.dtype(dtype).kind == "c":
        R = R + 1j * sp.random_array((m, n), density=0.08, format="csr", rng=np.random.default_rng(seed + 1))
    return R.astype(dtype).tocsr()


def test_cpu_tensors_in_and_out():
    R = _rect()
    A = cocktail.SparseMatrix(R, device="cpu")
    x = torch.linspace(-1, 1, R.shape[1], dtype=torch.float64)
    y = A @ x
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float64
    np.testing.assert_allclose(y.numpy(), R @ x.numpy(), rtol=1e-12)
    out = torch.zeros(R.shape[0], dtype=torch.float64)
    assert A.matvec(x, out=out, alpha=2) is out
    np.testing.assert_allclose(out.numpy(), 2 * (R @ x.numpy()), rtol=1e-12)
    x32 = x.float()
    assert (A @ x32).dtype == torch.float64  # numpy.result_type(float64, float32)
    u = torch.ones(R.shape[0], dtype=torch.float64)
    np.testing.assert_allclose((u @ A).numpy(), np.ones(R.shape[0]) @ R, rtol=1e-12)
    np.testing.assert_array_equal(A.to_torch().to_dense().numpy(), R.toarray())


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("block", [False, True])
def test_autograd_gradcheck(dtype, block):
    R = _rect(dtype=dtype)
    A = cocktail.SparseMatrix(R, device="cpu")
    tdtype = torch.float64 if dtype == np.float64 else torch.complex128
    shape = (R.shape[1], 2) if block else (R.shape[1],)
    x = torch.randn(*shape, dtype=tdtype, requires_grad=True)
    assert torch.autograd.gradcheck(lambda v: A @ v, (x,))


def test_gradient_flows_through_a_network():
    R = _rect()
    A = cocktail.SparseMatrix(R, device="cpu")
    W = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    H = torch.randn(R.shape[1], 4, dtype=torch.float64)
    loss = (A @ (H @ W)).square().sum()
    loss.backward()
    T = torch.from_numpy(R.toarray())
    W2 = W.detach().clone().requires_grad_(True)
    (T @ (H @ W2)).square().sum().backward()
    np.testing.assert_allclose(W.grad.numpy(), W2.grad.numpy(), rtol=1e-10)


def test_torch_compile_keeps_the_product_in_its_graph():
    from cocktail import torch_ops

    R = _rect()
    A = cocktail.SparseMatrix(R, device="cpu")
    x = torch.randn(R.shape[1], dtype=torch.float64)
    f = torch.compile(lambda v: torch.relu(torch_ops.matmul(A, v)) * 2, fullgraph=True)  # no graph break
    np.testing.assert_allclose(f(x).numpy(), np.maximum(R @ x.numpy(), 0) * 2, rtol=1e-12)
    W = torch.randn(R.shape[1], 3, dtype=torch.float64, requires_grad=True)
    loss = torch.compile(lambda w: torch_ops.matmul(A, w).square().sum(), fullgraph=True)(W)
    loss.backward()
    np.testing.assert_allclose(W.grad.numpy(), 2 * R.T @ (R @ W.detach().numpy()), rtol=1e-10)
    assert torch.ops.cocktail.matmul.default is not None  # the custom op, by its name


def test_a_dropped_matrix_is_named_in_the_error():
    from cocktail import torch_ops

    A = cocktail.SparseMatrix(_rect(), device="cpu")
    key = torch_ops.handle(A)
    del A
    import gc

    gc.collect()
    with pytest.raises(RuntimeError, match="no longer exists"):
        torch.ops.cocktail.matmul(torch.ones(90, dtype=torch.float64), key, False)
