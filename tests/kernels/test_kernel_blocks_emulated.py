"""The CUDA sources of bcsr, bell and sbell run on the CPU, against SciPy (no GPU needed).

Each ``.cu`` file is compiled by g++ (C++20, AddressSanitizer) after a shim that emulates what
the kernels use: ``threadIdx``/``blockIdx``, ``__ldg``, the vector types, and warp shuffles
(the 32 lanes of a warp are 32 host threads meeting at a barrier, so a shuffle some lane skips
hangs and the timeout fails the test).  ``x`` lies between NaN guards and ``y`` between guard
values, so reading ``x`` past column ``n`` or writing ``y`` past row ``m`` shows; the other
arrays are copied into buffers of their exact size for AddressSanitizer.  Small grids force
the grid-stride loops.  Skipped without g++.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail import formats
from cocktail.formats.csr import CSR
from cocktail.kernels import source

# the exhaustive tier (pytest --exhaustive): every host emulation compiles its kernels with g++
pytestmark = [pytest.mark.skipif(shutil.which("g++") is None, reason="no g++"), pytest.mark.exhaustive]

SHIM = r"""
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
#define __global__
#define __device__
#define __forceinline__ inline
struct dim3 { unsigned x = 0; };
thread_local dim3 threadIdx, blockIdx;
dim3 blockDim, gridDim;
struct alignas(8) float2 { float x, y; };
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(16) double2 { double x, y; };
template <class T> T __ldg(const T* p) { return *p; }
struct Warp { std::barrier<> bar{32}; alignas(16) unsigned char slot[32][16]; };
thread_local Warp* tl_warp;
thread_local int tl_lane;
template <class T> T shuffle_from(unsigned mask, T v, int src) {
    if (mask != 0xffffffffu) std::abort();
    std::memcpy(tl_warp->slot[tl_lane], &v, sizeof(T));
    tl_warp->bar.arrive_and_wait();
    T out;
    std::memcpy(&out, tl_warp->slot[src], sizeof(T));
    tl_warp->bar.arrive_and_wait();
    return out;
}
template <class T> T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
    int src = tl_lane ^ lane_mask;
    if ((src & ~(width - 1)) > (tl_lane & ~(width - 1))) src = tl_lane;  // a later group: own value
    return shuffle_from(mask, v, src);
}
template <class T> T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
    int src = tl_lane + (int)delta;
    if ((src & ~(width - 1)) != (tl_lane & ~(width - 1))) src = tl_lane;
    return shuffle_from(mask, v, src);
}
template <class F> void launch(unsigned grid, unsigned block, F kernel) {
    gridDim.x = grid;
    blockDim.x = block;
    for (unsigned b = 0; b < grid; ++b) {
        for (unsigned w0 = 0; w0 < block; w0 += 32) {
            Warp warp;
            std::vector<std::thread> lanes;
            for (int l = 0; l < 32; ++l) {
                lanes.emplace_back([&, l] {
                    tl_warp = &warp; tl_lane = l; threadIdx.x = w0 + l; blockIdx.x = b;
                    kernel();
                });
            }
            for (auto& t : lanes) t.join();
        }
    }
}
"""

#: The emulation's entry point, shared by every emulated kernel test: reads the input file (each array a length in
#: bytes, then its bytes) into ``arrays``, then runs instance ``argv[3]`` of the switch (INSTANCES: its cases).
ENTRY = r"""
int main(int argc, char** argv) {
    FILE* f = std::fopen(argv[1], "rb");
    long long count;
    while (std::fread(&count, 8, 1, f) == 1) {
        std::vector<char> a(count);
        if (count && std::fread(a.data(), 1, count, f) != (size_t)count) return 4;
        arrays.push_back(std::move(a));
    }
    std::fclose(f);
    switch (std::atoi(argv[3])) {
        INSTANCES
    }
    return 5;
}
"""

MAIN = r"""
static std::vector<std::vector<char>> arrays;
template <class U> U* exact(size_t k) {  // a heap copy of input array k, 16-byte aligned
    size_t bytes = arrays[k].size();
    U* p = (U*)std::aligned_alloc(16, bytes ? (bytes + 15) / 16 * 16 : 16);
    if (bytes) std::memcpy(p, arrays[k].data(), bytes);
    return p;
}
template <class T, class I, int R, int C> int run(char** argv) {
    unsigned grid = std::atoi(argv[4]), block = std::atoi(argv[5]);
    long long m = std::atoll(argv[6]), n = std::atoll(argv[7]), superrows = std::atoll(argv[8]);
    long long p1 = std::atoll(argv[9]), p2 = std::atoll(argv[10]);
    int vec = std::atoi(argv[11]);
    T alpha = (T)std::atof(argv[12]), beta = (T)std::atof(argv[13]);
    const int G = 8;
    std::vector<T> xb(n + 2 * G, (T)NAN), yb(m + 2 * G, (T)777);
    std::memcpy(xb.data() + G, arrays[arrays.size() - 1].data(), n * sizeof(T));
    std::memcpy(yb.data() + G, arrays[arrays.size() - 2].data(), m * sizeof(T));
    T* x = xb.data() + G;
    T* y = yb.data() + G;
    KERNEL_CALL
    for (int i = 0; i < G; ++i) {
        if (yb[i] != (T)777 || yb[m + G + i] != (T)777) return 3;
    }
    FILE* o = std::fopen(argv[2], "wb");
    std::fwrite(y, sizeof(T), m, o);
    std::fclose(o);
    return 0;
}
""" + ENTRY

CALLS = {
    "bcsr": "I* row_ptr = exact<I>(0); I* col = exact<I>(1); T* data = exact<T>(2);\n"
            "launch(grid, block, [&] { bcsr<T, I, R, C>((I)superrows, (I)m, (I)n, p1, (int)p2, vec, row_ptr, col, "
            "data, x, y, alpha, beta); });",
    "bell": "I* col = exact<I>(0); T* data = exact<T>(1);\n"
            "launch(grid, block, [&] { bell<T, I, R, C>((I)superrows, (I)m, (I)n, (I)p1, p2, vec, col, data, x, y, "
            "alpha, beta); });",
    "sbell": "long long* slice_ptr = exact<long long>(0); I* col = exact<I>(1); T* data = exact<T>(2);\n"
             "launch(grid, block, [&] { sbell<T, I, R, C>((I)superrows, (I)m, (I)n, p1, vec, slice_ptr, col, data, "
             "x, y, alpha, beta); });",
}

#: Instantiations run per kernel: (value dtype, index dtype, block shape); every unit width c overall.
INSTANCES = {
    "bcsr": [(np.float32, np.int32, (2, 4)), (np.float64, np.int64, (8, 8)), (np.float64, np.int32, (3, 3)),
             (np.float32, np.int64, (1, 1))],
    "bell": [(np.float32, np.int32, (1, 4)), (np.float64, np.int64, (8, 2)), (np.float32, np.int64, (3, 8)),
             (np.float64, np.int32, (4, 3))],
    "sbell": [(np.float64, np.int32, (2, 4)), (np.float32, np.int64, (4, 1)), (np.float32, np.int32, (8, 8)),
              (np.float64, np.int64, (3, 2))],
}
#: Per kernel: (format params, launch params) pairs; a grid of one or two blocks forces the grid-stride loops.
LAUNCHES = {
    "bcsr": [({}, {"group": 1, "grid": 1, "block": 32, "vec": 1}), ({}, {"group": 4, "grid": 2, "block": 64, "vec": 0}),
             ({}, {"group": 32, "grid": 1, "block": 64, "vec": 1})],
    "bell": [({"align": 1}, {"grid": 1, "block": 32, "vec": 1}), ({"align": 32}, {"grid": 2, "block": 64, "vec": 0})],
    "sbell": [({"slice_height": 3}, {"grid": 1, "block": 32, "vec": 1}),
              ({"slice_height": 32}, {"grid": 2, "block": 64, "vec": 0}),
              ({"slice_height": 1000}, {"grid": 1, "block": 32, "vec": 1})],
}
CTYPES = {np.float32: "float", np.float64: "double", np.int32: "int", np.int64: "long long"}


def compiled(d, code: str):
    """The emulation ``code`` written to ``d`` and compiled by g++ (C++20, AddressSanitizer and UBSan, no
    recovery): the executable's path.  Skips the test where g++ has no C++20 ``<barrier>``."""
    (d / "main.cpp").write_text(code)
    cmd = ["g++", "-std=c++20", "-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
           "-Wno-unknown-pragmas", "-pthread", str(d / "main.cpp"), "-o", str(d / "emulate")]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode and "barrier" in proc.stderr and "No such file" in proc.stderr:
        pytest.skip("g++ without C++20 <barrier>")
    assert proc.returncode == 0, proc.stderr[-4000:]
    return d / "emulate"


