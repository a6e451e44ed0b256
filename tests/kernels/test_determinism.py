"""Determinism on the CPU: which products are deterministic, ``deterministic=True`` in the planner,
the kernel rule and the decision cache, and the γ bound that the GPU accuracy tests apply."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail import SparseMatrix, formats, kernels
from cocktail.executors.base import Executor
from cocktail.executors.composed import Composed
from cocktail.auto import decisions, planner, profile, variants
from cocktail.auto.features import compute
from cocktail.tuning.format_rules import format_params
from cocktail.tuning.kernel_rules import choose_kernel, format_kernels
from configs import CONFIGS, config_id
from oracle import assert_within_gamma, exact_product, few_values, gamma, unbounded, value_limited
from test_planner import csr_of, model_profile
from zoo import ZOO


def _spec_kernels(plan) -> set:
    return {part.kernel for part in plan.parts}


def _nondeterministic(plan) -> set:
    return {p.kernel for p in plan.parts if not kernels.get(p.kernel).is_deterministic(p.kernel_params)}


# --- the kernels' declarations and the executors ----------------------------------------------------
def test_nondeterministic_kernels_of_a_product_include_composed_parts():
    atomic, segmented = kernels.get("coo_atomic"), kernels.get("coo_segmented")
    assert kernels.nondeterministic(atomic, {}) == ("coo_atomic",)
    assert kernels.nondeterministic(segmented, {}) == ()
    hyb, pkt, ell = kernels.get("hyb"), kernels.get("pkt"), kernels.get("ell")
    assert hyb.deterministic and pkt.deterministic  # declared for their default coo_kernel
    for coo, want in ((atomic, ("coo_atomic",)), (segmented, ())):
        assert kernels.nondeterministic(hyb, {"parts": {"ell": (ell, {}), "coo": (coo, {})}}) == want
        assert kernels.nondeterministic(pkt, {"rest": (coo, {})}) == want
    assert kernels.nondeterministic(pkt, {"rest": None}) == ()  # no remainder: no COO kernel runs


class _Fake(Executor):
    def __init__(self, kernel, nondeterministic=()):
        self.name, self.kernel, self.nondeterministic = "cuda", kernel, tuple(nondeterministic)


def test_a_composed_product_is_deterministic_only_when_every_part_is():
    det, atomic = _Fake("dia"), _Fake("coo_atomic", ["coo_atomic"])
    assert det.deterministic and not atomic.deterministic
    assert Composed([det, _Fake("csr_scalar")]).deterministic
    mixed = Composed([det, atomic, _Fake("coo_atomic", ["coo_atomic"])])
    assert not mixed.deterministic and mixed.nondeterministic == ("coo_atomic",)


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
@pytest.mark.parametrize("executor", [None, "reference"])
def test_cpu_products_are_deterministic(config, executor):
    name, params = config
    S = sp.random_array((64, 48), density=0.1, format="csr", random_state=0)
    S = few_values(S, value_limited(name, params)) if value_limited(name, params) else S
    A = SparseMatrix(S, format=name, device="cpu", executor=executor, deterministic=True,
                     **unbounded(name, params))
    assert A.deterministic
    assert "  deterministic: yes" in A.explain().splitlines()


def test_deterministic_must_be_a_bool():
    with pytest.raises(TypeError, match="deterministic must be True or False"):
        SparseMatrix(sp.eye_array(3, format="csr"), device="cpu", deterministic="yes")


def test_the_refusal_names_the_kernel_and_its_alternative():
    from cocktail.matrix import _nondeterministic_error

    text = str(_nondeterministic_error(("coo_atomic",)))
    assert "deterministic=True" in text and "coo_atomic sums with floating-point atomics" in text
    assert "coo_segmented" in text
    assert "device='cpu'" in str(_nondeterministic_error(("reference",)))


# --- the kernel rule of a named format ----------------------------------------------------------------
def _stored(name: str):
    S = few_values(sp.random_array((64, 64), density=0.1, format="csr", random_state=1))
    csr = csr_of(S)
    return formats.get(name).from_csr(csr, **format_params(name, csr.dtype, unbounded(name, {})))


@pytest.mark.parametrize("name", [f for f in format_kernels() if f not in ("csr_pattern", "csr_vi")])
def test_the_kernel_rule_picks_a_deterministic_kernel_when_asked(name):
    storage = _stored(name)
    usual, chosen = choose_kernel(storage), choose_kernel(storage, deterministic=True)
    assert kernels.get(chosen).deterministic and name in kernels.get(chosen).formats
    if kernels.get(usual).deterministic:
        assert chosen == usual  # deterministic=True changes nothing where the usual kernel already is
    else:
        assert chosen != usual


def test_coo_gets_coo_segmented():
    storage = _stored("coo")
    assert choose_kernel(storage) == "coo_atomic" and choose_kernel(storage, deterministic=True) == "coo_segmented"


# --- the planner --------------------------------------------------------------------------------------
def _power_law(m: int, a: float, cap: int, seed: int):
    rng = np.random.default_rng(seed)
    lengths = np.minimum(rng.zipf(a, m), cap)
    rows = np.repeat(np.arange(m), lengths)
    return sp.csr_array((rng.standard_normal(rows.size), (rows, rng.integers(0, m, rows.size))), shape=(m, m))


PLANNED = ([(z.name, sp.csr_array((z.data, z.indices, z.indptr), shape=z.shape)) for z in ZOO]
           + [(f"power_law_{m}_{a}", _power_law(m, a, 5000, 1)) for m in (2000, 20000) for a in (1.3, 2.0)])
PROFILES = [model_profile(), *profile.shipped()]


@pytest.mark.exhaustive  # every planned matrix under every shipped profile; the rule: the test after this one
def test_deterministic_plans_hold_only_deterministic_kernels():
    picked_atomic = []
    for name, S in PLANNED:
        csr = csr_of(S)
        if not csr.nnz:
            continue
        feats = compute(csr)
        for prof in PROFILES:
            for dtype in (np.float32, np.float64):
                usual = planner.plan(csr, feats, prof, dtype)
                if _nondeterministic(usual.chosen):
                    picked_atomic.append((name, prof.source, np.dtype(dtype).name))
                planning = planner.plan(csr, feats, prof, dtype, deterministic=True)
                assert planning.candidates
                for plan in planning.candidates:
                    assert not _nondeterministic(plan), (name, prof.source, plan.detail())
                    assert sum(p.nnz for p in plan.parts) == csr.nnz
    # the filter must have had something to remove: some matrix plans coo_atomic without it
    assert picked_atomic


def test_deterministic_plans_keep_coo_through_coo_segmented():
    prof = model_profile(["coo_atomic", "coo_segmented", "csr_scalar"])
    csr = csr_of(_power_law(2000, 1.6, 5000, 2))
    used = {part.variant for p in planner.plan(csr, compute(csr), prof, np.float64, deterministic=True).candidates
            for part in p.parts}
    assert "coo_segmented" in used and "coo_atomic" not in used
    with pytest.raises(ValueError, match="no samples"):  # nothing deterministic sampled: nothing to plan
        planner.plan(csr, compute(csr), model_profile(["coo_atomic"]), np.float64, deterministic=True)


def test_every_nondeterministic_variant_is_left_out():
    c = planner._Costing(compute(csr_of(_power_law(500, 1.6, 100, 3))), model_profile(), np.float64,
                         deterministic=True)
    left_out = {v.key for v in variants.VARIANTS if not kernels.get(v.kernel).is_deterministic(v.kernel_params)}
    assert left_out == {"coo_atomic", "cusparse_csr(alg=1)", "cusparse_coo(alg=1)"}
    assert not any(c.has(key) for key in left_out)
    assert all(c.has(v.key) for v in variants.VARIANTS if v.key not in left_out and v.format != "dia_vi")


def test_decision_cache_keys_apart_deterministic_plans():
    args = ("f" * 32, "model-gpu-sm90-cuda13000", np.float64, np.int32)
    assert decisions.key(*args) != decisions.key(*args, deterministic=True)
    assert decisions.key(*args) == decisions.key(*args, deterministic=False)
    assert decisions.key(*args) != decisions.key(*args, vendor=False)  # our own kernels only: another decision


def test_cusparse_determinism_follows_the_algorithm():
    for name in ("cusparse_csr", "cusparse_coo"):
        spec = kernels.get(name)
        assert spec.vendor and not spec.deterministic  # the default, algorithm 1, sums in varying order
        assert spec.is_deterministic({"alg": 2}) and not spec.is_deterministic({"alg": 1})
        assert kernels.nondeterministic(spec, {"alg": 1}) == (name,)
        assert kernels.nondeterministic(spec, {"alg": 2}) == ()


# --- the γ bound of the accuracy tests ---------------------------------------------------------------
def test_gamma_bound_holds_for_float32_sums_and_catches_a_looser_result():
    assert gamma(1, np.float32) == pytest.approx(2.0 ** -24, rel=1e-6)
    assert gamma(10, np.float64) == pytest.approx(10 * 2.0 ** -53 / (1 - 10 * 2.0 ** -53))
    rng = np.random.default_rng(0)
    S = _power_law(400, 1.5, 300, 4).astype(np.float32)
    x = rng.standard_normal(400).astype(np.float32)
    y0 = rng.standard_normal(400).astype(np.float32)
    want = exact_product(S, x, -1.5, 0.25, y0)
    got = np.float32(-1.5) * (S @ x) + np.float32(0.25) * y0  # SciPy's float32 product: one order of sums
    assert got.dtype == np.float32
    assert_within_gamma(got, want, S, x, np.float32, -1.5, 0.25, y0)
    with pytest.raises(AssertionError, match="γ bound"):  # a float32 rounding of every row is not float64
        assert_within_gamma(got.astype(np.float64) * (1 + 1e-4), want, S, x, np.float64, -1.5, 0.25, y0)

