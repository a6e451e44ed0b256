"""format="auto" on the GPU: the planner's plans built and run, tune="measure", the decision cache, calibrate.

Marked ``gpu``: skipped where CuPy sees no CUDA device.  The planner runs on a modelled profile
(``test_planner.model_profile``) so that these tests do not depend on a shipped one.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import cocktail
from cocktail import SparseMatrix
from cocktail.auto import profile, variants
from test_planner import model_profile

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy") if cocktail.arrays.cuda_available() else None


def _diagonals_plus_random(n=300_000, extra=1, seed=1):
    rng = np.random.default_rng(seed)
    band = sp.diags([1.0] * 5, [-2, -1, 0, 1, 2], shape=(n, n), format="coo")
    rows, cols = rng.integers(0, n, extra * n), rng.integers(0, n, extra * n)
    data = np.r_[band.data, rng.standard_normal(extra * n)]
    return sp.csr_array((data, (np.r_[band.row, rows], np.r_[band.col, cols])), shape=(n, n))


def _check_product(A, S, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(S.shape[1]).astype(dtype)
    y0 = rng.standard_normal(S.shape[0]).astype(dtype)
    y = cupy.asarray(y0)
    A.matvec(cupy.asarray(x), out=y, alpha=2.0, beta=-0.5)
    want = 2.0 * (S.astype(np.float64) @ x.astype(np.float64)) - 0.5 * y0
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(y.get(), want, rtol=tol, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("which", ["stencil", "cocktail", "tiny", "powerlaw"])
def test_auto_builds_and_runs_its_plan(modelled, which, dtype):
    if which == "stencil":
        S = sp.diags([-1.0, -1.0, 4.0, -1.0, -1.0], [-300, -1, 0, 1, 300], shape=(90_000, 90_000), format="csr")
    elif which == "cocktail":
        S = _diagonals_plus_random()
    elif which == "tiny":
        S = sp.random(200, 150, density=0.05, format="csr", random_state=2)
    else:
        rng = np.random.default_rng(4)
        lengths = np.minimum(rng.zipf(1.7, 30_000), 3_000)
        rows = np.repeat(np.arange(30_000), lengths)
        S = sp.csr_array((rng.standard_normal(rows.size), (rows, rng.integers(0, 30_000, rows.size))),
                         shape=(30_000, 30_000))
    S = S.astype(dtype)
    A = SparseMatrix(S)  # format="auto" is the default
    assert A.auto is not None and A.auto.tune == "auto"
    plan = A.auto.plan
    if plan.single:
        assert A.kernel == plan.parts[0].kernel
    else:
        assert A.format == "cocktail" and A.kernel == "+".join(p.kernel for p in plan.parts)
    modelled_choice = A.auto.planning.chosen
    if which == "stencil":
        assert modelled_choice.single and variants.get(modelled_choice.parts[0].variant).category == "diagonal"
    if which == "cocktail":
        assert not modelled_choice.single and modelled_choice.parts[0].selector[0] == "diagonals"
    assert plan is modelled_choice  # nothing is timed at construction: the model's plan runs first
    _check_product(A, S, dtype)
    text = A.explain()
    assert "candidates" in text and plan.label(A.nnz) in text


def test_measure_times_candidates_and_caches_the_decision(modelled):
    S = _diagonals_plus_random(n=100_000)
    A = SparseMatrix(S, tune="measure")
    report = A.auto
    assert report.tune == "measure" and not report.cached and report.measure_s > 0
    measured = [c for c in report.planning.candidates if c.measured_us is not None]
    assert len(measured) >= 2 and report.plan.measured_us == min(c.measured_us for c in measured)
    _check_product(A, S, np.float64)
    B = SparseMatrix(S * 3.0, tune="measure")  # same structure: the decision is reused, nothing measured
    assert B.auto.cached and B.auto.measure_s == 0 and B.auto.plan.parts == report.plan.parts
    assert "decision cache" in B.explain()
    _check_product(B, S * 3.0, np.float64)


def test_modelled_decisions_are_cached_and_measured_ones_serve_both(modelled):
    S = _diagonals_plus_random(n=100_000)
    A = SparseMatrix(S)
    assert not A.auto.cached and A.auto.planning is not None
    assert 0 < A.auto.features_s < A.auto.analysis_s  # the features are a part of the analysis
    B = SparseMatrix(S * 2.0)  # same structure: no features, no planning, no race
    assert B.auto.cached and B.auto.planning is None and B.auto.measure_s == 0
    assert B.auto.plan.parts == A.auto.plan.parts and 0 < B.auto.analysis_s < A.auto.analysis_s
    _check_product(B, S * 2.0, np.float64)
    M = SparseMatrix(S, tune="measure")  # a modelled decision never stands for a measured one
    assert not M.auto.cached and M.auto.measure_s > 0
    C = SparseMatrix(S)  # the measured decision serves tune="auto" too
    assert C.auto.cached and C.auto.plan.parts == M.auto.plan.parts
    own = SparseMatrix(S, vendor=False)  # another key: decided afresh
    assert not own.auto.cached


def test_auto_is_graph_capturable(modelled):
    S = _diagonals_plus_random(n=50_000)
    A = SparseMatrix(S)
    x = cupy.ones(S.shape[1])
    y = cupy.zeros(S.shape[0])
    with A.bind(x, out=y) as product:
        product()
        cupy.cuda.get_current_stream().synchronize()
    np.testing.assert_allclose(y.get(), S @ np.ones(S.shape[1]), rtol=1e-10)


def test_tune_needs_auto_and_a_known_value(modelled):
    S = sp.eye(100, format="csr")
    with pytest.raises(ValueError, match="tune"):
        SparseMatrix(S, format="csr", tune="measure")
    with pytest.raises(ValueError, match="tune"):
        SparseMatrix(S, tune="fast")
    with pytest.raises(TypeError, match="auto"):
        SparseMatrix(S, max_fill=3)


def test_calibrate_writes_a_profile_the_planner_reads(tmp_path, monkeypatch):
    from cocktail.auto import calibration as calibrate

    monkeypatch.setenv("COCKTAIL_CACHE", str(tmp_path))
    monkeypatch.setitem(calibrate.GRIDS, "quick", ((1 << 10, 1 << 14), (1, 8), (64,), 1 << 20))
    seen = []
    prof = calibrate.run("quick", ("float64",),
                         only=["csr_scalar", "csr_vector(t=32)", "dia", "sell(C=32,t=2)", "dia_vi"],
                         progress=lambda done, total, text: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1]
    assert prof.launch_us["float64"] > 0
    assert len(prof.samples["float64"]["dia_vi"]) == len(prof.samples["float64"]["dia"])  # none refused
    assert len(prof.samples["float64"]["csr_scalar"]) == 4 and len(prof.samples["float64"]["csr_vector(t=32)"]) == 6
    for rows, per_row, us in prof.samples["float64"]["csr_scalar"]:  # a prediction at a sample gives it back
        want = max(us, prof.launch_us["float64"])
        assert prof.predict_us("csr_scalar", "float64", rows, rows * per_row) == pytest.approx(want)
    profile.forget()
    again = profile.for_device(profile.current_device())  # the user's profile, found by its device key
    assert again.samples == profile.Profile.load(again.source).samples and not again.notice
    # resumable: a second run with nothing left to sample measures nothing new
    before = dict(prof.samples)
    prof2 = calibrate.run("quick", ("float64",), only=["csr_scalar", "dia"])
    assert sorted(prof2.samples["float64"]["csr_scalar"]) == sorted(before["float64"]["csr_scalar"])
    profile.forget()


@pytest.mark.parametrize("values", [None, 8])
@pytest.mark.parametrize("pattern", ["rows", "band", "blocks"])
def test_synthetic_patterns(pattern, values):
    from cocktail.auto import calibration as calibrate

    point = calibrate.Point(pattern, 1000, 8, (2, 4) if pattern == "blocks" else None, values)
    data, indices, indptr = calibrate.synthetic(point, np.float64)
    S = sp.csr_array((data.get(), indices.get(), indptr.get()), shape=(1000, 1000))
    assert S.has_canonical_format and S.nnz == S.count_nonzero()
    assert len(np.unique(S.data)) == (8 if values else S.nnz)
    lengths = np.diff(S.indptr)
    if pattern == "rows":
        assert (lengths == 8).all()
    elif pattern == "band":
        offsets = np.unique(S.tocoo().col - S.tocoo().row)
        assert offsets.tolist() == list(range(-4, 4))
    else:
        assert (lengths == 8).all()
        coo = S.tocoo()
        assert (coo.col % 4 == 0).sum() == S.nnz // 4  # whole 1x4 units


@pytest.fixture
def vendor_fastest(monkeypatch, tmp_path):
    """A modelled profile in which cuSPARSE's CSR algorithm is the fastest flat kernel by far."""
    monkeypatch.setenv("COCKTAIL_CACHE", str(tmp_path))
    prof = model_profile()
    for dt in prof.samples:
        for key, samples in prof.samples[dt].items():
            if key != "cusparse_csr(alg=1)" and variants.get(key).pattern == "rows":
                prof.samples[dt][key] = [[m, k, 5 * us] for m, k, us in samples]
    monkeypatch.setattr(profile, "for_device", lambda device: prof)
    return prof


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_auto_delegates_to_cusparse_and_says_so(vendor_fastest, dtype):
    S = sp.random_array((20_000, 20_000), density=5e-4, format="csr", rng=np.random.default_rng(5)).astype(dtype)
    A = SparseMatrix(S)
    assert A.kernel == "cusparse_csr" and A.auto.plan.delegates and not A.deterministic
    assert "delegates: cusparse_csr(alg=1) to cuSPARSE's cusparseSpMV" in A.explain().replace("\n    ", " ")
    _check_product(A, S, dtype)
    own = SparseMatrix(S, vendor=False)
    assert "cusparse" not in own.kernel and not own.auto.plan.delegates and "delegates" not in own.explain()
    _check_product(own, S, dtype)
    steady = SparseMatrix(S, deterministic=True)  # cuSPARSE's deterministic algorithm, or one of ours
    assert steady.deterministic and "cusparse_csr(alg=1)" not in steady.auto.plan.detail()
    _check_product(steady, S, dtype)
    x, y = cupy.ones(S.shape[1], dtype=dtype), cupy.zeros(S.shape[0], dtype=dtype)
    p = A.bind(x, out=y, alpha=2.0)  # the vendor's call is captured in the bound product's graph
    cupy.cuda.Stream.null.synchronize()
    p()
    p.stream.synchronize()
    np.testing.assert_allclose(y.get(), 2.0 * (S.astype(np.float64) @ np.ones(S.shape[1])), rtol=1e-4)


