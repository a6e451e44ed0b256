"""The CUDA sources of csr_scalar, csr_vector and csr_stream run on the CPU, against SciPy (no GPU needed).

As test_kernel_blocks_emulated.py (whose shim this reuses: warps of 32 host threads, g++ with
AddressSanitizer), for each kernel's three ``VALUES`` instantiations: a csr matrix (a value per entry), a
csr_pattern one (every entry holds one value) and a csr_vi one (one-byte codes into a table of its distinct
values), and csr_stream's csr_pattern and csr_vi ones with short columns (16-bit offsets from a base column
per chunk of 256 entries) as well.  csr_stream runs its long-row pieces and tickets (rows longer than an item) and, as every kernel
here, small grids that force its stride loops; with beta = 0 each runs twice on the same pieces and tickets,
so a ticket that did not return to zero shows.  The codes of a csr matrix are a null pointer: a read of them aborts.
Skipped without g++.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp
from test_kernel_blocks_emulated import CTYPES, ENTRY, SHIM, compiled, write_arrays
from test_kernel_blocks_emulated import _matrices as _random_matrices

from cocktail import formats
from cocktail.formats.csr import CSR
from cocktail.kernels import csr_scalar, csr_stream, csr_vector, source
from cocktail.kernels.spec import CSR_VALUES, CODED_VALUES, ONE_VALUE, csr_columns, csr_values
from cocktail.kernels.csr_stream.rules import partition_shape as csr_stream_shape

# the exhaustive tier (pytest --exhaustive): every host emulation compiles its kernels with g++
pytestmark = [pytest.mark.skipif(shutil.which("g++") is None, reason="no g++"), pytest.mark.exhaustive]

#: What csr_stream uses beyond the shim: its staging buffer, the warp barrier, one-lane shuffles, the cache
#: hints and the ticket (atomicInc's wrap, as the GPU's; blocks run one after another, lane 0 alone takes it).
SHIM_MORE = r"""
#define __shared__
#define __align__(n)
alignas(16) unsigned char csr_stream_shared[1 << 16];
inline void __syncwarp(unsigned = 0xffffffffu) { tl_warp->bar.arrive_and_wait(); }
template <class T> T __shfl_sync(unsigned mask, T v, int src, int = 32) { return shuffle_from(mask, v, src); }
template <class T> T __ldcs(const T* p) { return *p; }
template <class T> T __ldcg(const T* p) { return *p; }
inline void __threadfence() {}
inline unsigned atomicInc(unsigned* p, unsigned limit) { unsigned old = *p; *p = old >= limit ? 0u : old + 1u; return old; }
"""

MAIN = r"""
static std::vector<std::vector<char>> arrays;
template <class U> U* exact(size_t k) {  // a heap copy of input array k, 16-byte aligned (null when empty)
    size_t bytes = arrays[k].size();
    if (!bytes) return nullptr;
    U* p = (U*)std::aligned_alloc(16, (bytes + 15) / 16 * 16);
    std::memcpy(p, arrays[k].data(), bytes);
    return p;
}
template <class T, class I, class F> int run(char** argv, F call) {
    unsigned grid = std::atoi(argv[4]), block = std::atoi(argv[5]);
    long long m = std::atoll(argv[6]), n = std::atoll(argv[7]);
    T alpha = (T)std::atof(argv[8]), beta = (T)std::atof(argv[9]);
    const int G = 8;
    std::vector<T> xb(n + 2 * G, (T)NAN), yb(m + 2 * G, (T)777);
    std::memcpy(xb.data() + G, arrays[arrays.size() - 1].data(), n * sizeof(T));
    std::memcpy(yb.data() + G, arrays[arrays.size() - 2].data(), m * sizeof(T));
    T* x = xb.data() + G;
    T* y = yb.data() + G;
    I* indptr = exact<I>(0); I* indices = exact<I>(1); T* data = exact<T>(2);
    const unsigned char* codes = exact<unsigned char>(3);
    I* item_row = exact<I>(4); I* item_nz = exact<I>(5); I* column_base = exact<I>(6);
    long long n_items = arrays[4].size() / sizeof(I) - 1;
    std::vector<T> partial(n_items > 0 ? n_items : 1);
    std::vector<unsigned> ticket(n_items > 0 ? n_items : 1, 0u);
    call(grid, block, (I)m, n_items, indptr, indices, data, codes, column_base, item_row, item_nz, x, y, alpha,
         beta, partial.data(), ticket.data());
    for (unsigned t : ticket) if (t) return 6;
    for (int i = 0; i < G; ++i) {
        if (yb[i] != (T)777 || yb[m + G + i] != (T)777) return 3;
    }
    FILE* o = std::fopen(argv[2], "wb");
    std::fwrite(y, sizeof(T), m, o);
    std::fclose(o);
    return 0;
}
""" + ENTRY

#: The launch of each kernel's expression, given the arrays of MAIN's run.
CALLS = {
    "csr_scalar": "csr_scalar<{args}>(m, indptr, indices, data, codes, x, y, alpha, beta)",
    "csr_vector": "csr_vector<{args}>(m, indptr, indices, data, codes, x, y, alpha, beta)",
    "csr_stream": "csr_stream<{args}>(n_items, item_row, item_nz, indptr, indices, data, codes, column_base, x, y, "
                  "alpha, beta, partial, ticket)",
}
LAMBDA = ("[](unsigned grid, unsigned block, auto m, long long n_items, auto indptr, auto indices, auto data, "
          "auto codes, auto column_base, auto item_row, auto item_nz, auto x, auto y, auto alpha, auto beta, auto partial, "
          "auto ticket) {{ for (int pass = 0; pass < (beta == 0 ? 2 : 1); ++pass) launch(grid, block, [&] {{ {call}; }}); }}")

#: (kernel, value dtype, index dtype, the expression's arguments after the precision and index, launches):
#: each launch (grid, block) runs every VALUES instantiation; csr_stream's items per lane as its partition's.
CASES = [
    ("csr_scalar", np.float64, np.int32, "", [(1, 32), (2, 64)]),
    ("csr_scalar", np.float32, np.int64, "", [(1, 32)]),
    ("csr_vector", np.float64, np.int64, "4, true", [(1, 32), (2, 64)]),
    ("csr_vector", np.float32, np.int32, "32, false", [(1, 64)]),
    ("csr_vector", np.float32, np.int32, "2, true", [(1, 32)]),
    ("csr_stream", np.float64, np.int32, "4, true", [(1, 32), (2, 64)]),
    ("csr_stream", np.float32, np.int64, "8, false", [(1, 64)]),
    ("csr_stream", np.float64, np.int64, "16, true", [(1, 32)]),
]


def _instances():
    """``[(case index, VALUES, SHORT_SHIFT)]`` for every instantiation, numbered as MAIN's switch: csr_stream's
    with short columns too."""
    return [(c, mode, shift) for c in range(len(CASES))
            for mode, shift in (csr_stream.VALUES_AND_COLUMNS if CASES[c][0] == "csr_stream"
                                else [(mode, 0) for mode in CSR_VALUES])]


def _arguments(case, mode, shift):
    """The template arguments of an instantiation."""
    kernel, v, i, more, _ = CASES[case]
    short = [str(shift)] if kernel == "csr_stream" else []
    return ", ".join(a for a in [CTYPES[v], CTYPES[i], more, str(mode)] + short if a)


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    """The compiled host emulation of every instantiation of CASES."""
    d = tmp_path_factory.mktemp("csr")
    cases = []
    for k, (c, mode, shift) in enumerate(_instances()):
        kernel, v, i, more, _ = CASES[c]
        call = LAMBDA.format(call=CALLS[kernel].format(args=_arguments(c, mode, shift)))
        cases.append(f"case {k}: return run<{CTYPES[v]}, {CTYPES[i]}>(argv, {call});\n")
    # one set of headers: csr_vector's (warp.cuh, common.cuh) serves all three
    bodies = [re.sub(r'#include "[^"]+"', "", source.read(f"{name}.cu")) for name in ("csr_scalar", "csr_stream")]
    code = (SHIM + SHIM_MORE + source.assemble("csr_vector") + "".join(bodies)
            + MAIN.replace("INSTANCES", "".join(cases)))
    return compiled(d, code)


def _matrices():
    """The block tests' matrices, and a wide band: 120 rows whose columns lie near ``1000 * row`` in 150,000, so
    that short columns' chunks start far from column 0 (and a chunk spans rows)."""
    rng = np.random.default_rng(5)
    rows = np.repeat(np.arange(120), 40)
    cols = np.clip(rows * 1000 + rng.integers(-3000, 3000, rows.size), 0, 149_999)
    band = sp.csr_array((rng.standard_normal(rows.size), (rows, cols)), shape=(120, 150_000))
    return _random_matrices() + [("wide band", band)]


