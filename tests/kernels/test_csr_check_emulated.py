"""csr_check.cu (the one-pass check of a device CSR's pointers and indices) run on the CPU, against the host checks
of :mod:`cocktail.validate` and :func:`cocktail.formats.csr._rising_within_rows`.

A grid-stride loop whose threads share nothing but flags set by atomicOr: a shim runs every thread of a small grid
one after another, compiled by g++ with AddressSanitizer and UBSan (test_kernel_blocks_emulated.py's
``compiled``), each array a heap copy of its exact size.  Skipped without g++.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp
from test_kernel_blocks_emulated import compiled

from cocktail import validate
from cocktail.formats import _device_builds
from cocktail.formats.csr import _rising_within_rows
from cocktail.kernels import csr_check, source

# the exhaustive tier (pytest --exhaustive): every host emulation compiles its kernels with g++
pytestmark = [pytest.mark.skipif(shutil.which("g++") is None, reason="no g++"), pytest.mark.exhaustive]

MAIN = r"""
#include <cstdio>
#include <cstdlib>
#include <vector>
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
struct dim3 { unsigned x = 0; };
dim3 threadIdx, blockIdx, blockDim, gridDim;
unsigned atomicOr(unsigned* p, unsigned v) { unsigned old = *p; *p = old | v; return old; }
#include "KERNEL"

template <class T> T* read(FILE* f) {  // a heap copy of its exact size
    long long bytes = 0;
    if (fread(&bytes, 8, 1, f) != 1) std::abort();
    T* out = (T*)std::malloc(bytes ? bytes : 1);
    if (bytes && fread(out, 1, bytes, f) != (size_t)bytes) std::abort();
    return out;
}

template <class I> int run(FILE* in, FILE* out) {
    long long* sizes = read<long long>(in);  // rows, nnz, cols, grid, block
    I* indptr = read<I>(in);
    I* indices = read<I>(in);
    unsigned flags[3] = {0, 0, 0};
    gridDim.x = (unsigned)sizes[3]; blockDim.x = (unsigned)sizes[4];
    for (blockIdx.x = 0; blockIdx.x < gridDim.x; ++blockIdx.x)
        for (threadIdx.x = 0; threadIdx.x < blockDim.x; ++threadIdx.x)
            csr_check<I>(indptr, indices, sizes[0], sizes[1], sizes[2], flags);
    fwrite(flags, 4, 3, out);
    std::free(sizes); std::free(indptr); std::free(indices);
    return 0;
}

int main(int argc, char** argv) {
    FILE* in = std::fopen(argv[1], "rb");
    FILE* out = std::fopen(argv[2], "wb");
    const int status = argv[3][0] == '4' ? run<int>(in, out) : run<long long>(in, out);
    std::fclose(in); std::fclose(out);
    return status;
}
"""


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    return compiled(tmp_path_factory.mktemp("csr_check"), MAIN.replace('#include "KERNEL"', source.read("csr_check.cu")))


class EmulatedLauncher:
    """helper_launch's launcher protocol for csr_check alone: two blocks of 32 threads, so the loop strides."""

    def __init__(self, exe, tmp):
        self.exe, self.tmp, self.launches = exe, tmp, 0

    def __call__(self, stem, expression, items, block, args):
        assert stem == "csr_check" and expression in csr_check.expressions()
        indptr, indices, rows, nnz, cols, flags = args
        self.launches += 1
        with open(self.tmp / "in.bin", "wb") as f:
            for a in (np.array([rows, nnz, cols, 2, 32], np.int64), indptr, indices):
                f.write(np.int64(a.nbytes).tobytes() + np.ascontiguousarray(a).tobytes())
        proc = subprocess.run([str(self.exe), self.tmp / "in.bin", self.tmp / "out.bin", str(indices.itemsize)],
                              capture_output=True, text=True, timeout=120, env={"ASAN_OPTIONS": "detect_leaks=0"})
        assert proc.returncode == 0, proc.stderr[-3000:]
        flags[:] = np.fromfile(self.tmp / "out.bin", dtype=np.uint32)

    @staticmethod
    def fetch(buffer):
        return np.array(buffer, copy=True)


