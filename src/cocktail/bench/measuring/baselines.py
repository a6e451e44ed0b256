"""Baselines, done fairly: cuSPARSE per algorithm, cupyx and torch as users call them, SciPy on the CPU.

cuSPARSE's descriptors, handle, workspace and (where the library has it) its SpMV preprocessing
are created once in ``prepare``, outside the timed calls; each timed call is one
``cusparseSpMV``, through the same launch as our ``cusparse_csr`` and ``cusparse_coo`` kernels
(:mod:`cocktail.kernels.cusparse`: ``ctypes`` into CuPy's libcusparse, which graph capture
accepts).  ``cusparse-best`` is not run: it is the fastest of the four algorithms per problem,
derived from their records.  cupyx ``A @ x`` and ``torch.mv`` run exactly as a user writes them,
allocating their result each call.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ...precision import is_half
from .methods import Inputs, Prepared, Unavailable, coo_model, csr_model
from ..records.record import fastest_per_problem

CUSPARSE_BEST = "cusparse-best"
CUPYX = "cupyx"

# algorithm name -> (the storage it multiplies, its number in cocktail.kernels.cusparse.ALGORITHMS)
_ALGS = {"coo-alg1": ("coo", 1), "csr-alg1": ("csr", 1), "csr-alg2": ("csr", 2), "coo-alg2": ("coo", 2)}


@dataclass(frozen=True)
class Cusparse:
    """``cusparseSpMV`` with one algorithm: ``csr-alg1``, ``csr-alg2``, ``coo-alg1`` or ``coo-alg2``.

    The call is the ``cusparse_csr`` and ``cusparse_coo`` kernels' own launch
    (:class:`cocktail.kernels.cusparse.SpMVLaunch`), on device copies of the problem's CSR arrays
    (or its row indices, for COO) as cuSPARSE's users hold them.
    """

    alg: str
    needs_gpu = True

    @property
    def name(self) -> str:
        """``cusparse-<alg>``."""
        return f"cusparse-{self.alg}"

    def prepare(self, inputs: Inputs) -> Prepared:
        """Descriptors, workspace and preprocessing, once (the launch makes them)."""
        import cupy

        from ...kernels import cusparse

        S = inputs.S
        if not cusparse.available():
            raise Unavailable("cuSPARSE could not be loaded (CuPy's libcusparse)")
        storage, number = _ALGS[self.alg]
        arrays, model, index_dtype = vendor_arrays(S, storage, inputs.dtype)
        try:
            launch = cusparse.SpMVLaunch(storage, number, S.shape, S.nnz, arrays, inputs.dtype, index_dtype,
                                         cupy.cuda.Device().id)
        except TypeError as exc:  # a dtype the kernels do not take
            raise Unavailable(f"cuSPARSE baseline: {exc}") from None
        y, stream = inputs.y_dev, cupy.cuda.get_current_stream

        def one(x):
            launch(x.data.ptr, y.data.ptr, 1, 0, stream().ptr)

        def result():
            one(inputs.x_dev[0])
            return y

        calls = [(lambda x=x: one(x)) for x in inputs.x_dev]
        params = {"alg": self.alg, "index": np.dtype(index_dtype).name, "preprocess": launch.preprocessed,
                  "workspace_bytes": launch.workspace_bytes, "call": "ctypes", "cusparse": cusparse.version()}
        return Prepared(self.name, calls, result, params, model.spmv_bytes(), close=launch.close,
                        dram_bytes=model.dram_bytes)


@dataclass(frozen=True)
class Cupyx:
    """``cupyx.scipy.sparse.csr_matrix`` and ``A @ x`` (``A @ X`` for a row-major block), as a CuPy user writes it."""

    name: str = CUPYX
    needs_gpu = True

    def prepare(self, inputs: Inputs) -> Prepared:
        """The cupyx matrix from device copies of the CSR arrays."""
        import cupy
        import cupyx.scipy.sparse as csp

        S = inputs.S
        no_half(inputs, self.name)
        A = csp.csr_matrix((cupy.asarray(S.data), cupy.asarray(S.indices), cupy.asarray(S.indptr)), shape=S.shape)
        calls = [(lambda x=x: A @ x) for x in inputs.x_dev]
        params = {"call": "A @ x"} if inputs.k == 1 else {"call": "A @ X", "layout": "row-major"}
        return _csr_prepared(self.name, inputs, calls, lambda: A @ inputs.x_dev[0], params, csr_model(S))


@dataclass(frozen=True)
class Torch:
    """``torch.mv`` (``torch.sparse.mm`` for a row-major block) on a ``torch.sparse_csr_tensor`` sharing the device
    arrays through DLPack."""

    name: str = "torch"
    needs_gpu = True
    #: The optional package it needs, as imported and as installed: named alone, the method is refused before a
    #: run where it is missing (in a group it is recorded as not run).
    package = ("torch", "PyTorch (pip install torch)")

    def prepare(self, inputs: Inputs) -> Prepared:
        """The torch CSR tensor; torch is pointed at CuPy's current stream until ``close``."""
        import cupy

        no_half(inputs, self.name)
        torch, A, xs, restore = torch_operands(inputs)
        product = torch.mv if inputs.k == 1 else torch.sparse.mm
        params = {"call": "torch.mv"} if inputs.k == 1 else {"call": "torch.sparse.mm", "layout": "row-major"}
        return _csr_prepared(self.name, inputs, [(lambda x=x: product(A, x)) for x in xs],
                             lambda: cupy.from_dlpack(product(A, xs[0])), {**params, "torch": torch.__version__},
                             csr_model(inputs.S, inputs.S.indices.dtype), close=restore)


