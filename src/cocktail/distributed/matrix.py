"""``DistributedMatrix``: one rank's rows of a row-partitioned matrix, as two planned matrices and a halo exchange."""

from __future__ import annotations

import numpy as np

from ..arrays import scatter_add
from .halo import make_plan
from .partition import balanced_offsets, even_offsets


def _agree(comm, problem, root=None) -> None:
    """Raise ``ValueError(problem)`` on every rank where any rank (or ``root``, when given) has one: a check that
    fails on some ranks only would leave the others waiting in the next collective."""
    if root is not None:
        problem = comm.bcast(problem, root=root)
    else:
        problems = [p for p in comm.allgather(problem) if p]
        problem = problems[0] if problems else None
    if problem:
        raise ValueError(problem)


def _use_local_gpu(comm) -> None:
    """Make GPU (rank on this node) mod (GPUs on this node) current: one GPU per rank where there are enough."""
    import cupy
    from mpi4py import MPI

    local = comm.Split_type(MPI.COMM_TYPE_SHARED)
    cupy.cuda.Device(local.Get_rank() % cupy.cuda.runtime.getDeviceCount()).use()
    local.Free()


def _unmarked(step: str) -> None:
    """The default step hook of a product: nothing is recorded."""


def _world():
    from mpi4py import MPI

    return MPI.COMM_WORLD


