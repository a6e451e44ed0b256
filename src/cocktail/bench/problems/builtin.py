"""Small built-in matrices for the CPU smoke benchmark (fixed seeds)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def laplacian_2d(k: int) -> sp.csr_array:
    """The 5-point Laplacian on a k x k grid (Bell & Garland's structured class)."""
    one = sp.diags_array([-np.ones(k - 1), 2 * np.ones(k), -np.ones(k - 1)], offsets=[-1, 0, 1])
    eye = sp.eye_array(k)
    return sp.csr_array(sp.kron(one, eye) + sp.kron(eye, one))


def power_law(n: int, exponent: float = 2.0, seed: int = 7) -> sp.csr_array:
    """An n x n matrix with Zipf-distributed row lengths (the unstructured, uneven class)."""
    rng = np.random.default_rng(seed)
    lengths = np.minimum(rng.zipf(exponent, size=n), n)
    rows = np.repeat(np.arange(n), lengths)
    cols = rng.integers(0, n, size=rows.shape[0])
    S = sp.csr_array((rng.standard_normal(rows.shape[0]), (rows, cols)), shape=(n, n))
    S.sum_duplicates()
    return S


def builtin_matrices() -> dict[str, sp.csr_array]:
    """The built-in smoke-benchmark matrices by name."""
    return {"laplace2d_64": laplacian_2d(64), "powerlaw_4k": power_law(4096)}