def write_arrays(path, arrays) -> None:
    """The input file ENTRY reads: each array a length in bytes (int64), then its bytes."""
    with open(path, "wb") as f:
        for a in arrays:
            b = np.ascontiguousarray(a).tobytes()
            f.write(np.int64(len(b)).tobytes() + b)


def _matrices():
    rng = np.random.default_rng(3)
    m, n = 45, 403  # superrows of more than 32 blocks, empty rows, entries in the last columns
    lengths = rng.integers(0, 120, size=m)
    lengths[::5] = 0
    lengths[7] = n
    rows = np.repeat(np.arange(m), lengths)
    cols = np.concatenate([rng.choice(n, size=k, replace=False) for k in lengths])
    rows, cols = np.r_[rows, 0, m - 1], np.r_[cols, n - 1, n - 2]
    long = sp.coo_array((rng.standard_normal(rows.size), (rows, cols)), shape=(m, n)).tocsr()
    small = sp.random_array((37, 29), density=0.2, format="csr", random_state=1)
    return [("long", long), ("small", small), ("1x1", sp.csr_array(np.array([[2.0]]))), ("empty", sp.csr_array((5, 3)))]


@pytest.fixture(scope="module")
def binaries(tmp_path_factory):
    """kernel name -> path of its compiled host emulation (every instantiation of INSTANCES)."""
    out = {}
    for name, instances in INSTANCES.items():
        d = tmp_path_factory.mktemp(name)
        cases = "".join(f"case {k}: return run<{CTYPES[v]}, {CTYPES[i]}, {r}, {c}>(argv);\n"
                        for k, (v, i, (r, c)) in enumerate(instances))
        code = (SHIM + source.assemble(name) + MAIN.replace("KERNEL_CALL", CALLS[name])
                .replace("INSTANCES", cases))
        out[name] = compiled(d, code)
    return out


