"""``cocktail bench --distributed``, under ``mpiexec -n P``: one row-partitioned product timed at this P.

Each run measures, for one matrix at the communicator's size P: the distributed product (PETSc's order: pack,
post the halo exchange, the diagonal block while it moves, the off-diagonal block), the diagonal block alone and
the exchange alone (each the slowest rank's median), the halo volume, and the share of the exchange hidden behind
the diagonal block, ``(serial - product) / exchange`` where ``serial`` is the same product with the exchange
completed first (``serial_us``: no NCCL kernels beside the diagonal block's).  Every timing takes the same count of
back-to-back calls per sample, after a warm-up call.  Strong scaling is one matrix run at P = 1, 2, 4,
...; weak scaling grows the matrix with P (``--weak``).  scripts/scaling_table.py combines the runs' JSON into
efficiencies and the scaling model's predictions.

Matrices: ``laplace27`` (the 27-point Laplacian on a cube of ``--side`` points; each rank generates its own rows,
so no rank holds the whole matrix) and ``rmat`` (an R-MAT power-law graph of 2^``--scale`` vertices, generated on
rank 0 and scattered).
"""

from __future__ import annotations

import json
import statistics
import time

import numpy as np
import scipy.sparse as sp

from ..precision import dtype_named

#: The 27 neighbour offsets of a box stencil, in the order that keeps each row's columns ascending.
_BOX = [(dk, dj, di) for dk in (-1, 0, 1) for dj in (-1, 0, 1) for di in (-1, 0, 1)]