def _stored(csr, mode, shift, rng):
    """``csr`` re-valued and stored for ``mode``: csr as it is; csr_pattern with every entry -1.25; csr_vi with
    256 values (and 0.0, -0.0 among them); with short columns for a ``shift``."""
    short = {"short_columns": bool(shift)}
    if mode == ONE_VALUE:
        return formats.get("csr_pattern").from_csr(csr.with_values(np.full(csr.nnz, -1.25, dtype=csr.dtype)),
                                                   **short)
    if mode == CODED_VALUES:  # a full table: codes past 127 too
        table = np.r_[np.linspace(-8.0, 8.0, 254), -0.0, 0.0].astype(csr.dtype)
        return formats.get("csr_vi").from_csr(csr.with_values(table[rng.integers(0, table.size, csr.nnz)]),
                                              **short)
    return csr


def _emulate(exe, tmp, k, fmt, kernel, items, x, y0, grid, block, alpha, beta):
    values, codes, _ = csr_values(fmt)
    indices, column_base, _ = csr_columns(fmt)
    item_row = item_nz = np.zeros(0, dtype=fmt.index_dtype)
    if kernel == "csr_stream":
        item_row, item_nz = csr_stream.partition(fmt.indptr, 32 * items, *csr_stream_shape(items))
    write_arrays(tmp / "in.bin", [fmt.indptr, indices, values, codes, item_row, item_nz, column_base, y0, x])
    m, n = fmt.shape
    args = [exe, tmp / "in.bin", tmp / "out.bin", k, grid, block, m, n, repr(alpha), repr(beta)]
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300,
                          env={"ASAN_OPTIONS": "detect_leaks=0"})
    assert proc.returncode == 0, (f"exit {proc.returncode} (3: y written past row m; 6: a ticket left nonzero): "
                                  f"{proc.stderr[-3000:]}")
    return np.fromfile(tmp / "out.bin", dtype=fmt.dtype)


