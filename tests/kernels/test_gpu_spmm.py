"""Block kernels (``A @ X`` for a block of k vectors, each stored entry read once per tile of columns)
against SciPy in float64, on the zoo and the larger matrices of the kernel tests.

Marked ``gpu``: skipped where CuPy sees no CUDA device.
"""

from __future__ import annotations

import numpy as np
import pytest

import cocktail
from oracle import assert_product_close
from test_gpu_kernels import MATRICES, build

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy") if cocktail.arrays.cuda_available() else None

#: Column counts: one (the SpMV kernel), a few, not a power of two, past a warp (two columns per lane),
#: a full tile, and a second tile.
KS = (1, 2, 3, 8, 33, 256, 300)


#: The SpMV kernel a matrix is bound to, its format, and the block kernel that extends it.
BLOCK_KERNELS = {"csr_vector": ("csr", "csr_spmm"), "csr_merge": ("csr", "csr_spmm_merge"),
                 "coo_atomic": ("coo", "csr_spmm_merge")}


def bound_ks(A) -> set:
    """The column counts the matrix's block kernel has been bound for."""
    return {operands.k for operands, launches in A._executor._block_launches.items() if launches is not None}


def check_block_products(A, raw, zm, k, dtype):
    """Every layout of X and out, alpha and beta, beta = 0 over a NaN-filled out, X never written, and the
    block kernel bound for k: the products of A checked against the float64 reference."""
    m, n = zm.shape
    rng = np.random.default_rng(k)
    X_host = rng.standard_normal((n, k)).astype(dtype)
    Y0_host = rng.standard_normal((m, k)).astype(dtype)
    for x_order in ("C", "F"):
        X = cupy.asarray(np.array(X_host, order=x_order))
        X_before = X.copy()
        Y = A @ X
        assert Y.shape == (m, k) and Y.dtype == np.dtype(dtype) and Y.flags.c_contiguous
        assert_product_close(Y.get(), *raw, zm.shape, X_host)
        cupy.testing.assert_array_equal(X, X_before)  # the operand is never written
        for order in ("C", "F"):
            out = cupy.asarray(np.array(Y0_host, order=order))
            assert A.matmat(X, out=out, alpha=-0.5, beta=2.0) is out
            assert_product_close(out.get(), *raw, zm.shape, X_host, alpha=-0.5, beta=2.0, y0=Y0_host)
            out = cupy.full((m, k), cupy.nan, dtype=dtype, order=order)
            A.matmat(X, out=out, alpha=3.0, beta=0.0)  # beta = 0 never reads out
            assert bool(cupy.isfinite(out).all())
            assert_product_close(out.get(), *raw, zm.shape, X_host, alpha=3.0)
        cupy.testing.assert_array_equal(X, X_before)
    if m and k > 1:
        assert bound_ks(A) == {k}  # the block kernel ran, bound for this k, each layout in place


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("zm", MATRICES, ids=lambda m: m.name)
@pytest.mark.parametrize("kernel", list(BLOCK_KERNELS))
def test_csr_block_kernel_equivalent_to_scipy(kernel, zm, k, dtype, index_dtype):
    fmt, block = BLOCK_KERNELS[kernel]
    A, raw = build(zm, fmt, {}, kernel, {}, dtype, index_dtype)
    assert A._executor.block_spec.name == block
    check_block_products(A, raw, zm, k, dtype)


