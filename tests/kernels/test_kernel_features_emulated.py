"""The fused feature kernels (features_rows.cu, features_entries.cu) run on the CPU, against the NumPy path (whose
block statistics of blocks taller than one row sort the row-blocks; feature_superrows searches the rows instead).

As test_kernel_blocks_emulated.py, the sources are compiled by g++ (C++20, AddressSanitizer and UBSan)
after a shim, here one that runs a whole block at once: its threads are host threads meeting at a block
barrier for ``__syncthreads`` and at a warp barrier for the warp votes and shuffles; ``__shared__`` arrays are
static, the atomics GCC's.  An emulated launcher stands in for CuPy's under
``features._fused_compute`` and ``features.quick_facts``, so the whole fused path (launch arguments, the one
summary buffer, the host arithmetic after it) is checked, not only the kernels.  Grids of at most two blocks
force the grid-stride loops; shrunken layouts force the rare branches (groups wider than the shared bins, a
second transfer of diagonals, scatter passes and their overflow).  Skipped without g++.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp
from test_kernel_blocks_emulated import compiled

from cocktail.auto import features as F
from cocktail.formats.csr import CSR
from cocktail.kernels import source

# the exhaustive tier (pytest --exhaustive): every host emulation compiles its kernels with g++
pytestmark = [pytest.mark.skipif(shutil.which("g++") is None, reason="no g++"), pytest.mark.exhaustive]

SHIM = r"""
#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
struct dim3 { unsigned x = 0; };
thread_local dim3 threadIdx, blockIdx;
dim3 blockDim, gridDim;
alignas(16) unsigned char emulated_shared[1 << 17];
struct Warp { std::barrier<> bar{32}; unsigned long long slot[32]; };
thread_local Warp* tl_warp;
thread_local int tl_lane;
std::barrier<>* block_barrier;
inline void __syncthreads() { block_barrier->arrive_and_wait(); }
template <class T> T exchange(unsigned mask, T v, int src) {
    if (mask != 0xffffffffu) std::abort();
    unsigned long long bits = 0;
    std::memcpy(&bits, &v, sizeof(T));
    tl_warp->slot[tl_lane] = bits;
    tl_warp->bar.arrive_and_wait();
    T out;
    std::memcpy(&out, &tl_warp->slot[src], sizeof(T));
    tl_warp->bar.arrive_and_wait();
    return out;
}
template <class T> T __shfl_xor_sync(unsigned mask, T v, int lane_mask) { return exchange(mask, v, tl_lane ^ lane_mask); }
template <class T> T __shfl_sync(unsigned mask, T v, int src) { return exchange(mask, v, src); }
template <class F> unsigned lanes_where(unsigned mask, unsigned long long mine, F same) {
    if (mask != 0xffffffffu) std::abort();
    tl_warp->slot[tl_lane] = mine;
    tl_warp->bar.arrive_and_wait();
    unsigned out = 0;
    for (int l = 0; l < 32; ++l) out |= same(tl_warp->slot[l]) ? 1u << l : 0u;
    tl_warp->bar.arrive_and_wait();
    return out;
}
inline unsigned __ballot_sync(unsigned mask, bool p) { return lanes_where(mask, p, [](unsigned long long v) { return v != 0; }); }
template <class T> unsigned __match_any_sync(unsigned mask, T v) {
    unsigned long long mine = (unsigned long long)v;
    return lanes_where(mask, mine, [mine](unsigned long long o) { return o == mine; });
}
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline int __ffs(unsigned v) { return __builtin_ffs(v); }
inline int __clzll(long long v) { return v ? __builtin_clzll((unsigned long long)v) : 64; }
template <class T> T atomicAdd(T* p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
template <class T> T atomicOr(T* p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
template <class T> T atomicMax(T* p, T v) {
    T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (old < v && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
    return old;
}
template <class T> T atomicCAS(T* p, T expected, T desired) {
    __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return expected;
}
template <class F> void launch(unsigned grid, unsigned block, F kernel) {
    gridDim.x = grid;
    blockDim.x = block;
    for (unsigned b = 0; b < grid; ++b) {
        std::barrier<> bar(block);
        block_barrier = &bar;
        std::vector<Warp> warps(block / 32);
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < block; ++t) {
            threads.emplace_back([&, t] {
                tl_warp = &warps[t / 32]; tl_lane = t % 32; threadIdx.x = t; blockIdx.x = b;
                kernel();
            });
        }
        for (auto& t : threads) t.join();
    }
}
"""

MAIN = r"""
static std::vector<std::vector<char>> args;
static std::vector<void*> pointers;
template <class T> T* P(size_t k) { return (T*)pointers[k]; }
template <class T> T S(size_t k) { T v; std::memcpy(&v, args[k].data(), sizeof(T)); return v; }
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
            p = std::aligned_alloc(16, count ? (count + 15) / 16 * 16 : 16);
            std::memcpy(p, a.data(), count);
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

#: The call of each kernel (by name, before its template arguments) from the argument file: P<T>(k) an array,
#: S<T>(k) a scalar.
CALLS = {
    "feature_rows": "P<I>(0), S<ll>(1), P<unsigned>(2), S<int>(3), S<ll>(4), S<int>(5), S<int>(6), S<int>(7), "
                    "S<int>(8), P<ull>(9), P<ull>(10), P<unsigned>(11), P<ull>(12), P<ull>(13)",
    "feature_entries": "P<I>(0), P<I>(1), S<ll>(2), S<ll>(3), S<ll>(4), S<int>(5), S<int>(6), S<int>(7), "
                       "S<int>(8), S<int>(9), S<int>(10), S<int>(11), P<unsigned>(12), P<ull>(13), P<unsigned>(14)",
    "feature_superrows": "P<I>(0), P<I>(1), S<ll>(2), S<ll>(3), S<ll>(4), S<int>(5), S<int>(6), S<int>(7), "
                         "S<int>(8), S<int>(9), S<ll>(10), S<double>(11), P<ull>(12), P<unsigned>(13), P<ull>(14)",
    "diagonal_compact": "P<unsigned>(0), S<ll>(1), S<ll>(2), S<ll>(3), P<ll>(4), P<ll>(5), P<ull>(6)",
    "scatter_groups": "P<I>(0), P<I>(1), S<ll>(2), S<ll>(3), S<ll>(4), S<int>(5), S<ll>(6), S<int>(7), "
                      "S<int>(8), S<int>(9), S<ll>(10), P<ull>(11), P<ull>(12), P<unsigned>(13)",
    "value_sample": "P<I>(0), S<ll>(1), S<ll>(2), P<ull>(3), S<int>(4), P<unsigned>(5)",
    "value_facts": "P<I>(0), S<ll>(1), P<ull>(2), S<int>(3), S<int>(4), S<unsigned>(5), P<unsigned>(6), "
                   "P<unsigned>(7)",
}
EXPRESSIONS = [e for stem in ("features_rows", "features_entries") for e in source.HELPERS[stem]]


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    """The emulation of every feature helper instantiation: case k runs EXPRESSIONS[k]."""
    cases = []
    for k, expression in enumerate(EXPRESSIONS):
        name, _, targ = expression.partition("<")
        targ = targ.rstrip(">") or "int"
        call = CALLS[name].replace("<I>", f"<{targ}>")
        cases.append(f"case {k}: {{ typedef {targ} I; (void)sizeof(I); launch(grid, block, [&] {{ {expression}({call}); }}); break; }}\n")
    code = "".join(re.sub(r'#include "[^"]+"', "", source.read(f)) for f in ("features.cuh", "features_rows.cu",
                                                                               "features_entries.cu"))
    code = re.sub(r"extern __shared__ (\w[\w ]*?) (\w+)\[\];", r"\1* \2 = (\1*)emulated_shared;", code)
    return compiled(tmp_path_factory.mktemp("features"), SHIM + code + MAIN.replace("CASES", "".join(cases)))


class EmulatedLauncher:
    """features' launcher protocol, running the kernels in the emulation (grids of one or two blocks)."""

    def __init__(self, exe, tmp):
        self.exe, self.tmp, self.launches = exe, tmp, []

    def __call__(self, stem, expression, items, block, args, shared=0):
        assert expression in source.HELPERS[stem] and shared <= 1 << 17
        self.launches.append(expression)
        with open(self.tmp / "args.bin", "wb") as f:
            for a in args:
                kind, data = (2, b"") if a is None else (0, a.tobytes()) if isinstance(a, np.ndarray) else (1, a.tobytes())
                f.write(np.int64(kind).tobytes() + np.int64(len(data)).tobytes() + data)
        grid = min(2, max(1, -(-int(items) // block)))
        proc = subprocess.run([str(self.exe), self.tmp / "args.bin", self.tmp / "out.bin",
                               str(EXPRESSIONS.index(expression)), str(grid), str(block)],
                              capture_output=True, text=True, timeout=300, env={"ASAN_OPTIONS": "detect_leaks=0"})
        assert proc.returncode == 0, f"{expression}: exit {proc.returncode}: {proc.stderr[-3000:]}"
        out, at = np.fromfile(self.tmp / "out.bin", dtype=np.uint8), 0
        for a in args:
            if isinstance(a, np.ndarray):
                if a.flags.writeable:  # the matrix's arrays are inputs (read-only): the rest are outputs
                    np.copyto(a, out[at:at + a.nbytes].view(a.dtype).reshape(a.shape))
                at += a.nbytes

    @staticmethod
    def fetch(buffer):
        return buffer.copy()


def _matrices():
    rng = np.random.default_rng(7)
    out = []
    m = 700  # more than two 256-row tiles: the rows kernel loops
    lengths = rng.integers(0, 30, m)
    lengths[::7] = 0
    lengths[5] = 600  # a long row: wider than the shrunken shared bins and the width cap
    cols = np.concatenate([np.sort(rng.choice(900, k, replace=False)) for k in lengths])
    out.append(("random", sp.csr_array((rng.standard_normal(cols.size), cols, np.r_[0, np.cumsum(lengths)]),
                                       shape=(m, 900))))
    band = sp.diags([np.full(600 - abs(k), float(k)) for k in (-9, -1, 0, 1, 2, 40)], [-9, -1, 0, 1, 2, 40],
                    shape=(600, 600), format="csr")
    out.append(("band", band))
    blocky = sp.kron(sp.random_array((90, 90), density=0.05, random_state=3), np.ones((4, 4)), format="csr")
    out.append(("blocky", blocky))
    out.append(("wide", sp.random_array((40, 5000), density=0.05, format="csr", random_state=4)))
    out.append(("tall", sp.random_array((3000, 20), density=0.1, format="csr", random_state=5)))
    return out


def _csr(S, dtype, index_dtype):
    S = sp.csr_array(S)
    S.sort_indices()
    data = S.data.astype(dtype) if np.issubdtype(dtype, np.complexfloating) else S.data.astype(dtype)
    return CSR.from_arrays(data, S.indices, S.indptr, S.shape, index_dtype=index_dtype)


@pytest.fixture
def shrunken(monkeypatch):
    """Layouts small enough that the rare branches run on small matrices."""
    monkeypatch.setattr(F, "_ENTRY_CHUNK", 2 * 64)
    monkeypatch.setattr(F, "_DIAGONAL_HEAD", 8)
    monkeypatch.setattr(F, "_DIAGONAL_SLOTS", 16)
    monkeypatch.setattr(F, "_SHARED_WIDTHS", 12)
    monkeypatch.setattr(F, "_SCATTER_SLOTS", 64)
    monkeypatch.setattr(F, "_SCATTER_WINDOW", 100)
    monkeypatch.setattr(F, "_SCATTER_SPLIT", 4)
    monkeypatch.setattr(F, "_DIAGONAL_PROBES", 3)
    monkeypatch.setattr(F, "WIDTH_CAP", 100)


CASES = [(np.float64, np.int32), (np.float32, np.int64), (np.float16, np.int32), (np.complex64, np.int64)]


@pytest.mark.parametrize("dtype,index_dtype", CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_fused_features_equal_host_features(binary, tmp_path, shrunken, dtype, index_dtype):
    from test_gpu_features import _same

    launcher = EmulatedLauncher(binary, tmp_path)
    for label, S in _matrices():
        csr = _csr(S, dtype, index_dtype)
        want = F.compute(csr)
        got = F._fused_compute(csr, None, None, None, launcher=launcher)
        _same(got, want)
        assert got.one_value == want.one_value, label
        limited = F._fused_compute(csr, 1.5, None, None, launcher=launcher)
        assert dict(limited.blocks) == dict(F.compute(csr, block_fill_limit=1.5).blocks), label


def test_quick_facts_equal_the_host_functions(binary, tmp_path):
    launcher = EmulatedLauncher(binary, tmp_path)
    rng = np.random.default_rng(1)
    for label, S in _matrices():
        for values in (None, 2.5, "table", "wide"):  # as they are, one value, 5 values, one outlier past the sample
            csr = _csr(S, np.float64, np.int32)
            if values is not None:
                data = {"table": lambda: rng.choice([0.5, -0.0, 1.0, 2.0, 3.0], csr.nnz),
                        "wide": lambda: np.r_[np.ones(csr.nnz - 1), 7.0]}.get(values, lambda: np.full(csr.nnz, values))()
                csr = csr.with_values(data.astype(np.float64))
            got = F.quick_facts(csr, launcher=launcher)
            assert got == (F.structure_fingerprint(csr), F.holds_one_value(csr.data), F.distinct_values(csr.data)), label


def test_one_synchronisation_and_few_launches(binary, tmp_path):
    launcher = EmulatedLauncher(binary, tmp_path)
    calls = []
    fetch = launcher.fetch
    launcher.fetch = lambda buffer: calls.append(1) or fetch(buffer)
    csr = _csr(_matrices()[1][1], np.float64, np.int32)
    F._fused_compute(csr, 2.0, None, None, launcher=launcher)
    assert len(calls) == 1 and len(launcher.launches) == 7


def _tall_matrices():
    """Matrices whose taller blocks are dense, partly filled and cut: rows longer than a warp, empty rows, blocks off
    the block grid, super-rows cut by the last row and blocks cut by the last column."""
    rng = np.random.default_rng(11)
    dense = np.ones((37, 70))  # 37 rows: every height's last super-row cut; 70 columns: the last blocks cut
    dense[rng.random(dense.shape) < 0.03] = 0
    pattern = sp.random_array((24, 24), density=0.15, random_state=6) + sp.eye_array(24)
    shifted = sp.vstack([sp.csr_array((1, 192)), sp.kron(pattern, np.ones((8, 8))), sp.csr_array((2, 192))])
    return [("dense", sp.csr_array(dense)), ("shifted", sp.csr_array(shifted)),
            ("fem", sp.kron(pattern, np.ones((3, 3)), format="csr")[:70])]


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64], ids=lambda v: v.__name__)
def test_taller_blocks_equal_the_sorted_blocks(binary, tmp_path, index_dtype):
    """Every block shape against the host's sort; with 32-bit indices also with the fill limit at each 1 x c fill (the
    kernel's test of it and the host's must agree to the bit) and at each taller shape's (a chain of heights cut)."""
    launcher = EmulatedLauncher(binary, tmp_path)
    for label, S in _tall_matrices():
        csr = _csr(S, np.float32, index_dtype)
        want = F.compute(csr)
        assert dict(F._fused_compute(csr, None, True, 1, launcher=launcher).blocks) == dict(want.blocks), label
        if index_dtype is np.int64:
            continue
        rows, cols = csr.row_ids().astype(np.int64), csr.indices.astype(np.int64)
        limits = {F._row_blocks(np, rows, cols, c)[0].shape[0] * c / csr.nnz for c in F._ROW_WIDTHS}
        for limit in sorted(limits | {want.blocks[shape].fill for shape in F._TALL_SHAPES}):
            got = F._fused_compute(csr, limit, True, 1, launcher=launcher).blocks
            assert dict(got) == dict(F.compute(csr, block_fill_limit=limit).blocks), (label, limit)


def test_taller_blocks_past_the_sort_key(binary, tmp_path, monkeypatch):
    """Super-rows times block columns past the host's sort key (its lexicographic sorts): the same statistics."""
    launcher = EmulatedLauncher(binary, tmp_path)
    m, n = 21, 2 ** 61
    rng = np.random.default_rng(2)
    near, far = np.arange(0, 40), n - 40 + np.arange(40)
    rows = [np.sort(rng.choice(np.r_[near, far], rng.integers(0, 30), replace=False)) for _ in range(m)]
    S = sp.csr_array((np.ones(sum(map(len, rows))), np.concatenate(rows), np.r_[0, np.cumsum(list(map(len, rows)))]),
                     shape=(m, n))
    csr = _csr(S, np.float32, np.int64)
    assert -(-m // 2) * (n // 2) >= F._KEY_LIMIT
    empty = F.DiagonalCounts((m, n), np.zeros(0, np.int64), np.zeros(0, np.int64))
    monkeypatch.setattr(F, "_diagonals", lambda *args: empty)  # a count per diagonal: far too many here
    monkeypatch.setattr(F, "x_scatter", lambda csr: {})
    assert dict(F._fused_compute(csr, None, True, 1, launcher=launcher).blocks) == dict(F.compute(csr).blocks)


def _walk_matrices():
    """Matrices for the walk over the entries in chunks (feature_walk) and the taller blocks' searches from a guess: rows
    far longer than a chunk and a warp, runs of empty rows longer than a block's round of rows (at the start, between
    chunks, at the end), entries only in the last row, a wide band, FEM blocks of 3 and a chunk's exact multiple."""
    rng = np.random.default_rng(21)
    lengths = np.zeros(3000, dtype=np.int64)
    lengths[[0, 700, 701, 1500, 2999]] = [5, 300, 1, 140, 7]
    lengths[2000:2100] = rng.integers(0, 9, 100)
    cols = np.concatenate([np.sort(rng.choice(500, k, replace=False)) for k in lengths])
    sparse = sp.csr_array((np.ones(cols.size), cols, np.r_[0, np.cumsum(lengths)]), shape=(3000, 500))
    last = sp.csr_array((np.ones(40), (np.full(40, 599), np.arange(0, 80, 2))), shape=(600, 80))
    band = sp.diags([np.full(300 - abs(k), 1.0 + k) for k in range(-20, 25)], list(range(-20, 25)), shape=(300, 300),
                    format="csr")
    pattern = sp.random_array((40, 40), density=0.1, random_state=8) + sp.eye_array(40)
    fem = sp.kron(pattern, np.ones((3, 3)), format="csr")
    exact = sp.random_array((64, 64), density=0.125, format="csr", random_state=9)  # 512 entries: whole chunks
    exact = sp.csr_array(exact)
    return [("sparse", sparse), ("last", last), ("band", band), ("fem", fem), ("exact", exact)]


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64], ids=lambda v: v.__name__)
def test_the_walk_over_the_entries_equals_the_host(binary, tmp_path, shrunken, index_dtype):
    from test_gpu_features import _same

    launcher = EmulatedLauncher(binary, tmp_path)
    for label, S in _walk_matrices():
        csr = _csr(S, np.float64, index_dtype)
        assert csr.nnz % F._ENTRY_CHUNK == 0 or label != "exact"
        _same(F._fused_compute(csr, None, None, None, launcher=launcher), F.compute(csr))


def _host_sectors(csr) -> tuple:
    """(entries per group, fine sectors, coarse sectors) of the groups x_scatter samples, by np.unique."""
    m, nnz = int(csr.shape[0]), int(csr.nnz)
    first_row, last_row, _ = F._scatter_sample(m, nnz)
    columns = F.SECTOR_BYTES // 8
    entries, fine, coarse = [], 0, 0
    for a, z in zip(csr.indptr[first_row], csr.indptr[last_row]):
        cols = csr.indices[a:z].astype(np.int64)
        entries.append(z - a)
        fine += np.unique(cols // columns).size
        coarse += np.unique(cols // (2 * columns)).size
    return np.asarray(entries, dtype=np.uint64), fine, coarse


def _scatter(launcher, csr) -> tuple:
    """scatter_groups on csr as _fused_compute launches it: (entries, sectors, overflow)."""
    m, nnz = int(csr.shape[0]), int(csr.nnz)
    first_row, _, stride = F._scatter_sample(m, nnz)
    entries, sectors, overflow = np.zeros(first_row.shape[0], np.uint64), np.zeros(2, np.uint64), np.zeros(1, np.uint32)
    index = "int" if csr.indptr.dtype == np.int32 else "long long"
    launcher("features_entries", f"scatter_groups<{index}>", first_row.shape[0] * F._SCATTER_SPLIT * F._BLOCK, F._BLOCK,
             (csr.indptr, csr.indices, np.int64(m), np.int64(first_row.shape[0]), np.int64(stride * F.SCATTER_GROUP),
              np.int32(F.SCATTER_GROUP), np.int64(F.SECTOR_BYTES // 8), np.int32(F._SCATTER_SLOTS),
              np.int32(F._SCATTER_PASSES), np.int32(F._SCATTER_SPLIT), np.int64(F._SCATTER_WINDOW), entries, sectors,
              overflow), shared=8 * F._SCATTER_SLOTS)
    return entries, sectors, int(overflow[0])


def _rows(lengths, n, rng, spread=None):
    """A CSR of rows of the given lengths over n columns (each row's columns within `spread` of a random start)."""
    rows = []
    for k in lengths:
        if spread is None:
            rows.append(np.sort(rng.choice(n, k, replace=False)))
        else:
            start = rng.integers(0, n - spread)
            rows.append(start + np.sort(rng.choice(spread, k, replace=False)))
    cols = np.concatenate(rows)
    return sp.csr_array((np.ones(cols.size), cols, np.r_[0, np.cumsum(lengths)]), shape=(len(lengths), n))


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64], ids=lambda v: v.__name__)
def test_scatter_groups_count_every_sector(binary, tmp_path, shrunken, monkeypatch, index_dtype):
    """Exact sector counts (no host fallback) for groups far larger than the set: dense rows cut into windows (bitmaps,
    the windows past the cap larger), few entries over a wide range (a hash set, in one pass or several), groups
    sampled with a stride, a last group cut short; and the fallback flagged where a window needs too many passes."""
    launcher = EmulatedLauncher(binary, tmp_path)
    rng = np.random.default_rng(5)
    dense = np.r_[rng.integers(0, 12, 70)]
    dense[[3, 40, 41]] = [2500, 3000, 1200]
    cases = [("dense", _rows(dense, 3000, rng)),  # groups of thousands of entries: windows, up to the cap
             ("hash", _rows(np.full(70, 1), 10 ** 6, rng)),  # a range past any bitmap, a set of one pass
             ("passes", _rows(np.full(64, 6), 10 ** 6, rng)),  # 192 entries a group: a set in passes
             ("clustered", _rows(np.full(50, 300), 40000, rng, spread=3000)),  # windows over patches
             ("stride", _rows(rng.integers(0, 40, 500), 7000, rng))]
    for label, S in cases:
        csr = _csr(S, np.float64, index_dtype)
        if label == "stride":
            monkeypatch.setattr(F, "SCATTER_GROUPS", 4)
        entries, sectors, overflow = _scatter(launcher, csr)
        want_entries, fine, coarse = _host_sectors(csr)
        assert not overflow, label
        np.testing.assert_array_equal(entries, want_entries, err_msg=label)
        assert (int(sectors[0]), int(sectors[1])) == (fine, coarse), label
    too_many = _csr(_rows(np.full(32, 400), 10 ** 6, rng), np.float64, index_dtype)  # 12800 entries over 4 windows
    assert _scatter(launcher, too_many)[2] == 1
    assert F._fused_compute(too_many, None, True, 1, launcher=launcher).x_scatter == F.x_scatter(too_many)
