"""The distributed scaling tables, from ``cocktail bench --distributed`` runs (one JSON per matrix, size and P): Markdown,
with the scaling model's predictions beside the measurements.

Usage: python scripts/scaling_table.py RUN.json [RUN.json ...]
       python scripts/scaling_table.py --runs WHAT RUN.json [WHAT RUN.json ...]

The second form tables single runs side by side (an A/B of what each changed, ``WHAT``): commit, matrix and P,
product, diagonal block, exchange, the product with the exchange first, and the share hidden.

Strong scaling: one matrix at P = 1, 2, 4, ...; efficiency ``t(1) / (P t(P))``.  Weak scaling (``--weak`` runs and
the P = 1 run of the base size): efficiency ``t(1) / t(P)``.

Two models predict a product at P from the measured single-GPU time t(1) and the slowest rank's halo bytes h:

- *overlap* (what the design aims at): a rank's own work is t(1)/P (rows balanced by entries), the exchange costs
  ``latency + h / bandwidth`` (a line fitted to the exchanges measured alone), and the product is the work plus
  whatever of the exchange it does not hide: ``t(1)/P + max(0, exchange - t(1)/P)``;
- *fitted* (what was measured, extrapolated): ``t(1)/P + a + b h``, with ``a`` and ``b`` fitted to one series'
  measured products' excess over t(1)/P (the exchange, the off-diagonal block, packing and waiting); for weak
  scaling, t(1) in place of t(1)/P.

Both are lines through the measured runs (with two runs of P > 1, exactly through them), so they extrapolate the
measured P and neighbour counts; a matrix with no run of P > 1 gets no prediction.  The overlap model leaves out
packing and the off-diagonal block: a lower bound.  ``hidden`` is ``(serial - product) / exchange`` from runs that
timed the product with the exchange first (``serial_us``), and blank for runs before that.  Halo volumes at a P not run are computed on the host from the matrix's structure
(laplace27: one interior rank's rows; rmat: the partition of the whole graph), so the predictions for 8-64 GPUs
are the model's alone and marked so.
"""

from __future__ import annotations

import sys
from collections import defaultdict

import numpy as np

from cocktail.bench.records.files import load_json
from cocktail.precision import itemsize

PREDICT = (2, 4, 8, 16, 32, 64)


def _key(r) -> tuple:
    return (r["matrix"], r.get("side", r.get("scale")), r["dtype"])


def _excess(runs: dict, local) -> tuple[float, float] | None:
    """``(a_us, b_us_per_byte)``: one series' measured products' excess over a rank's own work (``local(P)``)
    against the halo bytes, least squares (a constant where the halos differ by less than 20%); None with fewer
    than two runs of P > 1."""
    points = [(r["halo_bytes_max"], r["product_us"] - local(P)) for P, r in runs.items() if P > 1]
    if len(points) < 2:
        return None
    x, y = np.array(points, dtype=float).T
    if x.max() <= 1.2 * x.min():  # halos of about one size: no slope to read, the excess as a constant
        return float(y.mean()), 0.0
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


def _series(records) -> list[tuple[str, tuple, dict]]:
    """``(kind, key, {P: record})``: strong runs by matrix, size and dtype; weak runs by matrix, dtype and a rank's
    share of rows (to 2 significant digits), each with the one-GPU run of that share (within 10%) as its base.
    Two runs of one series at one P are refused: pass each once."""
    strong, weak = defaultdict(dict), defaultdict(dict)
    for r in records:
        share = float(f"{r['rows'] / r['ranks']:.2g}")
        series, key = (weak, (r["matrix"], share, r["dtype"])) if r["weak"] else (strong, _key(r))
        if r["ranks"] in series[key]:
            raise SystemExit(f"two runs of {key} at P = {r['ranks']}: pass each series' runs once")
        series[key][r["ranks"]] = r
    for (matrix, share, dtype), runs in weak.items():
        bases = [s[1] for key, s in strong.items() if key[0] == matrix and key[2] == dtype and 1 in s
                 and abs(s[1]["rows"] - share) <= 0.1 * share]
        if bases and 1 not in runs:
            runs[1] = min(bases, key=lambda b: abs(b["rows"] - share))
        elif 1 not in runs:
            print(f"weak series {matrix} ({share:,.0f} rows a rank, {dtype}): no one-GPU run of that size, left out",
                  file=sys.stderr)
    return ([("strong", k, v) for k, v in sorted(strong.items(), key=lambda kv: str(kv[0]))]
            + [("weak", k, v) for k, v in sorted(weak.items(), key=lambda kv: str(kv[0]))])


