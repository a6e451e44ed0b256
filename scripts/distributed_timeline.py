"""Where a distributed product's time goes on the GPUs, read from CUDA events on both streams: the probe of
why the halo exchange hides so little behind the diagonal block.  Run under ``mpiexec -n P`` on a machine of P GPUs.

    mpiexec -n 4 python scripts/distributed_timeline.py [--side 180 --weak | --matrix rmat --scale 20]
        [--one-wave] [--repeat 50]

The product's own steps (``DistributedMatrix._run``, PETSc's order) are timed by events recorded where it marks
them, on the product's stream and on the transport's: ``pack`` (the send buffer's packing, with the host's
posting of the exchange), ``diagonal`` (the diagonal block, from the packing's end), ``halo`` (from the packing's
end until the halo has arrived: the NCCL send/recv on the transport's stream), ``rest`` (waiting for the halo,
the off-diagonal block and its rows added) and ``product`` (all of it).  Products run back to back, as the benchmark's do; medians over ``--repeat``, the
slowest rank's.  If ``halo`` is about ``diagonal + exchange`` the transfer waited for the diagonal block; if it is
about the exchange alone, the transfer ran beside it.

Each matrix is timed four ways in one process: the transport's stream at normal and at the device's highest
priority (the product's), each overlapped and serial (the halo awaited before the diagonal block: its ``halo`` is
the exchange alone).  The blocks' grids are the product's (yielding: a block per chunk), or with ``--one-wave``
those of a matrix outside a distributed one.  A probe, not the benchmark.
"""

from __future__ import annotations

import argparse
import statistics
import sys

import numpy as np


def timeline(A, x, y, comm, repeat: int, serial: bool) -> dict:
    """The slowest rank's median of each step over ``repeat`` products (after one warm-up), each the product's own
    ``_run`` with events recorded where it marks its steps; ``serial`` waits for the halo before the diagonal block
    (the product's ``overlap=False``)."""
    import cupy
    from mpi4py import MPI

    stream = cupy.cuda.Stream(non_blocking=True)
    names = ("begin", "packed", "arrived", "diagonal_end", "end")
    events = []

    def mark(step):
        if step == "posted":  # the packing on this stream, the NCCL calls after it on the transport's
            now["packed"].record(stream)
            now["arrived"].record(A._transport.stream)
        else:
            now["diagonal_end" if step == "diagonal" else "end"].record(stream)

    overlap, A.overlap = A.overlap, not serial
    try:
        with stream:
            comm.Barrier()
            for i in range(repeat + 1):  # back to back, as the benchmark's samples run: the host stays ahead
                now = {name: cupy.cuda.Event() for name in names}
                now["begin"].record(stream)
                A._product(x, y, 1, 0, block=False, mark=mark)
                if i:  # the first is the warm-up product: NCCL connections, compilation
                    events.append(now)
            stream.synchronize()
            A._transport.stream.synchronize()
    finally:
        A.overlap = overlap
    steps = {name: [] for name in ("pack", "diagonal", "halo", "rest", "product")}
    for e in events:
        for name, (a, b) in (("pack", ("begin", "packed")), ("diagonal", ("packed", "diagonal_end")),
                             ("halo", ("packed", "arrived")), ("rest", ("diagonal_end", "end")),
                             ("product", ("begin", "end"))):
            steps[name].append(cupy.cuda.get_elapsed_time(e[a], e[b]) * 1e3)
    return {name: comm.allreduce(statistics.median(v), op=MPI.MAX) for name, v in steps.items()}


def main(argv=None) -> int:
    """Print the slowest rank's median of each step (rank 0)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matrix", choices=("laplace27", "rmat"), default="laplace27")
    p.add_argument("--side", type=int, default=180)
    p.add_argument("--scale", type=int, default=20)
    p.add_argument("--weak", action="store_true")
    p.add_argument("--dtype", default="float64")
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--one-wave", action="store_true")
    args = p.parse_args(argv)
    if args.one_wave:
        from distributed_levers import one_wave  # this script's folder is on the path

        one_wave()

    from mpi4py import MPI

    from cocktail.bench.distributed import _matrix

    comm = MPI.COMM_WORLD
    A, facts = _matrix(args, comm, np.dtype(args.dtype))
    if A.device != "cuda" or A._transport.name != "nccl":
        raise SystemExit(f"the timeline needs GPUs and NCCL (device {A.device}, transport {A._transport.name})")
    import cupy

    m, n = A.local_shape
    x = cupy.asarray(np.random.default_rng(comm.Get_rank()).standard_normal(n).astype(args.dtype))
    y = cupy.zeros(m, dtype=args.dtype)
    streams = {"normal": cupy.cuda.Stream(non_blocking=True), "priority": A._transport.stream}
    grids = "one wave" if args.one_wave else "yielding"
    for priority in ("normal", "priority"):
        A._transport.stream = streams[priority]
        for order in ("overlapped", "serial"):
            medians = timeline(A, x, y, comm, args.repeat, serial=order == "serial")
            if comm.Get_rank() == 0:
                print(f"{facts} P={comm.Get_size()}{' weak' if args.weak else ''} {grids}, {priority}, {order}: "
                      + ", ".join(f"{name} {value:.1f} µs" for name, value in medians.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
