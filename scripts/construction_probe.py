"""Where format='auto' construction goes on the GPU, stage by stage, and what uploads cost.

Usage: PYTHONPATH=src python scripts/construction_probe.py OUTDIR [suite ...]

For each matrix (float64; default suite unless named): the upload of its CSR arrays three ways
(cupy.asarray as cupyx does, a pinned staging ring filled by threads in chunks, and
cudaHostRegister of the caller's arrays), then SparseMatrix(S) timed by stage (the AutoReport's
analysis/features/convert/measure), one SpMV of the chosen plan, a build whose decision the cache holds (from the
device and from the host; ``cache_hit_spmvs``: the device one's median over the SpMV), and a cProfile of one build from
the device (top functions by total time).  Writes OUTDIR/construction_probe.json and .txt.
"""

from __future__ import annotations

import cProfile
import io
import json
import os
import pstats
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def _sync():
    import cupy
    cupy.cuda.get_current_stream().synchronize()


def upload_asarray(arrays):
    import cupy
    out = [cupy.asarray(a) for a in arrays]
    _sync()
    return out


_POOL = ThreadPoolExecutor(4)


def upload_pinned(arrays, chunk=8 << 20, threads=4):
    """Chunks copied by threads into pinned buffers (one per chunk in flight), DMA'd on a copy stream."""
    import cupy
    import cupyx
    stream = cupy.cuda.Stream(non_blocking=True)
    outs = [cupy.empty(a.shape, a.dtype) for a in arrays]
    ring = [cupyx.empty_pinned(chunk, np.uint8) for _ in range(2 * threads)]
    events = [None] * len(ring)
    jobs = []
    for a, o in zip(arrays, outs):
        src = a.view(np.uint8).reshape(-1)
        for lo in range(0, src.size, chunk):
            jobs.append((src, o, lo, min(src.size, lo + chunk)))

    def fill(slot, src, lo, hi):
        np.copyto(ring[slot][: hi - lo], src[lo:hi])

    pending = []
    for i, (src, o, lo, hi) in enumerate(jobs):
        slot = i % len(ring)
        if events[slot] is not None:
            events[slot].synchronize()
        pending.append((slot, _POOL.submit(fill, slot, src, lo, hi), o, lo, hi))
        if len(pending) >= threads or i == len(jobs) - 1:
            for s, fut, oo, l, h in pending:
                fut.result()
                cupy.cuda.runtime.memcpyAsync(oo.data.ptr + l, ring[s].ctypes.data, h - l,
                                              cupy.cuda.runtime.memcpyHostToDevice, stream.ptr)
                ev = cupy.cuda.Event(disable_timing=True)
                ev.record(stream)
                events[s] = ev
            pending = []
    stream.synchronize()
    return outs


def upload_registered(arrays):
    """cudaHostRegister the caller's buffers, one memcpyAsync each, unregister."""
    import cupy
    rt = cupy.cuda.runtime
    outs = []
    stream = cupy.cuda.Stream(non_blocking=True)
    for a in arrays:
        rt.hostRegister(a.ctypes.data, a.nbytes, 0)
    for a in arrays:
        o = cupy.empty(a.shape, a.dtype)
        rt.memcpyAsync(o.data.ptr, a.ctypes.data, a.nbytes, rt.memcpyHostToDevice, stream.ptr)
        outs.append(o)
    stream.synchronize()
    for a in arrays:
        rt.hostUnregister(a.ctypes.data)
    return outs


def _best(fn, reps=3):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
        del out
    return min(times) * 1e3, float(np.median(times)) * 1e3


