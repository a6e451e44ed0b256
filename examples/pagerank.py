"""PageRank by power iteration on a power-law graph: ``P @ x`` the usual way against Cocktail's products.

The graph is an R-MAT (Kronecker) graph of 2**--scale vertices and about --edge-factor edges per vertex
(``cocktail.bench.problems.holdout.rmat``): power-law degrees, hubs, many vertices without out-links.
``P`` is its column-stochastic transition matrix (an edge i -> j of weight w is ``P[j, i] = w / out(i)``),
and each iteration computes

    x <- d * P @ x + ((1 - d) + d * (dangling mass of x)) / n

for a fixed number of iterations (--iters, damping d = --damping), three ways with the same vector work:

- usual: cupyx's ``csr_matrix`` (cuSPARSE) on the GPU, SciPy's ``csr_array`` on the CPU: ``y = P @ x``,
  a new vector each iteration, then scaled and shifted;
- cocktail matvec: ``A.matvec(x, out=y, alpha=d, beta=1)`` into two preallocated buffers used in turn
  (``y`` already holds the teleport term): the product allocates nothing;
- cocktail bind: the same two products bound once (``A.bind(x, out=y, alpha=d, beta=1)``); on the GPU each
  call replays a CUDA graph of the product.

It checks that the three rank vectors agree (allclose) and reports the time per iteration and the speedup.

Run on a GPU (2**20 vertices, about 16M edges):
    python examples/pagerank.py --json pagerank.json
CPU-sized (seconds):
    python examples/pagerank.py --small --device cpu
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import _common
from _common import cocktail, seconds


def transition(W):
    """``(P, dangling)``: the column-stochastic transition matrix of the weighted graph ``W`` (host CSR) and a 0/1
    float vector of the vertices without out-links."""
    out = np.asarray(W.sum(axis=1)).ravel()
    dangling = (out == 0).astype(W.dtype)
    inverse = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
    P = sp.csr_array((sp.diags_array(inverse) @ W).T)
    P.sum_duplicates()
    P.sort_indices()
    return P, dangling


def main(argv=None):
    p = _common.parser(__doc__)
    p.add_argument("--scale", type=int, default=None, help="2**scale vertices (default 20; 14 with --small)")
    p.add_argument("--edge-factor", type=int, default=16, help="edges drawn per vertex (default 16)")
    p.add_argument("--iters", type=int, default=50, help="power iterations (default 50)")
    p.add_argument("--damping", type=float, default=0.85, help="damping factor d (default 0.85)")
    args = p.parse_args(argv)
    device = _common.Device(args.device)
    repeat = _common.repeats(args)
    report = _common.Report("pagerank", device, args)

    from cocktail.bench.problems.holdout import rmat

    scale = args.scale or (14 if args.small else 20)
    P, dangling_host = transition(rmat(scale, args.edge_factor, seed=103 + args.seed))
    n = P.shape[0]
    d, iters, xp = args.damping, args.iters, device.xp
    report.data["problem"] = {"graph": f"rmat scale {scale}, edge factor {args.edge_factor}", "vertices": n,
                              "edges": int(P.nnz), "dangling": int(dangling_host.sum()), "iterations": iters,
                              "damping": d}
    dangling = device.array(dangling_host)
    base = (1.0 - d) / n

    def teleport(x):
        """The term every vertex gets: (1 - d) / n plus d / n of the rank on dangling vertices (a 0-d array)."""
        return base + (d / n) * (dangling @ x)

    def usual(P_dev):
        x = xp.full(n, 1.0 / n)
        for _ in range(iters):
            y = P_dev @ x
            y *= d
            y += teleport(x)
            x = y
        return x

    def buffers():
        return xp.empty(n), xp.empty(n)

    def cocktail_matvec(state):
        A, (x, y) = state
        x[...] = 1.0 / n
        for _ in range(iters):
            y[...] = teleport(x)
            A.matvec(x, out=y, alpha=d, beta=1)
            x, y = y, x
        return x.copy()

    def setup_bind():
        A = cocktail.SparseMatrix(P, device=device.name)
        x, y = buffers()
        return A.bind(x, out=y, alpha=d, beta=1), A.bind(y, out=x, alpha=d, beta=1), x, y

    def cocktail_bind(state):
        forward, back, x, y = state
        x[...] = 1.0 / n
        for i in range(iters):
            src, dst, product = (x, y, forward) if i % 2 == 0 else (y, x, back)
            dst[...] = teleport(src)
            product()
        return (y if iters % 2 else x).copy()

    timings = {}
    timings["usual"], P_dev, r_usual = _common.measure(device, lambda: device.csr(P), usual, repeat)
    timings["cocktail matvec"], (A, _), r_matvec = _common.measure(
        device, lambda: (cocktail.SparseMatrix(P, device=device.name), buffers()), cocktail_matvec, repeat)
    timings["cocktail bind"], _, r_bind = _common.measure(device, setup_bind, cocktail_bind, repeat)

    usual_name = "cupyx csr_matrix (cuSPARSE)" if device.gpu else "scipy csr_array"
    names = {"usual": usual_name, "cocktail matvec": f"cocktail {A.format}: matvec(out=)",
             "cocktail bind": f"cocktail {A.format}: bind" + (" (CUDA graph)" if device.gpu else "")}
    for key, t in timings.items():
        t.update(way=names[key], per_iteration_s=t["median_s"] / iters,
                 speedup=timings["usual"]["median_s"] / t["median_s"])
    timings["cocktail matvec"].update(format=A.format, kernel=A.kernel)
    report.data["results"] = timings
    report.data["speedup"] = timings["cocktail matvec"]["speedup"]
    report.data["speedup_bind"] = timings["cocktail bind"]["speedup"]

    r_usual, r_matvec, r_bind = (device.host(r) for r in (r_usual, r_matvec, r_bind))
    report.data["rank"] = {"sum": float(r_usual.sum()), "top vertices": np.argsort(-r_usual)[:5].tolist(),
                           "max relative difference matvec": float(np.max(np.abs(r_matvec - r_usual) / r_usual)),
                           "max relative difference bind": float(np.max(np.abs(r_bind - r_usual) / r_usual))}
    report.check("ranks matvec", np.allclose(r_matvec, r_usual, rtol=1e-8, atol=0),
                 max_relative_difference=report.data["rank"]["max relative difference matvec"])
    report.check("ranks bind", np.allclose(r_bind, r_usual, rtol=1e-8, atol=0),
                 max_relative_difference=report.data["rank"]["max relative difference bind"])
    report.check("rank sum", abs(r_usual.sum() - 1) < 1e-8, sum=float(r_usual.sum()))

    rows = [[t["way"], seconds(t["setup_s"]), seconds(t["warmup_s"]), seconds(t["median_s"]), seconds(t["best_s"]),
             seconds(t["per_iteration_s"]), f"{t['speedup']:.2f}x"] for t in timings.values()]
    report.finish(f"PageRank ({device.name}): {iters} iterations, damping {d}, {repeat} timed runs",
                  ["way", "setup", "first run", "median", "best", "per iter", "speedup"], rows,
                  notes=["setup: P on the device (Cocktail's includes planning; bind also captures the products); "
                         "speedup: the usual way's median over each way's"])


if __name__ == "__main__":
    main()
