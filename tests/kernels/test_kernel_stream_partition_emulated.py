"""csr_stream's items cut on the GPU (stream_partition.cu) run on the CPU, against the NumPy path of
:func:`cocktail.kernels.csr_stream.partition`.

The kernels are grid-stride loops with no cooperation between threads, so a shim runs every thread of a small
grid one after another; the sources are compiled by g++ with AddressSanitizer and UBSan (as
test_kernel_blocks_emulated.py does).  The inclusive scan between the two launches is NumPy's, as it is
CuPy's on the device.  Skipped without g++.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from test_kernel_blocks_emulated import compiled, write_arrays

from cocktail.kernels import csr_stream, source

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
#include "KERNEL"

template <class T> std::vector<T> read(FILE* f) {
    long long bytes = 0;
    if (fread(&bytes, 8, 1, f) != 1) std::abort();
    std::vector<T> out(bytes / sizeof(T));
    if (bytes && fread(out.data(), 1, bytes, f) != (size_t)bytes) std::abort();
    return out;
}

template <class F> void grid(unsigned blocks, unsigned threads, F f) {  // every thread, one after another
    gridDim.x = blocks; blockDim.x = threads;
    for (blockIdx.x = 0; blockIdx.x < blocks; ++blockIdx.x)
        for (threadIdx.x = 0; threadIdx.x < threads; ++threadIdx.x) f();
}

template <class I> int run(FILE* in, FILE* out) {
    auto indptr = read<I>(in);
    auto knobs = read<long long>(in);  // capacity, own_row, rows_per_item, stage, ends (stage 1)
    const long long rows = (long long)indptr.size() - 1;
    std::vector<long long> pieces(rows + 1);
    if (knobs[3] == 0) {
        grid(2, 7, [&] { stream_pieces<I>(indptr.data(), rows, knobs[0], knobs[1], knobs[2], pieces.data()); });
        fwrite(pieces.data(), 8, pieces.size(), out);
        return 0;
    }
    pieces = read<long long>(in);
    auto ends = read<long long>(in);
    std::vector<I> item_row(ends.back()), item_nz(ends.back());
    grid(3, 5, [&] { stream_items<I>(indptr.data(), rows, knobs[0], pieces.data(), ends.data(), item_row.data(),
                                     item_nz.data()); });
    fwrite(item_row.data(), sizeof(I), item_row.size(), out);
    fwrite(item_nz.data(), sizeof(I), item_nz.size(), out);
    return 0;
}

int main(int argc, char** argv) {
    FILE* in = fopen(argv[1], "rb");
    FILE* out = fopen(argv[2], "wb");
    return argv[3][0] == '4' ? run<int>(in, out) : run<long long>(in, out);
}
"""


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    from pathlib import Path

    d = tmp_path_factory.mktemp("stream_partition")
    kernel = Path(source.__file__).parent / "stream_partition.cu"
    return compiled(d, MAIN.replace("KERNEL", str(kernel)))


def _emulated(binary, tmp, indptr, capacity, own_row, rows_per_item):
    """(item_row, item_nz) as the two launches and the scan between them make them."""
    import subprocess

    flag = "4" if indptr.dtype == np.int32 else "8"
    knobs = np.array([capacity, own_row, rows_per_item, 0], dtype=np.int64)
    write_arrays(tmp / "in", [indptr, knobs])
    subprocess.run([str(binary), str(tmp / "in"), str(tmp / "out"), flag], check=True)
    pieces = np.fromfile(tmp / "out", dtype=np.int64)
    ends = np.cumsum(pieces)
    knobs[3] = 1
    write_arrays(tmp / "in", [indptr, knobs, pieces, ends])
    subprocess.run([str(binary), str(tmp / "in"), str(tmp / "out"), flag], check=True)
    both = np.fromfile(tmp / "out", dtype=indptr.dtype)
    return both[:ends[-1]], both[ends[-1]:]


def _indptrs():
    rng = np.random.default_rng(11)
    lengths = rng.integers(0, 40, size=300)
    lengths[::7] = 0  # empty rows, some between cuts
    lengths[50] = 1000  # longer than several items
    lengths[51] = 200  # a long row right after another
    lengths[-5:] = 0  # empty rows at the end
    yield "mixed", np.r_[0, np.cumsum(lengths)]
    yield "empty", np.zeros(6, dtype=np.int64)
    yield "one row", np.array([0, 700])
    yield "no rows", np.array([0])
    yield "short rows", np.r_[0, np.cumsum(np.full(1000, 3))]
    yield "empty tail on a cut", np.r_[0, np.cumsum(np.r_[np.full(32, 8), np.zeros(4, dtype=np.int64)])]


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("name,indptr", list(_indptrs()), ids=[n for n, _ in _indptrs()])
@pytest.mark.parametrize("capacity,own_row,rows_per_item", [(256, 64, 256), (128, 32, 5), (32, 8, 1), (64, 63, 3)])
def test_stream_partition_kernels_cut_the_items_as_the_numpy_path(binary, tmp_path, dtype, name, indptr, capacity,
                                                                   own_row, rows_per_item):
    indptr = indptr.astype(dtype)
    want_row, want_nz = csr_stream.partition(indptr, capacity, own_row, rows_per_item)
    got_row, got_nz = _emulated(binary, tmp_path, indptr, capacity, own_row, rows_per_item)
    np.testing.assert_array_equal(got_row, want_row)
    np.testing.assert_array_equal(got_nz, want_nz)
    assert got_row.dtype == want_row.dtype == dtype


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_the_device_cuts_the_items_as_the_numpy_path(dtype):
    import cupy

    for name, indptr in _indptrs():
        indptr = indptr.astype(dtype)
        for knobs in [(256, 64, 256), (32, 8, 1)]:
            want = csr_stream.partition(indptr, *knobs)
            got = csr_stream.partition(cupy.asarray(indptr), *knobs)
            for w, g in zip(want, got):
                np.testing.assert_array_equal(cupy.asnumpy(g), w, err_msg=f"{name} {knobs}")
                assert g.dtype == dtype
