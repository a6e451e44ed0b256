"""Baselines, done fairly: cuSPARSE per algorithm, cupyx and torch as users call them, SciPy on the CPU.

cuSPARSE's descriptors, handle, workspace and (where the library has it) its SpMV preprocessing
are created once in ``prepare``, outside the timed calls; each timed call is one
``cusparseSpMV``.  The descriptors come from CuPy's low-level bindings; the call itself goes
through ``ctypes`` to the same loaded libcusparse, because CuPy's binding refuses to run during
stream capture and kernel time replays a CUDA graph (without the library found, CuPy's binding
is called and the calls are timed back to back).  ``cusparse-best`` is not run: it is the
fastest of the four algorithms per problem, derived from their records.  cupyx ``A @ x`` and
``torch.mv`` run exactly as a user writes them, allocating their result each call.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import warnings
from dataclasses import dataclass

import numpy as np

from .methods import Inputs, Prepared, Unavailable, coo_model, csr_model
from .record import fastest_per_problem

CUSPARSE_BEST = "cusparse-best"
CUPYX = "cupyx"

# algorithm name -> (cusparseSpMVAlg_t value from cusparse.h, the storage it multiplies)
_ALGS = {"coo-alg1": (1, "coo"), "csr-alg1": (2, "csr"), "csr-alg2": (3, "csr"), "coo-alg2": (4, "coo")}
# cudaDataType and cusparseIndexType_t
_CUDA_R = {np.dtype(np.float32): 0, np.dtype(np.float64): 1}
_INDEX_32I, _INDEX_64I = 2, 3


@functools.lru_cache(maxsize=None)
def _libcusparse():
    """libcusparse as CuPy loaded it (found in this process's memory map), or None."""
    import cupy

    cupy.cuda.device.get_cusparse_handle()  # makes CuPy load the library
    try:
        with open("/proc/self/maps") as fh:
            paths = {line.split()[-1] for line in fh if "libcusparse.so" in line}
    except OSError:
        paths = set()
    if len(paths) > 1:  # e.g. torch's copy beside CuPy's: which one made the handle is unknown
        return None
    path = paths.pop() if paths else ctypes.util.find_library("cusparse")
    if path is None:
        return None
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return None
    args = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
            ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
    for name in ("cusparseSpMV", "cusparseSpMV_preprocess"):
        if hasattr(lib, name):
            getattr(lib, name).argtypes = args
            getattr(lib, name).restype = ctypes.c_int
    return lib


@dataclass(frozen=True)
class Cusparse:
    """``cusparseSpMV`` with one algorithm: ``csr-alg1``, ``csr-alg2``, ``coo-alg1`` or ``coo-alg2``."""

    alg: str
    needs_gpu = True

    @property
    def name(self) -> str:
        """``cusparse-<alg>``."""
        return f"cusparse-{self.alg}"

    def prepare(self, inputs: Inputs) -> Prepared:
        """Descriptors, handle (bound to the current stream), workspace and preprocessing, once."""
        from cupy_backends.cuda.libs import cusparse as cs

        if inputs.S.dtype not in _CUDA_R:
            raise Unavailable(f"cuSPARSE baseline runs float32/float64, not {inputs.S.dtype}")
        made = []  # (destroy, descriptor) of everything created, for close() or a failure
        try:
            return self._prepare(inputs, cs, made)
        except BaseException:
            for destroy, obj in reversed(made):
                destroy(obj)
            raise

    def _prepare(self, inputs: Inputs, cs, made: list) -> Prepared:
        import cupy

        S, dtype, cuda_type = inputs.S, inputs.S.dtype, _CUDA_R[inputs.S.dtype]
        alg, storage = _ALGS[self.alg]
        wide = max(S.nnz, *S.shape) >= 2**31
        itype, index_dtype = (_INDEX_64I, np.int64) if wide else (_INDEX_32I, np.int32)
        m, n = S.shape
        vals = cupy.asarray(S.data)
        cols = cupy.asarray(S.indices.astype(index_dtype))
        if storage == "csr":
            ptr = cupy.asarray(S.indptr.astype(index_dtype))
            mat = cs.createCsr(m, n, S.nnz, ptr.data.ptr, cols.data.ptr, vals.data.ptr, itype, itype, 0, cuda_type)
            arrays, model = (vals, cols, ptr), csr_model(S, index_dtype)
        else:
            rows = cupy.asarray(np.repeat(np.arange(m, dtype=index_dtype), np.diff(S.indptr)))
            mat = cs.createCoo(m, n, S.nnz, rows.data.ptr, cols.data.ptr, vals.data.ptr, itype, 0, cuda_type)
            arrays, model = (vals, cols, rows), coo_model(S, index_dtype)
        made.append((cs.destroySpMat, mat))
        y = inputs.y_dev
        xs = []
        for x in inputs.x_dev:
            xs.append(cs.createDnVec(n, x.data.ptr, cuda_type))
            made.append((cs.destroyDnVec, xs[-1]))
        yd = cs.createDnVec(m, y.data.ptr, cuda_type)
        made.append((cs.destroyDnVec, yd))
        handle = cs.create()
        made.append((cs.destroy, handle))
        alpha, beta = np.ones(1, dtype), np.zeros(1, dtype)
        size = cs.spMV_bufferSize(handle, 0, alpha.ctypes.data, mat, xs[0], beta.ctypes.data, yd, cuda_type, alg)
        work = cupy.empty(max(size, 1), dtype=np.int8)
        cs.setStream(handle, cupy.cuda.get_current_stream().ptr)
        lib = _libcusparse()

        def spmv_args(xd):
            return handle, 0, alpha.ctypes.data, mat, xd, beta.ctypes.data, yd, cuda_type, alg, work.data.ptr

        preprocessed = False
        if lib is not None and hasattr(lib, "cusparseSpMV_preprocess"):
            preprocessed = lib.cusparseSpMV_preprocess(*spmv_args(xs[0])) == 0

        if lib is not None:
            def one(xd):
                status = lib.cusparseSpMV(*spmv_args(xd))
                if status:
                    raise RuntimeError(f"cusparseSpMV failed with status {status}")
        else:
            def one(xd):
                cs.spMV(*spmv_args(xd))

        def close():
            for destroy, obj in reversed(made):
                destroy(obj)
            made.clear()

        def result():
            one(xs[0])
            return y

        keep = (arrays, work, alpha, beta)  # device and host buffers the descriptors point into
        calls = [(lambda xd=xd, keep=keep: one(xd)) for xd in xs]
        params = {"alg": self.alg, "index": np.dtype(index_dtype).name, "preprocess": preprocessed,
                  "workspace_bytes": int(size), "call": "ctypes" if lib is not None else "cupy"}
        return Prepared(self.name, calls, result, params, model.spmv_bytes(), close=close, dram_bytes=model.dram_bytes)


@dataclass(frozen=True)
class Cupyx:
    """``cupyx.scipy.sparse.csr_matrix`` and ``A @ x``, as a CuPy user writes it."""

    name: str = CUPYX
    needs_gpu = True

    def prepare(self, inputs: Inputs) -> Prepared:
        """The cupyx matrix from device copies of the CSR arrays."""
        import cupy
        import cupyx.scipy.sparse as csp

        S = inputs.S
        A = csp.csr_matrix((cupy.asarray(S.data), cupy.asarray(S.indices), cupy.asarray(S.indptr)), shape=S.shape)
        calls = [(lambda x=x: A @ x) for x in inputs.x_dev]
        model = csr_model(S)
        return Prepared(self.name, calls, lambda: A @ inputs.x_dev[0], {"call": "A @ x"}, model.spmv_bytes(),
                        dram_bytes=model.dram_bytes)


@dataclass(frozen=True)
class Torch:
    """``torch.mv`` on a ``torch.sparse_csr_tensor`` sharing the device arrays through DLPack."""

    name: str = "torch"
    needs_gpu = True

    def prepare(self, inputs: Inputs) -> Prepared:
        """The torch CSR tensor; torch is pointed at CuPy's current stream until ``close``."""
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
        calls = [(lambda x=x: torch.mv(A, x)) for x in xs]
        model = csr_model(S, index)
        return Prepared(self.name, calls, lambda: cupy.from_dlpack(torch.mv(A, xs[0])),
                        {"call": "torch.mv", "torch": torch.__version__}, model.spmv_bytes(),
                        close=lambda: torch.cuda.set_stream(previous), dram_bytes=model.dram_bytes)


@dataclass(frozen=True)
class Scipy:
    """SciPy's ``A @ x`` on the CPU."""

    name: str = "scipy"
    needs_gpu = False

    def prepare(self, inputs: Inputs) -> Prepared:
        """The SciPy CSR array itself; timed with the host clock."""
        import scipy

        S = inputs.S
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
