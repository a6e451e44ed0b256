"""The CUDA sources of the blocked formats' block kernels (bcsr_spmm, bell_spmm, sbell_spmm) run on the CPU,
against SciPy (no GPU needed).

As test_kernel_blocks_emulated.py (whose shim this reuses: warps of 32 host threads, g++ with
AddressSanitizer): each ``.cu`` file is compiled for a few instantiations covering every block row count
r, every block column count c (vector pieces of the units included) and every column count per lane, and run
with lanes per superrow from 1 to 32, small grids (the grid-stride loops), vector loads on and off, k of one,
of a few and of several tiles, and X and Y in row-major, column-major and strided layouts.  Every element of
the X buffer that is not an element of X is NaN and every element of the Y buffer that is not an element of Y
holds a guard value, so a read of X past row n (a block reaching past the last column), a write of Y past
row m (the last superrow's rows past the matrix) or a read or write in a stride's gap shows; the format's
arrays are copied into buffers of their exact size for AddressSanitizer.  Skipped without g++.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp
from test_kernel_blocks_emulated import CTYPES, ENTRY, SHIM, _matrices, compiled, write_arrays

from cocktail import formats
from cocktail.formats.csr import CSR
from cocktail.kernels import source

# the exhaustive tier (pytest --exhaustive): every host emulation compiles its kernels with g++
pytestmark = [pytest.mark.skipif(shutil.which("g++") is None, reason="no g++"), pytest.mark.exhaustive]

GUARD = 777.0

#: What spmm.cuh uses beyond the shim (its 16-byte words, unused by these kernels but compiled).
SHIM_MORE = r"""
inline float4 make_float4(float a, float b, float c, float d) { return float4{a, b, c, d}; }
inline double2 make_double2(double a, double b) { return double2{a, b}; }
"""

MAIN = r"""
static std::vector<std::vector<char>> arrays;
template <class U> U* exact(size_t k) {  // a heap copy of input array k, 16-byte aligned
    size_t bytes = arrays[k].size();
    U* p = (U*)std::aligned_alloc(16, bytes ? (bytes + 15) / 16 * 16 : 16);
    if (bytes) std::memcpy(p, arrays[k].data(), bytes);
    return p;
}
template <class T, class I, int R, int C, int COLS> int run(char** argv) {
    unsigned grid = std::atoi(argv[4]), block = std::atoi(argv[5]);
    long long m = std::atoll(argv[6]), n = std::atoll(argv[7]), superrows = std::atoll(argv[8]);
    long long p1 = std::atoll(argv[9]), p2 = std::atoll(argv[10]);
    int vec = std::atoi(argv[11]), lanes = std::atoi(argv[12]);
    T alpha = (T)std::atof(argv[13]), beta = (T)std::atof(argv[14]);
    long long k = std::atoll(argv[15]), xr = std::atoll(argv[16]), xc = std::atoll(argv[17]);
    long long yr = std::atoll(argv[18]), yc = std::atoll(argv[19]);
    long long x0 = std::atoll(argv[20]), y0 = std::atoll(argv[21]);
    const size_t nx = arrays.size() - 2, ny = arrays.size() - 1;
    T* xb = exact<T>(nx);
    T* yb = exact<T>(ny);
    T* x = xb + x0;
    T* y = yb + y0;
    KERNEL_CALL
    FILE* o = std::fopen(argv[2], "wb");
    std::fwrite(yb, 1, arrays[ny].size(), o);
    std::fclose(o);
    return 0;
}
""" + ENTRY

_HEAD = "(I)superrows, (I)m, k, xr, xc, yr, yc, lanes, (I)n"
CALLS = {
    "bcsr_spmm": "I* row_ptr = exact<I>(0); I* col = exact<I>(1); T* data = exact<T>(2);\n"
                 f"launch(grid, block, [&] {{ bcsr_spmm<T, I, R, C, COLS>({_HEAD}, p1, vec, row_ptr, col, data, x, y, "
                 "alpha, beta); });",
    "bell_spmm": "I* col = exact<I>(0); T* data = exact<T>(1);\n"
                 f"launch(grid, block, [&] {{ bell_spmm<T, I, R, C, COLS>({_HEAD}, (I)p1, p2, vec, col, data, x, y, "
                 "alpha, beta); });",
    "sbell_spmm": "long long* slice_ptr = exact<long long>(0); I* col = exact<I>(1); T* data = exact<T>(2);\n"
                  f"launch(grid, block, [&] {{ sbell_spmm<T, I, R, C, COLS>({_HEAD}, p1, vec, slice_ptr, col, data, "
                  "x, y, alpha, beta); });",
}
FORMAT = {"bcsr_spmm": "bcsr", "bell_spmm": "bell", "sbell_spmm": "sbell"}

#: Instantiations run per kernel: (value dtype, index dtype, block shape, columns per lane); every r, every c
#: and every columns per lane overall on each kernel.
INSTANCES = {
    "bcsr_spmm": [(np.float32, np.int32, (2, 4), 4), (np.float64, np.int64, (8, 8), 2), (np.float64, np.int32, (3, 3), 1),
                  (np.float32, np.int64, (1, 1), 2), (np.float32, np.int32, (4, 2), 4)],
    "bell_spmm": [(np.float32, np.int32, (1, 4), 1), (np.float64, np.int64, (8, 2), 2), (np.float32, np.int64, (3, 8), 4),
                  (np.float64, np.int32, (4, 3), 4), (np.float64, np.int32, (2, 1), 2)],
    "sbell_spmm": [(np.float64, np.int32, (2, 4), 4), (np.float32, np.int64, (4, 1), 1), (np.float32, np.int32, (8, 8), 2),
                   (np.float64, np.int64, (3, 2), 4), (np.float32, np.int32, (1, 3), 2)],
}
#: Per kernel: (format params, launch params) pairs; a grid of one or two blocks forces the grid-stride loops.
LAUNCHES = {
    "bcsr_spmm": [({}, {"lanes": 1, "grid": 1, "block": 32, "vec": 1}), ({}, {"lanes": 4, "grid": 2, "block": 64, "vec": 0}),
                  ({}, {"lanes": 32, "grid": 1, "block": 64, "vec": 1})],
    "bell_spmm": [({"align": 1}, {"lanes": 2, "grid": 1, "block": 32, "vec": 1}),
                  ({"align": 32}, {"lanes": 8, "grid": 2, "block": 64, "vec": 0})],
    "sbell_spmm": [({"slice_height": 3}, {"lanes": 1, "grid": 1, "block": 32, "vec": 1}),
                   ({"slice_height": 32}, {"lanes": 16, "grid": 2, "block": 64, "vec": 0}),
                   ({"slice_height": 1000}, {"lanes": 4, "grid": 1, "block": 32, "vec": 1})],
}
#: (k, layout): one column, a few, several tiles of the narrow shapes; row-major with gaps between rows,
#: column-major with gaps between columns, and the transposed windows of wider arrays.
OPERANDS = [(1, "C"), (3, "F"), (37, "C"), (37, "F")]


@pytest.fixture(scope="module")
def binaries(tmp_path_factory):
    """kernel name -> path of its compiled host emulation (every instantiation of INSTANCES)."""
    out = {}
    for name, instances in INSTANCES.items():
        d = tmp_path_factory.mktemp(name)
        cases = "".join(f"case {q}: return run<{CTYPES[v]}, {CTYPES[i]}, {r}, {c}, {cols}>(argv);\n"
                        for q, (v, i, (r, c), cols) in enumerate(instances))
        code = SHIM + SHIM_MORE + source.assemble(name) + MAIN.replace("KERNEL_CALL", CALLS[name]).replace("INSTANCES", cases)
        out[name] = compiled(d, code)
    return out


def _arrays(name, fmt):
    """The format's arrays as the kernel takes them, and its two scalar parameters."""
    if name == "bcsr_spmm":
        return [fmt.row_ptr, fmt.col, fmt.data], fmt.nblocks, 0
    if name == "bell_spmm":
        return [fmt.col, fmt.data], fmt.width, fmt.stride
    return [fmt.slice_ptr.astype(np.int64), fmt.col, fmt.data], fmt.slice_height, 0


