"""The device builds of the blocked formats (block_build.cu) and of the diagonal formats (diagonal_build.cu) run on
the CPU, against the NumPy path of the same builders, to the bit.  The emulation also runs SELL's and ELL's builds
(sell_build.cu) and a Cocktail's split (part_split.cu), tested in test_build_parts_emulated.py.

The kernels are grid-stride loops whose threads share nothing but atomic counters, so a shim runs every thread of a
small grid one after another (as test_kernel_stream_partition_emulated.py does); the sources are compiled by g++
with AddressSanitizer and UBSan (test_kernel_blocks_emulated.py's ``compiled``), each array a heap copy of its
exact size.  An emulated launcher stands in for CuPy's under :func:`cocktail.kernels.helper_launch.launching`, so the
formats' whole device path runs on NumPy arrays: the launch arguments, the scans between the passes, the one
transfer and the host arithmetic after it are checked with the kernels.  The arrays the kernels write whole start as
garbage.  Grids of at most two blocks of 32 threads force the grid-stride loops.  Skipped without g++.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp
from test_kernel_blocks_emulated import compiled

from cocktail import formats
from cocktail.errors import FormatFillError
from cocktail.formats import block_grid
from cocktail.formats.csr import CSR
from cocktail.kernels import block_build, diagonal_build, helper_launch, source

# the exhaustive tier (pytest --exhaustive): every host emulation compiles its kernels with g++
pytestmark = [pytest.mark.skipif(shutil.which("g++") is None, reason="no g++"), pytest.mark.exhaustive]

SHIM = r"""
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
struct dim3 { unsigned x = 0; };
dim3 threadIdx, blockIdx, blockDim, gridDim;
template <class T> T atomicAdd(T* p, T v) { T old = *p; *p = old + v; return old; }
template <class T> T atomicMax(T* p, T v) { T old = *p; if (v > old) *p = v; return old; }
template <class T> T atomicMin(T* p, T v) { T old = *p; if (v < old) *p = v; return old; }
template <class F> void launch(unsigned blocks, unsigned threads, F f) {  // every thread, one after another
    gridDim.x = blocks; blockDim.x = threads;
    for (blockIdx.x = 0; blockIdx.x < blocks; ++blockIdx.x)
        for (threadIdx.x = 0; threadIdx.x < threads; ++threadIdx.x) f();
}
"""

MAIN = r"""
static std::vector<std::vector<char>> args;
static std::vector<void*> pointers;
template <class T> T* P(size_t k) { return (T*)pointers[k]; }
template <class T> T S(size_t k) {  // a scalar of exactly the kernel's type, as CuPy passes it
    if (args[k].size() != sizeof(T)) std::abort();
    T v;
    std::memcpy(&v, args[k].data(), sizeof(T));
    return v;
}
typedef unsigned long long ull;
typedef long long ll;
int main(int argc, char** argv) {
    FILE* f = std::fopen(argv[1], "rb");
    long long kind, count;
    std::vector<long long> kinds;
    while (std::fread(&kind, 8, 1, f) == 1 && std::fread(&count, 8, 1, f) == 1) {
        std::vector<char> a(count);
        if (count && std::fread(a.data(), 1, count, f) != (size_t)count) return 4;
        kinds.push_back(kind);
        void* p = nullptr;
        if (kind == 0) {  // an array: a heap copy of its exact size
            p = std::malloc(count ? count : 1);
            if (count) std::memcpy(p, a.data(), count);
        }
        pointers.push_back(p);
        args.push_back(std::move(a));
    }
    std::fclose(f);
    unsigned grid = std::atoi(argv[4]), block = std::atoi(argv[5]);
    switch (std::atoi(argv[3])) {
        CASES
        default: return 5;
    }
    FILE* o = std::fopen(argv[2], "wb");
    for (size_t k = 0; k < args.size(); ++k) {
        if (kinds[k] == 0) std::fwrite(pointers[k], 1, args[k].size(), o);
    }
    std::fclose(o);
    return 0;
}
"""

#: Each kernel's call from the argument file (P<T>(k): an array, S<T>(k): a scalar), in the typedefs of its case.
CALLS = {
    "block_build_counts": "P<I>(0), P<I>(1), P<W>(2), S<ll>(3), S<ll>(4), S<int>(5), S<ll>(6), S<ll>(7), S<ll>(8), "
                          "S<ull>(9), P<ll>(10)",
    "block_build_write": "P<I>(0), P<I>(1), P<W>(2), S<ll>(3), S<ll>(4), S<int>(5), S<ll>(6), S<ll>(7), S<ll>(8), "
                         "P<ll>(9), S<ll>(10), S<ll>(11), S<ll>(12), P<I>(13), P<W>(14)",
    "diagonal_build_marks": "P<I>(0), P<I>(1), P<W>(2), S<ll>(3), S<ull>(4), S<ll>(5), P<Sc>(6)",
    "diagonal_build_edges": "S<ll>(0), P<Sc>(1)",
    "diagonal_build_fill": "P<I>(0), P<I>(1), P<W>(2), S<ll>(3), S<ll>(4), P<Sc>(5), P<Sc>(6), S<ll>(7), S<ll>(8), "
                           "S<ull>(9), P<I>(10), P<W>(11), S<ll>(12), S<ll>(13), P<I>(14), P<ll>(15)",
    "sell_build_slices": "P<I>(0), P<I>(1), S<ll>(2), S<ll>(3), P<ll>(4), P<ll>(5), P<ll>(6), P<ll>(7)",
    "sell_build_write": "P<I>(0), P<I>(1), P<W>(2), S<ll>(3), S<ll>(4), S<ll>(5), P<ll>(6), P<ll>(7), P<ll>(8), "
                        "S<ll>(9), P<C>(10), P<W>(11)",
    "part_split_count": "P<I>(0), P<I>(1), S<ll>(2), S<ll>(3), P<ll>(4), P<unsigned char>(5), P<I>(6), "
                        "P<unsigned char>(7)",
    "part_split_fill": "P<I>(0), P<I>(1), P<W>(2), S<ll>(3), P<unsigned char>(4), S<ll>(5), P<I>(6), P<I>(7), P<W>(8)",
}
#: The template parameters of each kernel, in order.
PARAMETERS = {"block_build_counts": "W I", "block_build_write": "W I", "diagonal_build_marks": "W I Sc",
              "diagonal_build_edges": "Sc", "diagonal_build_fill": "W I Sc", "sell_build_slices": "I",
              "sell_build_write": "W I C", "part_split_count": "I", "part_split_fill": "W I"}
STEMS = ("block_build", "diagonal_build", "sell_build", "part_split")
EXPRESSIONS = [e for stem in STEMS for e in source.HELPERS[stem]]
THREADS = 32


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    """The emulation of every instantiation of the helpers: case k runs EXPRESSIONS[k]."""
    cases = []
    for k, expression in enumerate(EXPRESSIONS):
        name, _, targs = expression.partition("<")
        types = [t.strip() for t in targs.rstrip(">").split(",")]
        typedefs = "".join(f"typedef {t} {p}; " for t, p in zip(types, PARAMETERS[name].split()))
        cases.append(f"case {k}: {{ {typedefs}launch(grid, block, [&] {{ {name}<{PARAMETERS[name].replace(' ', ', ')}>"
                     f"({CALLS[name]}); }}); break; }}\n")
    code = "".join(re.sub(r'#(include "[^"]+"|pragma once)', "", source.read(f))
                   for f in ("build_words.cuh", *(f"{stem}.cu" for stem in STEMS)))
    return compiled(tmp_path_factory.mktemp("builds"), SHIM + code + MAIN.replace("CASES", "".join(cases)))


class EmulatedLauncher:
    """helper_launch's launcher protocol, running the kernels in the emulation; counts launches and transfers."""

    def __init__(self, exe, tmp):
        self.exe, self.tmp, self.launches, self.fetches = exe, tmp, [], 0

    def __call__(self, stem, expression, items, block, args):
        assert stem in STEMS and expression in source.HELPERS[stem] and block > 0
        self.launches.append(expression)
        with open(self.tmp / "args.bin", "wb") as f:
            for a in args:
                kind, data = ((2, b"") if a is None else (0, np.ascontiguousarray(a).tobytes())
                              if isinstance(a, np.ndarray) else (1, a.tobytes()))
                f.write(np.int64(kind).tobytes() + np.int64(len(data)).tobytes() + data)
        grid = min(2, max(1, -(-int(items) // THREADS)))
        proc = subprocess.run([str(self.exe), self.tmp / "args.bin", self.tmp / "out.bin",
                               str(EXPRESSIONS.index(expression)), str(grid), str(THREADS)],
                              capture_output=True, text=True, timeout=300, env={"ASAN_OPTIONS": "detect_leaks=0"})
        assert proc.returncode == 0, f"{expression}: exit {proc.returncode}: {proc.stderr[-3000:]}"
        out, at = np.fromfile(self.tmp / "out.bin", dtype=np.uint8), 0
        for a in args:
            if isinstance(a, np.ndarray):
                if a.flags.writeable:
                    np.copyto(a, out[at:at + a.nbytes].view(a.dtype).reshape(a.shape))
                at += a.nbytes

    def fetch(self, buffer):
        self.fetches += 1
        return np.array(buffer, copy=True)


@pytest.fixture
def launcher(binary, tmp_path, monkeypatch):
    """The emulated launcher; the arrays the kernels write whole start as garbage (bytes 0xa5)."""

    def garbage(xp, size, dtype):
        out = np.empty(int(size), dtype=dtype)
        out.view(np.uint8)[:] = 0xA5
        return out

    monkeypatch.setattr(block_build, "uninitialised", garbage)
    return EmulatedLauncher(binary, tmp_path)


def _same(got, want, label):
    """Two builds hold the same arrays: keys, dtypes, shapes and bytes (a -0.0 is not a 0.0)."""
    assert type(got) is type(want) and got.params == want.params, label
    g, w = got.arrays(), want.arrays()
    assert list(g) == list(w), label
    for key in w:
        assert g[key].dtype == w[key].dtype and g[key].shape == w[key].shape, (label, key)
        assert np.ascontiguousarray(g[key]).tobytes() == np.ascontiguousarray(w[key]).tobytes(), (label, key)


def _build(name, csr, params, launcher=None):
    """``name``'s build of ``csr`` on the host, or with ``launcher`` through the device path: the format, or the
    error it refused with."""
    try:
        if launcher is None:
            return formats.get(name).from_csr(csr, **params)
        with helper_launch.launching(launcher):
            return formats.get(name).from_csr(csr, **params)
    except (FormatFillError, ValueError) as exc:
        return exc


def _check(name, csr, params, launcher, label):
    want = _build(name, csr, params)
    got = _build(name, csr, params, launcher)
    if isinstance(want, Exception):
        assert type(got) is type(want) and str(got) == str(want), (label, got, want)
    else:
        assert not isinstance(got, Exception), (label, got)
        _same(got, want, label)
    return got


def _csr(S, dtype, index_dtype, zeros: int = 0, seed: int = 0):
    """``S`` (canonical) in ``dtype`` and ``index_dtype``, ``zeros`` of its entries stored as explicit zeros (half of
    them -0.0)."""
    S = sp.csr_array(S)
    S.sum_duplicates()
    S.sort_indices()
    data = S.data.astype(dtype)
    if np.dtype(dtype).kind == "c":
        data = data + 1j * (np.arange(data.size) % 3).astype(dtype)
    if zeros and data.size:
        where = np.random.default_rng(seed).choice(data.size, min(zeros, data.size), replace=False)
        data[where[::2]] = 0
        data[where[1::2]] = -0.0
    return CSR.from_arrays(data, S.indices, S.indptr, S.shape, index_dtype=index_dtype)


def _block_matrices():
    """More super-rows than the emulated grid's threads, empty rows and super-rows, a long row, entries in the last
    columns, a partial last super-row, shapes not multiples of any block, square and not."""
    rng = np.random.default_rng(5)
    m, n = 203, 403
    lengths = rng.integers(0, 14, size=m)
    lengths[::5] = 0
    lengths[40:57] = 0  # whole empty super-rows of every height
    lengths[7] = n
    cols = np.concatenate([np.sort(rng.choice(n, size=k, replace=False)) for k in lengths])
    rows = np.repeat(np.arange(m), lengths)
    rows, cols = np.r_[rows, 0, m - 1], np.r_[cols, n - 1, n - 2]
    random = sp.coo_array((rng.standard_normal(rows.size), (rows, cols)), shape=(m, n)).tocsr()
    pattern = sp.random_array((70, 60), density=0.06, random_state=6) + sp.eye_array(70, 60)
    blocky = sp.kron(pattern, np.ones((3, 3)), format="csr")[:205]  # dense 3 x 3 blocks, cut at the end
    tall = sp.random_array((300, 21), density=0.1, format="csr", random_state=2)
    return [("random", random), ("blocky", blocky), ("tall", tall),
            ("1x1", sp.csr_array(np.array([[2.0]]))), ("empty", sp.csr_array((70, 9))), ("no rows", sp.csr_array((0, 5)))]


BLOCK_CASES = [(np.float64, np.int32), (np.float32, np.int64), (np.float16, np.int32), (np.complex128, np.int64),
               (np.complex64, np.int32)]
BLOCK_PARAMS = {"bcsr": [{}, {"max_fill": 1.5}], "bell": [{"align": 1}, {"align": 32}, {"max_fill": 2.0}],
                "sbell": [{"slice_height": 3}, {"slice_height": 32}, {"slice_height": 1000}, {"max_fill": 2.0}]}


@pytest.mark.parametrize("name", list(BLOCK_PARAMS))
@pytest.mark.parametrize("dtype,index_dtype", BLOCK_CASES, ids=lambda v: np.dtype(v).name)
def test_blocked_formats_built_by_the_kernels_equal_the_host_builds(launcher, name, dtype, index_dtype):
    blocks = [(1, 1), (2, 4), (3, 3), (8, 8), (4, 1), (1, 8)] if dtype == np.float64 else [(2, 4), (3, 2), (8, 1)]
    for label, S in _block_matrices():
        csr = _csr(S, dtype, index_dtype, zeros=9, seed=len(label))
        for block in blocks:
            for params in BLOCK_PARAMS[name]:
                params = {"max_fill": None, "block": block, **params}
                launches, fetches = len(launcher.launches), launcher.fetches
                got = _check(name, csr, params, launcher, (label, block, params))
                if csr.shape[0] and not isinstance(got, Exception):
                    # two passes and one transfer (an empty layout is not written)
                    assert len(launcher.launches) - launches == 1 + bool(got.data.size), (label, block, params)
                    assert launcher.fetches - fetches == 1, (label, block, params)


def _with_diagonals(S, offsets, seed, fill=0.9):
    """``S`` with most cells of the diagonals ``offsets`` added."""
    m, n = S.shape
    rng = np.random.default_rng(seed)
    rows, cols = [], []
    for k in offsets:
        r = np.arange(max(0, -k), min(m, n - k))
        r = r[rng.random(r.size) < fill]
        rows.append(r)
        cols.append(r + k)
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    D = sp.csr_array((rng.choice([1.0, -2.0, 0.5], rows.size), (rows, cols)), shape=(m, n))
    return sp.csr_array(S + D)


def _diagonal_matrices():
    """Bands of adjacent diagonals and lone ones, diagonals at both corners, partly filled diagonals, empty rows and
    rows past the stride's rounding, more rows than the emulated grid's threads, square, tall and wide."""
    m, n = 230, 170
    empty = sp.csr_array((m, n))
    banded = _with_diagonals(empty, (-(m - 1), -40, -3, -2, -1, 0, 1, 5, 6, n - 1), 1)
    banded = sp.csr_array(banded.multiply(np.repeat(np.arange(m) % 7 != 3, n).reshape(m, n)))  # empty rows
    stencil = sp.diags([np.full(300 - abs(k), float(k) or 4.0) for k in (-20, -1, 0, 1, 20)], [-20, -1, 0, 1, 20],
                       shape=(300, 300), format="csr")
    wide = _with_diagonals(sp.csr_array((40, 500)), (-39, 0, 1, 2, 100, 499), 3)
    scattered = sp.csr_array(sp.random_array((90, 90), density=0.03, random_state=4) + sp.eye_array(90))
    return [("banded", banded), ("stencil", stencil), ("wide", wide), ("scattered", scattered),
            ("1x1", sp.csr_array(np.array([[2.0]]))), ("empty", sp.csr_array((6, 4)))]


DIAGONAL_CASES = [(np.float64, np.int32), (np.float32, np.int64), (np.float16, np.int64), (np.complex128, np.int32),
                  (np.complex64, np.int64)]
DIAGONAL_PARAMS = [{}, {"align": 1}, {"align": 7}, {"max_fill": 2.0}]


@pytest.mark.parametrize("scan", ["int32", "int64"])
@pytest.mark.parametrize("name", ["dia", "bdia", "dia_vi"])
@pytest.mark.parametrize("dtype,index_dtype", DIAGONAL_CASES, ids=lambda v: np.dtype(v).name)
def test_diagonal_formats_built_by_the_kernels_equal_the_host_builds(launcher, monkeypatch, name, dtype, index_dtype,
                                                                     scan):
    if scan == "int64":  # the 64-bit table, as for a matrix whose counts pass 2**31
        monkeypatch.setattr(diagonal_build, "scan_dtype", lambda csr, bands: np.dtype(np.int64))
    for label, S in _diagonal_matrices():
        csr = _csr(S, dtype, index_dtype, zeros=7, seed=len(label))
        for params in DIAGONAL_PARAMS:
            params = {"max_fill": None, **params}
            launches, fetches = len(launcher.launches), launcher.fetches
            got = _check(name, csr, params, launcher, (label, params))
            if csr.nnz and not isinstance(got, Exception):
                # marks (and band starts), one transfer, fill; DIA-VI's value table adds its own transfers
                assert len(launcher.launches) - launches == 2 + (name == "bdia"), (label, params)
                assert name == "dia_vi" or launcher.fetches - fetches == 1, (label, params)
                assert "diagonal_build_marks" in launcher.launches[-2 - (name == "bdia")]


def test_the_kernels_count_explicit_zeros_of_every_value_type(launcher):
    """Explicit zeros (0.0, -0.0, complex ones with a signed zero part) are recorded as on the host; none means no
    search for them."""
    S = sp.diags([np.ones(100), np.ones(99)], [0, 1], shape=(100, 100), format="csr")
    for dtype in (np.float16, np.float32, np.float64, np.complex64, np.complex128):
        for values in ([0.0], [-0.0], [complex(-0.0, 0.0)], [complex(0.0, -0.0)], [complex(0.0, 1.0)], [np.nan]):
            if np.dtype(dtype).kind != "c" and isinstance(values[0], complex):
                continue
            csr = _csr(S, dtype, np.int32)
            data = csr.data.copy()
            data[[3, 50, 198]] = np.asarray(values, dtype=dtype)[0]
            csr = CSR.from_arrays(data, csr.indices, csr.indptr, csr.shape)
            for name, params in (("dia", {}), ("bdia", {}), ("bcsr", {"block": (2, 2)}), ("sbell", {"block": (1, 4)})):
                got = _check(name, csr, params, launcher, (dtype, values, name))
                assert got.zero_row.shape[0] == (3 if data[3] == 0 else 0), (dtype, values, name)


def test_a_cocktails_diagonal_part_is_built_by_the_kernels(launcher):
    """The planner's bdia + coo: the diagonal part (a CSR lent its rows) built on the device path as on the host."""
    S = _with_diagonals(sp.random_array((260, 260), density=0.02, random_state=9), (-5, -1, 0, 1, 2, 40), 2)
    for index_dtype in (np.int32, np.int64):
        csr = _csr(S, np.float64, index_dtype, zeros=5)
        for part in ("bdia", "dia", "dia_vi"):
            params = {"parts": [(part, {"max_fill": None}, ("diagonals", [-5, -1, 0, 1, 2, 40])), ("coo", {}, ("rest",))]}
            got, want = _build("cocktail", csr, params, launcher), _build("cocktail", csr, params)
            for g, w in zip(got.parts, want.parts):
                _same(g, w, (part, index_dtype))


def test_a_huge_table_of_diagonals_is_built_as_on_the_host(launcher):
    """Far more possible diagonals than entries: the device takes the host's path (a sort of the diagonals), no
    kernel of its own."""
    csr = _csr(sp.csr_array(([1.0, 2.0, 3.0], ([0, 5, 70000], [3, 90000, 1])), shape=(80000, 100000)),
               np.float64, np.int32)
    for name in ("dia", "bdia"):
        got = _check(name, csr, {"max_fill": None}, launcher, name)
        assert not isinstance(got, Exception) and not launcher.launches


def test_the_instantiations_cover_every_value_and_index_type():
    """Every value word (and DIA-VI's codes) with both index types, the diagonals' with both scan types."""
    words = {block_build.word(np.dtype(d)) for d in (np.float16, np.float32, np.float64, np.complex64, np.complex128)}
    for stem, kernels in (("block_build", ("block_build_counts", "block_build_write")),
                          ("diagonal_build", ("diagonal_build_marks", "diagonal_build_fill"))):
        for kernel in kernels:
            for w in words:
                for i in ("int", "long long"):
                    scans = ("int", "long long") if stem == "diagonal_build" else (None,)
                    for s in scans:
                        targs = ", ".join(t for t in (w, i, s) if t)
                        assert f"{kernel}<{targs}>" in source.HELPERS[stem]
    assert {f"diagonal_build_fill<unsigned char, {i}, {s}>" for i in ("int", "long long") for s in ("int", "long long")} \
        <= set(source.HELPERS["diagonal_build"])
    assert max(block_grid.BLOCK_SIZES) <= block_build.MAX_ROWS  # every block height fits the merge


@pytest.mark.gpu
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_the_device_builds_equal_the_host_builds(index_dtype):
    import cupy

    cases = [(name, S, {"max_fill": None, **p}) for label, S in _diagonal_matrices() for name in ("dia", "bdia", "dia_vi")
             for p in DIAGONAL_PARAMS[:2]]
    cases += [(name, S, {"max_fill": None, "block": b}) for label, S in _block_matrices() for name in BLOCK_PARAMS
              for b in ((1, 4), (3, 3), (8, 8))]
    for name, S, params in cases:
        for dtype in (np.float64, np.float32, np.complex128):
            host = _csr(S, dtype, index_dtype, zeros=5)
            dev = CSR.from_arrays(*(cupy.asarray(a) for a in (host.data, host.indices, host.indptr)), host.shape,
                                  index_dtype=index_dtype)
            want, got = _build(name, host, params), _build(name, dev, params)
            if isinstance(want, Exception):
                assert type(got) is type(want) and str(got) == str(want)
                continue
            for key, arr in want.arrays().items():
                g = got.arrays()[key]
                assert g.dtype == arr.dtype and g.shape == arr.shape, (name, key)
                assert cupy.asnumpy(g).tobytes() == np.ascontiguousarray(arr).tobytes(), (name, key, params)
