"""Sizes past int32 and matrices that do not fit: int64 where needed, a clear DeviceMemoryError before allocating.

The memory probe (``cocktail._memory.available``) is replaced by a fixed number, so these tests
never depend on the machine's free memory; the format builders on huge shapes run in a child
process under an address-space limit, so an O(rows) or O(cols) allocation could not go unnoticed.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import cocktail
from cocktail import DeviceMemoryError, SparseMatrix, _memory, formats, validate
from cocktail.formats.csr import CSR

BIG = 3_000_000_000
SRC = Path(__file__).resolve().parent.parent / "src"


@pytest.fixture
def free_bytes(monkeypatch):
    """Set the bytes the probe reports: ``free_bytes(n)``."""
    def setter(n):
        monkeypatch.setattr(_memory, "available", lambda device: n)
    return setter


def huge_coo(shape, rows, cols):
    return sp.coo_array((np.arange(1.0, len(rows) + 1), (np.array(rows), np.array(cols))), shape=shape)


def test_error_is_a_memory_error_and_exported():
    assert issubclass(DeviceMemoryError, MemoryError) and issubclass(DeviceMemoryError, cocktail.CocktailError)
    assert "DeviceMemoryError" in cocktail.__all__


def test_huge_square_coo_refused_before_tocsr(free_bytes, monkeypatch):
    free_bytes(12_300_000_000)
    A = huge_coo((BIG, BIG), [0, 1, BIG - 1], [0, 4, BIG - 1])
    monkeypatch.setattr(type(A), "tocsr", lambda self, *a, **k: pytest.fail("tocsr ran before the memory check"))
    with pytest.raises(DeviceMemoryError) as info:
        SparseMatrix(A, device="cpu")
    err = info.value
    text = str(err)
    assert "3,000,000,000 x 3,000,000,000 matrix with 3 entries" in text
    assert "24.0 GB for its CSR row pointers" in text and "48.0 GB for x and y" in text
    assert "12.3 GB available" in text and "host memory" in text
    assert err.available == 12_300_000_000
    assert err.needed == (BIG + 1) * 8 + 3 * 16 + 2 * BIG * 8
    assert err.device == "cpu"


def test_tall_coo_and_tuple_inputs_refused(free_bytes):
    free_bytes(4 << 30)
    with pytest.raises(DeviceMemoryError, match="3,000,000,000 x 3 matrix"):
        SparseMatrix(huge_coo((BIG, 3), [0, BIG - 1], [0, 2]), device="cpu")
    # a (data, indices, indptr) tuple is refused on its declared shape, before validation reads indptr
    with pytest.raises(DeviceMemoryError, match="x and y"):
        SparseMatrix((np.ones(1), np.zeros(1, np.int64), np.zeros(2, np.int64)), shape=(1, BIG), device="cpu")


def test_wide_matrix_refused_for_its_x(free_bytes):
    free_bytes(4 << 30)
    with pytest.raises(DeviceMemoryError) as info:
        SparseMatrix(huge_coo((3, BIG), [0, 2], [0, BIG - 1]), device="cpu")
    assert "24.0 GB for x and y" in str(info.value)


def test_matrix_that_fits_goes_through(free_bytes, monkeypatch):
    monkeypatch.setattr(_memory, "PROBE_FLOOR", 0)
    A = sp.random(50, 40, density=0.1, format="csr", random_state=1)
    need = (50 + 1) * 4 + A.nnz * 12 + 90 * 8
    free_bytes(need)
    M = SparseMatrix(A, format="csr", device="cpu")
    x = np.arange(40.0)
    np.testing.assert_allclose(M @ x, A @ x)
    free_bytes(need - 1)
    with pytest.raises(DeviceMemoryError) as info:
        SparseMatrix(A, format="csr", device="cpu")
    assert info.value.needed == need and info.value.available == need - 1


def test_small_builds_are_not_probed(monkeypatch):
    monkeypatch.setattr(_memory, "available", lambda device: pytest.fail("probed for a small matrix"))
    M = SparseMatrix(sp.eye(5, format="csr"), device="cpu")
    assert M.nnz == 5


def test_unknown_free_memory_refuses_nothing(monkeypatch):
    monkeypatch.setattr(_memory, "PROBE_FLOOR", 0)
    monkeypatch.setattr(_memory, "available", lambda device: None)
    assert SparseMatrix(sp.eye(3, format="csr"), device="cpu").nnz == 3


def test_host_probe_reads_meminfo(tmp_path):
    info = tmp_path / "meminfo"
    info.write_text("MemTotal:       32000000 kB\nMemAvailable:   12000000 kB\n")
    assert _memory._meminfo_available(str(info)) == 12_000_000 * 1024
    assert _memory._meminfo_available(str(tmp_path / "missing")) is None
    free = _memory.host_available()
    assert free is None or free > 0


def test_csr_from_arrays_and_triplets_refused(free_bytes):
    free_bytes(1 << 30)
    with pytest.raises(DeviceMemoryError, match="CSR matrix with 1 entries"):
        CSR.from_arrays(np.ones(1), np.zeros(1, np.int64), np.zeros(2, np.int64), (BIG, 1))
    with pytest.raises(DeviceMemoryError, match="24.0 GB for its row pointers"):
        CSR.from_triplets(np.zeros(1, np.int64), np.zeros(1, np.int64), np.ones(1), (BIG, 3), np.int64)


def test_read_matrix_huge_file_refused(free_bytes, tmp_path):
    free_bytes(12_300_000_000)
    path = tmp_path / "huge.mtx"
    path.write_text(f"%%MatrixMarket matrix coordinate real general\n{BIG} {BIG} 3\n1 1 1.0\n2 5 2.0\n{BIG} {BIG} 3.0\n")
    with pytest.raises(DeviceMemoryError) as info:
        cocktail.read_matrix(path)
    assert str(path) in str(info.value) and "24.0 GB for its CSR row pointers" in str(info.value)
    assert info.value.available == 12_300_000_000


def test_read_matrix_small_file_still_reads(free_bytes, tmp_path, monkeypatch):
    monkeypatch.setattr(_memory, "PROBE_FLOOR", 0)
    free_bytes(10**9)
    path = tmp_path / "small.mtx"
    path.write_text("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n3 2 2.0\n")
    M = cocktail.read_matrix(path)
    assert M.shape == (3, 3) and M.nnz == 2


@pytest.mark.parametrize("largest, expected", [
    (2**31 - 1, np.int32), (2**31, np.int64), (BIG, np.int64),
])
def test_index_dtype_choice(largest, expected):
    assert validate.choose_index_dtype(largest) == np.dtype(expected)


def test_forced_int32_refused_on_a_wide_matrix(free_bytes):
    free_bytes(10**13)  # x would fit: only the index dtype is wrong
    n = 2**31 + 10
    with pytest.raises(ValueError, match="index_dtype=int32 cannot hold 2147483658.*use int64"):
        SparseMatrix((np.ones(1), np.array([n - 1]), np.array([0, 1, 1, 1, 1])), shape=(4, n),
                     index_dtype="int32", device="cpu")


def test_wide_csr_picks_int64_and_keeps_its_columns():
    n = 2**31 + 10
    data, indices, indptr = np.ones(4), np.array([0, n - 1, 5, n - 2]), np.array([0, 2, 2, 3, 4])
    csr = CSR.from_arrays(data, indices, indptr, (4, n))
    assert csr.index_dtype == np.int64
    assert csr.indices.tolist() == [0, n - 1, 5, n - 2]
    with pytest.raises(ValueError, match="int32 cannot hold 2147483658"):
        CSR.from_arrays(data, indices, indptr, (4, n), index_dtype="int32")


_BUILD_EVERY_FORMAT = textwrap.dedent("""
    import json, resource, sys
    import numpy as np
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # no O(3e9) array can be allocated
    from cocktail import _memory, formats
    from cocktail.errors import DeviceMemoryError
    from cocktail.formats.csr import CSR
    from cocktail.tuning.format_rules import format_params
    _memory.available = lambda device: 2 << 30  # plenty for O(nnz), far too little for O(3e9)
    m, n = int(sys.argv[1]), int(sys.argv[2])
    rows, cols = np.array([0, 1, 2, 2]) % m, np.array([0, 5, 7, n - 1]) % n
    out = {}
    try:
        csr = CSR.from_triplets(rows, cols, np.arange(1.0, 5.0), (m, n), np.int64)
    except DeviceMemoryError as e:
        out["csr-build"] = "refused: " + str(e)
        print(json.dumps(out)); sys.exit(0)
    for name in formats.names():
        if not formats.get(name).standalone:
            continue
        try:
            one = formats.get(name).max_values == 1  # csr_pattern: the same entries, each holding one value
            given = csr.with_values(np.ones(csr.nnz)) if one else csr
            fmt = formats.get(name).from_csr(given, **format_params(name, csr.dtype, {}))
            back = fmt.to_csr()
            same = back.indices.tolist() == csr.indices.tolist() and back.indptr.tolist() == csr.indptr.tolist()
            out[name] = "built" if same else "wrong"
        except DeviceMemoryError as e:
            out[name] = "refused: " + str(e)
    print(json.dumps(out))