@pytest.mark.parametrize("items, short_run", [(1, 1), (2, 1), (3, 2), (64, 8)])
@pytest.mark.parametrize("zm", MATRICES, ids=lambda m: m.name)
def test_merge_shares_of_any_size_give_the_product(zm, items, short_run):
    # Shares of one or two merge items make nearly every row span shares: every run of carries is
    # fixed up, short ones a thread per column, long ones (short_run = 1) a block each.
    from cocktail.kernels.block_operands import BlockOperands
    from cocktail.tuning.launch_rules import configure

    A, raw = build(zm, "csr", {}, "csr_merge", {}, "float64", "int32")
    m, n = zm.shape
    if not m:
        return
    ex = A._executor
    k = 37  # three chunks of 16 columns: every launch pair past the first starts at col0 > 0
    X_host = np.random.default_rng(items).standard_normal((n, k))
    Y0_host = np.random.default_rng(1).standard_normal((m, k))
    X, Y = cupy.asarray(X_host), cupy.asarray(Y0_host)
    operands = BlockOperands.of(X, Y)
    spec = ex.block_spec
    full = configure(spec, ex._storage, {"operands": operands, "items_per_share": items, "short_run": short_run,
                                         "lanes": 2, "columns_per_lane": 2, "chunk": 16}, ex._props)
    launches = spec.bind(ex._storage, full, ex._props)
    stream = cupy.cuda.get_current_stream().ptr
    for launch in launches:
        launch(X.data.ptr, Y.data.ptr, np.float64(1.5), np.float64(-1.0), stream)
    assert_product_close(Y.get(), *raw, zm.shape, X_host, alpha=1.5, beta=-1.0, y0=Y0_host)


@pytest.mark.parametrize("dtype, columns", [("float32", 4), ("float32", 8), ("float64", 2), ("float64", 4)])
@pytest.mark.parametrize("items, lanes", [(2, 1), (7, 4), (64, 8)])
@pytest.mark.parametrize("zm", MATRICES, ids=lambda m: m.name)
def test_merge_vector_strips_give_the_product(zm, items, lanes, dtype, columns):
    # Vector strips of the merge kernel: k = 48 runs three chunks of 16 columns (col0 > 0), tiles wider than
    # k included, shares small enough that most rows are carried.
    from cocktail.kernels.block_operands import BlockOperands
    from cocktail.tuning.launch_rules import configure

    A, raw = build(zm, "csr", {}, "csr_merge", {}, dtype, "int32")
    m, n = zm.shape
    if not (m and n):  # X of no rows: no strides to align
        return
    ex = A._executor
    k = 48
    X_host = np.random.default_rng(items).standard_normal((n, k)).astype(dtype)
    Y0_host = np.random.default_rng(1).standard_normal((m, k)).astype(dtype)
    X, Y = cupy.asarray(X_host), cupy.asarray(Y0_host)
    full = configure(ex.block_spec, ex._storage, {"operands": BlockOperands.of(X, Y), "items_per_share": items,
                                                  "lanes": lanes, "columns_per_lane": columns, "vector": True,
                                                  "chunk": 16},
                     ex._props)
    assert full["vector"]
    stream = cupy.cuda.get_current_stream().ptr
    one = np.dtype(dtype).type
    for launch in ex.block_spec.bind(ex._storage, full, ex._props):
        launch(X.data.ptr, Y.data.ptr, one(1.5), one(-1.0), stream)
    assert_product_close(Y.get(), *raw, zm.shape, X_host, alpha=1.5, beta=-1.0, y0=Y0_host)


def test_a_fortran_ordered_x_and_a_strided_out_are_used_in_place_and_its_neighbours_kept():
    zm = MATRICES[-3]  # power law 5000 x 3000
    A, raw = build(zm, "csr", {}, "csr_scalar", {}, "float64", "int32")
    m, n = zm.shape
    X_host = np.asfortranarray(np.random.default_rng(9).standard_normal((n, 5)))
    wide = cupy.zeros((m, 9))
    window = wide[:, 2:7]
    A.matmat(cupy.asarray(X_host), out=window)
    assert_product_close(window.get(), *raw, zm.shape, X_host)
    assert not bool(wide[:, :2].any()) and not bool(wide[:, 7:].any())
    assert bound_ks(A) == {5}


@pytest.mark.parametrize("kernel", list(BLOCK_KERNELS))
@pytest.mark.parametrize("zm", [MATRICES[-3], MATRICES[-1]], ids=lambda m: m.name)
def test_the_block_kernels_are_deterministic(zm, kernel):
    A, _ = build(zm, BLOCK_KERNELS[kernel][0], {}, kernel, {}, "float64", "int32")  # coo_atomic's block too
    X = cupy.asarray(np.random.default_rng(4).standard_normal((zm.shape[1], 40)))
    first = A @ X
    for _ in range(5):
        cupy.testing.assert_array_equal(A @ X, first)


