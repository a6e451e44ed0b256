"""The benchmark's block products (``cocktail bench --k``): ``Y = A @ X`` for a block of ``k`` vectors.

Every SpMV method has its block counterpart, under the same label, in records of the ``spmm``
section with their ``k``: our formats and ``cocktail-auto`` call ``A.matmat(X, out=Y)`` on
row-major blocks (what torch and GNN code hold; ``cocktail-auto-col`` the same on column-major
blocks), ``cocktail-auto-spmvs`` runs ``k`` separate SpMVs of the same plan (what the block kernels
must beat), cupyx ``A @ X`` and ``torch.sparse.mm`` run as users write them (the baselines
themselves, given blocks), and cuSPARSE's
``cusparseSpMM`` runs per algorithm and memory order with its descriptors, workspace and
preprocessing made once (``cusparse-spmm-best``, derived, is the fastest of them per problem).
The byte counts are the DRAM traffic model's for ``k`` columns (the matrix read once).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .baselines import Cupyx, Cusparse, Torch, vendor_arrays
from .methods import AutoMethod, Inputs, KernelMethod, Prepared, Unavailable, _build, matrix_params
from ..records.record import fastest_per_problem

SPMM_BEST = "cusparse-spmm-best"
AUTO_COLUMNS = "cocktail-auto-spmvs"
AUTO_COLUMN_MAJOR = "cocktail-auto-col"


def _block_prepared(A, inputs: Inputs, label: str, column_major: bool = False) -> Prepared:
    """``A.matmat(X, out=Y)`` over the rotated blocks; the record's bytes: the DRAM model for ``k`` columns as
    the matrix runs them (read once by a block kernel, once a column without one)."""
    xs, y = inputs.column_major() if column_major else (inputs.x_dev, inputs.y_dev)
    k = inputs.k
    A.prepare_block_products(k, row_major=not column_major)  # a planned matrix times its choices for k now
    calls = [(lambda X=X: A.matmat(X, out=y)) for X in xs]
    params = {**matrix_params(A), "block": A.block_plan(k, row_major=not column_major),
              "layout": "column-major" if column_major else "row-major"}
    timed = A.block_timings(k, row_major=not column_major)
    if timed:
        params["block_timed_us"] = {label: round(us, 2) for label, us in timed.items()}
    return Prepared(label, calls, lambda: A.matmat(xs[0], out=y), params, A.block_dram_bytes(None, k),
                    A.storage.padding_ratio, dram_bytes=lambda l2: A.block_dram_bytes(l2, k))


@dataclass(frozen=True)
class BlockKernel:
    """One of our formats and kernels (:class:`~.methods.KernelMethod`) multiplying a block."""

    spmv: KernelMethod
    needs_gpu = True

    @property
    def name(self) -> str:
        """The SpMV method's label."""
        return self.spmv.name

    def prepare(self, inputs: Inputs) -> Prepared:
        """Build the format; its block kernel binds on the first product (outside the timing)."""
        from ... import kernels

        A = _build(inputs, self.spmv.format, "cuda", self.spmv.kernel)
        return _block_prepared(A, inputs, A.kernel if A.kernel in kernels.names() else f"reference:{A.format}")


@dataclass(frozen=True)
class BlockAuto:
    """``format="auto"`` (:class:`~.methods.AutoMethod`) multiplying a block: ``A.matmat(X, out=Y)``, or with
    ``columns`` ``k`` separate ``A.matvec`` of the same plan on the columns of column-major blocks."""

    auto: AutoMethod
    column_major: bool = False
    columns: bool = False
    needs_gpu = True

    @property
    def name(self) -> str:
        """The auto method's label, ``cocktail-auto-col`` or ``cocktail-auto-spmvs`` for the variants."""
        if self.columns:
            return AUTO_COLUMNS
        return AUTO_COLUMN_MAJOR if self.column_major else self.auto.name

    def prepare(self, inputs: Inputs) -> Prepared:
        """Let the planner choose, as the SpMV record does."""
        A = _build(inputs, "auto", "cuda", tune=self.auto.tune, vendor=self.auto.vendor)
        if not self.columns:
            prep = _block_prepared(A, inputs, self.name, self.column_major)
        else:
            xs, Y = inputs.column_major()
            k = inputs.k

            def spmvs(X):
                for j in range(k):
                    A.matvec(X[:, j], out=Y[:, j])

            prep = Prepared(self.name, [(lambda X=X: spmvs(X)) for X in xs], lambda: (spmvs(xs[0]), Y)[1],
                            {**matrix_params(A), "block": f"{k} x {A.kernel}", "layout": "column-major"},
                            k * A.storage.dram_bytes(None), A.storage.padding_ratio,
                            dram_bytes=lambda l2: k * A.storage.dram_bytes(l2))
        if A.auto is not None:
            prep.params.update(plan=A.auto.plan.label(A.nnz), predicted_us=A.auto.plan.predicted_us)
        return prep


