"""Conjugate gradients on a finite-element matrix: the usual sparse matrix against Cocktail's, in one solver.

``cocktail.SparseMatrix`` is a SciPy ``LinearOperator``, so a solver takes it where it takes a sparse
matrix.  This runs the same ``cg`` call twice, with the same right-hand side, tolerance and iteration cap:

- the usual way: ``cupyx.scipy.sparse.linalg.cg`` over cupyx's ``csr_matrix`` (cuSPARSE) on the GPU,
  ``scipy.sparse.linalg.cg`` over SciPy's ``csr_array`` on the CPU;
- Cocktail: the same ``cg`` over ``cocktail.SparseMatrix`` of the same matrix (``format="auto"``, which
  plans the format on the GPU; on the CPU it is SciPy's CSR product behind the operator).

It reports the iterations, the time of the whole solve (median of --repeat runs after a warm-up run; the
SparseMatrix build and planning apart), the final relative residual ||b - Ax|| / ||b|| of both (computed
with the usual matrix) and the speedup.

The matrix (--matrix elasticity, the default) is 3-D linear elasticity assembled by scikit-fem on
tetrahedra (P2 elements, about 80 nonzeros per row: ``cocktail.bench.problems.williams.fem``) plus
--shift times its mean diagonal on the diagonal, as an implicit step of elastodynamics adds the mass
matrix: elasticity with no support is singular, and the shift makes it symmetric positive definite.
With --matrix laplace27 it is the 27-point Laplacian of a cube (1,000,000 rows, 26M nonzeros), also SPD:
the choice where scikit-fem is not installed (the elasticity matrix needs it, and without it the script says
so and exits with status 69 rather than solving another problem under the same name).

Run on a GPU (elasticity, about 250,000 rows and 20M nonzeros; assembly takes a minute on the host):
    python examples/cg_fem.py --json cg_fem.json
CPU-sized (seconds):
    python examples/cg_fem.py --small --device cpu
"""

from __future__ import annotations

import inspect

import numpy as np
import scipy.sparse as sp

import _common
from _common import cocktail, seconds


def build_matrix(args):
    """``(name, S, facts)``: the host CSR matrix to solve with, SPD."""
    kind = args.matrix
    if kind == "elasticity":
        try:
            import skfem  # noqa: F401
        except ImportError:
            _common.needs("scikit-fem", "pip install scikit-fem; or pass --matrix laplace27",
                          "cg_fem.py --matrix elasticity")
        rows = args.rows or (10_000 if args.small else 250_000)
        from cocktail.bench.problems.williams import fem

        K = fem(rows, 72 * rows, backend="skfem")
        shift = args.shift * float(K.diagonal().mean())
        S = sp.csr_array(K + shift * sp.eye_array(K.shape[0], format="csr"))
        facts = {"shift": shift}
    else:
        from cocktail.bench.problems.generators import laplacian

        rows = args.rows or (8_000 if args.small else 1_000_000)
        side = max(3, round(rows ** (1 / 3)))
        S = laplacian(27, side)
        facts = {"grid side": side}
    S.sum_duplicates()
    S.sort_indices()
    return kind, S, facts


def solver(device):
    """``cg(A, b, tol, maxiter, callback)`` of cupyx (GPU) or SciPy (CPU), whichever keyword names the tolerance."""
    if device.gpu:
        from cupyx.scipy.sparse.linalg import cg
    else:
        from scipy.sparse.linalg import cg
    keyword = "rtol" if "rtol" in inspect.signature(cg).parameters else "tol"

    def run(A, b, tol, maxiter):
        iterations = [0]

        def count(xk):
            iterations[0] += 1

        x, info = cg(A, b, maxiter=maxiter, callback=count, **{keyword: tol})
        return x, int(info), iterations[0]

    return run


