"""The GPU executors: first calls captured in CUDA graphs, no allocation with out=, bound products.

Marked ``gpu``: skipped where CuPy sees no CUDA device.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import cocktail
from cocktail import SparseMatrix
from configs import CONFIGS, config_id
from kernel_configs import KERNEL_CONFIGS, kernel_config_id
from oracle import assert_product_close, few_values, unbounded, value_limited

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy") if cocktail.arrays.cuda_available() else None


def _matrix(m=700, n=500, seed=0, few=None):
    """Rows of very different lengths (0 to 120), more rows than a block of threads; ``few``: values by
    ``oracle.few_values``, at most that many distinct (for a format with a value table, or one value)."""
    rng = np.random.default_rng(seed)
    lengths = np.minimum(rng.zipf(1.6, size=m), 120)
    lengths[::17] = 0
    rows = np.repeat(np.arange(m), lengths)
    cols = np.concatenate([rng.choice(n, size=k, replace=False) for k in lengths])
    S = sp.csr_array((rng.standard_normal(rows.size), (rows, cols)), shape=(m, n))
    return few_values(S, few) if few else S


def _first_call_captured(A, S, dtype, alpha=1.5, beta=-0.5):
    """Capture A's very first product in a graph, replay it, and check the result and the pool."""
    m, n = S.shape
    rng = np.random.default_rng(3)
    x_host = rng.standard_normal(n).astype(dtype)
    y0 = rng.standard_normal(m).astype(dtype)
    x, y = cupy.asarray(x_host), cupy.asarray(y0)
    cupy.cuda.get_current_stream().synchronize()  # x and y are copied before the other stream reads them
    pool = cupy.get_default_memory_pool()
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        used = pool.used_bytes()
        stream.begin_capture()
        A.matvec(x, out=y, alpha=alpha, beta=beta)
        graph = stream.end_capture()
        assert pool.used_bytes() == used, "the product allocated"
        graph.launch(stream)
    stream.synchronize()
    S64 = sp.csr_array(S)
    assert_product_close(y.get(), S64.data.astype(dtype), S64.indices, S64.indptr, S.shape, x_host,
                         alpha=alpha, beta=beta, y0=y0)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_first_call_of_every_format_is_capturable(config, dtype):
    name, params = config
    S = _matrix(few=value_limited(name, params))
    if np.dtype(dtype).kind == "c":
        S = S + 0.5j * S
    A = SparseMatrix(S.astype(dtype), format=name, device="cuda", **unbounded(name, params))
    _first_call_captured(A, S.astype(dtype), dtype)


@pytest.mark.parametrize("config", KERNEL_CONFIGS, ids=kernel_config_id)
def test_first_call_of_every_kernel_is_capturable(config):
    kernel, fmt, fparams, kparams = config
    S = _matrix(seed=1, few=value_limited(fmt, fparams))
    A = SparseMatrix(S, format=fmt, device="cuda", kernel=kernel, **fparams, **kparams)
    assert A.executor == "cuda" and A.kernel == kernel
    assert None not in A.kernel_params.values()
    _first_call_captured(A, S, "float64")


@pytest.mark.parametrize("name", ["csr", "sell", "bcsr"])
def test_reference_executor_on_the_gpu(name):
    S = _matrix(seed=2)
    A = SparseMatrix(S, format=name, device="cuda", executor="reference", **unbounded(name, {}))
    assert A.executor == "reference" and A.kernel == "reference"
    _first_call_captured(A, S, "float64")


def test_matrices_without_kernels_default_to_the_device_reference():
    S = _matrix().astype(np.complex128)  # complex values: the kernels of pkt take real values only
    A = SparseMatrix(S, format="pkt", device="cuda")
    assert A.executor == "reference"
    with pytest.raises(ValueError, match="no GPU kernel multiplies pkt matrices of complex128"):
        SparseMatrix(S, format="pkt", device="cuda", executor="cuda")
    assert SparseMatrix(S, format="sell", device="cuda").kernel == "sell"  # sell's kernel takes complex