@dataclass(frozen=True)
class CusparseSpMM:
    """``cusparseSpMM`` with one algorithm and one memory order of ``X`` and ``Y``."""

    storage: str
    alg: int
    order: str
    needs_gpu = True

    @property
    def name(self) -> str:
        """``cusparse-spmm-<storage>-alg<N>-<row|col>``."""
        return f"cusparse-spmm-{self.storage}-alg{self.alg}-{self.order}"

    def prepare(self, inputs: Inputs) -> Prepared:
        """Descriptors, workspace and preprocessing, once; device copies of the CSR (or COO) arrays."""
        import cupy

        from ...kernels import cusparse_spmm

        S, k = inputs.S, inputs.k
        if not cusparse_spmm.available():
            raise Unavailable("cusparseSpMM could not be loaded (CuPy's libcusparse)")
        arrays, model, index_dtype = vendor_arrays(S, self.storage)
        try:
            launch = cusparse_spmm.SpMMLaunch(self.storage, self.alg, S.shape, S.nnz, arrays, S.dtype, index_dtype,
                                              cupy.cuda.Device().id, k, self.order)
        except cusparse_spmm.CusparseError as exc:
            raise Unavailable(f"refused by cuSPARSE: {exc}") from None
        xs, y = inputs.column_major() if self.order == "col" else (inputs.x_dev, inputs.y_dev)
        stream = cupy.cuda.get_current_stream

        def one(X):
            launch(X.data.ptr, y.data.ptr, 1, 0, stream().ptr)

        def result():
            one(xs[0])
            return y

        params = {"alg": self.alg, "storage": self.storage, "layout": f"{self.order}-major",
                  "index": np.dtype(index_dtype).name, "preprocess": launch.preprocessed,
                  "workspace_bytes": launch.workspace_bytes, "call": "ctypes"}
        return Prepared(self.name, [(lambda X=X: one(X)) for X in xs], result, params, model.dram_bytes(None, k=k),
                        close=launch.close, dram_bytes=lambda l2: model.dram_bytes(l2, k=k))


#: cuSPARSE's SpMM algorithms timed by default (CSR, both orders); ``--all-kernels`` adds the COO ones.
CUSPARSE_SPMM = tuple(CusparseSpMM("csr", alg, order) for alg in (1, 2, 3) for order in ("row", "col"))
CUSPARSE_SPMM_COO = tuple(CusparseSpMM("coo", alg, order) for alg in (1, 2, 3, 4) for order in ("row", "col"))


def for_block(methods, all_kernels: bool = False) -> list:
    """The block methods standing for the SpMV ``methods`` of a run: each of ours and each ``format="auto"``
    method (with ``cocktail-auto``, also its column-major and k-SpMV variants), cuSPARSE's SpMM algorithms
    in place of its SpMV ones, cupyx and torch; methods with no block counterpart (SciPy on the CPU) drop."""
    out = []
    for m in methods:
        if isinstance(m, KernelMethod):
            out.append(BlockKernel(m))
        elif isinstance(m, AutoMethod) and m.needs_gpu:
            out.append(BlockAuto(m))
            if m == AutoMethod():  # the default planner: also its column-major and k-SpMV variants
                out += [BlockAuto(m, column_major=True), BlockAuto(m, columns=True)]
        elif isinstance(m, Cusparse):
            out += list(CUSPARSE_SPMM) + (list(CUSPARSE_SPMM_COO) if all_kernels else [])
        elif isinstance(m, (Cupyx, Torch)):  # the same baselines: they take a block as users give it
            out.append(m)
    return list(dict.fromkeys(out))


def best_of_cusparse_spmm(records: list) -> list:
    """One ``cusparse-spmm-best`` record per (matrix, dtype, k): a copy of the fastest cuSPARSE SpMM record."""
    algs = {m.name for m in CUSPARSE_SPMM + CUSPARSE_SPMM_COO}
    ran = {}  # the algorithms each problem timed
    for r in records:
        if r.method in algs:
            ran.setdefault((r.suite, r.matrix, r.dtype, r.k), set()).add(r.method)
    return fastest_per_problem([r for r in records if r.method in algs], SPMM_BEST,
                               lambda r: {"best_of": sorted(ran[(r.suite, r.matrix, r.dtype, r.k)])})
