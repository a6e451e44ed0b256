"""cuSPARSE's ``cusparseSpMM`` bound like a launch: the vendor's product of a sparse matrix and a dense block.

The benchmark's SpMM baseline (``cusparse-spmm-<storage>-alg<N>-<order>``).  As for
:class:`~cocktail.kernels.cusparse.SpMVLaunch`, every call goes through ``ctypes`` into the
libcusparse CuPy loaded; descriptors, workspace and ``cusparseSpMM_preprocess`` are made once, at
construction, for one block width ``k`` and one memory order of ``X`` and ``Y`` (row-major: ``k``
contiguous values per row; column-major: each column contiguous); a product points the dense
descriptors at its operands and calls ``cusparseSpMM`` on the current stream, allocating nothing.
"""

from __future__ import annotations

import ctypes
import weakref

import numpy as np

from . import cusparse
from .cusparse import _CUDA_TYPES, _INDEX_TYPES, _NON_TRANSPOSE, _SCALARS, CusparseError

#: ``cusparseSpMMAlg_t`` of cusparse.h: ``(storage, algorithm number) -> value``.
ALGORITHMS = {("csr", 1): 4, ("csr", 2): 6, ("csr", 3): 12,
              ("coo", 1): 1, ("coo", 2): 2, ("coo", 3): 3, ("coo", 4): 5}
#: ``cusparseOrder_t``: the dense operands' memory order.
ORDERS = {"col": 1, "row": 2}

_SPMM_FUNCTIONS = ("cusparseCreateDnMat", "cusparseDestroyDnMat", "cusparseDnMatSetValues", "cusparseSpMM_bufferSize",
                   "cusparseSpMM")


def available() -> bool:
    """Whether ``cusparseSpMM`` can be called here."""
    lib = cusparse.library()
    return lib is not None and all(hasattr(lib, name) for name in _SPMM_FUNCTIONS)


def _destroy(lib, mat, dense) -> None:
    lib.cusparseDestroySpMat(mat)
    for d in dense:
        lib.cusparseDestroyDnMat(d)


class SpMMLaunch(cusparse.DenseOperandsCall):
    """One ``cusparseSpMM`` with everything resolved: ``launch(x_ptr, y_ptr, alpha, beta, stream_ptr)`` for
    ``X`` (n x k) and ``Y`` (m x k) in ``order`` (``"row"`` or ``"col"``), contiguous.

    ``storage`` is ``"csr"`` or ``"coo"`` and ``arrays`` its device arrays (``indptr`` or ``row``,
    ``indices`` or ``col``, ``data``); the launch keeps them, its workspace and its descriptors alive.
    A combination the library refuses (an algorithm that does not take the order, say) raises
    :class:`~cocktail.kernels.cusparse.CusparseError` here.
    """

    def __init__(self, storage: str, alg: int, shape, nnz: int, arrays, dtype, index_dtype, device_id: int,
                 k: int, order: str):
        import cupy

        lib = cusparse.library()
        if lib is None or not available():
            raise CusparseError("cusparseSpMM is not available: CuPy's libcusparse could not be loaded")
        if (storage, alg) not in ALGORITHMS:
            raise ValueError(f"cusparseSpMM: no algorithm {alg} for {storage}; "
                             f"{sorted(a for s, a in ALGORITHMS if s == storage)}")
        if order not in ORDERS:
            raise ValueError(f"cusparseSpMM: order must be 'row' or 'col', got {order!r}")
        dtype, index_dtype = np.dtype(dtype), np.dtype(index_dtype)
        if dtype not in _CUDA_TYPES:
            raise TypeError(f"cusparseSpMM takes float32 and float64 values, not {dtype.name}")
        self.storage, self.alg, self.order, self.shape, self.k = storage, int(alg), order, tuple(shape), int(k)
        self._lib, self._spmm, self._set_values = lib, lib.cusparseSpMM, lib.cusparseDnMatSetValues
        self._arrays = tuple(arrays)
        self._device_id = device_id
        cuda_type, itype = _CUDA_TYPES[dtype], _INDEX_TYPES[index_dtype]
        self._type, self._alg = cuda_type, ALGORITHMS[(storage, self.alg)]
        m, n = self.shape
        mat = cusparse.sparse_descriptor(lib, storage, self.shape, nnz, self._arrays, itype, cuda_type)
        x_desc, y_desc = ctypes.c_void_p(), ctypes.c_void_p()
        self._mat = mat
        self._release = weakref.finalize(self, _destroy, lib, mat, [x_desc, y_desc])
        x0 = cupy.zeros(max(n * k, 1), dtype=dtype)
        y0 = cupy.zeros(max(m * k, 1), dtype=dtype)
        order_value = ORDERS[order]
        for desc, rows, ptr in ((x_desc, n, x0.data.ptr), (y_desc, m, y0.data.ptr)):
            ld = k if order == "row" else max(rows, 1)
            cusparse._check(lib.cusparseCreateDnMat(ctypes.byref(desc), rows, k, ld, ptr, cuda_type, order_value),
                            "cusparseCreateDnMat")
        self._x_desc, self._y_desc = x_desc, y_desc
        self._x_ptr = self._y_ptr = None
        scalar = _SCALARS[dtype]
        self._alpha, self._beta = scalar(1), scalar(0)
        self._alpha_ptr = ctypes.c_void_p(ctypes.addressof(self._alpha))
        self._beta_ptr = ctypes.c_void_p(ctypes.addressof(self._beta))
        size = ctypes.c_size_t(0)
        handle = cusparse._handle(lib, device_id)
        args = (handle.ptr, _NON_TRANSPOSE, _NON_TRANSPOSE, self._alpha_ptr, mat, x_desc, self._beta_ptr, y_desc,
                cuda_type, self._alg)
        cusparse._check(lib.cusparseSpMM_bufferSize(*args, ctypes.byref(size)), "cusparseSpMM_bufferSize")
        self.workspace_bytes = int(size.value)
        self._work = cupy.empty(max(self.workspace_bytes, 1), dtype=np.int8)
        self._work_ptr = ctypes.c_void_p(self._work.data.ptr)
        self.preprocessed = False
        if hasattr(lib, "cusparseSpMM_preprocess"):
            cusparse._set_stream(lib, handle, cupy.cuda.get_current_stream().ptr)
            cusparse._check(lib.cusparseSpMM_preprocess(*args, self._work_ptr), "cusparseSpMM_preprocess")
            self.preprocessed = True
        del x0, y0

    def close(self) -> None:
        """Release the descriptors now (otherwise when the launch is collected)."""
        self._release()

    def __call__(self, x_ptr: int, y_ptr: int, alpha, beta, stream_ptr: int) -> None:
        self._point(x_ptr, y_ptr, "cusparseDnMatSetValues")
        self._alpha.value = alpha
        self._beta.value = beta
        handle = self._handle_on(stream_ptr)
        status = self._spmm(handle.ptr, _NON_TRANSPOSE, _NON_TRANSPOSE, self._alpha_ptr, self._mat, self._x_desc,
                            self._beta_ptr, self._y_desc, self._type, self._alg, self._work_ptr)
        if status:
            raise CusparseError(f"cusparseSpMM ({self.storage} algorithm {self.alg}, {self.order}-major) failed "
                                f"with cuSPARSE status {status}")

    def __repr__(self) -> str:
        return (f"<SpMMLaunch {self.storage} alg={self.alg} {self.order}-major k={self.k} shape={self.shape} "
                f"workspace={self.workspace_bytes}>")
