"""What the end-to-end section (:mod:`.end_to_end`) times of each method: building a matrix from the user's
matrix, on the host or on the device, and one product ``A @ x`` as a user writes it.

``cocktail-auto`` is ``SparseMatrix(S)`` (``format="auto"``, the default; the GPU's planner decides, the
CPU's fixed rule picks); cupyx is ``cupyx.scipy.sparse.csr_matrix(S)``; torch is ``torch.sparse_csr_tensor``
of the CSR arrays (``device="cuda"`` from the host, through DLPack from the device) and ``torch.mv``;
SciPy (CPU) is ``scipy.sparse.csr_array(S)``.  The host source is the problem's SciPy CSR array; the device
source is a cupyx CSR matrix made from it before any timing (the user's data already on the GPU).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable

from ...precision import is_half
from .baselines import CUPYX
from .methods import AUTO, Inputs, Unavailable

#: Where the matrix a job builds from lives: a SciPy matrix on the host, or a cupyx one on the GPU.
HOST, DEVICE = "host", "device"


@dataclass
class Job:
    """One method made ready on one problem and source: ``build()`` makes the matrix, ``multiply(A, i)`` runs
    ``A @ x`` on the ``i``-th input (rotated) and returns ``y``; ``answer(y)`` is ``y`` as an array the error
    check reads; ``describe(A)`` the record's params read off a built matrix (our plan)."""

    build: Callable[[], object]
    multiply: Callable[[object, int], object]
    params: dict
    answer: Callable[[object], object] = lambda y: y
    describe: Callable[[object], dict] = lambda A: {}
    close: Callable[[], None] = lambda: None


def device_source(inputs: Inputs):
    """The problem as a user holds it on the GPU: a cupyx CSR matrix of device copies of its arrays."""
    import cupy
    import cupyx.scipy.sparse as csp

    S = inputs.S
    arrays = (cupy.asarray(S.data), cupy.asarray(S.indices), cupy.asarray(S.indptr))
    return csp.csr_matrix(arrays, shape=S.shape)


def no_half(inputs: Inputs, name: str) -> None:
    """:class:`Unavailable` for a half-precision problem: cupyx, torch and SciPy have no half sparse product."""
    if is_half(inputs.dtype):
        raise Unavailable(f"{name}: no {inputs.dtype.name} sparse product")


def _rotated(product, xs):
    """A job's ``multiply``: ``product(A, x)`` with the ``i``-th of the inputs ``xs``, taken in turn."""
    return lambda A, i: product(A, xs[i % len(xs)])


@dataclass(frozen=True)
class Ours:
    """``cocktail.SparseMatrix(S)`` (``format="auto"``) and ``A @ x``, on the GPU or on the CPU."""

    name: str = AUTO

    def job(self, inputs: Inputs, source, build_from: str, on_gpu: bool) -> Job:
        """The job; a half problem's source holds float32 values, converted by ``dtype=``."""
        from ... import SparseMatrix

        chosen = {} if source.dtype == inputs.dtype else {"dtype": inputs.dtype}
        if inputs.value_dtype is not None:
            chosen["value_dtype"] = inputs.value_dtype
        device = "cuda" if on_gpu else "cpu"
        multiply = _rotated(lambda A, x: A @ x, inputs.x_dev if on_gpu else inputs.x_host)
        return Job(lambda: SparseMatrix(source, device=device, **chosen), multiply,
                   {"call": "SparseMatrix(S); A @ x"}, describe=plan_params)


def plan_params(A) -> dict:
    """What a built ``SparseMatrix`` chose: the plan (GPU planner) or format, and where the planner ran, its
    decision's and conversion's milliseconds (the construction cost the section measures in whole)."""
    out = {"format": A.format, **({"value_dtype": A.value_dtype.name} if A.value_dtype != A.dtype else {})}
    report = getattr(A, "auto", None)
    if report is not None:
        out.update(plan=report.plan.label(A.nnz), cached=report.cached, analysis_ms=report.analysis_s * 1e3,
                   convert_ms=report.convert_s * 1e3)
    return out


@dataclass(frozen=True)
class Cupyx:
    """``cupyx.scipy.sparse.csr_matrix(S)`` (a copy to the GPU from the host; the arrays themselves from a
    cupyx matrix) and ``A @ x``."""

    name: str = CUPYX

    def job(self, inputs: Inputs, source, build_from: str, on_gpu: bool) -> Job:
        """The job (float32, float64 and complex values)."""
        import cupyx.scipy.sparse as csp

        no_half(inputs, self.name)
        return Job(lambda: csp.csr_matrix(source), _rotated(lambda A, x: A @ x, inputs.x_dev),
                   {"call": "cupyx.scipy.sparse.csr_matrix(S); A @ x"})


@dataclass(frozen=True)
class Torch:
    """``torch.sparse_csr_tensor`` of the CSR arrays and ``torch.mv``, torch pointed at CuPy's current stream
    until ``close``."""

    name: str = "torch"

    def job(self, inputs: Inputs, source, build_from: str, on_gpu: bool) -> Job:
        """The job; :class:`Unavailable` without torch or its CUDA support."""
        try:
            import torch
        except ImportError:
            raise Unavailable("torch is not installed") from None
        import cupy

        no_half(inputs, self.name)
        if not torch.cuda.is_available():
            raise Unavailable("torch has no CUDA support here")
        parts = (source.indptr, source.indices, source.data)
        if build_from == HOST:
            def build():
                return torch.sparse_csr_tensor(*(torch.from_numpy(a) for a in parts), size=source.shape,
                                               device="cuda")
        else:
            def build():
                return torch.sparse_csr_tensor(*(torch.from_dlpack(a) for a in parts), size=source.shape)
        previous = torch.cuda.current_stream()
        torch.cuda.set_stream(torch.cuda.ExternalStream(cupy.cuda.get_current_stream().ptr))
        try:
            with warnings.catch_warnings():  # torch's once-only note that sparse CSR is beta: said here, untimed
                warnings.simplefilter("ignore", UserWarning)
                build()
        except BaseException:
            torch.cuda.set_stream(previous)
            raise
        xs = [torch.from_dlpack(x) for x in inputs.x_dev]
        return Job(build, _rotated(torch.mv, xs), {"call": "torch.sparse_csr_tensor(...); torch.mv(A, x)",
                                                   "torch": torch.__version__},
                   answer=cupy.from_dlpack, close=lambda: torch.cuda.set_stream(previous))


@dataclass(frozen=True)
class Scipy:
    """``scipy.sparse.csr_array(S)`` and ``A @ x`` on the CPU."""

    name: str = "scipy"

    def job(self, inputs: Inputs, source, build_from: str, on_gpu: bool) -> Job:
        """The job (no half dtypes: SciPy has none)."""
        import scipy.sparse as sp

        no_half(inputs, self.name)
        return Job(lambda: sp.csr_array(source), _rotated(lambda A, x: A @ x, inputs.x_host),
                   {"call": "scipy.sparse.csr_array(S); A @ x"})


#: The methods, on the GPU and on the CPU: ours first, then the baselines.
GPU_METHODS = (Ours(), Cupyx(), Torch())
CPU_METHODS = (Ours(), Scipy())