def _csr_prepared(label: str, inputs: Inputs, calls, result, params: dict, model, close=lambda: None) -> Prepared:
    """A baseline on CSR arrays: its bytes from the CSR model, for ``inputs.k`` columns (one vector: Bell &
    Garland's SpMV bytes; a block: the DRAM model's, the matrix read once)."""
    k = inputs.k
    spmv_bytes = model.spmv_bytes() if k == 1 else model.dram_bytes(None, k=k)
    return Prepared(label, calls, result, params, spmv_bytes, close=close,
                    dram_bytes=lambda l2: model.dram_bytes(l2, k=k))


def no_half(inputs: Inputs, name: str) -> None:
    """:class:`Unavailable` for a half-precision problem: the baseline runs float32 and float64 only here (SciPy and
    cupyx have no half sparse product; cuSPARSE's own half SpMV is the ``cusparse-*`` baselines)."""
    if is_half(inputs.dtype):
        raise Unavailable(f"{name}: no {inputs.dtype.name} sparse product (the cusparse-* baselines run it)")


def vendor_arrays(S, storage: str, dtype=None):
    """``(arrays, model, index_dtype)``: device copies of ``S``'s arrays as cuSPARSE's users hold them (CSR's
    ``indptr, indices, data``, or COO's ``row, col, data`` for ``storage == "coo"``) at the narrowest index
    dtype, the values in ``dtype`` (default ``S``'s: a half problem's are converted), and the format model
    counting their bytes."""
    import cupy

    from ...validate import choose_index_dtype

    dtype = S.dtype if dtype is None else np.dtype(dtype)
    index_dtype = choose_index_dtype(max(S.nnz, *S.shape))
    vals = cupy.asarray(S.data.astype(dtype, copy=False))
    cols = cupy.asarray(S.indices.astype(index_dtype))
    if storage == "csr":
        return ((cupy.asarray(S.indptr.astype(index_dtype)), cols, vals), csr_model(S, index_dtype, dtype),
                index_dtype)
    rows = cupy.asarray(np.repeat(np.arange(S.shape[0], dtype=index_dtype), np.diff(S.indptr)))
    return (rows, cols, vals), coo_model(S, index_dtype, dtype), index_dtype


def torch_operands(inputs: Inputs):
    """``(torch, A, xs, restore)``: a ``torch.sparse_csr_tensor`` and the input buffers sharing the device
    arrays through DLPack, with torch pointed at CuPy's current stream until ``restore()``;
    :class:`Unavailable` without torch or its CUDA support."""
    try:
        import torch
    except ImportError:
        raise Unavailable("torch is not installed") from None
    import cupy

    if not torch.cuda.is_available():
        raise Unavailable("torch has no CUDA support here")
    S = inputs.S
    index = S.indices.dtype
    parts = [torch.from_dlpack(cupy.asarray(a)) for a in (S.indptr.astype(index), S.indices, S.data)]
    with warnings.catch_warnings():  # torch's notes that sparse CSR is beta and unchecked
        warnings.simplefilter("ignore", UserWarning)
        A = torch.sparse_csr_tensor(*parts, size=S.shape, check_invariants=False)
    xs = [torch.from_dlpack(x) for x in inputs.x_dev]
    previous = torch.cuda.current_stream()
    torch.cuda.set_stream(torch.cuda.ExternalStream(cupy.cuda.get_current_stream().ptr))
    return torch, A, xs, lambda: torch.cuda.set_stream(previous)


@dataclass(frozen=True)
class Scipy:
    """SciPy's ``A @ x`` on the CPU."""

    name: str = "scipy"
    needs_gpu = False

    def prepare(self, inputs: Inputs) -> Prepared:
        """The SciPy CSR array itself; timed with the host clock."""
        import scipy

        S = inputs.S
        no_half(inputs, self.name)
        calls = [(lambda x=x: S @ x) for x in inputs.x_host]
        model = csr_model(S)
        return Prepared(self.name, calls, lambda: S @ inputs.x_host[0], {"scipy": scipy.__version__},
                        model.spmv_bytes(), on_gpu=False, dram_bytes=model.dram_bytes)


CUSPARSE = tuple(Cusparse(alg) for alg in _ALGS)
BASELINES = CUSPARSE + (Cupyx(), Torch(), Scipy())
_BY_NAME = {b.name: b for b in BASELINES}


def names() -> list[str]:
    """Names of the baselines that run (``cusparse-best`` is derived from the cuSPARSE ones)."""
    return list(_BY_NAME)


def get(name: str):
    """The baseline called ``name``; ``ValueError`` listing the names otherwise."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown baseline {name!r}; baselines: {', '.join(names())}, {CUSPARSE_BEST}") from None


def best_of_cusparse(records: list) -> list:
    """One ``cusparse-best`` record per (matrix, dtype): a copy of the fastest cuSPARSE algorithm's record."""
    algs = {b.name for b in CUSPARSE}
    return fastest_per_problem([r for r in records if r.method in algs], CUSPARSE_BEST,
                               lambda r: {"best_of": sorted(algs)})
