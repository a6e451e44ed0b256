"""``cocktail bench`` with the distributed product's two levers turned back, for a before/after on one
machine: run under ``mpiexec -n P`` like the benchmark.

    mpiexec -n 4 python scripts/distributed_levers.py one-wave,normal-priority bench --distributed --weak --side 180

The first argument names the levers (comma-separated; empty: the product as shipped), the rest is ``cocktail``'s
command line.  ``one-wave``: the blocks bound as a matrix outside a distributed one is (grids of one looping wave:
``yielding=False``); ``normal-priority``: the transport's stream at the default
priority; ``pack-beside``: the send buffer packed on the transport's stream, the diagonal block ordered after it
(NCCL's kernel then next in its own stream: tried on 2 H200s, 0% hidden and the product 10% slower without
yielding grids, 34-36% hidden with them; not shipped).  A probe, not the benchmark.
"""

from __future__ import annotations

import sys

LEVERS = ("one-wave", "normal-priority", "pack-beside")


def one_wave() -> None:
    """The distributed matrix builds its blocks with ``yielding=False``, as a matrix outside one: the launches'
    props, the plan cache's key and the whole-matrix rival all follow that policy."""
    from cocktail.distributed import matrix

    made = matrix.DistributedMatrix.__init__

    def __init__(self, *args, **options):
        made(self, *args, **{**options, "yielding": False})

    matrix.DistributedMatrix.__init__ = __init__


def normal_priority() -> None:
    """NcclTransport's stream made at the default priority."""
    from cocktail.distributed import transport

    made = transport.NcclTransport.__init__

    def __init__(self, *args, **kwargs):
        import cupy

        made(self, *args, **kwargs)
        self.stream = cupy.cuda.Stream(non_blocking=True)

    transport.NcclTransport.__init__ = __init__


def pack_beside() -> None:
    """DistributedMatrix._start packs on the transport's stream, and the product's stream waits for the packing."""
    from cocktail.distributed import matrix

    def _start(self, x, width):
        import cupy

        t = self._transport
        if t.name != "nccl":
            raise SystemExit(f"pack-beside needs NCCL (transport {t.name})")
        send, recv = self._scratch("send", width), self._scratch("recv", width)
        current = cupy.cuda.get_current_stream()
        ready = cupy.cuda.Event(disable_timing=True)
        ready.record(current)  # x is ready
        t.stream.wait_event(ready)
        if send.shape[0]:
            with t.stream:
                cupy.take(x, self._positions, axis=0, out=send)
        packed = cupy.cuda.Event(disable_timing=True)
        packed.record(t.stream)
        current.wait_event(packed)  # the diagonal block after the packing: NCCL is its stream's next kernel
        transport_start = type(t).start
        with t.stream:  # start() records its own packing event on the current stream: here, the transport's
            transport_start(t, send, recv, width or 1)
        return current

    matrix.DistributedMatrix._start = _start


def main(argv=None) -> int:
    """Turn the named levers, then run ``cocktail`` with the rest of the arguments."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        raise SystemExit(__doc__)
    levers = [name for name in argv[0].split(",") if name]
    unknown = sorted(set(levers) - set(LEVERS))
    if unknown:
        raise SystemExit(f"unknown levers {', '.join(unknown)}; choose from {', '.join(LEVERS)}")
    for name in levers:
        {"one-wave": one_wave, "normal-priority": normal_priority, "pack-beside": pack_beside}[name]()
    from cocktail.cli import main as cocktail

    return cocktail(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