def main(argv=None):
    p = _common.parser(__doc__)
    p.add_argument("--matrix", choices=("elasticity", "laplace27"), default="elasticity",
                   help="the SPD matrix (default: elasticity, which needs scikit-fem; else laplace27)")
    p.add_argument("--rows", type=int, default=None,
                   help="about this many rows (default: elasticity 250,000, laplace27 1,000,000 (a cube of side "
                        "100); with --small 10,000 and 8,000)")
    p.add_argument("--shift", type=float, default=1e-2,
                   help="elasticity: add this times the mean diagonal to the diagonal (default 1e-2)")
    p.add_argument("--tol", type=float, default=1e-8, help="relative residual to reach (default 1e-8)")
    p.add_argument("--maxiter", type=int, default=2000, help="iteration cap (default 2000)")
    args = p.parse_args(argv)
    device = _common.Device(args.device)
    repeat = _common.repeats(args)
    report = _common.Report("cg_fem", device, args)

    kind, S, facts = build_matrix(args)
    report.data["problem"] = {"matrix": kind, "rows": S.shape[0], "nnz": int(S.nnz),
                              "nnz per row": round(S.nnz / S.shape[0], 1), "dtype": S.dtype.name, **facts}
    rng = np.random.default_rng(args.seed)
    b = device.array(rng.standard_normal(S.shape[0]))
    cg = solver(device)

    def solve(A):
        return cg(A, b, args.tol, args.maxiter)

    usual_name = "cupyx csr_matrix (cuSPARSE)" if device.gpu else "scipy csr_array"
    usual, S_dev, (x_u, info_u, it_u) = _common.measure(device, lambda: device.csr(S), solve, repeat)
    ours, A, (x_c, info_c, it_c) = _common.measure(
        device, lambda: cocktail.SparseMatrix(S, device=device.name), solve, repeat)

    xp = device.xp
    norm_b = float(xp.linalg.norm(b))

    def residual(x):
        return float(xp.linalg.norm(b - S_dev @ x)) / norm_b

    r_u, r_c = residual(x_u), residual(x_c)
    usual.update(way=usual_name, iterations=it_u, info=info_u, relative_residual=r_u,
                 per_iteration_s=usual["median_s"] / max(it_u, 1))
    ours.update(way="cocktail.SparseMatrix", format=A.format, kernel=A.kernel, iterations=it_c, info=info_c,
                relative_residual=r_c, per_iteration_s=ours["median_s"] / max(it_c, 1))
    speedup = usual["median_s"] / ours["median_s"]
    report.data["results"] = {"usual": usual, "cocktail": ours}
    report.data["speedup"] = speedup
    report.data["speedup_best"] = usual["best_s"] / ours["best_s"]
    report.data["relative_difference_x"] = float(xp.linalg.norm(x_u - x_c)) / max(float(xp.linalg.norm(x_u)), 1e-300)

    report.check("iterations", abs(it_u - it_c) <= 2 + 0.05 * it_u, usual=it_u, cocktail=it_c)
    report.check("residual", max(r_u, r_c) <= 2 * max(min(r_u, r_c), args.tol), usual=r_u, cocktail=r_c,
                 tol=args.tol)

    rows = [[w["way"] + (f" ({w['format']})" if "format" in w else ""), w["iterations"], seconds(w["setup_s"]),
             seconds(w["warmup_s"]), seconds(w["median_s"]), seconds(w["best_s"]), seconds(w["per_iteration_s"]),
             f"{w['relative_residual']:.2e}", f"{usual['median_s'] / w['median_s']:.2f}x"]
            for w in (usual, ours)]
    report.finish(f"CG on {kind} ({device.name}): tol {args.tol:g}, maxiter {args.maxiter}, {repeat} timed runs",
                  ["way", "iters", "setup", "first run", "median", "best", "per iter", "residual", "speedup"], rows,
                  notes=["setup: the sparse matrix on the device (Cocktail's includes planning); first run: the "
                         "warm-up solve; speedup: the usual way's median over each way's"])


if __name__ == "__main__":
    main()
