"""Run under ``mpiexec -n P python tests/distributed/mpi_distributed.py [--device cpu|cuda]``: the distributed
product and CG against the single-process ones, on every rank, for the partition's edge cases.
test_distributed.py launches it for P = 1..4 (and test_gpu_distributed.py on GPUs); it exits non-zero on the first
failed check, naming it.

The oracle is SciPy's product of the whole matrix (every rank builds the same matrix from the same seed): the
distributed ``y`` has exactly the rows it should, and each value is within the summation bound
``gamma_(k+2) * (|alpha| |A| |x| + |beta| |y|)`` of it, ``k`` the row's entry count (its two blocks sum in
another order than one CSR row).
"""

from __future__ import annotations

import argparse
import sys
import traceback
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from mpi4py import MPI  # noqa: E402

import cocktail  # noqa: E402
from cocktail import distributed  # noqa: E402

warnings.simplefilter("ignore", cocktail.CPUFallbackWarning)
COMM = MPI.COMM_WORLD
RANK, SIZE = COMM.Get_rank(), COMM.Get_size()


def matrices(dtype):
    """name -> the whole matrix, the same on every rank."""
    rng = np.random.default_rng(7)
    n = 300
    out = {
        "random": sp.random_array((n, n), density=0.03, format="csr", rng=rng),
        "laplace2d": (sp.kron(sp.eye_array(15), sp.diags_array([-1.0, 2, -1], offsets=[-1, 0, 1], shape=(20, 20)))
                      + sp.kron(sp.diags_array([-1.0, 2, -1], offsets=[-1, 0, 1], shape=(15, 15)), sp.eye_array(20))),
        "block_diagonal": sp.block_diag([sp.random_array((40, 40), density=0.2, rng=rng) for _ in range(6)]),
        "dense_row": sp.random_array((n, n), density=0.01, format="lil", rng=rng),
        "tiny": sp.csr_array(np.array([[2.0, 1, 0], [1, 3, 0], [0, 0, 4]])),  # fewer rows than some runs' ranks
        "rectangular": sp.random_array((250, 410), density=0.02, format="csr", rng=rng),
        "empty_rows": sp.csr_array((np.ones(5), (np.array([0, 0, 299, 299, 150]), np.array([1, 299, 0, 5, 150]))),
                                   shape=(n, n)),
    }
    out["dense_row"][7, :] = rng.standard_normal(n)  # one rank owns a dense row (and the whole row's halo)
    result = {}
    for name, S in out.items():
        S = sp.csr_array(S).astype(dtype)
        if np.dtype(dtype).kind == "c":
            S = (S + 1j * S.multiply(0.5)).tocsr()
        result[name] = S
    return result


def bound(S, x, alpha, beta, y0):
    """The per-row summation bound of ``alpha*S@x + beta*y0``."""
    eps = np.finfo(np.dtype(S.dtype).char.lower()).eps / 2
    k = np.diff(S.indptr) + 2
    gamma = k * eps / (1 - k * eps)
    scale = abs(alpha) * (abs(S) @ np.abs(x)) + abs(beta) * np.abs(y0)
    return gamma[:, None] * scale if scale.ndim == 2 else gamma * scale


def check(name, condition, detail=""):
    if not condition:
        raise AssertionError(f"rank {RANK} of {SIZE}: {name} {detail}")


