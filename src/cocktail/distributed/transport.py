"""Moving the halo: NCCL point-to-point between GPUs, or MPI on host buffers.

Both post the exchange of one product (``start``), let the caller run the diagonal block meanwhile, and make the
received halo usable (``finish``).  ``start`` and ``finish`` take the send buffer (filled by the caller) and the
receive buffer, laid out as the :class:`~.halo.HaloPlan` says, with ``width`` values per entry (the columns of a
block product).  Both move the values' bytes, never a typed word: exact for every value dtype, half types included
(NCCL has no bfloat16 in every build, mpi4py reads no ml_dtypes buffer).
"""

from __future__ import annotations

import numpy as np


class MpiTransport:
    """MPI point-to-point on NumPy buffers (``Isend``/``Irecv`` to and from each neighbour)."""

    name = "mpi"

    def __init__(self, comm, plan):
        self.comm, self.plan = comm, plan
        self._sources, self._destinations = plan.neighbours()

    def start(self, send, recv, width: int = 1):
        """Post every receive and send; returns the requests."""
        step = width * send.dtype.itemsize  # bytes per halo entry (C-ordered: a block's rows are its entries' values)
        send, recv = send.reshape(-1).view(np.uint8), recv.reshape(-1).view(np.uint8)
        requests = [self.comm.Irecv(recv[start * step:(start + count) * step], source=rank, tag=17)
                    for rank, start, count in self._sources]
        requests += [self.comm.Isend(send[start * step:(start + count) * step], dest=rank, tag=17)
                     for rank, start, count in self._destinations]
        return requests

    def finish(self, requests) -> None:
        """Wait for the exchange."""
        if requests:
            from mpi4py import MPI

            MPI.Request.Waitall(requests)


class StagedTransport(MpiTransport):
    """MPI on host copies of GPU buffers: for GPUs where CuPy has no NCCL (the copies synchronise)."""

    name = "mpi-host-staged"

    def start(self, send, recv, width: int = 1):
        """Copy the send buffer to the host, post the exchange into a host receive buffer."""
        host_send, host_recv = send.get(), np.empty(recv.shape, dtype=recv.dtype)
        return (recv, host_recv, super().start(host_send.reshape(-1), host_recv.reshape(-1), width), host_send)

    def finish(self, pending) -> None:
        """Wait, then copy the halo to the GPU."""
        recv, host_recv, requests, _ = pending
        super().finish(requests)
        recv.set(host_recv)


#: A stream priority past the highest of any device (lower numbers are higher priorities): CUDA clamps it to the
#: device's highest, which CuPy gives no call to read.
HIGHEST_PRIORITY = -(2**10)


class NcclTransport:
    """NCCL send/recv between the ranks' GPUs on a stream of its own, ordered after the send buffer's packing and
    before the off-diagonal block by CUDA events: the diagonal block runs while the halo moves.

    The stream has the device's highest priority, so NCCL's kernel takes each SM the diagonal block's blocks free
    (their grids yield: the blocks are built with ``yielding=True``) before more of them do: behind a grid of
    one wave, or at normal priority, it waited for most of the diagonal block."""

    name = "nccl"

    def __init__(self, comm, plan, nccl_comm):
        import cupy

        self.plan, self.nccl = plan, nccl_comm
        self._sources, self._destinations = plan.neighbours()
        self.stream = cupy.cuda.Stream(non_blocking=True, priority=HIGHEST_PRIORITY)
        self._packed, self._arrived = cupy.cuda.Event(disable_timing=True), cupy.cuda.Event(disable_timing=True)

    def start(self, send, recv, width: int = 1):
        """After the current stream's packing, post the grouped sends and receives on the transport's stream."""
        import cupy
        from cupy.cuda import nccl

        current = cupy.cuda.get_current_stream()
        self._packed.record(current)
        self.stream.wait_event(self._packed)
        step = width * send.dtype.itemsize  # bytes per halo entry
        nccl.groupStart()
        for rank, start, count in self._sources:
            self.nccl.recv(recv.data.ptr + start * step, count * step, nccl.NCCL_UINT8, rank, self.stream.ptr)
        for rank, start, count in self._destinations:
            self.nccl.send(send.data.ptr + start * step, count * step, nccl.NCCL_UINT8, rank, self.stream.ptr)
        nccl.groupEnd()
        self._arrived.record(self.stream)
        return current

    def finish(self, current) -> None:
        """Order the current stream after the halo's arrival (no host wait)."""
        current.wait_event(self._arrived)


_PRIVATE: dict = {}


def private(comm, gpu: bool):
    """``(duplicate, nccl)`` for the user's communicator ``comm``, made once per communicator and GPU: a duplicate
    of it for the exchange's MPI messages (their tags never meet the user's), and on the GPU a NCCL communicator
    over its ranks (None where CuPy has no NCCL).  Collective the first time."""
    key = (comm.py2f(), _current_gpu() if gpu else None)
    found = _PRIVATE.get(key)
    if found is None:
        found = _PRIVATE[key] = (comm.Dup(), nccl_communicator(comm) if gpu else None)
    return found


def _current_gpu() -> int:
    import cupy

    return cupy.cuda.runtime.getDevice()


def nccl_communicator(comm):
    """A NCCL communicator over ``comm``'s ranks (rank 0's unique id broadcast over MPI), or None where CuPy has no
    NCCL."""
    try:
        from cupy.cuda import nccl
    except ImportError:
        return None
    if not getattr(nccl, "available", True):
        return None
    uid = nccl.get_unique_id() if comm.Get_rank() == 0 else None
    uid = comm.bcast(uid, root=0)
    return nccl.NcclCommunicator(comm.Get_size(), uid, comm.Get_rank())
