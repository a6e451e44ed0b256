"""The SpMM targets, read from a ``cocktail bench --k`` JSON: a Markdown table per block width.

Usage: python scripts/spmm_targets.py RUN.json [L2_MULTIPLE] [--model-now]

``--model-now``: the DRAM share recomputed with the DRAM traffic model of this checkout (the run's
measured time, its copy bandwidth and L2 size) for the generated matrices (``laplace<p>_<n>``, rebuilt
on the CPU in the plan's format); the others keep the share the run recorded.

Per k: cocktail-auto over cusparse-spmm-best (each matrix, geometric mean; target at least 1.5x in
geometric mean and 0.97x on every matrix), over k separate SpMVs of its plan (target at k = 16: 4x on
the regular family, 2x on the power-law family) and the DRAM model's share of the copy bandwidth
(target at k = 16: 70% on matrices whose model bytes exceed L2_MULTIPLE (default 4) times L2); a plan
multiplying one column at a time counts its SpMV record's bytes k times.
"""

from __future__ import annotations

import math
import sys

from cocktail.bench.records.files import load_json


def _model_now(record):
    """The DRAM model bytes of this checkout for a generated matrix in the record's single-format plan, or None."""
    import numpy as np

    from cocktail import SparseMatrix
    from cocktail.bench.problems.generators import by_name

    S = by_name(record["matrix"])
    fmt = record["params"].get("format")
    if S is None or fmt in (None, "cocktail"):
        return None
    A = SparseMatrix(S.astype(np.dtype(record["dtype"])), format=fmt, device="cpu")
    return A.storage.dram_bytes(record["l2_bytes"], k=record["k"])


def main(path: str, l2_multiple: float = 4.0, model_now: bool = False) -> None:
    records = load_json(path)
    rows = [r for r in records if r.get("section") == "spmm"]
    spmv_bytes = {(r["matrix"], r["dtype"]): r.get("dram_bytes") for r in records
                  if r.get("section", "spmv") == "spmv" and r["method"] == "cocktail-auto"}
    by = {(r["matrix"], r["dtype"], r["k"], r["method"]): r for r in rows}
    keys = sorted({(r["dtype"], r["k"]) for r in rows})
    for dtype, k in keys:
        print(f"\n### {dtype}, k = {k}\n")
        print("| matrix | auto µs | block product | cusparse-spmm-best µs | speedup | k SpMVs µs | gain | DRAM of copy |")
        print("|---|---:|---|---:|---:|---:|---:|---:|")
        speedups = []
        for matrix in dict.fromkeys(r["matrix"] for r in rows if r["k"] == k and r["dtype"] == dtype):
            auto = by.get((matrix, dtype, k, "cocktail-auto"))
            best = by.get((matrix, dtype, k, "cusparse-spmm-best"))
            cols = by.get((matrix, dtype, k, "cocktail-auto-spmvs"))
            if not auto or not auto.get("kernel_us"):
                continue
            t = auto["kernel_us"]
            s = best["kernel_us"] / t if best and best.get("kernel_us") else None
            g = cols["kernel_us"] / t if cols and cols.get("kernel_us") else None
            dram_bytes, dram = auto.get("dram_bytes"), auto.get("dram_fraction")
            if "per column" in auto["params"].get("block", "") and spmv_bytes.get((matrix, dtype)):
                # k SpMVs read the matrix k times: the SpMV record's bytes, k times (runs before 12a3ccc
                # recorded a single read)
                dram_bytes = k * spmv_bytes[(matrix, dtype)]
                dram = dram_bytes / (t * 1e-6) / (auto["copy_gbps"] * 1e9)
            now = _model_now(auto) if model_now else None
            if now is not None:
                dram_bytes, dram = now, now / (t * 1e-6) / (auto["copy_gbps"] * 1e9)
            big = dram_bytes and auto.get("l2_bytes") and dram_bytes > l2_multiple * auto["l2_bytes"]
            if s:
                speedups.append(s)
            print(f"| {matrix} | {t:.1f} | {auto['params'].get('block', '')} | "
                  f"{best['kernel_us']:.1f} | {s:.2f}x | {cols['kernel_us']:.1f} | {g:.2f}x | "
                  f"{dram:.0%}{'' if big else ' (fits in ' + str(l2_multiple) + 'x L2)'} |"
                  if s and g and dram else f"| {matrix} | {t:.1f} | | | | | | |")
        if speedups:
            geo = math.exp(sum(math.log(v) for v in speedups) / len(speedups))
            print(f"\ngeometric mean over cusparse-spmm-best: {geo:.2f}x (target 1.5x); lowest {min(speedups):.2f}x "
                  f"(target 0.97x)")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--model-now"]
    main(args[0], *(float(a) for a in args[1:2]), model_now="--model-now" in sys.argv)