def run_case(name, S, device, dtype):
    A = distributed.DistributedMatrix.scatter(S if RANK == 0 else None, device=device)
    m, n = A.local_shape
    check(f"{name}: shape", A.shape == S.shape)
    rng = np.random.default_rng(11)
    x = rng.standard_normal(S.shape[1]).astype(dtype)
    X = rng.standard_normal((S.shape[1], 3)).astype(dtype)
    y0 = rng.standard_normal(S.shape[0]).astype(dtype)
    r0, r1 = A.row_offsets[RANK], A.row_offsets[RANK + 1]
    xp = A._xp()
    for alpha, beta in ((1, 0), (2.5, -0.5)):
        out = xp.asarray(y0[r0:r1].copy())
        got = A.matvec(A.local_vector(x), out=out, alpha=alpha, beta=beta)
        want = alpha * (S @ x) + beta * y0
        err = np.abs(np.asarray(got.get() if hasattr(got, "get") else got) - want[r0:r1])
        check(f"{name}: matvec alpha={alpha} beta={beta}", np.all(err <= bound(S, x, alpha, beta, y0)[r0:r1] + 1e-300),
              f"max error {err.max() if err.size else 0:.3g}")
    Y = A.matmat(A.local_vector(X))
    err = np.abs(np.asarray(Y.get() if hasattr(Y, "get") else Y) - (S @ X)[r0:r1])
    check(f"{name}: matmat", np.all(err <= bound(S, X, 1, 0, np.zeros((S.shape[0], 3)))[r0:r1] + 1e-300))
    whole = A.gather(A.matvec(A.local_vector(x)))
    if RANK == 0:
        check(f"{name}: gathered y has every row", whole.shape == (S.shape[0],))
    xl, yl = A.local_vector(x), xp.zeros(m, dtype=dtype)
    p = A.bind(xl, yl)
    p()
    again = A.matvec(xl)
    tol = 1e-5 if np.dtype(dtype) == np.float32 else 1e-12  # kernels with atomics differ in the last bits
    check(f"{name}: bind", bool(xp.allclose(yl, again, rtol=tol, atol=tol)))
    A.overlap = False  # the exchange first, then both blocks: the same product
    check(f"{name}: exchange first", bool(xp.allclose(A.matvec(xl), again, rtol=tol, atol=tol)))
    A.overlap = True
    marks = []  # the hooks scripts/distributed_timeline.py records its events at
    check(f"{name}: the product marks its steps", A._product(xl, yl, 1, 0, block=False, mark=marks.append) is yl
          and marks == ["posted", "diagonal", "done"] and bool(xp.allclose(yl, again, rtol=tol, atol=tol)), marks)
    # from_rows: each rank passes only its own rows
    B = distributed.DistributedMatrix.from_rows(S[int(r0):int(r1)], n_cols=S.shape[1], device=device)
    check(f"{name}: from_rows offsets", np.array_equal(B.row_offsets, A.row_offsets) or S.shape[0] != S.shape[1])
    yb = B.gather(B.matvec(B.local_vector(x)))
    if RANK == 0:
        check(f"{name}: from_rows product", np.allclose(yb, S @ x, rtol=1e-5 if dtype == np.float32 else 1e-12,
                                                        atol=1e-5 if dtype == np.float32 else 1e-12))
    text = A.explain()
    check(f"{name}: explain", f"rank {RANK} of {SIZE}" in text and "halo" in text)
    COMM.Barrier()


def run_exchange_dtypes(device):
    """The transports move every value dtype whole, half types included: NCCL once posted float16 as float32
    words (twice the bytes, past each neighbour's slice).  Each rank sends the entries of a global vector its
    neighbours' halos need, in each dtype and for vectors and blocks, and must receive exactly the halo's entries."""
    from cocktail import precision

    S = matrices(np.float64)["random"]  # a halo on every rank
    A = distributed.DistributedMatrix.scatter(S if RANK == 0 else None, device=device)
    xp, plan, c0 = A._xp(), A.plan, int(A.col_offsets[RANK])
    for dtype in (*precision.HALF_DTYPES, np.dtype(np.complex64), np.dtype(np.float64)):
        for width in (1, 3):
            whole = np.arange(S.shape[1] * width, dtype=np.float64).reshape(S.shape[1], width) / 7 + 1
            whole = precision.rounded(whole if np.dtype(dtype).kind != "c" else whole + 1j * whole, dtype)
            send = xp.asarray(np.ascontiguousarray(whole[plan.send_positions + c0]))
            recv = xp.zeros((plan.recv_size, width), dtype=dtype)
            if width == 1:
                send, recv = send.reshape(-1), recv.reshape(-1)
            A._transport.finish(A._transport.start(send, recv, width))
            got = np.asarray(recv.get() if hasattr(recv, "get") else recv).reshape(-1, width)
            want = whole[plan.halo_columns]
            check(f"{np.dtype(dtype).name} halo of width {width}", got.tobytes() == want.tobytes(),
                  f"{int((got != want).sum())} of {want.size} entries differ")
    COMM.Barrier()


def run_cg(device):
    n = 400
    S = (sp.kron(sp.eye_array(20), sp.diags_array([-1.0, 4, -1], offsets=[-1, 0, 1], shape=(20, 20)))
         + sp.kron(sp.diags_array([-1.0, 0, -1], offsets=[-1, 0, 1], shape=(20, 20)), sp.eye_array(20))).tocsr()
    b = np.random.default_rng(3).standard_normal(n)
    A = distributed.DistributedMatrix.scatter(S if RANK == 0 else None, device=device)
    x, its = distributed.cg(A, A.local_vector(b), rtol=1e-10)
    whole = A.gather(x)
    single = cocktail.SparseMatrix(S, device=device)
    one = distributed.DistributedMatrix(S, [0, n], [0, n], comm=MPI.COMM_SELF, device=device)
    x1, its1 = distributed.cg(one, one.local_vector(b), rtol=1e-10)
    if RANK == 0:
        check("cg converged", its > 0, f"iterations {its}")
        check("cg iterations agree with one process", abs(its - its1) <= 1, f"{its} against {its1}")
        check("cg solves", np.linalg.norm(S @ whole - b) <= 1e-9 * np.linalg.norm(b) * 10)
        x1 = x1.get() if hasattr(x1, "get") else x1
        check("cg agrees with single-process CG to rounding", np.allclose(whole, x1, rtol=1e-8, atol=1e-10),
              f"{np.abs(whole - x1).max():.3g}")
    del single