def _arrays(name, fmt):
    if name == "bcsr":
        return [fmt.row_ptr, fmt.col, fmt.data], fmt.row_ptr.shape[0] - 1, fmt.nblocks
    if name == "bell":
        return [fmt.col, fmt.data], fmt.superrows, fmt.width, fmt.stride
    return [fmt.slice_ptr.astype(np.int64), fmt.col, fmt.data], fmt.superrows, fmt.slice_height


def _emulate(exe, tmp, k, name, fmt, x, y0, launch, alpha, beta):
    arrays, superrows, *params = _arrays(name, fmt)
    p1, p2 = (params + [launch.get("group", 0)])[:2]
    write_arrays(tmp / "in.bin", arrays + [y0, x])
    m, n = fmt.shape
    args = [exe, tmp / "in.bin", tmp / "out.bin", k, launch["grid"], launch["block"], m, n, superrows, p1, p2,
            launch["vec"], repr(alpha), repr(beta)]
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=120,
                          env={"ASAN_OPTIONS": "detect_leaks=0"})
    assert proc.returncode == 0, f"exit {proc.returncode} (3: y written past row m): {proc.stderr[-3000:]}"
    return np.fromfile(tmp / "out.bin", dtype=fmt.dtype)


@pytest.mark.parametrize("name", list(INSTANCES))
def test_kernel_source_on_the_host(name, binaries, tmp_path):
    for k, (dtype, idt, block) in enumerate(INSTANCES[name]):
        for label, S in _matrices():
            S = sp.csr_array(S)
            csr = CSR.from_arrays(S.data.astype(dtype), S.indices, S.indptr, S.shape, index_dtype=idt)
            rng = np.random.default_rng(k)
            x = rng.standard_normal(S.shape[1]).astype(dtype)
            for fparams, launch in LAUNCHES[name]:
                fmt = formats.get(name).from_csr(csr, block=block, max_fill=None, **fparams)
                assert fmt.index_dtype == idt and fmt.dtype == dtype
                for alpha, beta in ((1.5, -0.5), (2.0, 0.0)):
                    y0 = rng.standard_normal(S.shape[0]).astype(dtype)
                    if beta == 0:
                        y0[:] = np.nan  # never read when beta == 0
                    y = _emulate(binaries[name], tmp_path, k, name, fmt, x, y0, launch, alpha, beta)
                    want = alpha * (S @ x.astype(np.float64)) + (beta * y0 if beta else 0.0)
                    scale = max(1.0, float(np.abs(want).max(initial=0)))
                    tol = 1e-4 if dtype == np.float32 else 1e-12
                    err = float(np.abs(y - want).max(initial=0)) / scale
                    assert np.isfinite(y).all() and err < tol, (label, block, dtype, idt, fparams, launch, err)
