"""Where a distributed product's time goes on the GPUs, read from CUDA events on both streams: issue 25's probe of
why the halo exchange hides so little behind the diagonal block.  Run under ``mpiexec -n P`` on a machine of P GPUs.

    mpiexec -n 4 python scripts/distributed_timeline.py [--side 180 --weak | --matrix rmat --scale 20]
        [--priority] [--no-loop] [--repeat 50]

One product is taken apart into PETSc's steps, with timed events around them on the product's stream and on the
transport's: ``pack`` (the send buffer's packing), ``diagonal`` (the diagonal block, from the packing's end),
``halo`` (from the packing's end until the halo has arrived: the NCCL send/recv on the transport's stream),
``rest`` (waiting for the halo, the off-diagonal block and its rows added) and ``product`` (all of it).  Medians
over ``--repeat`` products, the slowest rank's.  If ``halo`` is about ``diagonal + exchange`` the transfer waited for
the diagonal block; if it is about the exchange alone, the transfer ran beside it.

``--priority`` puts the transport's stream at the device's highest priority (a number below every range: CUDA
clamps it); ``--no-loop`` sizes every grid-stride launch a block per chunk, never looping (the kernels' modules'
``grid_for`` replaced before the matrix is built).  A probe, not the benchmark; not yet run on a GPU.
"""

from __future__ import annotations

import argparse
import statistics
import sys

import numpy as np


def no_loop_grids() -> list[str]:
    """Replace ``grid_for`` in every kernel module by a grid of a block per chunk (capped at gridDim.x); returns
    the modules changed."""
    import importlib
    import pkgutil

    from cocktail import kernels
    from cocktail.kernels import device

    def grid_for(items, block, props, function=None, shared_mem=0):
        return device.capped_grid(-(-items // block), props)

    original, replaced = device.grid_for, []
    for info in pkgutil.iter_modules(kernels.__path__):
        module = importlib.import_module(f"cocktail.kernels.{info.name}")
        if module is not device and getattr(module, "grid_for", None) is original:
            module.grid_for = grid_for
            replaced.append(info.name)
    device.grid_for = grid_for  # for the callers that look it up there (the features' histograms)
    return replaced


def main(argv=None) -> int:
    """Print the slowest rank's median of each step (rank 0)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matrix", choices=("laplace27", "rmat"), default="laplace27")
    p.add_argument("--side", type=int, default=180)
    p.add_argument("--scale", type=int, default=20)
    p.add_argument("--weak", action="store_true")
    p.add_argument("--dtype", default="float64")
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--priority", action="store_true")
    p.add_argument("--no-loop", action="store_true")
    args = p.parse_args(argv)
    if args.no_loop:
        no_loop_grids()

    from mpi4py import MPI

    from cocktail.arrays import scatter_add
    from cocktail.bench.distributed import _matrix

    comm = MPI.COMM_WORLD
    A, facts = _matrix(args, comm, np.dtype(args.dtype))
    if A.device != "cuda" or A._transport.name != "nccl":
        raise SystemExit(f"the timeline needs GPUs and NCCL (device {A.device}, transport {A._transport.name})")
    import cupy

    if args.priority:
        A._transport.stream = cupy.cuda.Stream(non_blocking=True, priority=-1024)
    m, n = A.local_shape
    x = cupy.asarray(np.random.default_rng(comm.Get_rank()).standard_normal(n).astype(args.dtype))
    y = cupy.zeros(m, dtype=args.dtype)
    stream = cupy.cuda.Stream(non_blocking=True)
    steps = {name: [] for name in ("pack", "diagonal", "halo", "rest", "product")}
    with stream:
        for i in range(args.repeat + 1):
            begin, packed, diagonal_end, arrived, end = (cupy.cuda.Event() for _ in range(5))
            comm.Barrier()
            begin.record(stream)
            pending = A._start(x, None)  # pack on this stream, then the NCCL calls on the transport's
            packed.record(stream)
            arrived.record(A._transport.stream)  # after the grouped send/recv
            A.diagonal.matvec(x, out=y)
            diagonal_end.record(stream)
            A._transport.finish(pending)
            if A.off_diagonal is not None:
                A.off_diagonal.matvec(A._scratch("recv", None), out=A._scratch("halo", None))
                scatter_add(y, A.halo_rows, A._scratch("halo", None))
            end.record(stream)
            end.synchronize()
            arrived.synchronize()
            if i == 0:
                continue  # the warm-up product: NCCL connections, compilation
            for name, (a, b) in (("pack", (begin, packed)), ("diagonal", (packed, diagonal_end)),
                                 ("halo", (packed, arrived)), ("rest", (diagonal_end, end)), ("product", (begin, end))):
                steps[name].append(cupy.cuda.get_elapsed_time(a, b) * 1e3)
    medians = {name: comm.allreduce(statistics.median(v), op=MPI.MAX) for name, v in steps.items()}
    if comm.Get_rank() == 0:
        print(f"{facts} P={comm.Get_size()}{' weak' if args.weak else ''}"
              f"{' priority' if args.priority else ''}{' no-loop' if args.no_loop else ''}: "
              + ", ".join(f"{name} {value:.1f} µs" for name, value in medians.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