def _operand(rows: int, k: int, order: str, fill: float, dtype, values=None):
    """A flat buffer holding a (rows, k) operand with gaps between its rows (order C) or columns (order F) and
    guard elements before and after, every other element ``fill``; returns (buffer, offset, row step,
    column step)."""
    gap, guard = 3, 5
    if order == "C":
        row_step, col_step = k + gap, 1
    else:
        row_step, col_step = 1, rows + gap
    size = guard + (rows - 1) * row_step + (k - 1) * col_step + 1 + guard if rows and k else 2 * guard
    buf = np.full(size, fill, dtype=dtype)
    if values is not None and rows and k:
        r, c = np.meshgrid(np.arange(rows), np.arange(k), indexing="ij")
        buf[guard + r * row_step + c * col_step] = values
    return buf, guard, row_step, col_step


def _emulate(exe, tmp, q, name, fmt, X, Y0, order, launch, alpha, beta):
    """Y = alpha * A X + beta * Y0 as the emulated kernel computes it; checks every guard of the Y buffer."""
    arrays, p1, p2 = _arrays(name, fmt)
    m, n = fmt.shape
    k = X.shape[1]
    xb, x0, xr, xc = _operand(n, k, order, np.nan, fmt.dtype, X)
    yb, y0, yr, yc = _operand(m, k, order, GUARD, fmt.dtype, Y0)
    write_arrays(tmp / "in.bin", arrays + [xb, yb])
    args = [exe, tmp / "in.bin", tmp / "out.bin", q, launch["grid"], launch["block"], m, n, fmt.superrows, p1, p2,
            launch["vec"], launch["lanes"], repr(alpha), repr(beta), k, xr, xc, yr, yc, x0, y0]
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=120,
                          env={"ASAN_OPTIONS": "detect_leaks=0"})
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-3000:]}"
    out = np.fromfile(tmp / "out.bin", dtype=fmt.dtype)
    mask = np.ones(out.shape, dtype=bool)
    if m and k:
        r, c = np.meshgrid(np.arange(m), np.arange(k), indexing="ij")
        mask[y0 + r * yr + c * yc] = False
        Y = out[y0 + r * yr + c * yc]
    else:
        Y = np.zeros((m, k), dtype=fmt.dtype)
    assert (out[mask] == GUARD).all(), "Y written outside its elements (past row m, or in a gap)"
    return Y


