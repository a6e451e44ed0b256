"""Issue 25's scaling tables, from ``cocktail bench --distributed`` runs (one JSON per matrix, size and P): Markdown,
with the scaling model's predictions beside the measurements.

Usage: python scripts/scaling_table.py RUN.json [RUN.json ...]

Strong scaling: one matrix at P = 1, 2, 4, ...; efficiency ``t(1) / (P t(P))``.  Weak scaling (``--weak`` runs and
the P = 1 run of the base size): efficiency ``t(1) / t(P)``.

Two models predict a product at P from the measured single-GPU time t(1) and the slowest rank's halo bytes h:

- *overlap* (what the design aims at): a rank's own work is t(1)/P (rows balanced by entries), the exchange costs
  ``latency + h / bandwidth`` (a line fitted to the exchanges measured alone), and the product is the work plus
  whatever of the exchange it does not hide: ``t(1)/P + max(0, exchange - t(1)/P)``;
- *fitted* (what was measured, extrapolated): ``t(1)/P + a + b h``, with ``a`` and ``b`` fitted to the measured
  products' excess over t(1)/P (the exchange, the off-diagonal block, packing and waiting).

Both are lines through the measured runs (with two runs of P > 1, exactly through them), so they extrapolate the
measured P and neighbour counts; a matrix with no run of P > 1 gets no prediction.  The overlap model leaves out
packing and the off-diagonal block: a lower bound.  ``hidden`` is ``(serial - product) / exchange`` from runs that
timed the product with the exchange first (``serial_us``), and blank for runs before that.  Halo volumes at a P not run are computed on the host from the matrix's structure
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


def _excess(records, strong) -> tuple[float, float]:
    """``(a_us, b_us_per_byte)``: the measured products' excess over t(1)/P against the halo bytes, least squares."""
    points = []
    for r in records:
        one = strong.get(_key(r), {}).get(1)
        if r["ranks"] > 1 and not r["weak"] and one:
            points.append((r["halo_bytes_max"], r["product_us"] - one["product_us"] / r["ranks"]))
    if len(points) < 2:
        raise SystemExit("the fitted model needs at least two strong-scaling runs with P > 1")
    x, y = np.array(points, dtype=float).T
    b, a = np.polyfit(x, y, 1)
    return a, b


def _fit(records) -> tuple[float, float]:
    """``(latency_us, bytes_per_us)`` of the exchanges measured, a least-squares line (latency at least 0); at least
    two runs of P > 1 are needed."""
    points = [(r["halo_bytes_max"], r["exchange_us"]) for r in records if r["ranks"] > 1]
    if len(points) < 2:
        raise SystemExit("the exchange model needs at least two runs with P > 1")
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
    link = _fit(records)  # one machine's link: every matrix's measured exchanges
    excess = _excess(records, strong)
    print("| matrix | size | P | rows | nnz | product µs | diagonal µs | exchange µs | hidden | halo bytes (max rank) | "
          "efficiency | overlap model µs | fitted model µs (efficiency) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind, table in (("strong", strong), ("weak", weak)):
        for key, runs in sorted(table.items(), key=lambda kv: str(kv[0])):
            if 1 not in runs:
                continue
            one = runs[1]
            if len(runs) == 1:
                continue  # only one GPU ran: nothing measured to scale, and no fit of its own
            latency, rate = link
            matrix, size, dtype = key
            item = np.dtype(dtype).itemsize
            for P in sorted(set(runs) | ({p for p in PREDICT} if kind == "strong" else set())):
                r = runs.get(P)
                halo = r["halo_bytes_max"] if r else halo_max_bytes(matrix, size, P, item)
                local = one["product_us"] / P  # an even share of the entries (rows balanced by entries)
                exchange = latency + halo / rate if P > 1 else 0.0
                model = local + max(0.0, exchange - local)  # the exchange hidden behind the rank's own work
                fitted = local + (excess[0] + excess[1] * halo if P > 1 else 0.0)
                if r:
                    eff = one["product_us"] / (P * r["product_us"]) if kind == "strong" else (
                        one["product_us"] / r["product_us"])
                    hidden = "" if r.get("serial_us") is None or r["hidden_share"] is None else (
                        f"{r['hidden_share']:.0%}")
                    print(f"| {matrix} ({kind}) | {size} | {P} | {r['rows']:,} | {r['nnz']:,} | "
                          f"{r['product_us']:.1f} | {r['local_us']:.1f} | {r['exchange_us']:.1f} | {hidden} | "
                          f"{r['halo_bytes_max']:,} | {eff:.0%} | {model:.1f} | {fitted:.1f} "
                          f"({one['product_us'] / (P * fitted):.0%}) |")
                else:
                    print(f"| {matrix} ({kind}) | {size} | {P} | | | | | | | {halo:,} (structure) | | {model:.1f} "
                          f"({one['product_us'] / (P * model):.0%}) | {fitted:.1f} ({one['product_us'] / (P * fitted):.0%}) |")
        print()
    points = sum(1 for r in records if r["ranks"] > 1 and not r["weak"])
    print(f"Fits over the {points} runs of P > 1: the exchange alone, latency {link[0]:.1f} µs and "
          f"{link[1] / 1e3:.0f} GB/s (the slowest rank's halo bytes against its exchange time); the products' excess "
          f"over t(1)/P, {excess[0]:.1f} µs plus {excess[1] * 1e3:.3f} µs per kB of halo.")


if __name__ == "__main__":
    main(sys.argv[1:])
