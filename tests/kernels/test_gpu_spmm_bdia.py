"""bdia's block kernel (bdia_spmm, extending bdia and bdia_direct) against SciPy in float64, on the zoo and the
larger matrices of the kernel tests: every block shape, vector strips and scalar ones, determinism, a strided
out window, and a capture after its band pointers are prepared.

Marked ``gpu``: skipped where CuPy sees no CUDA device.
"""

from __future__ import annotations

import numpy as np
import pytest

import cocktail
from oracle import assert_product_close
from test_gpu_kernels import MATRICES, build
from test_gpu_spmm import check_block_products
from test_gpu_spmm_formats import KS

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy") if cocktail.arrays.cuda_available() else None

#: The SpMV kernels of bdia; a matrix bound to either multiplies a block with bdia_spmm.
SPMV_KERNELS = ("bdia", "bdia_direct")
#: No fill limit, as the kernel tests build bdia (tests/kernel_configs.py): every matrix of MATRICES is held.
UNLIMITED = {"max_fill": None}


def _bdia(zm, kernel, dtype, index_dtype, fparams=None, kparams=None):
    A, raw = build(zm, "bdia", {**UNLIMITED, **(fparams or {})}, kernel, kparams or {}, dtype, index_dtype)
    assert A.kernel == kernel
    assert A._executor.block_spec.name == "bdia_spmm"
    return A, raw


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("zm", MATRICES, ids=lambda m: m.name)
@pytest.mark.parametrize("kernel", SPMV_KERNELS)
def test_bdia_block_kernel_equivalent_to_scipy(kernel, zm, k, dtype, index_dtype):
    A, raw = _bdia(zm, kernel, dtype, index_dtype)
    check_block_products(A, raw, zm, k, dtype)


#: Other layouts and SpMV settings: an unaligned stride, bdia's pieces and small blocks (the block kernel
#: takes the matrix kernel's block size; piece_width is bdia's own).
LAYOUTS = [("bdia", {"align": 1}, {"ldg": False}), ("bdia", {}, {"piece_width": 3, "block_threads": 32}),
           ("bdia_direct", {"align": 1}, {"ldg": False})]


def _layout_id(layout) -> str:
    kernel, fparams, kparams = layout
    return kernel + "[" + ",".join(f"{k}={v}" for k, v in {**fparams, **kparams}.items()) + "]"


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("k", (3, 33, 256))
@pytest.mark.parametrize("zm", MATRICES, ids=lambda m: m.name)
@pytest.mark.parametrize("layout", LAYOUTS, ids=_layout_id)
def test_bdia_block_kernel_on_other_layouts(layout, zm, k, index_dtype):
    kernel, fparams, kparams = layout
    A, raw = _bdia(zm, kernel, "float64", index_dtype, fparams, kparams)
    check_block_products(A, raw, zm, k, "float64")


@pytest.mark.parametrize("kernel", SPMV_KERNELS)
def test_every_block_shape_gives_the_product(kernel):
    # Every instantiation (lanes x columns per lane), bound directly: tiles that cover k, tiles that do not
    # (several per row), and more lanes than columns; scalar strips on a column-major X (k = 37) and on a
    # row-major one, vector strips on the row-major one wherever a strip fills whole 16-byte words (k = 40).
    from cocktail.kernels.block_operands import BlockOperands
    from cocktail.kernels.csr_spmm import COLUMNS_PER_LANE, LANES
    from cocktail.tuning.launch_rules import configure

    zm = next(z for z in MATRICES if z.name == "power_law")
    A, raw = _bdia(zm, kernel, "float64", "int32")
    ex = A._executor
    m, n = zm.shape
    stream = cupy.cuda.get_current_stream().ptr
    vectors_ran = 0
    for k, order in ((37, "F"), (40, "C")):
        X_host = np.array(np.random.default_rng(5).standard_normal((n, k)), order=order)
        Y0_host = np.random.default_rng(6).standard_normal((m, k))
        for lanes in LANES:
            for columns in COLUMNS_PER_LANE:
                for vector in (False, True):
                    X, Y = cupy.asarray(X_host, order=order), cupy.asarray(Y0_host)
                    operands = BlockOperands.of(X, Y)
                    if vector and not operands.vectors_fit(columns, 8):
                        continue
                    full = configure(ex.block_spec, ex._storage,
                                     {"operands": operands, "lanes": lanes, "columns_per_lane": columns,
                                      "vector": vector, "block_threads": 64}, ex._props)
                    assert full["vector"] is vector
                    vectors_ran += vector
                    for launch in ex.block_spec.bind(ex._storage, full, ex._props):
                        launch(X.data.ptr, Y.data.ptr, np.float64(1.5), np.float64(-1.0), stream)
                    assert_product_close(Y.get(), *raw, zm.shape, X_host, alpha=1.5, beta=-1.0, y0=Y0_host)
    assert vectors_ran == len(LANES) * 3  # float64: strips of 2, 4 and 8 columns