class DistributedMatrix:
    """This rank's rows ``row_offsets[r]:row_offsets[r + 1]`` of an (m, n) matrix, ``y = A @ x`` over all ranks.

    Each rank holds the slice of ``x`` it owns (``col_offsets``) and gets the slice of ``y`` of its rows.  Its rows
    are two matrices, each a :class:`cocktail.SparseMatrix` planned on its own (``format="auto"`` by default: a
    Cocktail where that wins): ``diagonal`` over the columns it owns, ``off_diagonal`` over its halo's columns in
    the order the exchange delivers them, and over only the rows that have such entries (``halo_rows``: a slab of a
    stencil touches its neighbours with a plane or two, so the block is tiny beside the rank's rows), its result
    added into those rows of ``y``.  A product packs the entries others need, posts the exchange, runs the
    diagonal block while the halo moves, waits, and adds the off-diagonal block (PETSc's MatMult order).

    Build with :meth:`scatter` (the whole matrix on one rank) or :meth:`from_rows` (each rank its own rows: no
    rank ever holds the whole matrix).  Every method that moves data is collective: all ranks call it.
    """

    #: True: the diagonal block runs while the halo moves (PETSc's order); False: the exchange completes first,
    #: then both blocks (no NCCL kernels beside the diagonal block's).  The benchmark times both.
    overlap = True

    def __init__(self, local, row_offsets, col_offsets, comm=None, device=None, **options):
        """``local``: this rank's rows as a SciPy or cupyx CSR with global column indices; ``row_offsets`` and
        ``col_offsets``: every rank's first row and first owned column (P + 1 each, the same on every rank).
        ``options`` go to each block's ``SparseMatrix`` (``format=``, ``vendor=``, ...); on GPUs the blocks'
        launches yield (``yielding=True``: grids that free SMs for NCCL's kernel beside them) unless
        ``yielding=False`` is given."""
        from .. import SparseMatrix
        from ..arrays import to_numpy
        from ..matrix import resolve_device

        self.comm = comm if comm is not None else _world()
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        self.row_offsets = np.asarray(row_offsets, dtype=np.int64)
        self.col_offsets = np.asarray(col_offsets, dtype=np.int64)
        problem = None
        if self.row_offsets.shape != (self.size + 1,) or self.col_offsets.shape != (self.size + 1,):
            problem = f"row_offsets and col_offsets need {self.size + 1} entries (one per rank, and the end)"
        else:
            r0, r1 = self.row_offsets[self.rank], self.row_offsets[self.rank + 1]
            if tuple(local.shape) != (r1 - r0, self.col_offsets[-1]):
                problem = (f"rank {self.rank}: local rows have shape {tuple(local.shape)}, but the offsets give "
                           f"({r1 - r0}, {self.col_offsets[-1]})")
        _agree(self.comm, problem)  # every rank raises, or none: a rank left waiting in a collective would hang
        self.shape = (int(self.row_offsets[-1]), int(self.col_offsets[-1]))
        r0, r1 = self.row_offsets[self.rank], self.row_offsets[self.rank + 1]
        c0, c1 = self.col_offsets[self.rank], self.col_offsets[self.rank + 1]
        self.device = resolve_device(device, on_gpu=False)  # warns where no GPU is found, as SparseMatrix does
        if self.device == "cuda":
            _use_local_gpu(self.comm)
        indptr, indices, data = (to_numpy(a) for a in (local.indptr, local.indices, local.data))
        self.dtype = np.dtype(data.dtype)
        import scipy.sparse as sp

        # Split each row's entries, in their order, into the two blocks: no sort (a row's columns stay ascending).
        # Indices keep their width (c0 in their dtype), counts are int32 where they fit, temporaries go early.
        own = (indices >= c0) & (indices < c1)
        counts = np.int64 if data.shape[0] >= 2**31 else np.int32
        diagonal_indptr = np.concatenate([[0], np.cumsum(own, dtype=counts)])[indptr]
        diagonal = sp.csr_array((data[own], indices[own] - indices.dtype.type(c0), diagonal_indptr),
                                shape=(r1 - r0, c1 - c0))
        remote_mask = ~own
        del own
        remote = indices[remote_mask]
        halo_columns = np.unique(remote)
        off_indptr = indptr - diagonal_indptr
        rows_used = np.flatnonzero(np.diff(off_indptr))  # compressed rows: only those with halo entries
        off = sp.csr_array((data[remote_mask], np.searchsorted(halo_columns, remote).astype(counts),
                            np.concatenate([[0], off_indptr[1:][rows_used]])), shape=(rows_used.shape[0],
                                                                                      halo_columns.shape[0]))
        del remote_mask, remote
        self.plan = make_plan(halo_columns, self.col_offsets, self.rank, self.comm)
        options.setdefault("yielding", self.device == "cuda")
        self.diagonal = SparseMatrix(diagonal, device=self.device, **options)
        self.off_diagonal = SparseMatrix(off, device=self.device, **options) if off.nnz else None
        self.nnz_local = int(data.shape[0])
        self._transport = self._make_transport()
        xp = self._xp()
        self.halo_rows = xp.asarray(rows_used.astype(np.int64))
        self._positions = xp.asarray(self.plan.send_positions)
        self._scratch_buffers = {}  # (what, block width or None) -> a buffer made once: see _scratch

    # --- construction ---------------------------------------------------------------------
    @classmethod
    def scatter(cls, S=None, comm=None, root: int = 0, device=None, **options):
        """The matrix ``S`` (SciPy or cupyx, on rank ``root`` only: others pass None) split by rows balanced by
        entries (:func:`balanced_offsets`) and sent to every rank; columns owned like the rows of a square matrix,
        split evenly otherwise."""
        import scipy.sparse as sp

        from ..arrays import to_numpy

        comm = comm if comm is not None else _world()
        pieces = offsets = None
        if comm.Get_rank() == root:
            _agree(comm, None if S is not None else f"scatter: rank {root} must pass the matrix", root)
            S = sp.csr_array((to_numpy(S.data), to_numpy(S.indices), to_numpy(S.indptr)), shape=S.shape)
            if not S.has_canonical_format:
                S = S.copy()  # sum_duplicates works in place, on arrays the caller's matrix shares
                S.sum_duplicates()
            rows = balanced_offsets(S.indptr, comm.Get_size())
            cols = rows if S.shape[0] == S.shape[1] else even_offsets(S.shape[1], comm.Get_size())
            offsets = (rows, cols)
            pieces = [S[int(rows[r]):int(rows[r + 1])] for r in range(comm.Get_size())]
        else:
            _agree(comm, None, root)
        rows, cols = comm.bcast(offsets, root=root)
        local = comm.scatter(pieces, root=root)
        return cls(local, rows, cols, comm, device, **options)

    @classmethod
    def from_rows(cls, local, n_cols: int | None = None, comm=None, col_offsets=None, device=None, **options):
        """Each rank's own rows (a SciPy or cupyx CSR with global column indices, in rank order): no rank holds the
        whole matrix.  ``n_cols``: the matrix's columns (None: ``local.shape[1]``).  Columns are owned like the rows
        where the matrix is square, split evenly otherwise, or as ``col_offsets`` says."""
        comm = comm if comm is not None else _world()
        counts = np.asarray(comm.allgather(int(local.shape[0])), dtype=np.int64)
        rows = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        n = int(local.shape[1]) if n_cols is None else int(n_cols)
        if col_offsets is None:
            col_offsets = rows if n == rows[-1] else even_offsets(n, comm.Get_size())
        return cls(local, rows, col_offsets, comm, device, **options)

    def _make_transport(self):
        from . import transport

        duplicate, nccl = transport.private(self.comm, self.device == "cuda")
        if self.device == "cuda":
            if nccl is not None:
                return transport.NcclTransport(duplicate, self.plan, nccl)
            return transport.StagedTransport(duplicate, self.plan)
        return transport.MpiTransport(duplicate, self.plan)

    def _xp(self):
        if self.device == "cuda":
            import cupy

            return cupy
        return np

    # --- vectors ----------------------------------------------------------------------------
    @property
    def local_shape(self) -> tuple[int, int]:
        """(this rank's rows, this rank's owned columns): the shapes of its ``y`` and ``x`` slices."""
        r = self.rank
        return (int(self.row_offsets[r + 1] - self.row_offsets[r]), int(self.col_offsets[r + 1] - self.col_offsets[r]))

    def local_vector(self, x_global):
        """This rank's slice of a whole ``x`` (any rank may hold it: handy for tests and small problems)."""
        c0, c1 = self.col_offsets[self.rank], self.col_offsets[self.rank + 1]
        return self._xp().ascontiguousarray(self._xp().asarray(x_global[int(c0):int(c1)], dtype=self.dtype))

    def gather(self, y_local, root: int = 0):
        """The whole ``y`` on ``root`` (a NumPy array; None on the other ranks) from every rank's slice."""
        from ..arrays import to_numpy

        parts = self.comm.gather(to_numpy(y_local), root=root)
        return np.concatenate(parts) if parts is not None else None

    # --- products ---------------------------------------------------------------------------
    def matvec(self, x, out=None, alpha=1, beta=0):
        """``out = alpha * A @ x + beta * out`` for this rank's slices ``x`` (owned columns) and ``out`` (rows);
        collective.  Returns ``out`` (a new array without it)."""
        return self._product(x, out, alpha, beta, block=False)

    def matmat(self, X, out=None, alpha=1, beta=0):
        """The same for a block ``X`` (owned columns, k) into ``out`` (rows, k); collective."""
        return self._product(X, out, alpha, beta, block=True)

    def __matmul__(self, x):
        return self.matmat(x) if getattr(x, "ndim", 1) == 2 else self.matvec(x)

    def _product(self, x, out, alpha, beta, block: bool, mark=_unmarked):
        xp = self._xp()
        m, n = self.local_shape
        if x.shape[0] != n:
            raise ValueError(f"rank {self.rank}: x has {x.shape[0]} rows but this rank owns {n} columns")
        if x.dtype != self.dtype:  # packed and multiplied in the matrix's dtype on every rank alike
            if not np.can_cast(x.dtype, self.dtype, "safe"):
                raise TypeError(f"x has dtype {x.dtype.name}, which does not cast safely to the matrix dtype "
                                f"{self.dtype.name}")
            x = x.astype(self.dtype)
        width = x.shape[1] if block else None
        if out is None:
            if beta != 0:
                raise ValueError("beta != 0 needs out= holding the y to scale and add to")
            out = xp.empty((m, width) if block else (m,), dtype=self.dtype)
        run = "matmat" if block else "matvec"
        recv, partial = self._scratch("recv", width), self._scratch("halo", width)
        off = (None if self.off_diagonal is None else
               lambda: getattr(self.off_diagonal, run)(recv, out=partial, alpha=alpha))
        return self._run(x, out, width, lambda: getattr(self.diagonal, run)(x, out=out, alpha=alpha, beta=beta), off,
                         mark)

    def _run(self, x, out, width, diagonal, off, mark=_unmarked):
        """One product's steps, in PETSc's order: pack what the neighbours need, post the exchange, run
        ``diagonal()`` while the halo moves (after it arrives with ``overlap=False``), wait, then ``off()`` (the
        off-diagonal block into its compressed rows' buffer, or None) added into ``out``.  Returns ``out``.
        ``mark(step)`` is called as the host passes "posted" (the exchange posted), "diagonal" (the
        diagonal block issued) and "done": scripts/distributed_timeline.py records CUDA events there."""
        pending = self._start(x, width)
        mark("posted")
        if not self.overlap:
            self._transport.finish(pending)
        diagonal()
        mark("diagonal")
        if self.overlap:
            self._transport.finish(pending)
        if off is not None:
            off()
            scatter_add(out, self.halo_rows, self._scratch("halo", width))  # rows listed once: no two adds meet
        mark("done")
        return out

    def _start(self, x, width):
        """Pack the entries of ``x`` the neighbours need and post the exchange (``width``: a block's columns, or
        None); returns what the transport's ``finish`` takes."""
        send = self._scratch("send", width)
        if send.shape[0]:
            self._xp().take(x, self._positions, axis=0, out=send)
        return self._transport.start(send, self._scratch("recv", width), width or 1)

    def _scratch(self, what: str, width):
        """The buffer ``what`` ("send", "recv": the halo's entries; "halo": the off-diagonal block's result over its
        compressed rows) for vectors (``width`` None) or blocks of ``width`` columns, made once and kept."""
        key = (what, width)
        found = self._scratch_buffers.get(key)
        if found is None:
            rows = {"send": self.plan.send_size, "recv": self.plan.recv_size, "halo": self.halo_rows.shape[0]}[what]
            found = self._scratch_buffers[key] = self._xp().empty((rows,) if width is None else (rows, width),
                                                                  dtype=self.dtype)
        return found

    def bind(self, x, out, alpha=1, beta=0):
        """``p()`` runs ``out = alpha * A @ x + beta * out`` on these buffers, every per-product decision made now;
        the two blocks' products are the matrices' own (each a CUDA graph replay on the GPU: bound with
        ``SparseMatrix.bind``), the exchange runs between them.  Collective: every rank calls ``p()`` together."""
        import contextlib

        width = x.shape[1] if getattr(x, "ndim", 1) == 2 else None
        diagonal = self.diagonal.bind(x, out=out, alpha=alpha, beta=beta)
        off = (self.off_diagonal.bind(self._scratch("recv", width), out=self._scratch("halo", width), alpha=alpha)
               if self.off_diagonal is not None else None)
        stream = self._xp().cuda.get_current_stream() if self.device == "cuda" else None  # the graphs replay here

        def product():
            with stream if stream is not None else contextlib.nullcontext():
                return self._run(x, out, width, diagonal, off)

        return product

    # --- facts ------------------------------------------------------------------------------
    @property
    def halo_bytes(self) -> int:
        """Bytes this rank receives per product (per column of a block)."""
        return self.plan.recv_size * self.dtype.itemsize

    def explain(self) -> str:
        """This rank's rows, its two blocks' plans and its halo (entries and bytes per product, neighbours)."""
        m, n = self.local_shape
        sources, destinations = self.plan.neighbours()
        lines = [f"rank {self.rank} of {self.size}: rows {self.row_offsets[self.rank]}:"
                 f"{self.row_offsets[self.rank + 1]} ({m:,}), owned columns {self.col_offsets[self.rank]}:"
                 f"{self.col_offsets[self.rank + 1]} ({n:,}), {self.nnz_local:,} entries, on {self.device}",
                 f"  halo: receives {self.plan.recv_size:,} entries ({self.halo_bytes:,} bytes) from "
                 f"{len(sources)} ranks, sends {self.plan.send_size:,} to {len(destinations)}, by "
                 f"{self._transport.name}",
                 f"  diagonal block: {self.diagonal.format} ({self.diagonal.kernel}), {self.diagonal.nnz:,} entries"]
        if self.off_diagonal is not None:
            lines.append(f"  off-diagonal block: {self.off_diagonal.format} ({self.off_diagonal.kernel}), "
                         f"{self.off_diagonal.nnz:,} entries in {self.halo_rows.shape[0]:,} rows over "
                         f"{self.plan.recv_size:,} halo columns")
        else:
            lines.append("  off-diagonal block: none (no halo)")
        return "\n".join(lines)

    def linear_operator(self):
        """This rank's part as a ``scipy.sparse.linalg.LinearOperator`` (CPU) or cupyx's (GPU) of shape
        (local rows, owned columns) whose products are the distributed, collective ones.  Solvers must sum their
        dot products over the ranks: :func:`cocktail.distributed.cg` does."""
        if self.device == "cuda":
            from cupyx.scipy.sparse.linalg import LinearOperator
        else:
            from scipy.sparse.linalg import LinearOperator
        return LinearOperator(self.local_shape, matvec=self.matvec, matmat=self.matmat, dtype=self.dtype)
