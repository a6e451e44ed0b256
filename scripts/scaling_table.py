"""Issue 25's scaling tables, from ``cocktail bench --distributed`` runs (one JSON per matrix, size and P): Markdown,
with the scaling model's predictions beside the measurements.

Usage: python scripts/scaling_table.py RUN.json [RUN.json ...]

Strong scaling: one matrix at P = 1, 2, 4, ...; efficiency ``t(1) / (P t(P))``.  Weak scaling (``--weak`` runs and
the P = 1 run of the base size): efficiency ``t(1) / t(P)``.

The model predicts a product at P from the measured single-GPU time and the halo: a rank's own work is the
single-GPU time over P (rows balanced by entries), the exchange costs ``latency + halo bytes / bandwidth`` (a line
fitted to the measured exchanges of the same matrix), and the product is the rank's work plus whatever of the
exchange it does not hide: ``t(1)/P + max(0, exchange - t(1)/P)``.  Halo volumes at a P not run are computed on the host from the matrix's structure
(laplace27: one interior rank's rows; rmat: the partition of the whole graph), so the predictions for 8-64 GPUs
are the model's alone and marked so.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict

import numpy as np

PREDICT = (2, 4, 8, 16, 32, 64)


def _key(r) -> tuple:
    return (r["matrix"], r.get("side", r.get("scale")), r["dtype"])


def _fit(records) -> tuple[float, float]:
    """``(latency_us, bytes_per_us)`` of the exchanges measured, a least-squares line (latency at least 0)."""
    points = [(r["halo_bytes_max"], r["exchange_us"]) for r in records if r["ranks"] > 1]
    if not points:
        return 10.0, 1e5
    if len(points) == 1:
        b, t = points[0]
        return 10.0, b / max(t - 10.0, 1e-3)
    x, y = np.array(points, dtype=float).T
    slope, intercept = np.polyfit(x, y, 1)
    slope = max(slope, 1e-9)
    return max(intercept, 0.0), 1.0 / slope


def halo_max_bytes(matrix: str, size: int, ranks: int, itemsize: int) -> int:
    """The largest rank's halo (bytes) at ``ranks``, from the structure: laplace27's rows split evenly (an interior
    rank's halo, the largest), rmat's rows split by :func:`cocktail.distributed.balanced_offsets`."""
    from cocktail.distributed.partition import balanced_offsets, even_offsets

    if matrix == "laplace27":
        from cocktail.bench.distributed import laplace27_rows

        offsets = even_offsets(size ** 3, ranks)
        r = ranks // 2
        rows = laplace27_rows(size, int(offsets[r]), int(offsets[r + 1]))
        cols = rows.indices
        outside = cols[(cols < offsets[r]) | (cols >= offsets[r + 1])]
        return int(np.unique(outside).shape[0]) * itemsize
    from cocktail.bench.problems.holdout import rmat

    S = _rmat_cache.get(size)
    if S is None:
        S = _rmat_cache[size] = rmat(k=size)
    offsets = balanced_offsets(S.indptr, ranks)
    worst = 0
    for r in range(ranks):
        cols = S.indices[S.indptr[offsets[r]]:S.indptr[offsets[r + 1]]]
        mask = np.zeros(S.shape[1], dtype=bool)
        mask[cols] = True
        worst = max(worst, int(mask[:offsets[r]].sum() + mask[offsets[r + 1]:].sum()))
    return worst * itemsize


_rmat_cache: dict = {}


def main(paths) -> None:
    records = [json.load(open(p)) for p in paths]
    strong = defaultdict(dict)
    weak = defaultdict(dict)
    for r in records:
        (weak if r["weak"] else strong)[_key(r)][r["ranks"]] = r
    for key, runs in list(strong.items()):  # a P = 1 run is also the base of the weak runs of its size
        for wkey, wruns in weak.items():
            if wkey[0] == key[0] and wkey[2] == key[2] and 1 in runs and 1 not in wruns:
                base = runs[1]
                if all(w["rows"] >= base["rows"] for w in wruns.values()):
                    wruns.setdefault(1, base)
    print("| matrix | size | P | rows | nnz | product µs | diagonal µs | exchange µs | hidden | halo bytes (max rank) | "
          "efficiency | model µs |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind, table in (("strong", strong), ("weak", weak)):
        for key, runs in sorted(table.items(), key=lambda kv: str(kv[0])):
            if 1 not in runs:
                continue
            one = runs[1]
            latency, rate = _fit(list(runs.values()))
            matrix, size, dtype = key
            item = np.dtype(dtype).itemsize
            for P in sorted(set(runs) | ({p for p in PREDICT} if kind == "strong" else set())):
                r = runs.get(P)
                halo = r["halo_bytes_max"] if r else halo_max_bytes(matrix, size, P, item)
                local = one["product_us"] / P  # an even share of the entries (rows balanced by entries)
                exchange = latency + halo / rate if P > 1 else 0.0
                model = local + max(0.0, exchange - local)  # the exchange hidden behind the rank's own work
                if r:
                    eff = one["product_us"] / (P * r["product_us"]) if kind == "strong" else (
                        one["product_us"] / r["product_us"])
                    hidden = "" if r["hidden_share"] is None else f"{r['hidden_share']:.0%}"
                    print(f"| {matrix} ({kind}) | {size} | {P} | {r['rows']:,} | {r['nnz']:,} | "
                          f"{r['product_us']:.1f} | {r['local_us']:.1f} | {r['exchange_us']:.1f} | {hidden} | "
                          f"{r['halo_bytes_max']:,} | {eff:.0%} | {model:.1f} |")
                else:
                    print(f"| {matrix} ({kind}) | {size} | {P} | | | | | | | {halo:,} (model) | "
                          f"{one['product_us'] / (P * model):.0%} (model) | {model:.1f} (model) |")
        print()
    print("Exchange fits (latency µs, bytes per µs): " + "; ".join(
        f"{k[0]} {k[1]}: {_fit(list(v.values()))[0]:.1f}, {_fit(list(v.values()))[1]:,.0f}"
        for k, v in strong.items()))


if __name__ == "__main__":
    main(sys.argv[1:])