@pytest.mark.parametrize("kernel", SPMV_KERNELS)
def test_the_block_kernel_is_deterministic(kernel):
    zm = MATRICES[-3]
    A, _ = _bdia(zm, kernel, "float64", "int32")
    X = cupy.asarray(np.random.default_rng(4).standard_normal((zm.shape[1], 40)))
    first = A @ X
    for _ in range(3):
        cupy.testing.assert_array_equal(A @ X, first)


@pytest.mark.parametrize("kernel", SPMV_KERNELS)
def test_a_strided_out_window_is_written_in_place_and_its_neighbours_kept(kernel):
    zm = MATRICES[-2]  # 7-point Laplacian, 8000 rows: bands of 1 and 3 diagonals
    A, raw = _bdia(zm, kernel, "float32", "int64", kparams={"ldg": False, "block_threads": 128})
    m, n = zm.shape
    X_host = np.asfortranarray(np.random.default_rng(9).standard_normal((n, 5))).astype("float32")
    wide = cupy.zeros((m, 9), dtype="float32")
    window = wide[:, 2:7]
    A.matmat(cupy.asarray(X_host), out=window)
    assert_product_close(window.get(), *raw, zm.shape, X_host)
    assert not bool(wide[:, :2].any()) and not bool(wide[:, 7:].any())
    (launches,) = A._executor._block_launches.values()
    assert all(launch.block == 128 for launch in launches)  # the matrix kernel's block size carried over


def test_an_unaligned_block_runs_scalar_strips_and_an_aligned_one_vector_strips():
    zm = MATRICES[-2]
    A, raw = _bdia(zm, "bdia", "float32", "int32")
    m, n = zm.shape
    X_host = np.random.default_rng(5).standard_normal((n, 8)).astype("float32")
    flat = cupy.zeros(n * 8 + 1, dtype="float32")
    X = flat[1:].reshape(n, 8)  # 4 bytes past a 16-byte boundary
    X[...] = cupy.asarray(X_host)
    from cocktail.kernels.block_operands import BlockOperands

    Y = cupy.zeros((m, 8), dtype="float32")
    assert not BlockOperands.of(X, Y).aligned
    A.matmat(X, out=Y)
    assert_product_close(Y.get(), *raw, zm.shape, X_host)
    (operands,) = A._executor._block_launches
    assert A._executor.block_config(operands)["vector"] is False
    A.matmat(cupy.asarray(X_host), out=Y)  # aligned: vector strips
    assert_product_close(Y.get(), *raw, zm.shape, X_host)
    assert any(A._executor.block_config(o)["vector"] for o in A._executor._block_launches)


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_a_block_product_is_captured_after_its_band_pointers_are_prepared(index_dtype):
    zm = MATRICES[-2]
    A, raw = _bdia(zm, "bdia_direct", "float32", index_dtype)
    X_host = np.random.default_rng(3).standard_normal((zm.shape[1], 12)).astype("float32")
    X = cupy.asarray(X_host)
    Y = cupy.zeros((zm.shape[0], 12), dtype="float32")
    A.prepare_block_products()  # the band pointers as 64-bit, made once before the capture
    assert A._executor._block_prepared.dtype == np.int64
    cupy.cuda.Device().synchronize()
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        A.matmat(X, out=Y)  # the first block product of this matrix, inside the capture
        graph = stream.end_capture()
        graph.launch(stream)
    stream.synchronize()
    assert_product_close(Y.get(), *raw, zm.shape, X_host)
