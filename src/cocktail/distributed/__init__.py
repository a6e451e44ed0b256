"""Several GPUs (or CPU processes): a matrix partitioned by rows over MPI ranks, its halo moved by NCCL or MPI.

``mpiexec -n P python script.py``, one GPU per rank::

    from mpi4py import MPI
    from cocktail import distributed

    A = distributed.DistributedMatrix.scatter(S if MPI.COMM_WORLD.rank == 0 else None)  # S: SciPy, on rank 0
    x = A.local_vector(x_global)          # this rank's slice (or build it on the rank)
    y = A @ x                             # this rank's rows of A @ x
    x, info = distributed.cg(A, b_local)  # CG with dot products summed over the ranks

- :mod:`.partition`: rows balanced by entries (plus one per row), columns owned like the rows of a square matrix.
- :mod:`.halo`: the exchange plan, made once: which entries of ``x`` each rank sends to whom.
- :mod:`.transport`: moving the halo: NCCL point-to-point between GPUs (the unique id broadcast over MPI), or
  MPI on host buffers (CPU ranks, and GPUs where CuPy has no NCCL).
- :mod:`.matrix`: :class:`DistributedMatrix`, each rank's diagonal block (its own columns) and off-diagonal block
  (the halo's columns), each planned by the single-GPU planner; a product posts the exchange, runs the diagonal
  block while the halo moves, then adds the off-diagonal block (PETSc's MatMult order).
- :mod:`.solvers`: :func:`cg`.

mpi4py (and an MPI) is optional: ``pip install 'cocktail[distributed]'``.
"""

from __future__ import annotations

from .matrix import DistributedMatrix
from .partition import balanced_offsets
from .solvers import cg

__all__ = ["DistributedMatrix", "balanced_offsets", "cg"]