@pytest.fixture
def vendor_close(monkeypatch, tmp_path):
    """A modelled profile in which cuSPARSE's CSR algorithm is predicted a little slower than csr_stream
    (the same balanced work), and every other flat kernel far slower: format='auto' plans csr_stream and
    races it against cuSPARSE."""
    monkeypatch.setenv("COCKTAIL_CACHE", str(tmp_path))
    prof = model_profile()
    for dt in prof.samples:
        base = prof.samples[dt]["csr_stream(k=8)"]
        for key in list(prof.samples[dt]):
            if key == "cusparse_csr(alg=1)":
                prof.samples[dt][key] = [[m, k, 1.2 * us] for m, k, us in base]
            elif key != "csr_stream(k=8)":
                prof.samples[dt][key] = [[m, k, 10 * us] for m, k, us in prof.samples[dt][key]]
    monkeypatch.setattr(profile, "for_device", lambda device: prof)
    return prof


def test_auto_tunes_on_the_users_products_against_a_close_vendor_kernel(vendor_close, monkeypatch):
    """Nothing is timed at construction; the user's products time the plan, then its close vendor rival, and the
    matrix keeps the faster one (moving only to one measured faster), caches it and says so in explain(); a product
    bound before the tuning moved keeps its plan, and its answers."""
    import json

    from cocktail.auto import decisions, online

    monkeypatch.setattr(online, "BUDGET", 1.0)  # let the rival's build be paid for by the first products
    S = sp.random_array((50_000, 50_000), density=2e-4, format="csr", rng=np.random.default_rng(6))
    A = SparseMatrix(S)
    report = A.auto
    assert report.planning.chosen.parts[0].variant == "csr_stream(k=8)"
    assert report.plan is report.planning.chosen and report.measure_s == 0 and not report.measured
    assert "tuning: on the matrix's own products, from the first (none yet)" in A.explain().replace("\n    ", " ")
    x = cupy.asarray(np.random.default_rng(1).standard_normal(S.shape[1]))
    expected = S @ cupy.asnumpy(x)
    bound_y = cupy.zeros(S.shape[0])
    bound = A.bind(x, out=bound_y)  # captured now, on the model's plan
    first_kernel = A.kernel
    for _ in range(400):
        y = A @ x
        np.testing.assert_allclose(cupy.asnumpy(y), expected, rtol=1e-10, atol=1e-10)
    assert A._planned.tuner is None, report.tuning  # stopped
    assert {"cusparse_csr(alg=1)", report.planning.chosen.detail()} <= set(report.measured)
    moved = [words for _, words in report.tuning if words.startswith("moved to")]
    assert (report.plan is not report.planning.chosen) == bool(moved)
    assert A.kernel == report.plan.parts[0].kernel
    cupy.get_default_memory_pool().free_all_blocks()  # what a move retired is gone; the bound plan is kept
    bound_y.fill(np.nan)
    bound()
    np.testing.assert_allclose(cupy.asnumpy(bound_y), expected, rtol=1e-10, atol=1e-10)
    assert first_kernel == report.planning.chosen.parts[0].kernel
    explained = A.explain().replace("\n      ", " ")
    assert "tuning on the matrix's own products:" in explained and "done after" in explained
    _check_product(A, S, np.float64)
    decisions.flush()  # written aside: wait for it
    stored = json.loads(decisions.path().read_text())
    assert any("|auto|" in k for k in stored)  # the tuned decision is kept ...
    again = SparseMatrix(S)  # ... and the next matrix of the structure starts from it, untuned
    assert again.auto.cached and again.auto.plan.parts == report.plan.parts and again._planned.tuner is None
    with decisions.using(decisions.OFF):
        fixed = SparseMatrix(S, tune="model")  # the model's plan, never tuned
        assert not fixed.auto.cached and fixed._planned.tuner is None and fixed.auto.tuning is None
        steady = SparseMatrix(S, deterministic=True)  # never moves either
        assert steady._planned.tuner is None


def test_a_modelled_decision_from_the_cache_is_still_tuned(vendor_close, monkeypatch):
    from cocktail.auto import online

    monkeypatch.setattr(online, "BUDGET", 1.0)
    S = sp.random_array((50_000, 50_000), density=2e-4, format="csr", rng=np.random.default_rng(6))
    SparseMatrix(S, tune="model")  # stores the modelled decision
    A = SparseMatrix(S)
    assert A.auto.cached and A.auto.planning is None and A._planned.tuner is not None
    x = cupy.ones(S.shape[1])
    for _ in range(5000):  # the analysis (features and planning, a few ms) is paid for first, then the rival
        A @ x
        if A._planned.tuner is None:
            break
    assert A._planned.tuner is None, A.auto.tuning
    assert "cusparse_csr(alg=1)" in A.auto.measured  # analysed, then tuned
