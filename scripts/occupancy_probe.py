"""Grid-stride launches sized for 8 resident blocks an SM against the compiled kernel's own occupancy: for every
kernel and format on a few matrices (float32 and float64), each launch's registers, the blocks an SM holds
(the driver's occupancy), and, where the grid was capped at more blocks than fit in one wave, µs of one product
with today's grid and with the grid cut to one wave (best of 3 medians of 5 graph replays of 10 products,
alternated).  "Capped" is the threads' bound that ``grid_for`` used before 32a6b92 (8 blocks of 256 an SM): from
6b3e04e on a looping grid is one wave already and nothing is timed; the lines still show every launch's grid
against its wave.  A probe (GPU), not the benchmark.

Usage: PYTHONPATH=src python scripts/occupancy_probe.py [SMALL_WORLD.npz]
(prints one line per launch: matrix dtype format kernel launch regs block grid occupancy_blocks today_us one_wave_us)
       PYTHONPATH=src python scripts/occupancy_probe.py --table OUTPUT.txt[.gz]   (Markdown: the launches timed, and
       each kernel's registers and blocks an SM; no GPU)
"""

import sys


NUM_REGS = 4  # CU_FUNC_ATTRIBUTE_NUM_REGS
GRAPH_FORMATS = ("csr", "csr_vi", "csr_pattern", "coo", "sell", "hyb")
MESH_FORMATS = GRAPH_FORMATS + ("ell", "dia", "bdia", "dia_vi", "bcsr", "bell", "sbell", "pkt")
MATRICES = {"laplace27_100": MESH_FORMATS, "holdout_mesh3d_b3": MESH_FORMATS, "protein": MESH_FORMATS,
            "fem_cantilever": MESH_FORMATS, "webbase": GRAPH_FORMATS,
            "holdout_rmat": GRAPH_FORMATS}


def load(name):
    """A suite's matrix by name."""
    from cocktail.bench.problems import suites

    return suites.load(next(m for s in ("structured", "williams", "cocktail", "holdout") for m in suites.get(s)
                            if m.name == name))


def timed(A, x, y):
    """µs of one product: the best of 3 medians."""
    from cocktail.timing import replay_us

    return min(replay_us(lambda: A.matvec(x, out=y), 10, 5) for _ in range(3))


def table(path) -> None:
    """Markdown from a probe's output (as printed, or gzipped): every launch timed both ways, then the registers
    and occupancy seen."""
    from cocktail.bench.records.files import open_text

    with open_text(path) as fh:
        rows = [line.split() for line in fh if len(line.split()) == 11 and line.split()[6] == "256"]
    print("| matrix | dtype | format | kernel | registers | blocks an SM | grid | µs, that grid | µs, one wave | "
          "speedup |\n|---|---|---|---|---:|---:|---:|---:|---:|---:|")
    for name, dtype, fmt, kernel, _, regs, block, grid, occ, today, wave in rows:
        if today != "nan":
            print(f"| {name} | {dtype} | {fmt} | {kernel} | {regs} | {occ} | {grid} | "
                  f"{today} | {wave} | {float(today) / float(wave):.2f}x |")
    seen = {}
    for r in rows:
        seen.setdefault(r[3], set()).add((int(r[5]), int(r[8])))
    print("\n| kernel | registers: blocks of 256 an SM holds (its registers and shared memory), per instantiation seen |\n|---|---|")
    for kernel, pairs in sorted(seen.items()):
        print(f"| {kernel} | {', '.join(f'{regs}: {occ}' for regs, occ in sorted(pairs))} |")


def main():
    """Print one line per launch."""
    import cupy
    import numpy as np
    import scipy.sparse as sp
    from cupy.cuda import driver

    from cocktail import SparseMatrix, kernels
    from cocktail.kernels.device import blocks_per_sm, props
    from cocktail.kernels.device import function_pointer
    from cocktail.timing import side_stream

    dev = props(cupy.cuda.Device().id)
    matrices = dict(MATRICES)
    extra = {}
    if len(sys.argv) > 1:
        extra["small_world"] = sp.load_npz(sys.argv[1]).tocsr()
        matrices["small_world"] = GRAPH_FORMATS
    for name, fmts in matrices.items():
        S0 = extra[name] if name in extra else load(name)
        for dtype in (np.float32, np.float64):
            S = S0.astype(dtype)
            S.data[:] = (np.arange(S.nnz) % 7 + 1).astype(dtype)  # few distinct values: csr_vi and dia_vi apply
            x = cupy.asarray(np.random.default_rng(0).random(S.shape[1]).astype(dtype))
            y = cupy.zeros(S.shape[0], dtype=dtype)
            for fmt in fmts:
                for spec in kernels.for_format(fmt):
                    if fmt == "csr_pattern":
                        S.data[:] = 1
                    try:
                        A = SparseMatrix(S, format=fmt, kernel=spec.name)
                    except Exception as exc:  # a format this matrix does not take, or too large
                        print(name, np.dtype(dtype).name, fmt, spec.name, "skipped", type(exc).__name__, flush=True)
                        continue
                    finally:
                        if fmt == "csr_pattern":
                            S.data[:] = (np.arange(S.nnz) % 7 + 1).astype(dtype)
                    launches = getattr(A._executor, "launches", ())
                    for i, launch in enumerate(launches):
                        fn = getattr(launch, "function", None)
                        if fn is None:  # a vendor's launch
                            continue
                        regs = driver.funcGetAttribute(NUM_REGS, function_pointer(fn))
                        occ = blocks_per_sm(fn, launch.block, launch.shared_mem)
                        one_wave = dev.sm_count * occ
                        # grid_for's cap: a grid-stride loop over more blocks than 8 an SM (only those may shrink)
                        capped = launch.grid == dev.sm_count * max(1, dev.max_threads_per_sm // launch.block)
                        today = one_wave_us = float("nan")
                        if capped and launch.grid > one_wave:
                            grid = launch.grid
                            with side_stream():
                                a, b = [], []
                                for _ in range(3):
                                    launch.grid = grid
                                    a.append(timed(A, x, y))
                                    launch.grid = one_wave
                                    b.append(timed(A, x, y))
                                launch.grid = grid
                            today, one_wave_us = min(a), min(b)
                        print(name, np.dtype(dtype).name, fmt, spec.name, i, regs, launch.block, launch.grid, occ,
                              f"{today:.2f}", f"{one_wave_us:.2f}", flush=True)
                    del A
            cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--table"]:
        table(sys.argv[2])
    else:
        main()