def _host_facts(indptr, indices, cols):
    """What the host checks answer: pointers and indices valid (either failure raises), and rising where valid."""
    try:
        validate.csr_values(np.zeros(indices.shape[0]), indices, indptr, (indptr.shape[0] - 1, cols))
    except ValueError as exc:
        return "indptr" if "indptr" in str(exc) else "indices"
    return bool(_rising_within_rows(indices, indptr))


def _device_answer(facts):
    if not facts.pointers_hold:
        return "indptr"
    if not facts.indices_hold:
        return "indices"
    return facts.rising


def _cases():
    rng = np.random.default_rng(11)
    keep = np.ones(90)
    keep[40:44] = 0  # empty rows: several rows start at one entry
    S = sp.csr_matrix(sp.diags(keep) @ sp.random(90, 70, density=0.08, format="csr", random_state=5))
    S.eliminate_zeros()
    S.sort_indices()
    yield "canonical", S.indptr.copy(), S.indices.copy(), 70
    unsorted = S.indices.copy()
    row = int(np.argmax(np.diff(S.indptr) > 2))
    lo = S.indptr[row]
    unsorted[lo], unsorted[lo + 1] = unsorted[lo + 1], unsorted[lo]
    yield "a row out of order", S.indptr.copy(), unsorted, 70
    repeated = S.indices.copy()
    repeated[lo + 1] = repeated[lo]
    yield "a repeated column", S.indptr.copy(), repeated, 70
    yield "a column past the matrix", S.indptr.copy(), np.where(np.arange(S.nnz) == 7, 70, S.indices), 70
    yield "a negative column", S.indptr.copy(), np.where(np.arange(S.nnz) == S.nnz - 1, -1, S.indices), 70
    falling = S.indptr.copy()
    falling[30] = falling[31] + 1
    yield "a falling pointer", falling, S.indices.copy(), 70
    short = S.indptr.copy()
    short[-1] -= 1
    yield "an end before the entries", short, S.indices.copy(), 70
    first = S.indptr.copy()
    first[0] = 1
    yield "a first pointer past 0", first, S.indices.copy(), 70
    yield "no entries", np.zeros(5, np.int64), np.zeros(0, np.int64), 3
    yield "one row of many", np.array([0, 300]), np.sort(rng.choice(1000, 300, replace=False)), 1000


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_csr_check_finds_what_the_host_checks_find(binary, tmp_path, index_dtype):
    launcher = EmulatedLauncher(binary, tmp_path)
    for label, indptr, indices, cols in _cases():
        indptr, indices = indptr.astype(index_dtype), indices.astype(index_dtype)
        facts = csr_check.device_facts(indptr, indices, indices.shape[0], cols, launcher)
        assert _device_answer(facts) == _host_facts(indptr, indices, cols), label
    assert launcher.launches == 10


def test_csr_check_leaves_mixed_or_narrow_index_dtypes_and_host_arrays_to_the_host_path(binary, tmp_path):
    launcher = EmulatedLauncher(binary, tmp_path)
    indptr, indices = np.array([0, 1, 2]), np.array([0, 1])
    assert csr_check.device_facts(indptr.astype(np.int32), indices.astype(np.int64), 2, 2, launcher) is None
    assert csr_check.device_facts(indptr.astype(np.int16), indices.astype(np.int16), 2, 2, launcher) is None
    assert csr_check.device_facts(indptr, indices, 3, 2, launcher) is None  # values of another length
    assert csr_check.device_facts(indptr, indices, 2, 2, None) is None  # no launcher: the host checks
    assert _device_builds.csr_facts(indptr, indices, 2, 2) is None  # NumPy arrays: the host checks
    assert launcher.launches == 0
