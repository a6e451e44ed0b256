"""The block kernels of the padded, diagonal and blocked formats (ell_spmm, sell_spmm, dia_spmm, dia_vi_spmm,
bcsr_spmm, bell_spmm, sbell_spmm) against SciPy in float64, on the zoo and the larger matrices of the kernel
tests.

Marked ``gpu``: skipped where CuPy sees no CUDA device.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import cocktail
from oracle import assert_product_close
from test_gpu_kernels import MATRICES, build
from test_gpu_spmm import check_block_products

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy") if cocktail.arrays.cuda_available() else None

#: Column counts: one (the SpMV kernel), a few, not a power of two, past a warp, a full tile, a second tile.
KS = (1, 2, 3, 8, 33, 256)

#: (format, format params, SpMV kernel) -> the block kernel extending it. No fill limit, as the kernel
#: tests build these formats (tests/kernel_configs.py): every matrix of MATRICES is held.
CONFIGS = {("ell", (("max_fill", None),), "ell"): "ell_spmm",
           ("sell", (("max_fill", None),), "sell"): "sell_spmm",
           ("dia", (("max_fill", None),), "dia"): "dia_spmm",
           ("dia_vi", (("max_fill", None),), "dia_vi"): "dia_vi_spmm",
           ("bcsr", (("max_fill", None),), "bcsr"): "bcsr_spmm",
           ("bell", (("max_fill", None),), "bell"): "bell_spmm",
           ("sbell", (("max_fill", None),), "sbell"): "sbell_spmm"}

#: Other layouts of the same formats: unaligned strides, sorted (permuted) rows, odd slice heights.
LAYOUTS = [("ell", {"max_fill": None, "align": 1}, "ell"),
           ("sell", {"max_fill": None, "sort_window": 128}, "sell"),
           ("sell", {"max_fill": None, "slice_height": 3, "sort_window": 12, "width_multiple": 2}, "sell"),
           ("sell", {"max_fill": None, "slice_height": 1}, "sell"),
           ("dia", {"max_fill": None, "align": 1}, "dia"),
           ("dia_vi", {"max_fill": None, "align": 1}, "dia_vi"),
           # The blocked formats: block shapes of every r (8 rows: strips of at most 2 columns), every c, vector
           # and scalar pieces of the units, unaligned strides, odd and single-superrow slices.
           ("bcsr", {"max_fill": None, "block": (2, 2)}, "bcsr"),
           ("bcsr", {"max_fill": None, "block": (3, 1)}, "bcsr"),
           ("bcsr", {"max_fill": None, "block": (8, 8)}, "bcsr"),
           ("bell", {"max_fill": None, "block": (4, 4), "align": 1}, "bell"),
           ("bell", {"max_fill": None, "block": (8, 3)}, "bell"),
           ("sbell", {"max_fill": None, "block": (2, 8), "slice_height": 3}, "sbell"),
           ("sbell", {"max_fill": None, "block": (3, 2), "slice_height": 1}, "sbell"),
           ("sbell", {"max_fill": None, "block": (8, 1), "slice_height": 5}, "sbell")]

#: Layouts whose block kernel's instantiation grid depends on the stored matrix (the blocked formats' block
#: rows bound the columns per lane): every shape of the grid is run on these too.
GRID_LAYOUTS = [("bcsr", (("max_fill", None), ("block", (8, 8))), "bcsr"),
                ("bell", (("max_fill", None), ("block", (3, 2))), "bell"),
                ("sbell", (("max_fill", None), ("block", (4, 3)), ("slice_height", 5)), "sbell")]


def _config_id(config) -> str:
    fmt, fparams, kernel = config
    parts = [f"{k}={v}" for k, v in dict(fparams).items() if k != "max_fill"]
    return kernel + ("[" + ",".join(parts) + "]" if parts else "")


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("zm", MATRICES, ids=lambda m: m.name)
@pytest.mark.parametrize("config", list(CONFIGS), ids=_config_id)
def test_format_block_kernel_equivalent_to_scipy(config, zm, k, dtype, index_dtype):
    fmt, fparams, kernel = config
    A, raw = build(zm, fmt, dict(fparams), kernel, {}, dtype, index_dtype)
    assert A.kernel == kernel
    assert A._executor.block_spec.name == CONFIGS[config]
    check_block_products(A, raw, zm, k, dtype)


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("k", (3, 33, 256))
@pytest.mark.parametrize("zm", MATRICES, ids=lambda m: m.name)
@pytest.mark.parametrize("config", LAYOUTS, ids=_config_id)
def test_format_block_kernel_on_other_layouts(config, zm, k, index_dtype):
    fmt, fparams, kernel = config
    A, raw = build(zm, fmt, fparams, kernel, {}, "float64", index_dtype)
    assert A._executor.block_spec.name == CONFIGS[(fmt, (("max_fill", None),), kernel)]
    check_block_products(A, raw, zm, k, "float64")


def _block_shapes(spec, storage) -> list[tuple[int, int]]:
    """Every (lanes, columns per lane) block kernel ``spec`` takes for ``storage``: its module's ``block_shapes``
    where it declares one (a grid depending on the stored matrix), else csr_spmm's grid."""
    from cocktail.kernels.csr_spmm import COLUMNS_PER_LANE, LANES

    shapes = getattr(importlib.import_module(f"cocktail.kernels.{spec.name}"), "block_shapes", None)
    return shapes(storage) if shapes is not None else [(t, c) for t in LANES for c in COLUMNS_PER_LANE]