@pytest.mark.parametrize("name", list(INSTANCES))
def test_block_kernel_source_on_the_host(name, binaries, tmp_path):
    for q, (dtype, idt, block, _) in enumerate(INSTANCES[name]):
        for label, S in _matrices():
            S = sp.csr_array(S)
            csr = CSR.from_arrays(S.data.astype(dtype), S.indices, S.indptr, S.shape, index_dtype=idt)
            rng = np.random.default_rng(q)
            for (fparams, launch), (k, order) in zip(LAUNCHES[name] * 2, OPERANDS):
                fmt = formats.get(FORMAT[name]).from_csr(csr, block=block, max_fill=None, **fparams)
                assert fmt.index_dtype == idt and fmt.dtype == dtype
                X = rng.standard_normal((S.shape[1], k)).astype(dtype)
                for alpha, beta in ((1.5, -0.5), (2.0, 0.0)):
                    Y0 = rng.standard_normal((S.shape[0], k)).astype(dtype)
                    if beta == 0:
                        Y0[:] = np.nan  # never read when beta == 0
                    Y = _emulate(binaries[name], tmp_path, q, name, fmt, X, Y0, order, launch, alpha, beta)
                    want = alpha * (S @ X.astype(np.float64)) + (beta * Y0 if beta else 0.0)
                    scale = max(1.0, float(np.abs(want).max(initial=0)))
                    tol = 1e-4 if dtype == np.float32 else 1e-12
                    err = float(np.abs(Y - want).max(initial=0)) / scale
                    assert np.isfinite(Y).all() and err < tol, (label, block, dtype, idt, fparams, launch, k, order,
                                                                err)