def test_empty_matrix_has_no_launches():
    A = SparseMatrix(sp.csr_array((0, 5)), device="cuda")
    assert A._executor.launches == ()
    assert (A @ cupy.ones(5)).shape == (0,)


@pytest.mark.parametrize("fmt, kernel, dtype", [
    ("csr", "csr_scalar", np.float64), ("csr", "csr_vector", np.float32), ("csr_vi", "csr_vector", np.float64),
    ("ell", "ell", np.float64), ("bdia", "bdia", np.float32), ("bdia", "bdia_direct", np.float64)])
def test_grid_stride_launches_are_one_wave_of_their_own_occupancy(fmt, kernel, dtype):
    """More rows than 8 blocks an SM cover: the grid is one wave of the compiled kernel's own occupancy (fewer
    blocks where its registers or shared memory fit fewer an SM), and the product still reaches every row."""
    from cocktail.kernels.device import blocks_per_sm, current

    m = 1 << 21
    S = few_values(sp.diags([np.ones(m - 1), np.full(m, 2.0), np.ones(m - 1)], [-1, 0, 1], format="csr"), 7)
    S = S.astype(dtype)
    A = SparseMatrix(S, format=fmt, kernel=kernel)
    (launch,) = A._executor.launches
    props = current()
    assert launch.grid == props.sm_count * blocks_per_sm(launch.function, launch.block, launch.shared_mem)
    x = np.random.default_rng(1).standard_normal(m).astype(dtype)
    assert_product_close(cupy.asnumpy(A @ cupy.asarray(x)), S.data, S.indices, S.indptr, S.shape, x)


