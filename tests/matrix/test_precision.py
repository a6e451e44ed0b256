"""Half precision and values stored narrower than the matrix dtype, on the CPU: the precision rules, every
format's round trip and reference product in every precision (the conformance suite's zoo), the byte model,
the kernels' declared instantiations, and the errors.  The GPU kernels: ``test_gpu_precision``.  The default tier
takes each (config, zoo matrix) in one precision, in turn (tests/tiers.py); ``pytest --exhaustive`` runs them all.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail import SparseMatrix, precision, reference
from cocktail.formats import CSR, get
from configs import CONFIGS, config_id
from oracle import assert_within_precision, build_params, random_operand, raw_arrays, value_limited
from tiers import in_turn
from zoo import ZOO

#: (matrix dtype, stored value dtype): every precision beyond the plain ones that this process has.
PRECISIONS = [("float16", None), ("float32", "float16"), ("float64", "float32")]
if precision.BFLOAT16 is not None:
    PRECISIONS += [("bfloat16", None), ("float32", "bfloat16")]


def precision_id(p) -> str:
    dtype, stored = p
    return dtype if stored is None else f"{dtype}-stored-{stored}"


def stored_csr(zm, name, params, dtype, stored):
    """The zoo matrix as a canonical CSR in ``dtype`` with its values stored in ``stored``."""
    data, indices, indptr = raw_arrays(zm, "float64", "int32", few=value_limited(name, params))
    before = [a.copy() for a in (data, indices, indptr)]
    csr = CSR.from_arrays(data, indices, indptr, zm.shape, dtype=precision.dtype_named(dtype)).with_value_dtype(stored)
    for a, b in zip((data, indices, indptr), before):
        np.testing.assert_array_equal(a, b)  # the caller's arrays are untouched
    return csr


# The default tier: every config on every zoo matrix, in one precision taken in turn; the rest exhaustive.
@pytest.mark.parametrize("config,zm,prec", in_turn([CONFIGS, ZOO, PRECISIONS], [config_id, lambda m: m.name,
                                                                               precision_id]))
def test_every_format_stores_and_multiplies_in_every_precision(config, zm, prec):
    name, params = config
    dtype, stored = (precision.dtype_named(d) if d else None for d in prec)
    csr = stored_csr(zm, name, params, dtype, stored)
    fmt = get(name).from_csr(csr, **build_params(name, params, csr.dtype))
    value_dtype = stored or dtype
    assert fmt.dtype == dtype and fmt.value_dtype == value_dtype
    assert all(a.dtype == value_dtype for a in fmt.arrays().values() if precision.is_value_dtype(a.dtype))
    parts = [getattr(fmt, k) for k in fmt.part_fields] + list(getattr(fmt, "parts", ()))
    assert all(p.dtype == dtype and p.value_dtype == value_dtype for p in parts)  # HYB's, PKT's remainders
    back = fmt.to_csr()  # exact round trip, the values still narrow
    assert back.dtype == dtype and back.value_dtype == value_dtype
    np.testing.assert_array_equal(back.indptr, csr.indptr)
    np.testing.assert_array_equal(back.indices, csr.indices)
    np.testing.assert_array_equal(back.data.view(np.uint8), csr.data.view(np.uint8))

    # the product sums in the arithmetic dtype: within its bound of the exact product of the stored values
    rng = np.random.default_rng(0)
    m, n = zm.shape
    S = csr.to_scipy()  # the stored values, widened exactly
    x = random_operand(rng, (n,), dtype)
    y = reference.spmv(fmt, x)
    assert y.dtype == dtype
    assert_within_precision(y, S, x, dtype)
    y0 = random_operand(rng, (m,), dtype)
    out = y0.copy()
    assert reference.spmv(fmt, x, out=out, alpha=1.5, beta=-0.25) is out
    assert_within_precision(out, S, x, dtype, 1.5, -0.25, y0)


@pytest.mark.parametrize("prec", PRECISIONS, ids=precision_id)
def test_the_byte_model_counts_the_stored_values(prec):
    dtype, stored = (precision.dtype_named(d) if d else None for d in prec)
    S = sp.random(300, 200, density=0.05, random_state=3, format="csr")
    full = CSR.from_arrays(S.data, S.indices, S.indptr, S.shape, dtype=precision.compute_dtype(dtype))
    csr = CSR.from_arrays(S.data, S.indices, S.indptr, S.shape, dtype=dtype).with_value_dtype(stored)
    operand, value = np.dtype(dtype).itemsize, csr.value_dtype.itemsize
    m = S.shape[0]
    assert csr.spmv_bytes() == (m + 1) * 4 + S.nnz * (4 + value) + S.nnz * operand + m * operand
    assert csr.spmv_bytes() < full.spmv_bytes()
    assert csr.dram_bytes() == csr.nbytes + (S.shape[1] + m) * operand


def test_the_precision_rules():
    assert precision.compute_dtype("float16") == np.float32
    assert precision.compute_dtype("float64") == np.float64
    assert precision.unit_roundoff("float16") == 2.0**-11 and precision.unit_roundoff("complex64") == 2.0**-24
    assert precision.stored_dtype("float64", None) == np.float64
    assert precision.stored_dtype("float64", "float32") == np.float32
    assert precision.stored_dtype("float32", "float32") == np.float32
    with pytest.raises(ValueError, match="narrower dtype than the matrix's only, here float16"):
        precision.stored_dtype("float32", "float64")
    with pytest.raises(ValueError, match="here none"):
        precision.stored_dtype("complex128", "float32")
    if precision.BFLOAT16 is None:
        with pytest.raises(TypeError, match="ml_dtypes"):
            precision.dtype_named("bfloat16")
    else:
        assert precision.is_half(precision.dtype_named("bfloat16"))


@pytest.mark.parametrize("prec", PRECISIONS, ids=precision_id)
def test_a_cpu_matrix_in_every_precision(prec):
    dtype, stored = prec
    S = sp.random(120, 90, density=0.1, random_state=5, format="csr", dtype=np.float32)
    before = S.data.copy()
    A = SparseMatrix(S, "csr", device="cpu", dtype=dtype, value_dtype=stored)
    np.testing.assert_array_equal(S.data, before)
    assert A.dtype == precision.dtype_named(dtype) and A.value_dtype == precision.dtype_named(stored or dtype)
    x = random_operand(np.random.default_rng(2), (90,), A.dtype)
    stored_values = A.to_scipy()
    assert stored_values.dtype == precision.compute_dtype(A.dtype)
    y = A @ x
    assert y.dtype == A.dtype
    assert_within_precision(y, stored_values, x, A.dtype)
    # alpha and beta are in the arithmetic dtype: 1e-5 is not rounded to a half's 1.0014e-05 first
    out = np.ones(120, dtype=A.dtype)
    A.matvec(x, out=out, alpha=1e-5, beta=0.5)
    assert_within_precision(out, stored_values, x, A.dtype, 1e-5, 0.5, np.ones(120))
    # its transpose and a converted copy keep the storage
    assert A.T.value_dtype == A.value_dtype and A.T.dtype == A.dtype
    assert_within_precision(A.T @ np.ones(120, A.dtype), stored_values.T, np.ones(120), A.dtype)


def test_a_value_past_the_stored_range_is_refused():
    S = sp.csr_array(np.array([[1.0, 7e4], [0.0, 2.0]]))
    with pytest.raises(ValueError, match=r"value 70000.0 \(entry 1\) is past the largest float16"):
        SparseMatrix(S, "csr", device="cpu", dtype="float32", value_dtype="float16")
    with pytest.raises(ValueError, match="float64 matrix: values may be stored in a narrower dtype than the "
                                         "matrix's only, here float32"):
        SparseMatrix(S, "csr", device="cpu", value_dtype="float16")
    with pytest.raises(ValueError, match=r"dtype=float16: value 70000.0 \(entry 1\) is past the largest float16"):
        SparseMatrix(S, "csr", device="cpu", dtype="float16")


def test_a_half_matrix_times_a_float32_vector_keeps_its_half_values():
    S = sp.random(50, 40, density=0.2, random_state=1, format="csr", dtype=np.float32)
    A = SparseMatrix(S, "csr", device="cpu", dtype="float16")
    x = random_operand(np.random.default_rng(1), (40,), np.float32)
    y = A @ x  # the product in float32 (numpy.result_type), of the half values
    assert y.dtype == np.float32
    wide = A._kept[("dtype", "float32")]
    assert wide.dtype == np.float32 and wide.value_dtype == np.float16
    assert_within_precision(y, A.to_scipy(), x, np.float32)


def test_the_kernels_declare_their_precisions():
    from cocktail import kernels
    from cocktail.kernels.spec import EVERY_PRECISION, WIDE_OPERANDS, precision_name

    assert precision_name(np.float16) == "f16"
    assert precision_name(np.float64, np.float32) == "mixed<double, float>"
    assert precision_name(np.float32, np.float16) == "mixed<float, f16>"
    for name in ("csr_scalar", "csr_vector", "csr_stream", "csr_merge", "ell", "sell", "dia", "bcsr",
                 "coo_segmented", "hyb"):
        assert kernels.get(name).precisions == EVERY_PRECISION, name
    assert kernels.get("coo_atomic").precisions == WIDE_OPERANDS  # atomics into y: float and double only
    assert "csr_vector<f16, int, 8, true, 0>" in kernels.get("csr_vector").all_expressions()
    assert "ell<mixed<double, float>, long long>" in kernels.get("ell").all_expressions()
    assert "csr_vector<cdouble, long long, 32, false, 0>" in kernels.get("csr_vector").all_expressions()
    assert precision_name(np.complex64) == "cfloat" and kernels.get("coo_atomic").precisions[-1] == "cdouble"
    assert "csr_spmm" in kernels.block_names() and not any(
        "f16" in e for e in kernels.get_block("csr_spmm").all_expressions())  # block kernels: plain only
    from cocktail.kernels import source

    for dtype in ("float16", "float32", "float64", "complex64", "complex128"):  # y = beta*y ahead of the COO kernels
        assert f"scale_y<{precision_name(dtype)}>" in source.HELPERS["scale_y"], dtype
    half = get("coo").from_csr(CSR.from_arrays(np.ones(2), np.array([0, 1]), np.array([0, 1, 2]), (2, 2),
                                               dtype="float16"))
    assert not kernels.get("coo_atomic").takes(half) and kernels.get("coo_segmented").takes(half)
    from cocktail.tuning.kernel_rules import choose_kernel

    assert choose_kernel(half) == "coo_segmented"


def test_the_planner_scales_by_the_bytes_an_entry_moves():
    from cocktail.auto import planner

    assert planner.entry_share("float64", "int32") == 1.0
    assert planner.entry_share("float64", "int32", "float32") == pytest.approx(0.8)
    assert planner.entry_share("float16", "int32") == pytest.approx(8 / 12)
    assert planner.entry_share("float32", "int32", "float16") == pytest.approx(10 / 12)
    assert planner.pattern_share("float64", "int32") == pytest.approx(0.6)


@pytest.mark.parametrize("prec", PRECISIONS, ids=precision_id)
def test_made_matrices_keep_the_precision(prec):
    dtype, stored = prec
    S = sp.random(60, 40, density=0.2, random_state=7, format="csr", dtype=np.float32)
    A = SparseMatrix(S, "ell", device="cpu", dtype=dtype, value_dtype=stored, transpose="scatter")
    u = random_operand(np.random.default_rng(3), (60,), A.dtype)
    assert_within_precision(A.T @ u, A.to_scipy().T, u, A.dtype)  # SciPy multiplies the widened values
    again = SparseMatrix(A, "csr", device="cpu")  # a matrix of a matrix keeps its dtype and storage
    assert again.dtype == A.dtype and again.value_dtype == A.value_dtype
    for made in (A * 2, -A, A.copy()):
        assert made.dtype == A.dtype and made.value_dtype == A.value_dtype
    np.testing.assert_array_equal((A * 2).to_scipy().toarray(), 2 * A.to_scipy().toarray())  # exact: a power of 2


def test_a_half_matrix_scales_in_float32_and_refuses_an_overflow():
    S = sp.csr_array(np.array([[1e-3, 0.0], [2e-3, 0.5]]))
    A = SparseMatrix(S, "csr", device="cpu", dtype="float16")
    scaled = A * 7e4  # 70, 140 and 35000 fit float16, though 7e4 itself does not
    np.testing.assert_allclose(scaled.to_scipy().toarray()[:, 0], [70.0, 140.0], rtol=2e-3)
    with pytest.raises(ValueError, match=r"A \* 200000.0 in float16: value 100000.0 \(entry 2\) is past the largest "
                                         "float16"):
        A * 2e5  # 0.5 * 2e5 = 1e5 does not fit


def test_float64_values_round_once_to_bfloat16():
    if precision.BFLOAT16 is None:
        pytest.skip("bfloat16 needs ml_dtypes, an optional dependency not installed here")
    x = np.array([1 + 2**-8 + 2**-30, -(1 + 2**-8 + 2**-30), 1 + 2**-8, 1e300, np.nan, -0.0])
    got = precision.rounded(x, precision.BFLOAT16).astype(np.float64)
    # 1 + 2**-8 is halfway between 1 and 1 + 2**-7 (ties to even: 1); a hair above it rounds up, once
    np.testing.assert_array_equal(got[:3], [1 + 2**-7, -(1 + 2**-7), 1.0])
    assert np.isinf(got[3]) and np.isnan(got[4]) and np.signbit(got[5])


def test_half_operands_of_two_kinds_are_refused_by_name():
    if precision.BFLOAT16 is None:
        pytest.skip("bfloat16 needs ml_dtypes, an optional dependency not installed here")
    A = SparseMatrix(sp.eye(3, format="csr"), "csr", device="cpu", dtype="bfloat16")
    with pytest.raises(TypeError, match="x has dtype float16, which does not mix with the matrix dtype bfloat16"):
        A @ np.ones(3, np.float16)