""")


def _build_every_format(m, n) -> dict:
    import json
    import os

    env = dict(os.environ, PYTHONPATH=str(SRC))
    done = subprocess.run([sys.executable, "-c", _BUILD_EVERY_FORMAT, str(m), str(n)], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_every_format_on_a_wide_matrix_builds_in_small_memory_or_refuses():
    results = _build_every_format(3, BIG)
    standalone = [name for name in formats.names() if formats.get(name).standalone]
    assert sorted(results) == sorted(standalone)
    assert results["pkt"].startswith("refused: format 'pkt' of a 3 x 3,000,000,000 matrix")
    assert "permutation of max(rows, cols) = 3,000,000,000 vertices" in results["pkt"]
    built = {name for name, r in results.items() if r == "built"}
    assert built == set(standalone) - {"pkt"}, results


def test_tall_matrix_csr_refused_before_any_format():
    results = _build_every_format(BIG, 3)
    assert list(results) == ["csr-build"]
    assert "3,000,000,000 x 3 CSR matrix with 4 entries" in results["csr-build"]
    assert "24.0 GB for its row pointers" in results["csr-build"]


class _Plan:
    """A stand-in plan: planning's fallback only needs its label."""

    def __init__(self, name):
        self.name = name

    def label(self, nnz=None):
        return self.name


