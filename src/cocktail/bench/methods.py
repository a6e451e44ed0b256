"""What the benchmark times: a *method* turns a matrix into ready-to-run products.

A method's ``prepare`` does everything a user would do once (conversion, descriptors,
workspaces) and returns a :class:`Prepared` whose ``calls`` each compute one product on one of
the rotated input vectors; only the calls are timed.  Our methods are the GPU kernels
(labelled by kernel name), the reference executor of formats without a kernel
(``reference:<format>``) and ``cocktail-auto``; the baselines live in :mod:`.baselines`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import scipy.sparse as sp

#: Input vectors each method rotates through, so consecutive products read different ``x``.
X_BUFFERS = 4


class Unavailable(Exception):
    """A method cannot run here (a library is missing, the format refused the matrix, ...)."""


@dataclass
class Operands:
    """One benchmark problem: the matrix in one dtype, the rotated inputs, and the float64 answer."""

    S: sp.csr_array
    x_host: list
    want: np.ndarray  # float64 product of S with x_host[0]
    x_dev: list = field(default_factory=list)
    y_dev: object = None

    @classmethod
    def create(cls, S, dtype, on_gpu: bool, buffers: int = X_BUFFERS, seed: int = 0) -> Operands:
        """Operands of ``S`` in ``dtype``; inputs are standard normal with a fixed seed."""
        S = sp.csr_array(S).astype(dtype)
        rng = np.random.default_rng(seed)
        x_host = [rng.standard_normal(S.shape[1]).astype(dtype) for _ in range(buffers)]
        want = S.astype(np.float64) @ x_host[0].astype(np.float64)
        ops = cls(S, x_host, want)
        if on_gpu:
            import cupy

            ops.x_dev = [cupy.asarray(x) for x in x_host]
            ops.y_dev = cupy.zeros(S.shape[0], dtype=dtype)
        return ops

    def rel_err(self, got) -> float:
        """``||got - want|| / ||want||`` in float64 (the absolute norm when the answer is zero)."""
        got = np.asarray(got.get() if hasattr(got, "get") else got, dtype=np.float64)
        norm = float(np.linalg.norm(self.want))
        diff = float(np.linalg.norm(got - self.want))
        return diff / norm if norm else diff


@dataclass
class Prepared:
    """A method made ready on one problem: the timed calls and what the record needs."""

    label: str  # the record's ``method``
    calls: list
    result: Callable  # runs one product on x_host[0]'s buffer and returns its output
    params: dict
    spmv_bytes: int
    padding_ratio: float = 1.0
    on_gpu: bool = True
    close: Callable = lambda: None


def csr_bytes(S, index_dtype=np.int32) -> int:
    """Bell & Garland's CSR byte model for SciPy's ``S`` (baselines store CSR); nothing is copied."""
    from ..formats.csr import CSR

    return CSR(S.shape, S.dtype, index_dtype, S.nnz, {}, data=S.data, indices=S.indices,
               indptr=S.indptr).spmv_bytes()


def coo_bytes(S, index_dtype=np.int32) -> int:
    """Bell & Garland's COO byte model for SciPy's ``S`` (cuSPARSE's COO algorithms)."""
    from ..formats.coo import COO

    rows = np.empty(S.nnz, dtype=index_dtype)  # the model reads sizes only
    return COO(S.shape, S.dtype, index_dtype, S.nnz, COO.resolve_params({}), row=rows, col=S.indices,
               data=S.data).spmv_bytes()


def _plain(value):
    return value if isinstance(value, (int, float, str, bool)) or value is None else str(value)


@dataclass(frozen=True)
class KernelMethod:
    """One of our formats with one kernel (``kernel=None``: the format's default kernel)."""

    format: str
    kernel: str | None = None
    needs_gpu = True

    @property
    def name(self) -> str:
        """The record's label: the kernel, the format (its default kernel depends on the matrix), or
        ``reference:<format>`` for a format without a kernel."""
        from .. import kernels

        if self.kernel:
            return self.kernel
        return self.format if kernels.for_format(self.format) else f"reference:{self.format}"

    def prepare(self, ops: Operands) -> Prepared:
        """Build the format on the device and bind the kernel's plan."""
        from .. import kernels

        A = _build(ops, self.format, "cuda", self.kernel)
        ran_kernel = A.kernel in kernels.names()
        return _prepared(A, ops, A.kernel if ran_kernel else f"reference:{A.format}")


@dataclass(frozen=True)
class AutoMethod:
    """``SparseMatrix(S, format="auto")``: the format and kernel Cocktail picks by itself."""

    name: str = "cocktail-auto"
    needs_gpu = True

    def prepare(self, ops: Operands) -> Prepared:
        """Let the auto rule choose, then bind its plan."""
        from .. import SparseMatrix

        return _prepared(SparseMatrix(ops.S, format="auto", device="cuda"), ops, self.name)


def _build(ops: Operands, format: str, device: str, kernel: str | None = None):
    """``SparseMatrix`` of the problem; a format that refuses the matrix makes the method unavailable."""
    from .. import SparseMatrix
    from ..errors import FormatFillError

    try:
        return SparseMatrix(ops.S, format=format, device=device, kernel=kernel)
    except FormatFillError as exc:
        raise Unavailable(f"refused: fill {exc.fill:.1f} > max_fill {exc.max_fill:g}") from None


def _prepared(A, ops: Operands, label: str) -> Prepared:
    y = ops.y_dev
    calls = [(lambda x=x: A.matvec(x, out=y)) for x in ops.x_dev]
    params = {"format": A.format, "kernel": A.kernel,
              **{k: _plain(v) for k, v in A.params.items()}, **{k: _plain(v) for k, v in A.kernel_params.items()}}
    return Prepared(label, calls, lambda: A.matvec(ops.x_dev[0], out=y), params, A.storage.spmv_bytes(),
                    A.storage.padding_ratio)


def ours(format_names, all_kernels: bool) -> list:
    """Our GPU methods: each format's default kernel, or with ``all_kernels`` every kernel of it."""
    from .. import kernels

    methods = []
    for fname in format_names:
        specs = kernels.for_format(fname) if all_kernels else []
        methods += [KernelMethod(fname, s.name) for s in specs] or [KernelMethod(fname)]
    return methods


@dataclass(frozen=True)
class ReferenceMethod:
    """The CPU reference executor of one format (the CPU path of ``cocktail bench``)."""

    format: str
    needs_gpu = False

    @property
    def name(self) -> str:
        """``reference:<format>``."""
        return f"reference:{self.format}"

    def prepare(self, ops: Operands) -> Prepared:
        """Build the format on the host."""
        A = _build(ops, self.format, "cpu")
        calls = [(lambda x=x: A.matvec(x)) for x in ops.x_host]
        params = {"format": A.format, **{k: _plain(v) for k, v in A.params.items()}}
        return Prepared(self.name, calls, lambda: A.matvec(ops.x_host[0]), params,
                        A.storage.spmv_bytes(), A.storage.padding_ratio, on_gpu=False)
