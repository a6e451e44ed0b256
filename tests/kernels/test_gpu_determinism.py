"""Determinism and accuracy on the GPU: deterministic kernels are bit-identical over 100 products,
every kernel (atomic ones included) stays within the per-row bound γ_{k+2}·(|α||A||x| + |β||y0|),
and ``deterministic=True`` keeps atomics out of the plan.

Marked ``gpu``: skipped where CuPy sees no CUDA device.
"""

from __future__ import annotations

import functools
import os

import numpy as np
import pytest
import scipy.sparse as sp

import cocktail
from cocktail import SparseMatrix, kernels
from cocktail.bench.problems.generators import laplacian
from cocktail.auto import planner, profile
from cocktail.auto.features import compute
from oracle import assert_within_gamma, exact_product, few_values, unbounded, value_limited
from test_planner import csr_of, model_profile

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy") if cocktail.arrays.cuda_available() else None

#: Products compared bit for bit (scripts/sanitize.sh asks for fewer: it checks memory, not repetition).
RUNS = int(os.environ.get("COCKTAIL_DETERMINISM_RUNS", "100"))
ALPHA, BETA = 1.5, -0.75  # exact in float32 and float64
BITS = {np.dtype(np.float32): np.uint32, np.dtype(np.float64): np.uint64}
#: Formats that pad every row, super-row or diagonal to the widest: run on matrices without hub rows.
PADDED = ("ell", "bell", "dia", "dia_vi", "bdia")


@functools.lru_cache(maxsize=None)
def _power_law_long_rows(n=20_000, seed=11):
    """Power-law row lengths (up to 300) and four rows of 5,000 to 12,000 entries, which the
    balanced kernels split across warps and blocks; duplicates summed by the matrix."""
    rng = np.random.default_rng(seed)
    lengths = np.minimum(rng.zipf(1.8, n), 300)
    lengths[[7, 9_000, 15_000, n - 1]] = (5_000, 6_000, 8_000, 12_000)
    rows = np.repeat(np.arange(n), lengths)
    cols = rng.integers(0, n, rows.size)
    return sp.csr_array((rng.standard_normal(rows.size), (rows, cols)), shape=(n, n))


@functools.lru_cache(maxsize=None)
def _laplacian_3d(k=27, seed=12):
    """The 7-point stencil on a k^3 grid (19,683 rows for k = 27) with random values: regular rows."""
    S = laplacian(7, k)
    S.data = np.random.default_rng(seed).standard_normal(S.nnz)
    return S


@functools.lru_cache(maxsize=None)
def _ragged_band(n=20_000, seed=13):
    """21 diagonals within ±40, each entry kept with probability 0.6, and the main diagonal: rows of 1 to 21."""
    rng = np.random.default_rng(seed)
    rows, cols = [np.arange(n)], [np.arange(n)]
    for offset in range(-40, 41, 4):
        r = np.arange(max(0, -offset), min(n, n - offset))
        r = r[rng.random(r.size) < 0.6]
        rows.append(r)
        cols.append(r + offset)
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    return sp.csr_array((rng.standard_normal(rows.size), (rows, cols)), shape=(n, n))


MATRICES = {"power_law_long_rows": _power_law_long_rows, "laplacian_3d": _laplacian_3d,
            "ragged_band": _ragged_band}


def _matrix_names(fmt: str) -> tuple[str, str]:
    return ("laplacian_3d", "ragged_band") if fmt in PADDED else ("power_law_long_rows", "laplacian_3d")


#: (kernel, kernel params): every registered kernel, and hyb and pkt with each COO kernel for their rest.
KERNEL_CASES = [(name, {}) for name in kernels.names()] + [
    (name, {"coo_kernel": coo.name}) for name in kernels.names() if "coo_kernel" in kernels.get(name).defaults
    for coo in kernels.for_format("coo") if coo.name != kernels.get(name).defaults["coo_kernel"]]


def _deterministic_case(case) -> bool:
    name, params = case
    spec = kernels.get(name)
    coo = params.get("coo_kernel", spec.defaults.get("coo_kernel"))
    return spec.deterministic and (coo is None or kernels.get(coo).deterministic)


def _case_id(name: str, params: dict, which: str) -> str:
    return name + "".join(f"[{v}]" for v in params.values()) + "-" + which


def _cases(select):
    return [pytest.param(name, params, which, id=_case_id(name, params, which))
            for name, params in KERNEL_CASES if select((name, params))
            for which in _matrix_names(kernels.get(name).formats[0])]


def _host_matrix(which: str, fmt: str, dtype):
    S = MATRICES[which]()
    return (few_values(S, value_limited(fmt, {})) if value_limited(fmt, {}) else S).astype(dtype)


