"""The block kernels of the blocked formats (bcsr_spmm, bell_spmm, sbell_spmm) on the CPU: found by format and
SpMV kernel, their instantiation grid, configured for k and the block's rows as the rule ``block_spmm_shape``
says, bad parameters refused, and every binder's arguments matching its kernel's signature.

The kernels' indexing runs on the host in test_kernel_blocks_spmm_emulated.py (their CUDA sources under
g++ with AddressSanitizer) and on the GPU in test_gpu_spmm_formats.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from test_block_kernels_formats import _c_type, _Recorded, _signature

from cocktail import SparseMatrix, kernels
from cocktail.formats.block_grid import BLOCK_SIZES
from cocktail.kernels import blocks, blocks_spmm
from cocktail.kernels.block_operands import BlockOperands
from cocktail.kernels.csr_spmm import LANES
from cocktail.tuning import kernel_rules
from cocktail.tuning.launch_rules import RULES
from oracle import fake_props

#: Format -> the block kernel extending its SpMV kernel (of the same name).
BLOCK_KERNELS = {"bcsr": "bcsr_spmm", "bell": "bell_spmm", "sbell": "sbell_spmm"}


def _storage(fmt: str, block=(2, 4), dtype="float64", index_dtype="int32", **params):
    S = sp.random_array((50, 41), density=0.15, format="csr", random_state=4, dtype=dtype)
    return SparseMatrix(S, format=fmt, device="cpu", index_dtype=index_dtype, max_fill=None, block=block,
                        **params).storage


def _configure(fmt: str, storage, params: dict) -> dict:
    spec = kernels.get_block(BLOCK_KERNELS[fmt])
    return spec.configure(spec, storage, spec.resolve_params(params), fake_props(), RULES)


@pytest.mark.parametrize("fmt", list(BLOCK_KERNELS))
def test_the_block_kernel_is_found_by_format_and_spmv_kernel(fmt):
    block = BLOCK_KERNELS[fmt]
    assert kernels.block_for(fmt, kernels.get(fmt)).name == block
    spec = kernels.get_block(block)
    assert spec.formats == (fmt,) and spec.default_for == (fmt,) and spec.extends == ("blocks",)
    assert spec.source == block and spec.deterministic and not spec.profile
    more = {"prepared": None} if fmt == "sbell" else {}
    assert spec.defaults == {"operands": None, "lanes": None, "columns_per_lane": None, **more, "ldg": True,
                             "block_threads": None}
    assert (spec.prepare is not None) == (fmt == "sbell")
    assert block in kernels.block_names() and block not in kernels.names()  # no SpMV path lists it
    assert kernels.block_for("csr", kernels.get(fmt)) is None and kernels.block_for(fmt, kernels.get("csr_vector")) is None


@pytest.mark.parametrize("block", list(BLOCK_KERNELS.values()))
def test_the_instantiation_grid(block):
    # Every block shape the SpMV kernels take, with 1, 2 and 4 columns per lane up to 16 partial sums a lane
    # (1 and 2 for 8-row blocks); the lanes are a launch argument.
    spec = kernels.get_block(block)
    assert blocks_spmm.COLUMNS_PER_LANE == {1: (1, 2, 4), 2: (1, 2, 4), 3: (1, 2, 4), 4: (1, 2, 4), 8: (1, 2)}
    exprs = spec.expressions("double", "long long")
    assert len(exprs) == len(set(exprs)) == 5 * (4 * 3 + 2)
    assert exprs == [f"{block}<double, long long, {r}, {c}, {t}>" for r, c in blocks.BLOCK_SHAPES
                     for t in blocks_spmm.COLUMNS_PER_LANE[r]]
    assert f"{block}<float, int, 8, 8, 2>" in spec.all_expressions()
    assert f"{block}<float, int, 8, 8, 4>" not in spec.all_expressions()
    assert len(spec.all_expressions()) == 4 * 70
    assert all(r * c <= blocks_spmm.MAX_SUMS for r, cs in blocks_spmm.COLUMNS_PER_LANE.items() for c in cs)
    storage = _storage(block.removesuffix("_spmm"), block=(8, 3))
    assert blocks_spmm.block_shapes(storage) == [(t, c) for t in LANES for c in (1, 2)]


@pytest.mark.parametrize("fmt", list(BLOCK_KERNELS))
def test_configure_takes_the_rules_shape_for_k_and_the_blocks_rows(fmt):
    for r in BLOCK_SIZES:
        storage = _storage(fmt, block=(r, 3))
        for k in (1, 2, 3, 8, 16, 33, 64, 256, 999):
            for operands in (BlockOperands.row_major(k), BlockOperands(k, (1, 5000), (1, 4000))):
                config = _configure(fmt, storage, {"operands": operands})
                shape = (config["lanes"], config["columns_per_lane"])
                assert shape == kernel_rules.block_spmm_shape(k, operands.x_row_major, r,
                                                              blocks_spmm.COLUMNS_PER_LANE[r])
                assert shape in blocks_spmm.block_shapes(storage)
                assert r * shape[1] <= kernel_rules.BLOCK_SPMM_MAX_SUMS
                lanes, columns = kernel_rules.spmm_shape(k, operands.x_row_major)
                # the rule's tile of columns, narrower strips over more lanes where it holds too many sums
                assert shape[0] * shape[1] == min(lanes * columns, kernel_rules.SPMM_MAX_LANES * shape[1])
                assert config["operands"] == operands and config["ldg"] is True
                assert config["block_threads"] == kernel_rules.BLOCK_THREADS
    given = _configure(fmt, _storage(fmt, block=(4, 4)), {"operands": BlockOperands.row_major(40), "lanes": 2,
                                                          "columns_per_lane": 1, "ldg": False, "block_threads": 64})
    assert (given["lanes"], given["columns_per_lane"], given["ldg"], given["block_threads"]) == (2, 1, False, 64)


def test_the_rule_narrows_the_strips_of_tall_blocks():
    grid = blocks_spmm.COLUMNS_PER_LANE
    assert kernel_rules.block_spmm_shape(3, True, 1, grid[1]) == kernel_rules.spmm_shape(3) == (1, 4)
    assert kernel_rules.block_spmm_shape(3, True, 8, grid[8]) == (2, 2)
    assert kernel_rules.block_spmm_shape(64, True, 4, grid[4]) == (16, 4)
    assert kernel_rules.block_spmm_shape(64, True, 8, grid[8]) == (32, 2)
    assert kernel_rules.block_spmm_shape(256, True, 8, grid[8]) == (32, 2)  # a warp: tiles of 64 columns
    assert kernel_rules.block_spmm_shape(16, False, 8, grid[8]) == (4, 2)
    assert kernel_rules.block_spmm_shape(2, True, 8, grid[8]) == (1, 2)
    assert kernel_rules.block_spmm_shape(16, True, 8, (1,)) == (16, 1)


@pytest.mark.parametrize("fmt", list(BLOCK_KERNELS))
@pytest.mark.parametrize("bad", [{"operands": None}, {"operands": 4}, {"operands": BlockOperands.row_major(0)},
                                 {"operands": BlockOperands.row_major(4), "lanes": 3},
                                 {"operands": BlockOperands.row_major(4), "lanes": 64},
                                 {"operands": BlockOperands.row_major(4), "lanes": True},
                                 {"operands": BlockOperands.row_major(4), "columns_per_lane": 8},
                                 {"operands": BlockOperands.row_major(4), "columns_per_lane": 3},
                                 {"operands": BlockOperands.row_major(4), "block_threads": 1000},
                                 {"operands": BlockOperands.row_major(4), "ldg": 1}])
def test_bad_parameters_are_refused_naming_the_kernel(fmt, bad):
    with pytest.raises(ValueError, match=BLOCK_KERNELS[fmt]):
        _configure(fmt, _storage(fmt), bad)


@pytest.mark.parametrize("fmt", list(BLOCK_KERNELS))
def test_columns_past_the_grid_of_tall_blocks_are_refused(fmt):
    storage = _storage(fmt, block=(8, 2))
    with pytest.raises(ValueError, match=rf"{BLOCK_KERNELS[fmt]}: columns_per_lane must be one of \(1, 2\) or None "
                                         "for blocks of 8 rows"):
        _configure(fmt, storage, {"operands": BlockOperands.row_major(16), "columns_per_lane": 4})
    assert _configure(fmt, _storage(fmt, block=(4, 2)), {"operands": BlockOperands.row_major(16),
                                                         "columns_per_lane": 4})["columns_per_lane"] == 4


def test_an_unknown_parameter_is_refused():
    with pytest.raises(TypeError, match="kernel 'bcsr_spmm' has no parameter 'threads_per_superrow'"):
        kernels.get_block("bcsr_spmm").resolve_params({"threads_per_superrow": 2})


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fmt", list(BLOCK_KERNELS))
def test_the_binders_arguments_match_the_kernels_signature(fmt, dtype, index_dtype, monkeypatch):
    import importlib

    from cocktail.kernels.spec import index_type_name, value_type_name

    block = BLOCK_KERNELS[fmt]
    module = importlib.import_module(f"cocktail.kernels.{block}")
    monkeypatch.setattr(blocks_spmm, "Launch", _Recorded)
    monkeypatch.setattr(blocks_spmm, "compiled",
                        lambda spec, fmt, columns, ldg, device_id: (blocks_spmm.expression(
                            spec.name, value_type_name(fmt.dtype), index_type_name(fmt.index_dtype), fmt.block,
                            columns), ldg))
    monkeypatch.setattr(blocks, "vector_loads", lambda data: 1)  # host arrays: no device pointer
    props = fake_props()
    storage = _storage(fmt, block=(3, 4), dtype=dtype, index_dtype=index_dtype,
                       **({"slice_height": 4} if fmt == "sbell" else {}))
    spec = kernels.get_block(block)
    operands = BlockOperands(37, (1, 150), (40, 1))
    config = spec.configure(spec, storage, spec.resolve_params({"operands": operands}), props, RULES)
    (launch,) = spec.bind(storage, config, props)
    v, i = value_type_name(dtype), index_type_name(index_dtype)
    t, c = config["lanes"], config["columns_per_lane"]
    assert (t, c) == (2, 4)  # column-major X: two lanes of 4 columns each (12 partial sums for 3-row blocks)
    assert launch.function == (f"{block}<{v}, {i}, 3, 4, {c}>", True)
    assert [_c_type(a, v) for a in launch.args] == _signature(block, v, i)
    assert [int(a) for a in launch.args[:9]] == [storage.superrows, 50, 37, 1, 150, 40, 1, t, 41]
    assert launch.scalar_dtype == np.dtype(dtype) and launch.block == config["block_threads"]
    assert launch.grid >= 1
    if fmt == "sbell":
        assert launch.args[9] == 4 and launch.args[11].dtype == np.int64


def test_sbell_widens_its_slice_pointers_once_when_prepared():
    from cocktail.kernels import sbell_spmm

    storage = _storage("sbell", dtype="float32", index_dtype="int32")
    widened = sbell_spmm.prepare(storage)
    assert widened.dtype == np.int64 and np.array_equal(widened, storage.slice_ptr)
    assert kernels.get_block("sbell_spmm").prepare is sbell_spmm.prepare
    config = _configure("sbell", storage, {"operands": BlockOperands.row_major(8), "prepared": widened})
    assert config["prepared"] is widened
