"""The rules the tuning layer hands to the formats: ``format_params`` and ``format="auto"``."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail import formats
from cocktail.formats import CSR
from cocktail.auto import fixed_rule as auto
from cocktail.tuning.format_rules import format_params
from cocktail.tuning.hyb import bell_garland_ell_width
from oracle import few_values
from cocktail.tuning.pkt import default_packet_rows, default_threads_per_packet
from zoo import ZOO_BY_NAME


def own_rule(lengths):
    return 1


# --- format_params ----------------------------------------------------------------------

@pytest.mark.parametrize("name, dtype, given, added", [
    ("hyb", "float64", {}, {"width_rule": bell_garland_ell_width}),
    ("hyb", "float32", {"align": 1}, {"width_rule": bell_garland_ell_width}),
    ("hyb", "float64", {"ell_width": None}, {"width_rule": bell_garland_ell_width}),
    ("hyb", "float64", {"ell_width": 3}, {}),
    ("hyb", "float64", {"width_rule": own_rule}, {}),
    ("pkt", "float32", {}, {"packet_rows": 4096, "threads_per_packet": 256}),
    ("pkt", "float64", {"max_fill": None}, {"packet_rows": 3072, "threads_per_packet": 256}),
    ("pkt", "complex128", {}, {"packet_rows": 1536, "threads_per_packet": 256}),
    ("pkt", "float64", {"packet_rows": 40}, {"threads_per_packet": 64}),
    ("pkt", "float64", {"packet_rows": np.int64(6)}, {"threads_per_packet": 32}),
    ("pkt", "float64", {"threads_per_packet": 8}, {"packet_rows": 3072}),
    ("pkt", "float64", {"packet_rows": None, "threads_per_packet": None},
     {"packet_rows": 3072, "threads_per_packet": 256}),
    ("pkt", "float64", {"packet_rows": 9, "threads_per_packet": 3}, {}),
    ("csr", "float64", {}, {}),
    ("ell", "float64", {"width": 4, "align": 1}, {}),
    ("bcsr", "float32", {"block": (2, 2)}, {}),
])
def test_format_params_fills_exactly_the_documented_keys(name, dtype, given, added):
    before = copy.copy(given)
    out = format_params(name, np.dtype(dtype), given)
    assert out is not given
    assert given == before and given.keys() == before.keys()  # not mutated
    assert all(out[k] is v for k, v in given.items() if v is not None)  # explicit values kept as they are
    filled = {k: v for k, v in out.items() if k not in given or given[k] is not v}
    assert filled == added


def test_format_params_leaves_explicit_values_alone():
    rows = np.int32(100)
    out = format_params("pkt", "float32", {"packet_rows": rows})
    assert out["packet_rows"] is rows and out["threads_per_packet"] == default_threads_per_packet(100)
    out = format_params("hyb", "float64", {"ell_width": 2, "width_rule": own_rule})
    assert out == {"ell_width": 2, "width_rule": own_rule}
    out = format_params("pkt", "float64", {"packet_rows": 2.5})  # the format reports the bad value
    assert out == {"packet_rows": 2.5}


def test_format_params_accepts_dtype_spellings():
    for dtype in ("float64", np.float64, np.dtype("float64")):
        assert format_params("pkt", dtype, {})["packet_rows"] == default_packet_rows(8)


def test_format_params_covers_every_format():
    rng = np.random.default_rng(4)
    S0 = sp.random_array((30, 30), density=0.2, format="csr", rng=rng)
    for name in formats.names():
        cls = formats.get(name)
        S = few_values(S0, cls.max_values) if cls.max_values else S0
        csr = CSR.from_arrays(S.data, S.indices, S.indptr, S.shape)
        params = {"max_fill": None} if "max_fill" in cls.defaults else {}
        if not cls.standalone:  # the Cocktail: a plan of parts, one of them needing hyb's rule
            params = {"parts": [("hyb", {}, ("row_prefix", 2)), ("csr", {}, ("rest",))]}
        fmt = cls.from_csr(csr, **format_params(name, csr.dtype, params))
        np.testing.assert_array_equal(fmt.to_csr().to_scipy().toarray(), S.toarray())


# --- format="auto" ----------------------------------------------------------------------

def _csr(S):
    S = sp.csr_array(S)
    return CSR.from_arrays(S.data, S.indices, S.indptr, S.shape)


def _skewed():
    lengths = np.r_[np.full(99, 3), 90]
    rows = np.repeat(np.arange(100), lengths)
    cols = np.concatenate([np.arange(k) for k in lengths])
    return sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(100, 100))


def _regular():
    cols = np.random.default_rng(0).integers(0, 100, 400)
    return sp.csr_array((np.ones(400), cols, np.arange(0, 401, 4)), shape=(100, 100))


def _stencil():
    zm = ZOO_BY_NAME["stencil"]
    return sp.csr_array((zm.data, zm.indices, zm.indptr), shape=zm.shape)


@pytest.mark.parametrize("make, gpu", [(_stencil, "dia"), (_regular, "ell"), (_skewed, "hyb"),
                                       (lambda: sp.csr_array((4, 4)), "csr")])
def test_auto_gpu_rule_unchanged(make, gpu):
    csr = _csr(make())
    assert auto.choose_format(csr) == gpu
    assert auto.choose_format(csr, device="cuda") == gpu


@pytest.mark.parametrize("make", [_stencil, _regular, _skewed, lambda: sp.csr_array((4, 4)),
                                  lambda: sp.eye_array(50), lambda: sp.random_array((60, 40), density=0.1, rng=1)])
def test_auto_cpu_picks_csr(make):
    choice = auto.choose_format(_csr(make()), device="cpu")
    assert choice == "csr" and choice in auto.CPU_FORMATS
    assert set(auto.CPU_FORMATS) <= set(formats.names())


def test_auto_refuses_an_unknown_device():
    with pytest.raises(ValueError, match="device must be one of 'cuda', 'cpu', got 'gpu'"):
        auto.choose_format(_csr(sp.eye_array(3)), device="gpu")
    with pytest.raises(TypeError):
        auto.choose_format(_csr(sp.eye_array(3)), "cpu")  # device is keyword-only


def test_fill_estimates_hyb_only_with_a_rule():
    from cocktail.formats.padding import fill_estimates

    csr = _csr(_skewed())
    assert "hyb" not in fill_estimates(csr)
    est = fill_estimates(csr, width_rule=bell_garland_ell_width)
    k = bell_garland_ell_width(csr.row_lengths())
    assert est["hyb"] == (k * 100 + int(np.maximum(csr.row_lengths() - k, 0).sum())) / csr.nnz
    assert fill_estimates(csr, width_rule=lambda lengths: 0)["hyb"] == 1.0