def _build(which: str, kernel: str, params: dict, dtype):
    fmt = kernels.get(kernel).formats[0]
    S = _host_matrix(which, fmt, dtype)
    return SparseMatrix(S, format=fmt, device="cuda", kernel=kernel, **unbounded(fmt, {}), **params)


def _operands(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape[1]).astype(dtype), rng.standard_normal(shape[0]).astype(dtype)


def _repeated_bits(A, x, y0, runs=RUNS):
    """The bits of the first of ``runs`` products ``ALPHA*A@x + BETA*y0`` (y0 copied in before each) and
    how many elements of the later ones differ from them."""
    uint = BITS[np.dtype(A.dtype)]
    y, first, differ = cupy.empty_like(y0), None, 0
    for _ in range(runs):
        y[...] = y0
        A.matvec(x, out=y, alpha=ALPHA, beta=BETA)
        bits = y.view(uint)
        if first is None:
            first = bits.copy()
        else:
            differ = differ + (bits != first).sum()
    return first, int(differ)


def _assert_bit_identical(A, x_host, y0_host, what):
    x, y0 = cupy.asarray(x_host), cupy.asarray(y0_host)
    first, differ = _repeated_bits(A, x, y0)
    assert differ == 0, f"{what}: {differ} elements differ over {RUNS} products"
    return first


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel, params, which", _cases(_deterministic_case))
def test_deterministic_kernels_are_bit_identical(kernel, params, which, dtype):
    A = _build(which, kernel, params, dtype)
    assert A.kernel == kernel and A.deterministic
    x, y0 = _operands(A.shape, dtype)
    first = _assert_bit_identical(A, x, y0, f"{kernel} on {which}")
    B = _build(which, kernel, params, dtype)  # a second matrix built alike computes the same bits
    second, _ = _repeated_bits(B, cupy.asarray(x), cupy.asarray(y0), runs=1)
    assert bool((second == first).all()), f"{kernel} on {which}: two constructions disagree"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel, params, which", _cases(lambda case: True))
def test_every_kernel_within_the_gamma_bound(kernel, params, which, dtype):
    A = _build(which, kernel, params, dtype)
    stored = A.to_scipy()
    x, y0 = _operands(A.shape, dtype, seed=1)
    want = exact_product(stored, x, ALPHA, BETA, y0)
    y = cupy.empty(A.shape[0], dtype=dtype)
    for _ in range(1 if A.deterministic else 20):  # atomics: several summation orders
        y[...] = cupy.asarray(y0)
        A.matvec(cupy.asarray(x), out=y, alpha=ALPHA, beta=BETA)
        assert_within_gamma(y.get(), want, stored, x, dtype, ALPHA, BETA, y0, what=f"{kernel}{params} on {which}")


@pytest.mark.parametrize("kernel, params, which", _cases(lambda case: not _deterministic_case(case)))
def test_atomic_products_say_they_are_not_deterministic(kernel, params, which):
    A = _build(which, kernel, params, np.float64)
    assert not A.deterministic
    culprit = params.get("coo_kernel", kernel)
    how = ("in an order that may vary between runs" if kernels.get(culprit).vendor
           else "with floating-point atomics")
    assert f"  deterministic: no ({culprit} sums {how}" in "\n".join(A.explain().splitlines())


# --- format="auto" -----------------------------------------------------------------------------------
def _plan_kernels_deterministic(A) -> bool:
    if A.auto is None:
        return all(k != "reference" and kernels.get(k).deterministic for k in A.kernel.split("+"))
    # A planned product: each part's kernel at the part's parameters (cuSPARSE's algorithm 2 is, 1 is not).
    return all(kernels.get(p.kernel).is_deterministic(p.kernel_params) for p in A.auto.plan.parts)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("which", list(MATRICES))
@pytest.mark.parametrize("deterministic", [False, True])
def test_auto_plans_that_say_deterministic_are_bit_identical(which, dtype, deterministic):
    S = MATRICES[which]().astype(dtype)
    A = SparseMatrix(S, deterministic=deterministic)
    assert A.deterministic == _plan_kernels_deterministic(A)
    assert A.deterministic or not deterministic
    x, y0 = _operands(S.shape, dtype, seed=2)
    if A.deterministic:
        _assert_bit_identical(A, x, y0, f"auto plan {A.kernel} on {which}")


