"""Host-side logic of the blocked-format kernels bcsr, bell and sbell: registry, parameter rules, checks."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp
from kernel_configs import KERNEL_CONFIGS

from cocktail import SparseMatrix
from cocktail.kernels import bcsr, blocks, get
from cocktail.kernels.bcsr import rules as bcsr_rules
from cocktail.tuning import kernel_rules as rules
from cocktail.tuning import launch_rules
from oracle import fake_props

NAMES = ("bcsr", "bell", "sbell")
CLSPMV_SHAPES = ((1, 4), (2, 4), (4, 4), (8, 4), (1, 8), (2, 8), (4, 8), (8, 8), (2, 2), (3, 3))


def _storage(name, S=None, **params):
    if S is None:
        S = sp.random_array((50, 41), density=0.1, format="csr", random_state=4)
    return SparseMatrix(S, format=name, device="cpu", max_fill=None, **params).storage


def _configure(name, storage, params=None):
    return launch_rules.configure(get(name), storage, params or {}, fake_props())


@pytest.mark.parametrize("name", NAMES)
def test_registered_with_every_block_shape(name):
    spec = get(name)
    assert spec.formats == (name,) and spec.source == name and spec.deterministic
    exprs = spec.expressions("double", "long long")
    assert len(exprs) == 25 and len(set(exprs)) == 25
    for r, c in CLSPMV_SHAPES:
        assert f"{name}<double, long long, {r}, {c}>" in exprs
    assert len(spec.all_expressions()) == 25 * 2 * len(spec.precisions)  # shapes x index types x precisions
    assert set(blocks.BLOCK_SHAPES) == {(r, c) for r in (1, 2, 3, 4, 8) for c in (1, 2, 3, 4, 8)}


def test_parameters():
    assert get("bcsr").defaults == {"threads_per_superrow": None, "ldg": True, "block_threads": None}
    assert get("bell").defaults == {"ldg": True, "block_threads": None}
    assert get("sbell").defaults == {"ldg": True, "block_threads": None}
    with pytest.raises(TypeError, match="its parameters are: block_threads, ldg"):
        get("sbell").resolve_params({"threads_per_superrow": 4})


@pytest.mark.parametrize("name", NAMES)
def test_default_kernel_of_each_blocked_format(name):
    assert rules.format_kernels()[name] == name
    assert rules.choose_kernel(_storage(name, block=(2, 4))) == name
    complex_storage = _storage(name, sp.random_array((20, 20), density=0.2, format="csr", random_state=1,
                                                     dtype=np.complex128))
    # bcsr's kernel takes complex values; bell's and sbell's take real ones only
    assert rules.choose_kernel(complex_storage) == (name if name == "bcsr" else None)


@pytest.mark.parametrize("name", NAMES)
def test_row_kernel_parameters(name):
    storage = _storage(name, block=(3, 3))
    config = _configure(name, storage, {"ldg": False, "block_threads": 64})
    assert config["ldg"] is False and config["block_threads"] == 64
    assert _configure(name, storage)["block_threads"] == rules.BLOCK_THREADS
    with pytest.raises(ValueError, match=f"{name}: block_threads must be"):
        _configure(name, storage, {"block_threads": 100})
    with pytest.raises(ValueError, match=f"{name}: ldg must be True or False"):
        _configure(name, storage, {"ldg": 1})


@pytest.mark.parametrize("mean,threads", [(0.0, 2), (1.0, 2), (2.0, 2), (2.5, 4), (9.0, 16), (16.0, 16),
                                          (17.0, 32), (500.0, 32)])
def test_bcsr_threads_rule(mean, threads):
    assert bcsr_rules.threads_per_superrow(mean) == threads


def test_bcsr_threads_from_blocks_per_superrow():
    # 1 x 4 blocks of a diagonal band 8 wide: 2 or 3 blocks per superrow, mean above 2.
    S = sp.diags_array([np.ones(100 - abs(k)) for k in range(-4, 4)], offsets=range(-4, 4), format="csr")
    storage = _storage("bcsr", S, block=(1, 4))
    mean = storage.nblocks / (storage.row_ptr.shape[0] - 1)
    assert 2 < mean <= 4
    assert _configure("bcsr", storage)["threads_per_superrow"] == bcsr_rules.threads_per_superrow(mean) == 4
    empty = _storage("bcsr", sp.csr_array((7, 5)), block=(2, 2))
    assert _configure("bcsr", empty)["threads_per_superrow"] == bcsr_rules.BCSR_MIN_THREADS


@pytest.mark.parametrize("given", [1, 2, 4, 8, 16, 32, np.int64(8)])
def test_bcsr_threads_given(given):
    assert _configure("bcsr", _storage("bcsr"), {"threads_per_superrow": given})["threads_per_superrow"] == given


@pytest.mark.parametrize("bad", [0, 3, 64, -4, True, "4"])
def test_bcsr_threads_refused(bad):
    with pytest.raises(ValueError, match="bcsr: threads_per_superrow must be one of"):
        _configure("bcsr", _storage("bcsr"), {"threads_per_superrow": bad})


@pytest.mark.parametrize("name", NAMES)
def test_block_shape_without_instantiation_is_refused(name):
    fake = SimpleNamespace(name=name, block=(16, 4), row_ptr=np.zeros(2, np.int32), nblocks=0,
                           dtype=np.dtype(np.float64), value_dtype=np.dtype(np.float64), index_dtype=np.dtype(np.int32))
    with pytest.raises(ValueError, match=rf"{name}: no instantiation for block \(16, 4\); supported block "
                                         r"shapes: 1x1, 1x2, .*8x8"):
        _configure(name, fake)


def test_vector_loads_need_16_byte_aligned_data():
    def array_at(ptr):
        return SimpleNamespace(data=SimpleNamespace(ptr=ptr))

    assert blocks.vector_loads(array_at(1 << 20)) == 1
    assert blocks.vector_loads(array_at((1 << 20) + 16)) == 1
    assert blocks.vector_loads(array_at((1 << 20) + 8)) == 0
    assert blocks.vector_loads(array_at((1 << 20) + 4)) == 0


def test_gpu_suite_configurations():
    configs = [c for c in KERNEL_CONFIGS if c[0] in NAMES]
    shapes = {name: {c[2]["block"] for c in configs if c[0] == name} for name in NAMES}
    assert set(CLSPMV_SHAPES) <= shapes["bcsr"]
    for name in ("bell", "sbell"):  # every unit width c, hence every vector-load path
        assert {c for _, c in shapes[name]} == {1, 2, 3, 4, 8}
    assert {1, 2, 32} <= {c[3]["threads_per_superrow"] for c in configs if "threads_per_superrow" in c[3]}
    assert any(c[3].get("ldg") is False for c in configs)
    assert {3, 32} <= {c[2]["slice_height"] for c in configs if "slice_height" in c[2]}
    for kernel, fmt, fparams, kparams in configs:
        assert kernel == fmt
        get(kernel).resolve_params(kparams)
        storage = _storage(fmt, **{k: v for k, v in fparams.items() if k != "max_fill"})
        assert storage.block == fparams["block"]
        config = _configure(kernel, storage, kparams)
        assert None not in config.values()