@pytest.mark.parametrize("config", list(CONFIGS) + GRID_LAYOUTS, ids=_config_id)
def test_every_block_shape_gives_the_product(config):
    # Every instantiation (lanes x columns per lane), bound directly: tiles that cover k, tiles that do not
    # (several per row), and more lanes than columns.
    from cocktail.kernels.block_operands import BlockOperands
    from cocktail.tuning.launch_rules import configure

    fmt, fparams, kernel = config
    zm = next(z for z in MATRICES if z.name == "power_law")
    A, raw = build(zm, fmt, dict(fparams), kernel, {}, "float64", "int32")
    ex = A._executor
    m, n = zm.shape
    k = 37
    X_host = np.asfortranarray(np.random.default_rng(5).standard_normal((n, k)))
    Y0_host = np.random.default_rng(6).standard_normal((m, k))
    stream = cupy.cuda.get_current_stream().ptr
    for lanes, columns in _block_shapes(ex.block_spec, ex._storage):
        X, Y = cupy.asarray(X_host), cupy.asarray(Y0_host)
        full = configure(ex.block_spec, ex._storage, {"operands": BlockOperands.of(X, Y), "lanes": lanes,
                                                      "columns_per_lane": columns, "block_threads": 64}, ex._props)
        for launch in ex.block_spec.bind(ex._storage, full, ex._props):
            launch(X.data.ptr, Y.data.ptr, np.float64(1.5), np.float64(-1.0), stream)
        assert_product_close(Y.get(), *raw, zm.shape, X_host, alpha=1.5, beta=-1.0, y0=Y0_host)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("rows", (1, 2, 4))
@pytest.mark.parametrize("zm", MATRICES, ids=lambda m: m.name)
def test_dia_vi_groups_of_consecutive_rows_give_the_product(zm, rows, dtype):
    # A group takes 1, 2 or 4 rows and shares the X rows of adjacent diagonals: scalar strips over a
    # column-major X and vector strips over a row-major one, a k past one tile, m not a multiple of rows.
    from cocktail.kernels.block_operands import BlockOperands
    from cocktail.tuning.launch_rules import configure

    A, raw = build(zm, "dia_vi", {"max_fill": None}, "dia_vi", {}, dtype, "int32")
    ex = A._executor
    m, n = zm.shape
    if not m:  # no rows: a block product launches nothing (the executor binds no launch)
        return
    k = 40
    X_host = np.random.default_rng(rows).standard_normal((n, k)).astype(dtype)
    Y0_host = np.random.default_rng(3).standard_normal((m, k)).astype(dtype)
    stream = cupy.cuda.get_current_stream().ptr
    one = np.dtype(dtype).type
    for order, vector in (("F", False), ("C", None)):
        X, Y = cupy.asarray(np.array(X_host, order=order)), cupy.asarray(np.array(Y0_host, order=order))
        full = configure(ex.block_spec, ex._storage, {"operands": BlockOperands.of(X, Y), "rows_per_group": rows,
                                                      "lanes": 4, "columns_per_lane": 4, "vector": vector},
                         ex._props)
        assert full["rows_per_group"] == rows
        for launch in ex.block_spec.bind(ex._storage, full, ex._props):
            launch(X.data.ptr, Y.data.ptr, one(1.5), one(-1.0), stream)
        assert_product_close(Y.get(), *raw, zm.shape, X_host, alpha=1.5, beta=-1.0, y0=Y0_host)


@pytest.mark.parametrize("config", list(CONFIGS), ids=_config_id)
def test_the_block_kernels_are_deterministic(config):
    fmt, fparams, kernel = config
    zm = MATRICES[-3]
    A, _ = build(zm, fmt, dict(fparams), kernel, {}, "float64", "int32")
    X = cupy.asarray(np.random.default_rng(4).standard_normal((zm.shape[1], 40)))
    first = A @ X
    for _ in range(3):
        cupy.testing.assert_array_equal(A @ X, first)


@pytest.mark.parametrize("config", list(CONFIGS), ids=_config_id)
def test_a_strided_out_window_is_written_in_place_and_its_neighbours_kept(config):
    fmt, fparams, kernel = config
    zm = MATRICES[-2]  # 7-point Laplacian, 8000 rows
    A, raw = build(zm, fmt, dict(fparams), kernel, {"ldg": False, "block_threads": 128}, "float32", "int64")
    m, n = zm.shape
    X_host = np.asfortranarray(np.random.default_rng(9).standard_normal((n, 5))).astype("float32")
    wide = cupy.zeros((m, 9), dtype="float32")
    window = wide[:, 2:7]
    A.matmat(cupy.asarray(X_host), out=window)
    assert_product_close(window.get(), *raw, zm.shape, X_host)
    assert not bool(wide[:, :2].any()) and not bool(wide[:, 7:].any())
    (launches,) = A._executor._block_launches.values()
    assert all(launch.block == 128 for launch in launches)  # the matrix kernel's block size carried over