def main(paths) -> None:
    """Print the table, then the fits."""
    records = [load_json(p) for p in paths]
    latency, rate = _fit(records)  # one machine's link: every matrix's measured exchanges
    print("| matrix | size | P | rows | nnz | product µs | diagonal µs | exchange µs | hidden | halo bytes (max rank) | "
          "efficiency | overlap model µs | fitted model µs (efficiency) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    fits = []
    for kind, key, runs in _series(records):
        if 1 not in runs or len(runs) == 1:
            continue  # only one GPU ran: nothing measured to scale, and no fit of its own
        one = runs[1]
        matrix, dtype = key[0], key[-1]
        item = itemsize(dtype)  # a bfloat16 record needs no ml_dtypes

        def local(P):  # a rank's own work: an even share of the entries (strong), or the base's (weak)
            return one["product_us"] / P if kind == "strong" else one["product_us"]

        def efficiency(P, t):
            return one["product_us"] / (P * t) if kind == "strong" else one["product_us"] / t

        excess = _excess(runs, local)
        if excess:
            fits.append(f"{matrix} ({kind}) {excess[0]:.1f} µs plus {excess[1] * 1e3:.3f} µs per kB of halo")
        for P in sorted(set(runs) | (set(PREDICT) if kind == "strong" else set())):
            r = runs.get(P)
            halo = r["halo_bytes_max"] if r else halo_max_bytes(matrix, key[1], P, item)
            exchange = latency + halo / rate if P > 1 else 0.0
            model = local(P) + max(0.0, exchange - local(P))  # the exchange hidden behind the rank's own work
            fitted = local(P) + (excess[0] + excess[1] * halo if P > 1 else 0.0) if excess else None
            fitted_cell = f"{fitted:.1f} ({efficiency(P, fitted):.0%})" if fitted is not None and fitted > 0 else ""
            if r:
                hidden = "" if r.get("hidden_share") is None else f"{r['hidden_share']:.0%}"
                print(f"| {matrix} ({kind}) | {r.get('side', r.get('scale'))} | {P} | {r['rows']:,} | {r['nnz']:,} | "
                      f"{r['product_us']:.1f} | {r['local_us']:.1f} | {r['exchange_us']:.1f} | {hidden} | "
                      f"{r['halo_bytes_max']:,} | {efficiency(P, r['product_us']):.0%} | {model:.1f} | {fitted_cell} |")
            else:
                print(f"| {matrix} ({kind}) | {key[1]} | {P} | | | | | | | {halo:,} (structure) | | {model:.1f} "
                      f"({efficiency(P, model):.0%}) | {fitted_cell} |")
        print()
    points = sum(1 for r in records if r["ranks"] > 1)
    print(f"Fits: the exchange alone over the {points} runs of P > 1, latency {latency:.1f} µs and {rate / 1e3:.0f} GB/s "
          f"(the slowest rank's halo bytes against its exchange time); each series' products' excess over a rank's own "
          f"work (strong: t(1)/P; weak: t(1)): " + ("; ".join(fits) or "none (a series needs two runs of P > 1)") + ".")


def _run_name(r) -> str:
    """A run's matrix, size and P, from its record."""
    if r["matrix"] == "laplace27":
        return f"laplace27 side {r['side']}{' weak' if r['weak'] else ''}, P = {r['ranks']}"
    return f"{r['matrix']} scale {r.get('scale')}, P = {r['ranks']}"


def runs_table(pairs) -> None:
    """Print one row per ``(what, path)``: the run's record beside what its run changed."""
    print("| commit | run | what | product µs | diagonal µs | exchange µs | exchange first µs | hidden |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for what, path in pairs:
        r = load_json(path)
        hidden = "" if r.get("hidden_share") is None else f"{r['hidden_share']:.0%}"
        print(f"| {r['commit']} | {_run_name(r)} | {what} | {r['product_us']:.1f} | {r['local_us']:.1f} | "
              f"{r['exchange_us']:.1f} | {r['serial_us']:.1f} | {hidden} |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--runs"]:
        rest = sys.argv[2:]
        if not rest or len(rest) % 2:
            raise SystemExit("--runs takes pairs: WHAT RUN.json [WHAT RUN.json ...]")
        runs_table(list(zip(rest[::2], rest[1::2])))
    else:
        main(sys.argv[1:])