def laplace27_rows(side: int, r0: int, r1: int, dtype=np.float64) -> sp.csr_array:
    """Rows ``r0:r1`` of the 27-point box Laplacian on a ``side``-cube (26 on the diagonal, -1 for each neighbour),
    with global column indices: a rank's own rows, made without the rest of the matrix."""
    n = side ** 3
    ids = np.arange(r0, r1, dtype=np.int64)
    i, j, k = ids % side, (ids // side) % side, ids // (side * side)
    index = np.int32 if n < 2**31 else np.int64
    cols = np.empty((r1 - r0, 27), dtype=index)
    valid = np.empty((r1 - r0, 27), dtype=bool)
    for t, (dk, dj, di) in enumerate(_BOX):
        valid[:, t] = ((0 <= i + di) & (i + di < side) & (0 <= j + dj) & (j + dj < side)
                       & (0 <= k + dk) & (k + dk < side))
        cols[:, t] = ids + di + dj * side + dk * side * side
    values = np.where(np.arange(27) == 13, 26.0, -1.0).astype(dtype)
    counts = valid.sum(axis=1)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(index)
    return sp.csr_array((np.broadcast_to(values, valid.shape)[valid], cols[valid], indptr), shape=(r1 - r0, n))


def _timer(comm, sync):
    from mpi4py import MPI

    def calls_per_sample(run) -> int:
        """Calls per sample so that a sample of ``run`` (warmed up first) lasts about 2 ms: at least 10."""
        run()
        sync()
        comm.Barrier()
        t0 = time.perf_counter()
        for _ in range(3):
            run()
        sync()
        once = comm.allreduce((time.perf_counter() - t0) / 3, op=MPI.MAX)
        return max(10, min(200, int(2e-3 / max(once, 1e-7))))

    def median_s(run, repeat: int, inner: int) -> float:
        """The slowest rank's time per call, median over ``repeat`` samples of ``inner`` back-to-back calls."""
        run()  # warm: first-use work (NCCL connections, kernel compilation) stays out of the samples
        samples = []
        for _ in range(repeat):
            comm.Barrier()
            sync()
            t0 = time.perf_counter()
            for _ in range(inner):
                run()
            sync()
            samples.append(comm.allreduce((time.perf_counter() - t0) / inner, op=MPI.MAX))
        return statistics.median(samples)

    return calls_per_sample, median_s


def _matrix(args, comm, dtype):
    """This rank's DistributedMatrix of the run's matrix, and its description."""
    from ..distributed import DistributedMatrix
    from ..distributed.partition import even_offsets

    P, rank = comm.Get_size(), comm.Get_rank()
    if args.matrix == "laplace27":
        side = args.side if not args.weak else max(3, round((args.side ** 3 * P) ** (1 / 3)))
        rows = even_offsets(side ** 3, P)  # every row has 27 entries but the boundary's: rows balance entries
        local = laplace27_rows(side, int(rows[rank]), int(rows[rank + 1]), dtype)
        A = DistributedMatrix.from_rows(local)
        return A, {"matrix": "laplace27", "side": side}
    scale = args.scale + (int(round(np.log2(P))) if args.weak else 0)
    S = None
    if rank == 0:
        from .problems.holdout import rmat

        S = rmat(k=scale).astype(dtype)
    return DistributedMatrix.scatter(S), {"matrix": "rmat", "scale": scale}


def run(args) -> int:
    """Time this P's distributed product of the chosen matrix and write the record (rank 0)."""
    from mpi4py import MPI

    from .. import provenance

    comm = MPI.COMM_WORLD
    P, rank = comm.Get_size(), comm.Get_rank()
    dtype = dtype_named(args.dtype)  # one, checked by the command line (bfloat16 names ml_dtypes where missing)
    t0 = time.perf_counter()
    A, facts = _matrix(args, comm, dtype)
    build_s = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
    xp = A._xp()
    sync = (lambda: xp.cuda.get_current_stream().synchronize()) if A.device == "cuda" else (lambda: None)
    calls_per_sample, median_s = _timer(comm, sync)
    m, n = A.local_shape
    x = xp.asarray(np.random.default_rng(rank).standard_normal(n).astype(dtype))
    y = xp.zeros(m, dtype=dtype)

    def exchange():  # packing and the exchange alone
        A._transport.finish(A._start(x, None))

    repeat = args.repeat or 20
    inner = calls_per_sample(lambda: A.matvec(x, out=y))  # one count for every timing below: alike amortised
    product_s = median_s(lambda: A.matvec(x, out=y), repeat, inner)
    A.overlap = False
    serial_s = median_s(lambda: A.matvec(x, out=y), repeat, inner)  # the exchange first, then both blocks
    A.overlap = True
    local_s = median_s(lambda: A.diagonal.matvec(x, out=y), repeat, inner)
    exchange_s = median_s(exchange, repeat, inner)
    per_rank = comm.gather({"rank": rank, "rows": m, "nnz": A.nnz_local, "halo_entries": A.plan.recv_size,
                            "neighbours": len(A.plan.neighbours()[0]), "halo_rows": int(A.halo_rows.shape[0]),
                            "diagonal": f"{A.diagonal.format} "
                            f"({A.diagonal.kernel})", "off_diagonal": None if A.off_diagonal is None else
                            f"{A.off_diagonal.format} ({A.off_diagonal.kernel})"}, root=0)
    if rank == 0:
        # What overlapping saves, over what the exchange costs: the product with the exchange first against the
        # product with the diagonal block running while the halo moves (the same work otherwise).
        hidden = None if exchange_s <= 0 or P == 1 else min(1.0, max(0.0, (serial_s - product_s) / exchange_s))
        record = {**facts, "ranks": P, "weak": bool(args.weak), "rows": A.shape[0],
                  "nnz": int(sum(r["nnz"] for r in per_rank)), "dtype": dtype.name, "device": A.device,
                  "transport": A._transport.name, "product_us": product_s * 1e6, "local_us": local_s * 1e6,
                  "exchange_us": exchange_s * 1e6, "serial_us": serial_s * 1e6, "hidden_share": hidden,
                  "calls_per_sample": inner,
                  "halo_bytes_total": int(sum(r["halo_entries"] for r in per_rank)) * dtype.itemsize,
                  "halo_bytes_max": int(max(r["halo_entries"] for r in per_rank)) * dtype.itemsize,
                  "matrix_bytes_max": int(max(r["nnz"] for r in per_rank)) * (dtype.itemsize + 4),
                  "build_s": build_s, "per_rank": per_rank, **provenance.provenance(A.device == "cuda")}
        text = (f"{facts} P={P}{' weak' if args.weak else ''}: product {product_s * 1e6:.1f} µs, diagonal block "
                f"{local_s * 1e6:.1f} µs, exchange {exchange_s * 1e6:.1f} µs, exchange first {serial_s * 1e6:.1f} µs"
                + (f" ({hidden:.0%} hidden)" if hidden is not None else "")
                + f", halo {record['halo_bytes_total']:,} bytes, by {A._transport.name}, build {build_s:.1f} s")
        print(text, flush=True)
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(record, fh, indent=1)
    return 0