def _too_big(needed, available=1_000):
    return DeviceMemoryError("does not fit", needed=needed, available=available, device="cuda")


def test_auto_falls_back_to_the_next_plan_that_fits():
    from cocktail.auto import planning

    plans = [_Plan("ell"), _Plan("sell_t4"), _Plan("csr_vector")]
    tried = []

    def build(plan):
        tried.append(plan.name)
        if plan.name == "ell":
            raise _too_big(25_600_000_000, 12_000_000_000)
        return ("storage", plan.name)

    plan, built, skipped = planning.first_that_fits(plans, build, lambda: pytest.fail("no last resort needed"))
    assert plan is plans[1] and built == ("storage", "sell_t4") and tried == ["ell", "sell_t4"]
    notice = planning.fallback_notice(skipped, plan, 100)
    assert notice.startswith("fell back to sell_t4: 1 candidate plan(s) did not fit in GPU memory")
    assert "ell needs 25.6 GB" in notice and "12.0 GB available" in notice


def test_auto_ends_with_plain_csr_when_no_plan_fits():
    from cocktail.auto import planning

    plans = [_Plan(f"p{i}") for i in range(5)]

    def build(plan):
        raise _too_big(10**10)

    csr_plan = _Plan("csr_scalar")
    plan, built, skipped = planning.first_that_fits(plans, build, lambda: (csr_plan, "csr storage"))
    assert plan is csr_plan and built == "csr storage" and len(skipped) == 5
    assert "and 2 more" in planning.fallback_notice(skipped, plan, 10)
    assert planning.fallback_notice([], plan, 10) == ""


def test_auto_propagates_when_even_csr_does_not_fit():
    from cocktail.auto import planning

    def last_resort():
        raise _too_big(10**12)

    with pytest.raises(DeviceMemoryError):
        planning.first_that_fits([_Plan("ell")], lambda p: (_ for _ in ()).throw(_too_big(10**11)), last_resort)


def test_other_errors_are_not_taken_for_a_plan_that_does_not_fit():
    from cocktail.auto import planning

    def build(plan):
        raise ValueError("a real bug")

    with pytest.raises(ValueError, match="a real bug"):
        planning.first_that_fits([_Plan("ell")], build, lambda: pytest.fail("must not fall back"))


def _exception_from(module: str, name: str, base=Exception, **attrs):
    cls = type(name, (base,), {"__module__": module})
    exc = cls("out of memory")
    for key, value in attrs.items():
        setattr(exc, key, value)
    return exc


def test_what_counts_as_the_gpu_running_out_of_memory():
    oom = _memory.gpu_out_of_memory
    assert oom(_exception_from("cupy.cuda.memory", "OutOfMemoryError", MemoryError))  # CuPy's pool
    # cudaMalloc with the pool off: cudaErrorMemoryAllocation
    assert oom(_exception_from("cupy_backends.cuda.api.runtime", "CUDARuntimeError", RuntimeError, status=2))
    assert not oom(_exception_from("cupy_backends.cuda.api.runtime", "CUDARuntimeError", RuntimeError, status=1))
    assert not oom(MemoryError("a host allocation"))
    assert not oom(DeviceMemoryError("already ours", needed=1, available=0, device="cuda"))
    assert not oom(ValueError("not memory"))


def test_padded_formats_count_an_index_per_slot(free_bytes):
    from cocktail.formats import padding
    from cocktail.formats.csr import CSR

    csr = CSR.from_arrays(np.ones(2), np.array([0, 1], dtype=np.int32), np.array([0, 1, 2], dtype=np.int32), (2, 2))
    slots = 10_000_000  # 80 MB of float64 values, 120 MB with int32 indices
    free_bytes(100_000_000)
    padding.require_slots("dia", slots, csr)  # values only: fits
    with pytest.raises(DeviceMemoryError, match="value and index slots"):
        padding.require_slots("ell", slots, csr, indexed=True)
