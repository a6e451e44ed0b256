"""Least squares with a tall sparse matrix: an iterative solver over the usual sparse matrix against Cocktail's.

``min ||b - A x||`` for a tall matrix ``A`` (--rows x --cols, about four entries per row at random
columns with uneven row lengths: ``cocktail.bench.problems.holdout.tall``; its columns scaled over --spread
decades, as unknowns in different units are) and ``b = A x_true + noise``.  Each iteration multiplies by
``A`` and by ``A^T``: Cocktail's ``SparseMatrix`` runs ``A^T`` (``A.rmatvec``) with a transpose of its own,
built and planned once on first use.

The same solver call runs twice, with the same --iters (tolerances off, so both do exactly that many
iterations unless they reach machine precision first):

- CPU: ``scipy.sparse.linalg.lsqr`` (--solver lsqr, default) or ``lsmr``, over SciPy's ``csr_array``, then
  over the ``SparseMatrix``;
- GPU: ``cupyx.scipy.sparse.linalg.lsmr`` over cupyx's ``csr_matrix`` (cuSPARSE; ``A^T`` through its CSC
  view), then over the ``SparseMatrix``.  LSMR is LSQR's sibling (Fong & Saunders), with the same products
  per iteration: cupyx's ``lsqr`` is not iterative LSQR but a direct QR solve of a square CSR matrix
  (cuSOLVER) that takes no operator, so it cannot run here.

It reports iterations, time of the whole solve, ||b - Ax|| and ||A^T (b - Ax)|| (both computed with the
usual matrix) and the speedup, and checks that the two solutions agree.

Run on a GPU (4,000,000 x 200,000, about 16M nonzeros):
    python examples/lsqr.py --json lsqr.json
CPU-sized (seconds):
    python examples/lsqr.py --small --device cpu
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import _common
from _common import cocktail, seconds


def solver(device, name: str, iters: int):
    """``solve(A, b) -> (x, istop, iterations)``: LSQR or LSMR of SciPy (CPU) or cupyx (GPU), ``iters`` iterations
    with the stopping tolerances off."""
    if device.gpu:
        import cupyx.scipy.sparse.linalg as linalg
    else:
        import scipy.sparse.linalg as linalg
    if name == "lsqr":
        def solve(A, b):
            out = linalg.lsqr(A, b, atol=0.0, btol=0.0, conlim=0.0, iter_lim=iters)
            return out[0], int(out[1]), int(out[2])
    else:
        def solve(A, b):
            out = linalg.lsmr(A, b, atol=0.0, btol=0.0, conlim=0.0, maxiter=iters)
            return out[0], int(out[1]), int(out[2])
    return solve


def main(argv=None):
    p = _common.parser(__doc__)
    p.add_argument("--rows", type=int, default=None, help="rows of A (default 4,000,000; 40,000 with --small)")
    p.add_argument("--cols", type=int, default=None, help="columns of A (default rows / 20)")
    p.add_argument("--spread", type=float, default=2.0,
                   help="scale the columns by 10**-u, u uniform in [0, spread] (default 2)")
    p.add_argument("--iters", type=int, default=None, help="iterations (default 300; 100 with --small)")
    p.add_argument("--solver", choices=("lsqr", "lsmr"), default=None,
                   help="CPU: lsqr (default) or lsmr; GPU: lsmr (cupyx has no iterative lsqr)")
    args = p.parse_args(argv)
    device = _common.Device(args.device)
    name = args.solver or ("lsmr" if device.gpu else "lsqr")
    if device.gpu and name == "lsqr":
        raise SystemExit("--solver lsqr on the GPU: cupyx.scipy.sparse.linalg.lsqr is a direct QR solve of a square "
                         "CSR matrix (cuSOLVER), not iterative LSQR, and takes no operator; use --solver lsmr")
    repeat = _common.repeats(args)
    report = _common.Report("lsqr", device, args)

    from cocktail.bench.problems.holdout import tall

    rows = args.rows or (40_000 if args.small else 4_000_000)
    cols = args.cols or max(1, rows // 20)
    iters = args.iters or (100 if args.small else 300)
    rng = np.random.default_rng(args.seed)
    S = sp.csr_array(tall(rows, cols) @ sp.diags_array(10.0 ** -rng.uniform(0, args.spread, cols)))
    S.sum_duplicates()
    S.sort_indices()
    b_host = S @ rng.standard_normal(cols) + 0.1 * rng.standard_normal(rows)
    report.data["problem"] = {"matrix": f"tall, columns scaled over {args.spread:g} decades", "rows": rows,
                              "cols": cols, "nnz": int(S.nnz), "solver": name, "iterations": iters}
    b = device.array(b_host)
    solve_with = solver(device, name, iters)

    def solve(A):
        return solve_with(A, b)

    usual_name = f"cupyx {name} over csr_matrix (cuSPARSE)" if device.gpu else f"scipy {name} over csr_array"
    usual, S_dev, (x_u, stop_u, it_u) = _common.measure(device, lambda: device.csr(S), solve, repeat)
    ours, A, (x_c, stop_c, it_c) = _common.measure(
        device, lambda: cocktail.SparseMatrix(S, device=device.name), solve, repeat)

    xp = device.xp
    S_T = S_dev.T

    def norms(x):
        r = b - S_dev @ x
        return float(xp.linalg.norm(r)), float(xp.linalg.norm(S_T @ r))

    for way, x, stop, it in ((usual, x_u, stop_u, it_u), (ours, x_c, stop_c, it_c)):
        r, ar = norms(x)
        way.update(iterations=it, istop=stop, residual_norm=r, normal_residual_norm=ar,
                   per_iteration_s=way["median_s"] / max(it, 1))
    usual["way"] = usual_name
    ours.update(way=f"{name} over cocktail.SparseMatrix", format=A.format, kernel=A.kernel,
                transpose_format=A.H.format)
    report.data["results"] = {"usual": usual, "cocktail": ours}
    report.data["speedup"] = usual["median_s"] / ours["median_s"]
    report.data["speedup_best"] = usual["best_s"] / ours["best_s"]
    dx = float(xp.linalg.norm(x_u - x_c)) / max(float(xp.linalg.norm(x_u)), 1e-300)
    report.data["relative_difference_x"] = dx

    converged = 0 < stop_u < 7 and 0 < stop_c < 7  # both stopped early, at machine precision
    report.check("iterations", it_u == it_c or converged, usual=it_u, cocktail=it_c, istop_usual=stop_u,
                 istop_cocktail=stop_c)
    r_u, r_c = usual["residual_norm"], ours["residual_norm"]
    # The columns span two decades by design, so after hundreds of iterations the two ways' different summation
    # orders show in the solution's last digits (5.7e-5 relative at 300 iterations on an H200); the residual agrees
    # far more closely.
    report.check("residual", abs(r_u - r_c) <= 1e-6 * r_u, usual=r_u, cocktail=r_c)
    report.check("solution", dx <= 1e-3, relative_difference=dx)

    table_rows = [[w["way"] + (f" ({w['format']}, A^T {w['transpose_format']})" if "format" in w else ""),
                   w["iterations"], seconds(w["setup_s"]), seconds(w["warmup_s"]), seconds(w["median_s"]),
                   seconds(w["best_s"]), seconds(w["per_iteration_s"]), f"{w['residual_norm']:.6g}",
                   f"{w['normal_residual_norm']:.2e}", f"{usual['median_s'] / w['median_s']:.2f}x"]
                  for w in (usual, ours)]
    report.finish(f"Least squares by {name} ({device.name}): {iters} iterations, {repeat} timed runs",
                  ["way", "iters", "setup", "first run", "median", "best", "per iter", "||r||", "||A^T r||",
                   "speedup"], table_rows,
                  notes=["setup: A on the device (Cocktail's includes planning; A^T is built in the first run); "
                         "speedup: the usual way's median over each way's"])


if __name__ == "__main__":
    main()
