"""Where a distributed product's time goes on the GPUs, read from CUDA events on both streams: issue 25's probe of
why the halo exchange hides so little behind the diagonal block.  Run under ``mpiexec -n P`` on a machine of P GPUs.

    mpiexec -n 4 python scripts/distributed_timeline.py [--side 180 --weak | --matrix rmat --scale 20]
        [--no-loop | --reserve SMS] [--repeat 50]

One product is taken apart into PETSc's steps, with timed events around them on the product's stream and on the
transport's: ``pack`` (the send buffer's packing), ``diagonal`` (the diagonal block, from the packing's end),
``halo`` (from the packing's end until the halo has arrived: the NCCL send/recv on the transport's stream),
``rest`` (waiting for the halo, the off-diagonal block and its rows added) and ``product`` (all of it).  Medians
over ``--repeat`` products, the slowest rank's.  If ``halo`` is about ``diagonal + exchange`` the transfer waited for
the diagonal block; if it is about the exchange alone, the transfer ran beside it.

Each matrix is timed four ways in one process: the transport's stream at normal and at the device's highest
priority (a number below every range: CUDA clamps it), each overlapped and serial (the halo awaited before the
diagonal block: its ``halo`` is the exchange alone).  The grids are the product's own, or with ``--no-loop`` a
block per chunk that never loops, or with ``--reserve SMS`` a looping grid a wave of that many SMs fewer (the
kernels' modules' ``grid_for`` replaced before the matrix is built).  A probe, not the benchmark.
"""

from __future__ import annotations

import argparse
import statistics
import sys

import numpy as np


def replace_grids(rule) -> list[str]:
    """Replace ``grid_for`` in every kernel module by ``rule(original, items, block, props, function, shared_mem)``;
    returns the modules changed."""
    import importlib
    import pkgutil

    from cocktail import kernels
    from cocktail.kernels import device

    original, replaced = device.grid_for, []

    def grid_for(items, block, props, function=None, shared_mem=0):
        return rule(original, items, block, props, function, shared_mem)

    for info in pkgutil.iter_modules(kernels.__path__):
        module = importlib.import_module(f"cocktail.kernels.{info.name}")
        if module is not device and getattr(module, "grid_for", None) is original:
            module.grid_for = grid_for
            replaced.append(info.name)
    device.grid_for = grid_for  # for the callers that look it up there (the features' histograms)
    return replaced


def no_loop(original, items, block, props, function, shared_mem):
    """A block per chunk, never looping (capped at gridDim.x)."""
    from cocktail.kernels import device

    return device.capped_grid(-(-items // block), props)


def reserving(sms: int):
    """The product's grid, but a looping one a wave of ``sms`` fewer SMs: slots the transport's kernel finds free."""
    from cocktail.kernels import device

    def rule(original, items, block, props, function, shared_mem):
        grid = original(items, block, props, function, shared_mem)
        if function is None:
            return grid
        wave = (props.sm_count - sms) * device.blocks_per_sm(function, block, shared_mem)
        return max(1, min(grid, wave))

    return rule


def timeline(A, x, y, comm, repeat: int, serial: bool) -> dict:
    """The slowest rank's median of each step over ``repeat`` products (after one warm-up); ``serial`` waits for
    the halo before the diagonal block (the product's ``overlap=False``)."""
    import cupy
    from mpi4py import MPI

    from cocktail.arrays import scatter_add

    stream = cupy.cuda.Stream(non_blocking=True)
    steps = {name: [] for name in ("pack", "diagonal", "halo", "rest", "product")}
    with stream:
        for i in range(repeat + 1):
            begin, packed, diagonal_end, arrived, end = (cupy.cuda.Event() for _ in range(5))
            comm.Barrier()
            begin.record(stream)
            pending = A._start(x, None)  # pack on this stream, then the NCCL calls on the transport's
            packed.record(stream)
            arrived.record(A._transport.stream)  # after the grouped send/recv
            if serial:
                A._transport.finish(pending)
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
    p.add_argument("--no-loop", action="store_true")
    p.add_argument("--reserve", type=int, default=0, metavar="SMS")
    args = p.parse_args(argv)
    if args.no_loop and args.reserve:
        p.error("--no-loop and --reserve are two different grids: choose one")
    if args.no_loop:
        replace_grids(no_loop)
    if args.reserve:
        replace_grids(reserving(args.reserve))

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
    streams = {"normal": A._transport.stream, "priority": cupy.cuda.Stream(non_blocking=True, priority=-1024)}
    grids = "no-loop" if args.no_loop else f"reserve {args.reserve}" if args.reserve else "one wave"
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
