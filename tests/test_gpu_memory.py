"""Out of GPU memory: a clear DeviceMemoryError with the bytes needed and available, a usable context after it,
and format="auto" falling back to a plan that fits.

Marked ``gpu``: skipped where CuPy sees no CUDA device.  Sizes are computed from the free memory at test
time; no test allocates more than a few hundred MB on purpose.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import cocktail
from cocktail import DeviceMemoryError, SparseMatrix, _memory
from cocktail.auto import planning
from cocktail.auto import profile
from test_planner import model_profile

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy") if cocktail.arrays.cuda_available() else None


def _small_product_works():
    """A small matrix builds and multiplies correctly: the CUDA context is usable."""
    S = sp.random(200, 150, density=0.05, format="csr", random_state=3)
    A = SparseMatrix(S, format="csr", device="cuda")
    x = np.arange(150, dtype=np.float64)
    np.testing.assert_allclose(cupy.asnumpy(A @ cupy.asarray(x)), S @ x, rtol=1e-12, atol=1e-12)
    return True


def _one_long_row(m: int, width: int):
    """An m x m matrix: the diagonal plus ``width`` entries in row 0 (its ELL form is ``width`` wide)."""
    rows = np.r_[np.arange(m), np.zeros(width, dtype=np.int64)]
    cols = np.r_[np.arange(m), np.arange(1, width + 1) % m]
    return sp.csr_array((np.ones(rows.shape[0]), (rows, cols)), shape=(m, m))


def test_ell_that_cannot_fit_is_refused_with_bytes():
    m = 10_000_000  # its CSR is about 0.2 GB
    free = _memory.gpu_available()
    width = -(-2 * free // (8 * m)) + 1  # ELL's values alone: twice the free memory
    assert width < m
    S = _one_long_row(m, width)
    with pytest.raises(DeviceMemoryError) as info:
        SparseMatrix(S, format="ell", device="cuda", max_fill=None)
    err = info.value
    assert isinstance(err, MemoryError) and err.device == "cuda"
    assert err.needed >= width * m * 8 > err.available > 0
    text = str(err)
    assert "format 'ell'" in text and "GPU memory" in text and "available" in text
    assert f"{err.needed:,} bytes" in text
    del S, info, err
    assert _small_product_works()


def test_cupy_out_of_memory_becomes_device_memory_error():
    # A pool of its own: CuPy's OutOfMemoryError (which gives the bytes asked for) comes from a pool, and
    # scripts/sanitize.sh turns the default one off.
    total = cupy.cuda.runtime.memGetInfo()[1]
    with cupy.cuda.using_allocator(cupy.cuda.MemoryPool().malloc):
        with pytest.raises(DeviceMemoryError) as info:
            _memory.gpu_build("a test build", lambda: cupy.empty(2 * total, dtype=np.uint8))
    err = info.value
    assert err.needed >= 2 * total and 0 < err.available <= total
    assert "a test build ran out of GPU memory" in str(err) and "CuPy:" in str(err)
    assert _small_product_works()


def test_auto_falls_back_when_the_chosen_plan_runs_out_of_memory(monkeypatch, tmp_path):
    monkeypatch.setenv("COCKTAIL_CACHE", str(tmp_path))
    prof = model_profile()
    monkeypatch.setattr(profile, "for_device", lambda device: prof)
    real_build, calls = planning.build, []
    total = cupy.cuda.runtime.memGetInfo()[1]

    def first_plan_does_not_fit(plan, csr, device="cuda", guard=False, yielding=False):
        calls.append(plan)
        if len(calls) == 1:
            cupy.empty(2 * total, dtype=np.uint8)  # a real CuPy OutOfMemoryError
        return real_build(plan, csr, device, guard, yielding)

    monkeypatch.setattr(planning, "build", first_plan_does_not_fit)
    S = sp.random(3000, 3000, density=0.01, format="csr", random_state=5)
    A = SparseMatrix(S, device="cuda")
    assert A.auto is not None and len(calls) == 2 and A.auto.plan is calls[1]
    assert "fell back to" in A.auto.notice and "did not fit in GPU memory" in A.auto.notice
    x = np.random.default_rng(0).standard_normal(3000)
    np.testing.assert_allclose(cupy.asnumpy(A @ cupy.asarray(x)), S @ x, rtol=1e-10, atol=1e-10)


def test_out_of_memory_without_cupys_pool_is_a_device_memory_error():
    # With the pool off (as under scripts/sanitize.sh) cudaMalloc's failure is a CUDARuntimeError.
    total = cupy.cuda.runtime.memGetInfo()[1]
    allocator = cupy.cuda.get_allocator()  # restored as found: under scripts/sanitize.sh the pool is off
    cupy.cuda.set_allocator(None)
    try:
        with pytest.raises(DeviceMemoryError) as info:
            _memory.gpu_build("a test build", lambda: cupy.empty(2 * total, dtype=np.uint8))
    finally:
        cupy.cuda.set_allocator(allocator)
    assert "ran out of GPU memory" in str(info.value) and info.value.available > 0
    assert _small_product_works()