def test_a_row_spanning_many_shares_is_fixed_up_by_a_block():
    zm = MATRICES[-1]  # rows of 20000 and 5000 entries: runs of a hundred carries and more
    A, raw = build(zm, "csr", {}, "csr_merge", {}, "float32", "int64")
    X_host = np.random.default_rng(2).standard_normal((zm.shape[1], 70)).astype("float32")
    assert_product_close((A @ cupy.asarray(X_host)).get(), *raw, zm.shape, X_host)
    from cocktail.kernels import csr_spmm_merge

    _, (_, _, count) = csr_spmm_merge.shares_of(A._executor._storage, 128)
    assert int(count.max()) > 100  # a long run (a block's fix-up) was in the product checked


def test_the_block_kernel_takes_the_matrix_kernels_read_path_and_block():
    zm = MATRICES[-3]
    A, raw = build(zm, "csr", {}, "csr_vector", {"ldg": False, "block_threads": 128}, "float32", "int64")
    X_host = np.random.default_rng(6).standard_normal((zm.shape[1], 16)).astype("float32")
    assert_product_close((A @ cupy.asarray(X_host)).get(), *raw, zm.shape, X_host)
    (launches,) = A._executor._block_launches.values()
    assert all(launch.block == 128 for launch in launches)


@pytest.mark.parametrize("kernel", ["csr_vector", "csr_scalar", "csr_merge"])
def test_a_block_product_is_captured_from_its_first_call(kernel):
    zm = MATRICES[-3]
    A, raw = build(zm, "csr", {}, kernel, {}, "float32", "int32")
    X_host = np.random.default_rng(3).standard_normal((zm.shape[1], 12)).astype("float32")
    X = cupy.asarray(X_host)
    Y = cupy.zeros((zm.shape[0], 12), dtype="float32")
    if kernel == "csr_merge":  # its shares are device work: made before the capture
        A.prepare_block_products()
    cupy.cuda.Device().synchronize()
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        A.matmat(X, out=Y)  # the first block product of this matrix, inside the capture
        graph = stream.end_capture()
        graph.launch(stream)
    stream.synchronize()
    assert_product_close(Y.get(), *raw, zm.shape, X_host)


def test_a_first_merge_block_product_inside_a_capture_says_what_to_do():
    zm = MATRICES[-3]
    A, raw = build(zm, "csr", {}, "csr_merge", {}, "float32", "int32")
    X = cupy.ones((zm.shape[1], 12), dtype="float32")
    Y = cupy.zeros((zm.shape[0], 12), dtype="float32")
    cupy.cuda.Device().synchronize()
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        try:
            with pytest.raises(RuntimeError, match="prepare_block_products"):
                A.matmat(X, out=Y)
        finally:
            stream.end_capture()
    A.matmat(X, out=Y)  # outside a capture the first product prepares the shares itself
    assert_product_close(Y.get(), *raw, zm.shape, X.get())


def test_a_matrix_on_cusparse_csr_multiplies_wide_blocks_with_the_merge_kernel():
    zm = MATRICES[-1]  # a few very long rows
    A, raw = build(zm, "csr", {}, "cusparse_csr", {}, "float32", "int32")
    from cocktail.tuning import kernel_rules

    narrow, wide = kernel_rules.SPMM_VENDOR_MIN_COLUMNS - 1, kernel_rules.SPMM_VENDOR_MIN_COLUMNS + 9
    assert A.block_plan(narrow) == "cusparse_csr per column"
    assert A.block_plan(wide).startswith("csr_spmm_merge (")
    for k in (narrow, wide):
        X_host = np.random.default_rng(k).standard_normal((zm.shape[1], k)).astype("float32")
        assert_product_close((A @ cupy.asarray(X_host)).get(), *raw, zm.shape, X_host)
    assert bound_ks(A) == {wide}  # the narrow block ran column by column


@pytest.mark.parametrize("kernel", ["csr_vector", "dia_vi"])
def test_an_unaligned_block_runs_scalar_strips(kernel):
    zm = MATRICES[-2]  # the 7-point Laplacian: dia_vi holds it
    fmt = "dia_vi" if kernel == "dia_vi" else "csr"
    A, raw = build(zm, fmt, {"max_fill": None} if fmt == "dia_vi" else {}, None if fmt == "dia_vi" else kernel,
                   {}, "float32", "int32")
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