def test_the_cases_name_registered_instantiations():
    modules = {"csr_scalar": csr_scalar, "csr_vector": csr_vector, "csr_stream": csr_stream}
    for case, mode, shift in _instances():
        kernel, v, i, _, _ = CASES[case]
        assert f"{kernel}<{_arguments(case, mode, shift)}>" in modules[kernel].SPEC.expressions(CTYPES[v], CTYPES[i])


@pytest.mark.parametrize("case", range(len(CASES)))
def test_csr_kernel_sources_on_the_host(case, binary, tmp_path):
    kernel, dtype, idt, more, launches = CASES[case]
    items = int(more.split(",")[0]) if kernel == "csr_stream" else 0
    for k, (c, mode, shift) in enumerate(_instances()):
        if c != case:
            continue
        for label, S in _matrices():
            S = sp.csr_array(S)
            rng = np.random.default_rng(case)
            csr = CSR.from_arrays(S.data.astype(dtype), S.indices, S.indptr, S.shape, index_dtype=idt)
            fmt = _stored(csr, mode, shift, rng)
            assert ("short_columns" in fmt.layouts()) == bool(shift)
            want_csr = fmt.to_csr()
            A = sp.csr_array((want_csr.data.astype(np.float64), want_csr.indices, want_csr.indptr), shape=S.shape)
            x = rng.standard_normal(S.shape[1]).astype(dtype)
            for grid, block in launches:
                for alpha, beta in ((1.5, -0.5), (2.0, 0.0)):
                    y0 = rng.standard_normal(S.shape[0]).astype(dtype)
                    if beta == 0:
                        y0[:] = np.nan  # never read when beta == 0
                    y = _emulate(binary, tmp_path, k, fmt, kernel, items, x, y0, grid, block, alpha, beta)
                    want = alpha * (A @ x.astype(np.float64)) + (beta * y0 if beta else 0.0)
                    scale = max(1.0, float(np.abs(want).max(initial=0)))
                    tol = 1e-4 if dtype == np.float32 else 1e-12
                    err = float(np.abs(y - want).max(initial=0)) / scale
                    assert np.isfinite(y).all() and err < tol, (kernel, mode, shift, label, grid, block, err)