@pytest.mark.parametrize("fmt, kernel", [("csr", "csr_scalar"), ("ell", "ell")])
def test_grid_stride_launches_without_a_loop_are_a_block_per_chunk(fmt, kernel):
    """Rows that fit the SMs by threads alone: a block per ``block`` rows, the hardware balancing the waves."""
    from cocktail.kernels.device import current

    m = current().sm_count * 256  # a block an SM at 256 threads: within the threads' bound at any block size
    S = sp.diags([np.ones(m - 1), np.full(m, 2.0), np.ones(m - 1)], [-1, 0, 1], format="csr")
    (launch,) = SparseMatrix(S, format=fmt, kernel=kernel)._executor.launches
    assert launch.grid == -(-m // launch.block)


def test_bind_replays_on_its_stream():
    S = _matrix()
    A = SparseMatrix(S, device="cuda")
    x = cupy.ones(S.shape[1])
    y = cupy.zeros(S.shape[0])
    cupy.cuda.Stream.null.synchronize()  # x and y are written before the non-blocking stream reads them
    stream = cupy.cuda.Stream(non_blocking=True)
    p = A.bind(x, out=y, alpha=2.0, beta=1.0, stream=stream)
    assert p.stream is stream
    assert p() is y
    stream.synchronize()  # a non-blocking stream is not ordered after the legacy stream's write below
    x[...] = 3.0  # on the legacy stream: finished before the replay below is queued
    cupy.cuda.Stream.null.synchronize()
    p()
    stream.synchronize()
    want = 2.0 * (S @ np.ones(S.shape[1])) + 2.0 * (S @ np.full(S.shape[1], 3.0))
    np.testing.assert_allclose(y.get(), want, rtol=1e-12)
    p.close()
    with pytest.raises(RuntimeError, match="closed"):
        p()


def test_bind_with_torch_buffers():
    torch = pytest.importorskip("torch")
    S = _matrix()
    A = SparseMatrix(S, device="cuda")
    x = torch.ones(S.shape[1], dtype=torch.float64, device="cuda")
    out = torch.zeros(S.shape[0], dtype=torch.float64, device="cuda")
    p = A.bind(x, out=out)
    assert p() is out
    torch.cuda.synchronize()
    np.testing.assert_allclose(out.cpu().numpy(), S @ np.ones(S.shape[1]), rtol=1e-12)


def test_bind_refuses_copies_on_the_gpu():
    S = _matrix()
    A = SparseMatrix(S, device="cuda")
    with pytest.raises(TypeError, match="bind: x must have the matrix dtype"):
        A.bind(cupy.ones(S.shape[1], dtype=cupy.float32), out=cupy.zeros(S.shape[0]))
    with pytest.raises(TypeError, match="host memory"):
        A.bind(np.ones(S.shape[1]), out=cupy.zeros(S.shape[0]))


def test_operand_conversions_at_the_boundary():
    S = _matrix()
    A = SparseMatrix(S, device="cuda")
    x32 = cupy.ones(S.shape[1], dtype=cupy.float32)  # safe cast: converted (a copy)
    np.testing.assert_allclose((A @ x32).get(), S @ np.ones(S.shape[1]), rtol=1e-12)
    strided = cupy.ones(2 * S.shape[1])[::2]
    np.testing.assert_allclose((A @ strided).get(), S @ np.ones(S.shape[1]), rtol=1e-12)
    out = cupy.zeros((S.shape[0], 2))[:, 1]
    A.matvec(cupy.ones(S.shape[1]), out=out)
    np.testing.assert_allclose(out.get(), S @ np.ones(S.shape[1]), rtol=1e-12)
    z = cupy.arange(S.shape[1]) * (1 + 2j)  # complex x on real values: result_type's complex128
    np.testing.assert_allclose((A @ z).get(), S @ z.get(), rtol=1e-12)
    with pytest.raises(ValueError, match="x has 3 rows"):
        A @ cupy.ones(3)
    with pytest.raises(ValueError, match="beta != 0 needs out="):
        A.matvec(cupy.ones(S.shape[1]), beta=1.0)
    with pytest.raises(TypeError, match="alpha is a 0-d array in GPU memory"):
        A.matvec(cupy.ones(S.shape[1]), alpha=cupy.float64(2.0) * cupy.ones(()))


def test_overlapping_x_and_out_refused():
    S = sp.random_array((300, 300), density=0.05, format="csr", random_state=4)
    A = SparseMatrix(S, device="cuda")
    buf = cupy.ones(300)
    with pytest.raises(ValueError, match="x and out overlap"):
        A.matvec(buf, out=buf)
    with pytest.raises(ValueError, match="x and out overlap"):
        A.bind(buf, out=buf)
    wide = cupy.ones(450)
    with pytest.raises(ValueError, match="x and out overlap"):
        A.matvec(wide[:300], out=wide[150:])


def test_products_need_the_matrix_device_current():
    if cupy.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("one GPU: no other device to make current")
    A = SparseMatrix(sp.eye_array(8, format="csr"), device="cuda")
    with cupy.cuda.Device(1):
        with pytest.raises(ValueError, match="but GPU 1 is current"):
            A.matvec(cupy.ones(8))


@pytest.mark.parametrize("kernel, fmt", [("cusparse_csr", "csr"), ("cusparse_coo", "coo")])
def test_a_bound_vendor_product_keeps_its_scalars(kernel, fmt):
    # cuSPARSE reads alpha and beta from host memory the launch reuses: a graph captured with alpha=2
    # must still compute with 2 after an eager product with alpha=3 wrote 3 there.
    S = _matrix(seed=3)
    A = SparseMatrix(S, format=fmt, device="cuda", kernel=kernel)
    x = cupy.asarray(np.random.default_rng(0).standard_normal(S.shape[1]))
    y, z = cupy.zeros(S.shape[0]), cupy.zeros(S.shape[0])
    cupy.cuda.Stream.null.synchronize()
    p = A.bind(x, out=y, alpha=2.0, beta=0.0)
    A.matvec(x, out=z, alpha=3.0, beta=0.0)
    cupy.cuda.Stream.null.synchronize()
    p()
    p.stream.synchronize()
    want = S @ x.get()
    np.testing.assert_allclose(y.get(), 2.0 * want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(z.get(), 3.0 * want, rtol=1e-12, atol=1e-12)
