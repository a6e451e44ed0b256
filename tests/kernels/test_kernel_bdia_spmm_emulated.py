"""The CUDA source of bdia's block kernel (bdia_spmm) run on the CPU, against SciPy (no GPU needed).

As test_kernel_blocks_emulated.py (whose shim this reuses: warps of 32 host threads, g++ with
AddressSanitizer): bdia_spmm.cu is compiled for a few instantiations covering every columns-per-lane count,
lanes per row from 1 to 32 and vector strips on and off, and run with small grids (the grid-stride loops), k of
one, of a few and of several tiles, and X and Y in row-major, column-major and strided layouts.  The matrices
have bands reaching past the first and the last column (band_window's clipping), bands wider than the matrix,
rows of no in-matrix diagonal, and are tall, wide, empty or 1x1.  Every element of the X buffer that is not an
element of X is NaN and every element of the Y buffer that is not an element of Y holds a guard value, so a
read of X outside [0, n) or in a stride's gap, or a write of Y past row m or in a gap, shows; the format's
arrays are copied into buffers of their exact size for AddressSanitizer (a read of a data slot past the
diagonals or the padding shows).  Skipped without g++.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp
from test_kernel_blocks_emulated import CTYPES, ENTRY, SHIM, compiled, write_arrays
from test_kernel_blocks_emulated import _matrices as _random_matrices

from cocktail.formats.bdia import BDIA
from cocktail.formats.csr import CSR
from cocktail.kernels import source
from cocktail.kernels.bdia_spmm import prepare

# the exhaustive tier (pytest --exhaustive): every host emulation compiles its kernels with g++
pytestmark = [pytest.mark.skipif(shutil.which("g++") is None, reason="no g++"), pytest.mark.exhaustive]

GUARD = 777.0

#: What spmm.cuh's vector strips and diagonals.cuh use beyond the shim (bdia_spmm has no barrier: one aborts).
SHIM_MORE = r"""
inline void __syncthreads() { std::abort(); }
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
template <class T, class I, int LANES, int COLS, bool VEC, int ROWS> int run(char** argv) {
    unsigned grid = std::atoi(argv[4]), block = std::atoi(argv[5]);
    long long m = std::atoll(argv[6]), n = std::atoll(argv[7]), nbands = std::atoll(argv[8]);
    long long stride = std::atoll(argv[9]);
    T alpha = (T)std::atof(argv[10]), beta = (T)std::atof(argv[11]);
    long long k = std::atoll(argv[12]), xr = std::atoll(argv[13]), xc = std::atoll(argv[14]);
    long long yr = std::atoll(argv[15]), yc = std::atoll(argv[16]);
    long long x0 = std::atoll(argv[17]), y0 = std::atoll(argv[18]);
    I* offsets = exact<I>(0);
    long long* band_ptr = exact<long long>(1);
    T* data = exact<T>(2);
    const size_t ny = arrays.size() - 1;
    T* xb = exact<T>(3);
    T* yb = exact<T>(ny);
    T* x = xb + x0;
    T* y = yb + y0;
    launch(grid, block, [&] {
        bdia_spmm<T, I, LANES, COLS, VEC, ROWS>((I)m, k, xr, xc, yr, yc, (I)n, nbands, stride, offsets, band_ptr, data,
                                          x, y, alpha, beta);
    });
    FILE* o = std::fopen(argv[2], "wb");
    std::fwrite(yb, 1, arrays[ny].size(), o);
    std::fclose(o);
    return 0;
}
""" + ENTRY

#: Instantiations run: (value dtype, index dtype, lanes, columns per lane, vector strips, rows a group); every
#: columns per lane, lanes from 1 to 32, vector strips of one and of several 16-byte words, 1, 2 and 4 rows.
INSTANCES = [(np.float32, np.int32, 1, 4, True, 4), (np.float64, np.int64, 4, 2, True, 2),
             (np.float64, np.int32, 2, 8, True, 1), (np.float32, np.int64, 32, 8, False, 2),
             (np.float64, np.int32, 2, 1, False, 4), (np.float32, np.int32, 16, 4, False, 1),
             (np.float64, np.int64, 8, 2, False, 4)]
#: (grid, block): a grid of one or two blocks forces the grid-stride loops.
LAUNCHES = [(1, 32), (2, 64)]
#: (k, layout) of the scalar-strip instantiations: one column, a few, several tiles of the narrow shapes;
#: row-major with gaps between rows, column-major with gaps between columns.  Vector strips: row-major only,
#: k a multiple of 8 (so of every strip's columns).
OPERANDS = [(1, "C"), (3, "F"), (37, "C"), (37, "F")]
VECTOR_OPERANDS = [(8, "C"), (40, "C")]


def _banded(m: int, n: int, offsets, seed: int) -> sp.csr_array:
    rng = np.random.default_rng(seed)
    rows, cols = [], []
    for o in offsets:
        r = np.arange(max(0, -o), min(m, n - o))
        rows.append(r)
        cols.append(r + o)
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    return sp.coo_array((rng.standard_normal(rows.size), (rows, cols)), shape=(m, n)).tocsr()


def _matrices():
    """Banded matrices whose bands reach past both edges, and the blocked tests' random ones (bands of one or a
    few diagonals, empty rows, entries in the last columns)."""
    return [("stencil", _banded(70, 70, [-9, -1, 0, 1, 9], 1)),
            ("wide_band", _banded(20, 23, range(-15, 19), 2)),  # one band wider than the matrix
            ("tall", _banded(90, 12, [-80, -40, -39, -38, -3, 0, 1, 2, 3, 11], 3)),
            ("wide", _banded(11, 75, [-10, -4, 0, 5, 6, 7, 30, 31, 63, 64], 4)),
            *_random_matrices(),
            ("empty_0x0", sp.csr_array((0, 0)))]


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    """The compiled host emulation of every instantiation of INSTANCES."""
    d = tmp_path_factory.mktemp("bdia_spmm")
    cases = "".join(f"case {q}: return run<{CTYPES[v]}, {CTYPES[i]}, {t}, {c}, {'true' if vec else 'false'}, {r}>(argv);\n"
                    for q, (v, i, t, c, vec, r) in enumerate(INSTANCES))
    code = SHIM + SHIM_MORE + source.assemble("bdia_spmm") + MAIN.replace("INSTANCES", cases)
    return compiled(d, code)


def _operand(rows: int, k: int, order: str, fill: float, dtype, values=None):
    """A flat buffer holding a (rows, k) operand with gaps of 8 elements between its rows (order C) or columns
    (order F) and 8 guard elements before and after (so a row-major operand whose k is a multiple of 8 starts
    its rows on 16 bytes, as vector strips need), every other element ``fill``; returns (buffer, offset, row
    step, column step)."""
    gap = guard = 8
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


def _emulate(exe, tmp, q, fmt, X, Y0, order, launch, alpha, beta):
    """Y = alpha * A X + beta * Y0 as the emulated kernel computes it; checks every guard of the Y buffer."""
    m, n = fmt.shape
    k = X.shape[1]
    xb, x0, xr, xc = _operand(n, k, order, np.nan, fmt.dtype, X)
    yb, y0, yr, yc = _operand(m, k, order, GUARD, fmt.dtype, Y0)
    write_arrays(tmp / "in.bin", (fmt.offsets, prepare(fmt), fmt.data, xb, yb))
    grid, block = launch
    args = [exe, tmp / "in.bin", tmp / "out.bin", q, grid, block, m, n, fmt.offsets.shape[0], fmt.stride,
            repr(alpha), repr(beta), k, xr, xc, yr, yc, x0, y0]
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


@pytest.mark.parametrize("q", range(len(INSTANCES)),
                         ids=[f"{CTYPES[v]}-{CTYPES[i]}-{t}x{c}{'-vec' if vec else ''}-rows{r}".replace(" ", "")
                              for v, i, t, c, vec, r in INSTANCES])
def test_block_kernel_source_on_the_host(q, binary, tmp_path):
    dtype, idt, lanes, columns, vector, rows = INSTANCES[q]
    operands = VECTOR_OPERANDS if vector else OPERANDS
    for label, S in _matrices():
        S = sp.csr_array(S)
        csr = CSR.from_arrays(S.data.astype(dtype), S.indices, S.indptr, S.shape, index_dtype=idt)
        rng = np.random.default_rng(q)
        for align in (1, 32):
            fmt = BDIA.from_csr(csr, max_fill=None, align=align)
            assert fmt.index_dtype == idt and fmt.dtype == dtype
            for launch, (k, order) in zip(LAUNCHES * 2, operands):
                X = rng.standard_normal((S.shape[1], k)).astype(dtype)
                for alpha, beta in ((1.5, -0.5), (2.0, 0.0)):
                    Y0 = rng.standard_normal((S.shape[0], k)).astype(dtype)
                    if beta == 0:
                        Y0[:] = np.nan  # never read when beta == 0
                    Y = _emulate(binary, tmp_path, q, fmt, X, Y0, order, launch, alpha, beta)
                    want = alpha * (S @ X.astype(np.float64)) + (beta * Y0 if beta else 0.0)
                    scale = max(1.0, float(np.abs(want).max(initial=0)))
                    tol = 1e-4 if dtype == np.float32 else 1e-12
                    err = float(np.abs(Y - want).max(initial=0)) / scale
                    assert np.isfinite(Y).all() and err < tol, (label, align, launch, k, order, err)