def _atomic_planned_matrix():
    """A power-law matrix (float64) and a shipped profile whose plan for it holds coo_atomic."""
    rng = np.random.default_rng(1)
    lengths = np.minimum(rng.zipf(2.0, 2_000), 5_000)
    rows = np.repeat(np.arange(2_000), lengths)
    S = sp.csr_array((rng.standard_normal(rows.size), (rows, rng.integers(0, 2_000, rows.size))),
                     shape=(2_000, 2_000))
    csr = csr_of(S)
    for prof in profile.shipped():
        if "coo_atomic" in {p.kernel for p in planner.plan(csr, compute(csr), prof, np.float64).chosen.parts}:
            return S, prof
    raise AssertionError("no shipped profile plans coo_atomic for the power-law matrix")


def test_deterministic_true_replaces_a_planned_coo_atomic(monkeypatch, tmp_path):
    monkeypatch.setenv("COCKTAIL_CACHE", str(tmp_path))
    S, prof = _atomic_planned_matrix()
    monkeypatch.setattr(profile, "for_device", lambda device: prof)
    usual = SparseMatrix(S)
    # the model plans coo_atomic (the race may overrule it with a plan it measured faster)
    assert "coo_atomic" in {p.kernel for p in usual.auto.planning.chosen.parts}
    assert usual.deterministic == all(kernels.get(k).deterministic for k in usual.kernel.split("+"))
    A = SparseMatrix(S, deterministic=True)
    assert A.deterministic and "coo_atomic" not in A.kernel.split("+")
    assert "  deterministic: yes" in A.explain().splitlines()
    x, y0 = _operands(S.shape, np.float64, seed=3)
    _assert_bit_identical(A, x, y0, f"deterministic=True plan {A.kernel}")
    y = cupy.asarray(y0)
    A.matvec(cupy.asarray(x), out=y, alpha=ALPHA, beta=BETA)
    stored = A.to_scipy()
    assert_within_gamma(y.get(), exact_product(stored, x, ALPHA, BETA, y0), stored, x, np.float64, ALPHA, BETA, y0)


def test_measured_decisions_are_cached_apart(monkeypatch, tmp_path):
    monkeypatch.setenv("COCKTAIL_CACHE", str(tmp_path))
    prof = model_profile()
    monkeypatch.setattr(profile, "for_device", lambda device: prof)
    S, _ = _atomic_planned_matrix()
    SparseMatrix(S, tune="measure")
    B = SparseMatrix(S, tune="measure", deterministic=True)
    assert not B.auto.cached and B.deterministic  # the plan measured without the flag is not reused
    C = SparseMatrix(S, tune="measure", deterministic=True)
    assert C.auto.cached and C.deterministic and C.auto.plan.parts == B.auto.plan.parts


# --- named formats and refusals ------------------------------------------------------------------------
def test_named_formats_get_their_deterministic_kernel():
    S = sp.random_array((3_000, 3_000), density=0.002, format="csr", random_state=4)
    assert SparseMatrix(S, format="coo", device="cuda").kernel == "coo_atomic"
    A = SparseMatrix(S, format="coo", device="cuda", deterministic=True)
    assert A.kernel == "coo_segmented" and A.deterministic
    parts = [("ell", {"max_fill": None}, ("row_prefix", 2)), ("coo", {}, ("rest",))]
    mixed = SparseMatrix(S, format="cocktail", device="cuda", parts=parts)
    assert mixed.kernel == "ell+coo_atomic" and not mixed.deterministic
    fixed = SparseMatrix(S, format="cocktail", device="cuda", parts=parts, deterministic=True)
    assert fixed.kernel == "ell+coo_segmented" and fixed.deterministic


def test_nondeterministic_choices_are_refused():
    S = sp.random_array((500, 500), density=0.01, format="csr", random_state=5)
    with pytest.raises(ValueError, match="deterministic=True, but coo_atomic .*coo_segmented"):
        SparseMatrix(S, format="coo", device="cuda", kernel="coo_atomic", deterministic=True)
    with pytest.raises(ValueError, match="deterministic=True, but coo_atomic"):
        SparseMatrix(S, format="hyb", device="cuda", kernel="hyb", coo_kernel="coo_atomic", deterministic=True)
    with pytest.raises(ValueError, match="GPU reference path"):  # pkt's kernel takes real values only
        SparseMatrix(S.astype(np.complex128), format="pkt", device="cuda", deterministic=True)
    assert SparseMatrix(S.astype(np.complex128), format="coo", device="cuda", deterministic=True).kernel == \
        "coo_segmented"  # complex values have deterministic kernels
    with pytest.raises(ValueError, match="GPU reference path"):
        SparseMatrix(S, format="csr", device="cuda", executor="reference", deterministic=True)
    ref = SparseMatrix(S, format="csr", device="cuda", executor="reference")
    assert not ref.deterministic
