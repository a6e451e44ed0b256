"""Generated test matrices: Bell & Garland's Laplacians (their Table 3), with fixed values, and a
matrix of Zipf-distributed row lengths (fixed seed)."""

from __future__ import annotations

import re

import numpy as np
import scipy.sparse as sp

#: stencil points -> (dimensions, "star" or "box")
STENCILS = {3: (1, "star"), 5: (2, "star"), 9: (2, "box"), 7: (3, "star"), 27: (3, "box")}


def laplacian(points: int, k: int) -> sp.csr_array:
    """The ``points``-point Laplacian on a grid of ``k`` points per side (3: 1-D, 5/9: 2-D, 7/27: 3-D).

    Star stencils are the standard second-difference operators; box stencils (9, 27) couple
    every neighbour in the box with -1 and put ``points - 1`` on the diagonal.
    """
    if points not in STENCILS:
        raise ValueError(f"no {points}-point Laplacian; choose one of {sorted(STENCILS)}")
    dims, kind = STENCILS[points]
    eye = sp.eye_array(k, format="csr")
    if kind == "star":
        t = sp.diags_array([-1.0, 2.0, -1.0], offsets=[-1, 0, 1], shape=(k, k), format="csr")
        total = None
        for d in range(dims):
            term = None
            for e in range(dims):
                f = t if e == d else eye
                term = f if term is None else sp.kron(term, f, format="csr")
            total = term if total is None else total + term
        return sp.csr_array(total)
    box = sp.diags_array([1.0, 1.0, 1.0], offsets=[-1, 0, 1], shape=(k, k), format="csr")
    full = box
    for _ in range(dims - 1):
        full = sp.kron(full, box, format="csr")
    full = sp.csr_array(full)
    full.data[:] = -1.0
    full = full + (points) * sp.eye_array(full.shape[0], format="csr")  # diagonal: -1 + points = points - 1
    return sp.csr_array(full)


_NAME = re.compile(r"^laplace(\d+)_(\d+)$")


def by_name(name: str):
    """A generated matrix from its name ``laplace<points>_<k>``, or None if the name is not one."""
    match = _NAME.match(name)
    if not match:
        return None
    return laplacian(int(match.group(1)), int(match.group(2)))


def power_law(n: int, exponent: float = 2.0, seed: int = 7) -> sp.csr_array:
    """An n x n matrix with Zipf-distributed row lengths (the unstructured, uneven class)."""
    rng = np.random.default_rng(seed)
    lengths = np.minimum(rng.zipf(exponent, size=n), n)
    rows = np.repeat(np.arange(n), lengths)
    cols = rng.integers(0, n, size=rows.shape[0])
    S = sp.csr_array((rng.standard_normal(rows.shape[0]), (rows, cols)), shape=(n, n))
    S.sum_duplicates()
    return S
