"""The format builders and reference products are array-module agnostic: CuPy gives NumPy's arrays."""

from __future__ import annotations

import numpy as np
import pytest

import cocktail
from cocktail import reference
from cocktail.formats import CSR, get
from configs import CONFIGS, config_id
from oracle import assert_product_close, build_params, raw_arrays, value_limited
from zoo import ZOO_BY_NAME

pytestmark = pytest.mark.gpu
cupy = pytest.importorskip("cupy") if cocktail.arrays.cuda_available() else None


@pytest.mark.parametrize("zm", [ZOO_BY_NAME[k] for k in ("power_law", "duplicates", "explicit_zeros", "0x0", "wide")],
                         ids=lambda m: m.name)
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_builder_on_gpu_matches_host(config, zm):
    name, params = config
    raw = raw_arrays(zm, "float64", "int32", few=value_limited(name, params))
    params = build_params(name, params, raw[0].dtype)
    host = get(name).from_csr(CSR.from_arrays(*raw, zm.shape), **params)
    dev = get(name).from_csr(CSR.from_arrays(*(cupy.asarray(a) for a in raw), zm.shape), **params)
    assert dev.xp is cupy
    for key, arr in host.arrays().items():
        np.testing.assert_array_equal(dev.arrays()[key].get(), arr, err_msg=key)
    x = np.random.default_rng(0).standard_normal(zm.shape[1])
    assert_product_close(reference.spmv(dev, cupy.asarray(x)).get(), *raw, zm.shape, x)
