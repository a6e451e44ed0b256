"""The planner's vectorised costing against the scalar definitions it stands for: the profile's predictions read once
per number of rows (RowPredictions), the row-group tables (_Widths) against GroupWidths and flat_work, and the parts
the planner makes without Part's own __init__."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail.auto import planner, profile, variants
from cocktail.auto.features import WIDTH_CAP, compute, row_groups
from test_planner import _with_scattered, csr_of, model_profile

PROFILES = [*profile.shipped(), model_profile(), _with_scattered(model_profile(), 2.0)]


@pytest.mark.parametrize("prof", PROFILES, ids=lambda p: p.source or "model")
def test_predictions_on_rows_are_the_predictions_of_those_rows(prof):
    rng = np.random.default_rng(2)
    for dt in ("float32", "float64"):
        pred = prof.predictions(dt)
        n = 1500
        v = rng.integers(0, len(pred.index), n)
        tail = pred.read(planner.TAIL_ROWS)
        for rows in (1.0, 300.0, float(planner.TAIL_ROWS), 170_998.0, 3e7):
            on = pred.on_rows(rows, tail)
            slots = rows * np.exp(rng.uniform(-3, 9, n))
            slots[:40] = 0
            tails = planner.TAIL_ROWS * np.exp(rng.uniform(-3, 9, n))
            for scatter in (0.0, 0.4, 1.0):
                main, tail_us = on.each(v, [slots, tails], scatter)
                np.testing.assert_array_equal(main, pred.us(v, np.full(n, rows), slots, scatter))
                np.testing.assert_array_equal(tail_us, pred.us(v, np.full(n, float(planner.TAIL_ROWS)), tails, scatter))


def _groups():
    rng = np.random.default_rng(1)
    lengths = np.minimum(rng.zipf(1.5, 5000), 3 * WIDTH_CAP)  # some rows past the cap
    lengths[::7] = 0
    short = rng.integers(0, 9, 3000)  # no row past the cap
    return [row_groups(lengths), row_groups(short), row_groups(np.full(100, 5))]


@pytest.mark.parametrize("groups", _groups(), ids=["long-rows", "short-rows", "equal-rows"])
def test_width_tables_answer_as_the_row_groups(groups):
    table = planner._Widths(groups)
    g1 = groups[1]
    limits = [1, 2, 5, 16, 64, 700, 5000]
    assert table.covered(limits) == [g1.covered(w) for w in limits]
    m = int(g1.counts.sum())
    for share in (1.0, 3.0, 7.0, 1e9):
        need = max(1, math.ceil(m / share))
        reached = np.cumsum(g1.counts[::-1])[::-1][:g1.cap + 1]  # rows as long as each width or longer
        want = int(np.nonzero(reached >= need)[0].max()) if (reached >= need).any() else 0
        assert table.widest_reached(need) == want, share


@pytest.mark.parametrize("groups", _groups(), ids=["long-rows", "short-rows", "equal-rows"])
def test_flat_work_in_one_call_is_flat_works(groups):
    catalog = planner._catalog(model_profile(), "float64", False, True, None)
    table = planner._Widths(groups)
    flat = [catalog.position[k] for k in catalog.flat]
    ids, keys = np.array(flat), [catalog.keys[i] for i in flat]
    m, nnz = 5000, int(groups[1].over_sum) + 12_345
    slots, tails = table.work(catalog, ids, nnz, 0, planner._NO_LIMIT, m)
    assert list(zip(slots.tolist(), tails.tolist())) == [
        planner.flat_work(variants.get(k), groups, nnz, m) for k in keys]
    skips = np.array([1, 3, 4, 17] * len(ids))[:len(ids)]
    slots, tails = table.work(catalog, ids, nnz, skips, planner._NO_LIMIT, m)
    assert list(zip(slots.tolist(), tails.tolist())) == [
        planner.flat_work(variants.get(k), groups, nnz, m, int(s)) for k, s in zip(keys, skips)]
    prefix = [catalog.position[k] for k in catalog.flat if variants.get(k).format in planner.PREFIX_FORMATS]
    widths = [1, 2, 3, 8, 12, 100, 512]
    slots, tails = table.prefixes(catalog, np.array(prefix), np.array(widths), m)
    for i, k in enumerate(catalog.keys[p] for p in prefix):
        want = [planner.flat_work(variants.get(k), groups, nnz, m, 0, w) for w in widths]
        assert list(zip(slots[i].tolist(), tails[i].tolist())) == want, k


def test_the_planners_parts_are_parts():
    made = planner.Part.planned("sell(C=32,t=2)", ("row_prefix", 4), 120, 256, 3.5, {"max_fill": None})
    want = planner.Part("sell(C=32,t=2)", ("row_prefix", 4), 120, 256, 3.5, {"max_fill": None})
    assert made == want and hash(made) == hash(want) and repr(made) == repr(want)
    assert list(vars(made).items()) == list(vars(want).items())
    plain = planner.Part.planned("csr_scalar", ("rest",), 10, 12, 1.0)
    assert plain == planner.Part("csr_scalar", ("rest",), 10, 12, 1.0) and plain.format_params == {}


def test_the_whole_matrix_is_costed_in_the_variants_order():
    S = sp.random(3000, 3000, density=0.003, format="csr", random_state=5) + sp.eye(3000)
    c = planner._Costing(compute(csr_of(S)), model_profile(), np.float64)
    whole = planner._whole_matrix(c, c.f)
    order = [v.key for v in variants.VARIANTS if v.key in whole]
    assert list(whole) == order and len(whole) > 20
    for key, (slots, t) in whole.items():
        got = planner.work(variants.get(key), c.f)
        assert got is not None and slots == got[0] and t == pytest.approx(c.time(key, got[0], got[1]), rel=1e-12)
