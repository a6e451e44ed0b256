"""Random matrices for the property-based campaign: a hypothesis strategy, the cases of each format
and the check of one product against the format's own-array reference within the γ bound.

Every matrix is built from ``numpy.random.default_rng(seed)`` with a drawn ``seed``, so a failure
names the seed, shape and pattern that rebuild it (``note()`` and the assertion message print them).
"""

from __future__ import annotations

import os

import numpy as np
from hypothesis import HealthCheck, note, reject, settings
from hypothesis import strategies as st

from cocktail import SparseMatrix, kernels, reference
from cocktail.errors import FormatFillError
from configs import CONFIGS
from kernel_configs import KERNEL_CONFIGS
from oracle import assert_within_gamma, few_values, one_value, unbounded, value_limited
from zoo import raw_csr

#: Examples per hypothesis test: 100 in the ordinary GPU suite, 2000 in scripts/hypothesis_campaign.sh.
EXAMPLES = int(os.environ.get("COCKTAIL_HYPOTHESIS_EXAMPLES", "100"))
#: Largest rows and columns drawn; a warp is 32 and a block of threads 256.
MAX_SIDE = 300
PATTERNS = ("uniform", "power_law", "long_rows", "banded")


def campaign_settings(max_examples: int = EXAMPLES):
    """The campaign's settings: no deadline (the first example of a kernel compiles it), no database,
    a fresh random search each run, the reproduction blob printed on failure."""
    return settings(max_examples=max_examples, deadline=None, derandomize=False, print_blob=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


def _lengths(rng, pattern: str, m: int, n: int, density: float):
    """Entries drawn per row (columns may repeat: duplicates)."""
    if n == 0:
        return np.zeros(m, dtype=np.int64)
    if pattern == "uniform":
        return rng.binomial(n, density, m)
    if pattern == "power_law":
        return np.minimum(rng.zipf(1.5, m), 2 * n)
    lengths = rng.integers(0, 4, m)
    if m:
        lengths[rng.integers(0, m, 3)] = n + rng.integers(0, n + 1, 3)  # rows past a warp, duplicates within
    return lengths


def _entries(rng, pattern: str, m: int, n: int, density: float):
    """``(rows, cols)`` of one random pattern."""
    if pattern == "banded" and m and n:
        keep = max(5 * density, 0.3)  # share of each diagonal's entries kept: rows of varying lengths
        rows, cols = [], []
        for offset in rng.integers(1 - min(m, 40), min(n, 40), rng.integers(1, 8)):
            r = np.arange(max(0, -offset), min(m, n - offset))
            r = r[rng.random(r.size) < keep]
            rows.append(r)
            cols.append(r + offset)
        return np.concatenate(rows), np.concatenate(cols)
    lengths = _lengths(rng, "uniform" if pattern == "banded" else pattern, m, n, density)
    rows = np.repeat(np.arange(m), lengths)
    return rows, rng.integers(0, max(n, 1), rows.size)


@st.composite
def random_matrices(draw, few: int | None = None):
    """Raw CSR arrays (float64, int64) of a random matrix: unsorted, with duplicates and explicit zeros,
    and the description that rebuilds it. ``few``: at most that many distinct values (:func:`oracle.few_values`)."""
    m, n = draw(st.integers(0, MAX_SIDE)), draw(st.integers(0, MAX_SIDE))
    pattern = draw(st.sampled_from(PATTERNS))
    density = draw(st.floats(0.0, 0.2))
    zeros = draw(st.floats(0.0, 0.3))
    shuffle = draw(st.booleans())
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    rows, cols = _entries(rng, pattern, m, n, density)
    values = rng.standard_normal(rows.size)
    values[rng.random(rows.size) < zeros] = 0.0
    if few:
        values = few_values(values, few)
    data, indices, indptr = raw_csr(rows, cols, values, (m, n), rng, shuffle=shuffle)
    if few == 1:
        data = one_value(data, indices, indptr, (m, n))
    what = f"seed={seed} shape=({m}, {n}) pattern={pattern} density={density:.3g} zeros={zeros:.3g} shuffle={shuffle}"
    return data, indices, indptr, (m, n), seed, what


def gpu_cases(name: str) -> list:
    """``(kernel, format params, kernel params)`` of format ``name`` on the GPU: every kernel
    configuration of the GPU suite, the format's parameter sets with the default kernel, and hyb
    and pkt with each COO kernel for their COO part."""
    cases = [(k, fparams, kparams) for k, fmt, fparams, kparams in KERNEL_CONFIGS if fmt == name]
    cases += [(None, unbounded(name, params), {}) for fmt, params in CONFIGS if fmt == name]
    for spec in kernels.for_format(name):
        if "coo_kernel" in spec.defaults:
            cases += [(spec.name, unbounded(name, {}), {"coo_kernel": coo.name}) for coo in kernels.for_format("coo")]
    return cases


def cpu_cases(name: str) -> list:
    """The format's parameter sets, without kernels (the CPU runs none)."""
    return [(None, unbounded(name, params), {}) for fmt, params in CONFIGS if fmt == name]


def _scalar(data, dtype, label: str):
    """alpha or beta: 0, ±1 or a random value, rounded to ``dtype`` so that the reference uses the same one."""
    value = data.draw(st.one_of(st.sampled_from([0.0, 1.0, -1.0]), st.floats(-4.0, 4.0, allow_nan=False)), label=label)
    return float(np.dtype(dtype).type(value))


def check_random_product(data, name: str, cases: list, device: str) -> None:
    """Draw a matrix, a case of format ``name``, dtypes and scalars; one product on ``device`` must
    agree with ``cocktail.reference.spmv`` on the stored format within both results' γ bounds."""
    kernel, fparams, kparams = data.draw(st.sampled_from(cases), label="case")
    raw, idx, indptr, shape, seed, what = data.draw(random_matrices(few=value_limited(name, fparams)), label="matrix")
    dtype = data.draw(st.sampled_from(["float32", "float64"]), label="dtype")
    index_dtype = data.draw(st.sampled_from(["int32", "int64"]), label="index_dtype")
    deterministic = kernel is None and data.draw(st.booleans(), label="deterministic")
    alpha, beta = _scalar(data, dtype, "alpha"), _scalar(data, dtype, "beta")
    what = (f"{what} format={name} kernel={kernel} params={fparams} kernel_params={kparams} dtype={dtype} "
            f"index_dtype={index_dtype} alpha={alpha!r} beta={beta!r} deterministic={deterministic}")
    note(what)
    try:
        A = SparseMatrix((raw.astype(dtype), idx, indptr), shape=shape, format=name, device=device, kernel=kernel,
                         index_dtype=index_dtype, deterministic=deterministic, **fparams, **kparams)
    except FormatFillError:
        reject()  # a fixed width (hyb's ell_width) refused for a matrix it would pad too much: not counted
    assert A.format == name and (kernel is None or A.kernel == kernel), what
    assert A.index_dtype == np.dtype(index_dtype) and (A.deterministic or not deterministic), what
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape[1]).astype(dtype)
    # beta == 0 never reads y: NaN there must not reach the result
    y0 = rng.standard_normal(shape[0]).astype(dtype) if beta != 0 else np.full(shape[0], np.nan, dtype=dtype)
    if device == "cuda":
        import cupy as xp
    else:
        xp = np
    y = xp.array(y0)  # a copy: y0 stays the operand of the reference
    A.matvec(xp.asarray(x), out=y, alpha=alpha, beta=beta)
    got = y.get() if hasattr(y, "get") else y
    want = reference.spmv(A.storage.to_xp(np), x, out=y0.copy(), alpha=alpha, beta=beta)
    assert_within_gamma(got, want, A.to_scipy(), x, dtype, alpha, beta, y0, want_dtype=dtype, what=what)