def run_sharing_the_gpu(device):
    """On GPUs: the blocks' launches yield (a grid-stride grid a block per chunk, where a matrix built outside the
    distributed one, or its blocks with ``yielding=False``, get one looping wave) and the transport's stream
    outranks a default one."""
    if device != "cuda":
        return
    import cupy

    from cocktail.kernels.device import current

    m = current().sm_count * 2048 * 4 * SIZE  # each rank's rows need 4 waves of 256-thread blocks by threads alone
    S = sp.diags_array([np.ones(m - 1), np.full(m, 2.0), np.ones(m - 1)], offsets=[-1, 0, 1], format="csr")
    A = distributed.DistributedMatrix.scatter(S if RANK == 0 else None, device=device, format="csr",
                                              kernel="csr_scalar")
    (launch,) = A.diagonal._executor.launches
    rows = A.local_shape[0]
    check("the diagonal block's grid yields", launch.grid == -(-rows // launch.block),
          f"grid {launch.grid} for {rows} rows of {launch.block}")
    check("launches it binds later yield too (block products)", A.diagonal._executor._props.yielding)
    check("the off-diagonal block yields too", A.off_diagonal is None or A.off_diagonal._executor._props.yielding)
    (alone,) = cocktail.SparseMatrix(S[:rows], format="csr", kernel="csr_scalar")._executor.launches
    check("a matrix built outside keeps one wave", alone.grid < -(-rows // alone.block), f"grid {alone.grid}")
    waves = distributed.DistributedMatrix.scatter(S if RANK == 0 else None, device=device, format="csr",
                                                  kernel="csr_scalar", yielding=False)
    (wave,) = waves.diagonal._executor.launches
    check("blocks built with yielding=False keep one wave", wave.grid < -(-rows // wave.block)
          and not waves.diagonal._executor._props.yielding, f"grid {wave.grid}")
    check("and the off-diagonal block too",
          waves.off_diagonal is None or not waves.off_diagonal._executor._props.yielding)
    del waves
    if A._transport.name == "nccl":
        priority, default = cupy.cuda.runtime.streamGetPriority, cupy.cuda.Stream(non_blocking=True)  # kept alive
        check("the transport's stream outranks a default one",
              priority(A._transport.stream.ptr) < priority(default.ptr))
    y = A.gather(A.matvec(A.local_vector(np.ones(m))))
    if RANK == 0:
        check("its product", np.array_equal(y, S @ np.ones(m)))


def run_refusals(device):
    """Checks that fail on some ranks only still raise on every rank (none left waiting in a collective), a float32
    x is taken by a float64 matrix on every rank alike, and scatter leaves the caller's matrix as it was."""
    S = sp.csr_array(np.tril(np.ones((10, 10))))
    A = distributed.DistributedMatrix.scatter(S if RANK == 0 else None, device=device)
    y = A.gather(A.matvec(A.local_vector(np.ones(10)).astype(np.float32)))
    if RANK == 0:
        check("float32 x on a float64 matrix", np.allclose(y, S @ np.ones(10)))
    for what, call in (("scatter without the matrix", lambda: distributed.DistributedMatrix.scatter(None,
                                                                                                     device=device)),
                       ("cg of unlike splits", lambda: distributed.cg(
                           distributed.DistributedMatrix.from_rows(S[A.row_offsets[RANK]:A.row_offsets[RANK + 1]],
                                                                   col_offsets=[0] * SIZE + [10], device=device),
                           np.ones(A.local_shape[0])))):
        try:
            call()
        except ValueError:
            pass
        else:
            check(f"{what} refused", SIZE == 1 and what.startswith("cg"))
    S2 = sp.csr_array((np.ones(3), np.array([1, 1, 0]), np.array([0, 2, 3])), shape=(2, 2))  # a duplicate entry
    before = (S2.indptr.copy(), S2.indices.copy(), S2.data.copy())
    distributed.DistributedMatrix.scatter(S2 if RANK == 0 else None, device=device)
    check("scatter leaves the caller's matrix", all(np.array_equal(a, b) for a, b in
                                                    zip(before, (S2.indptr, S2.indices, S2.data))))
    COMM.Barrier()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    failed = False
    # On GPUs float32 adds nothing the exchange does not already do in float64 (and each run plans every block).
    for dtype in (np.float64, np.complex128) if args.device == "cuda" else (np.float64, np.float32, np.complex128):
        for name, S in matrices(dtype).items():
            try:
                run_case(name, S, args.device, dtype)
            except Exception:  # noqa: BLE001 - report, then fail the run
                failed = True
                print(f"FAILED {name} {np.dtype(dtype).name}:\n{traceback.format_exc()}", flush=True)
                COMM.Abort(1)
    run_exchange_dtypes(args.device)
    run_cg(args.device)
    run_sharing_the_gpu(args.device)
    run_refusals(args.device)
    COMM.Barrier()
    if RANK == 0:
        print(f"ok: {SIZE} ranks, device {args.device}", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