def main():
    outdir = sys.argv[1]
    suite_names = sys.argv[2:] or ["default"]
    os.makedirs(outdir, exist_ok=True)
    os.environ["COCKTAIL_DECISIONS"] = "off"
    import cupy
    import cupyx.scipy.sparse as csp
    from cocktail import SparseMatrix
    from cocktail.auto import decisions
    from cocktail.bench.problems import suites
    from cocktail.timing import replay_us, side_stream

    rows, text = [], io.StringIO()
    mats = [m for s in suite_names for m in suites.get(s)]
    for mat in mats:
        S = suites.load(mat).astype(np.float64)
        S.sort_indices()
        arrays = [S.data, S.indices, S.indptr]
        mb = sum(a.nbytes for a in arrays) / 1e6
        row = {"matrix": mat.name, "nnz": int(S.nnz), "rows": S.shape[0], "mbytes": mb}
        SparseMatrix(S)  # compiles
        csp.csr_matrix(S)
        row["upload_asarray_ms"] = _best(lambda: upload_asarray(arrays))
        row["upload_pinned_ms"] = _best(lambda: upload_pinned(arrays))
        try:
            row["upload_registered_ms"] = _best(lambda: upload_registered(arrays))
        except Exception as exc:  # noqa: BLE001
            row["upload_registered_ms"] = repr(exc)
        row["cupyx_host_ms"] = _best(lambda: (csp.csr_matrix(S), _sync()))
        dev = csp.csr_matrix((cupy.asarray(S.data), cupy.asarray(S.indices), cupy.asarray(S.indptr)), shape=S.shape)
        row["ours_device_ms"] = _best(lambda: SparseMatrix(dev))
        row["ours_host_ms"] = _best(lambda: SparseMatrix(S))
        A = SparseMatrix(dev)
        rep = A.auto
        row["report_ms"] = {k: 1e3 * getattr(rep, k) for k in ("analysis_s", "features_s", "convert_s", "measure_s")} \
            if rep is not None else None
        row["plan"] = rep.plan.detail() if rep is not None else None
        row["raced"] = dict(rep.measured) if rep is not None else None
        x = cupy.ones(S.shape[1]); y = cupy.zeros(S.shape[0])
        B = csp.csr_matrix(dev)
        with side_stream():
            row["spmv_us"] = replay_us(lambda: getattr(A._executor, "current", A._executor).run(x, y, 1, 0), 10, 3)
            B @ x
            st = cupy.cuda.get_current_stream()
            e0, e1 = cupy.cuda.Event(), cupy.cuda.Event()
            e0.record(st)
            for _ in range(20):
                B @ x
            e1.record(st)
            e1.synchronize()
            row["cupyx_spmv_us"] = cupy.cuda.get_elapsed_time(e0, e1) * 1e3 / 20
        with tempfile.TemporaryDirectory() as d, decisions.using(os.path.join(d, "decisions.json")):
            SparseMatrix(dev)  # decided, stored aside
            decisions.flush()
            row["cache_hit_device_ms"] = _best(lambda: (SparseMatrix(dev), _sync()))
            row["cache_hit_host_ms"] = _best(lambda: (SparseMatrix(S), _sync()))
        row["cache_hit_spmvs"] = row["cache_hit_device_ms"][1] * 1e3 / row["spmv_us"]
        if getattr(A.auto, "tuning", None) is not None:  # tune="auto": the plan after N of the user's products
            M = SparseMatrix(dev, tune="measure")
            with side_stream():
                row["measure_plan"] = M.auto.plan.detail()
                row["measure_us"] = replay_us(lambda: M._executor.current.run(x, y, 1, 0), 10, 3)
                done = 0
                for mark in (200, 1000, 5000):
                    t = time.perf_counter()
                    for _ in range(mark - done):
                        A @ x
                    cupy.cuda.get_current_stream().synchronize()
                    row[f"products_{mark}_ms"] = (time.perf_counter() - t) * 1e3
                    done = mark
                    row[f"plan_after_{mark}"] = A.auto.plan.detail()
                    row[f"us_after_{mark}"] = replay_us(lambda: A._executor.current.run(x, y, 1, 0), 10, 3)
            row["tuning"] = [f"{c}: {w}" for c, w in (A.auto.tuning or [])]
            del M
        prof = cProfile.Profile()
        prof.enable()
        SparseMatrix(dev)
        prof.disable()
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(25)
        text.write(f"\n==== {mat.name} nnz={S.nnz:,} ====\n{json.dumps(row, indent=1, default=str)}\n{s.getvalue()}")
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(45)
        text.write(s.getvalue())
        rows.append(row)
        print(json.dumps(row, default=str), flush=True)
    with open(os.path.join(outdir, "construction_probe.json"), "w") as f:
        json.dump(rows, f, indent=1, default=str)
    with open(os.path.join(outdir, "construction_probe.txt"), "w") as f:
        f.write(text.getvalue())


if __name__ == "__main__":
    main()
