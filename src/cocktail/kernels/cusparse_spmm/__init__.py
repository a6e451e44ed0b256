"""cusparse_spmm: cuSPARSE's ``cusparseSpMM`` bound like a launch, the vendor's product of a sparse matrix and a
dense block.

A block kernel (``BLOCK_SPEC``, vendor) for matrices stored in CSR or COO, whatever their SpMV kernel: never
the rule's choice, it is one of the candidates a planned matrix times for each bucket of k
(:mod:`cocktail.auto.block_plans`), one per algorithm and only for X and Y in one memory order, each
column or each row contiguous (a window of a wider array included).  Also the benchmark's SpMM baseline
(``cusparse-spmm-<storage>-alg<N>-<order>``).  As for
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

from .. import cusparse
from ..cusparse import _CUDA_TYPES, _INDEX_TYPES, _NON_TRANSPOSE, _SCALARS, CusparseError
from ..spec import KernelSpec

#: ``cusparseSpMMAlg_t`` of cusparse.h: ``(storage, algorithm number) -> value``.
ALGORITHMS = {("csr", 1): 4, ("csr", 2): 6, ("csr", 3): 12,
              ("coo", 1): 1, ("coo", 2): 2, ("coo", 3): 3, ("coo", 4): 5}
#: ``cusparseOrder_t``: the dense operands' memory order.
ORDERS = {"col": 1, "row": 2}
#: The algorithms whose products are bit-wise deterministic (cuSPARSE's documentation of cusparseSpMM, A not
#: transposed): CSR_ALG3 and COO_ALG2.
DETERMINISTIC = {("csr", 3), ("coo", 2)}

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
    ``X`` (n x k) and ``Y`` (m x k) in ``order`` (``"row"`` or ``"col"``), each row (or column) contiguous.

    ``storage`` is ``"csr"`` or ``"coo"`` and ``arrays`` its device arrays (``indptr`` or ``row``,
    ``indices`` or ``col``, ``data``); the launch keeps them, its workspace and its descriptors alive.
    ``x_ld`` and ``y_ld``: the leading dimensions (elements from one row, or column, to the next; default
    ``k`` row-major, the rows column-major), larger for windows of wider arrays.
    A combination the library refuses (an algorithm that does not take the order, say) raises
    :class:`~cocktail.kernels.cusparse.CusparseError` here.
    """

    def __init__(self, storage: str, alg: int, shape, nnz: int, arrays, dtype, index_dtype, device_id: int,
                 k: int, order: str, x_ld: int | None = None, y_ld: int | None = None, accumulate: bool = False):
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
        order_value = ORDERS[order]
        x_ld, y_ld = (k if ld is None and order == "row" else max(rows, 1) if ld is None else int(ld)
                      for ld, rows in ((x_ld, n), (y_ld, m)))
        x0 = cupy.zeros(max((n - 1) * x_ld + k if order == "row" else (k - 1) * x_ld + n, 1), dtype=dtype)
        y0 = cupy.zeros(max((m - 1) * y_ld + k if order == "row" else (k - 1) * y_ld + m, 1), dtype=dtype)
        for desc, rows, ptr, ld in ((x_desc, n, x0.data.ptr, x_ld), (y_desc, m, y0.data.ptr, y_ld)):
            cusparse._check(lib.cusparseCreateDnMat(ctypes.byref(desc), rows, k, ld, ptr, cuda_type, order_value),
                            "cusparseCreateDnMat")
        self._x_desc, self._y_desc = x_desc, y_desc
        self._x_ptr = self._y_ptr = None
        self.accumulate = bool(accumulate)  # y += alpha*A@X: beta fixed at 1
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
        self._beta.value = 1 if self.accumulate else beta
        handle = self._handle_on(stream_ptr)
        status = self._spmm(handle.ptr, _NON_TRANSPOSE, _NON_TRANSPOSE, self._alpha_ptr, self._mat, self._x_desc,
                            self._beta_ptr, self._y_desc, self._type, self._alg, self._work_ptr)
        if status:
            raise CusparseError(f"cusparseSpMM ({self.storage} algorithm {self.alg}, {self.order}-major) failed "
                                f"with cuSPARSE status {status}")

    def __repr__(self) -> str:
        return (f"<SpMMLaunch {self.storage} alg={self.alg} {self.order}-major k={self.k} shape={self.shape} "
                f"workspace={self.workspace_bytes}>")


def layout(operands, shape) -> tuple[str, int, int] | None:
    """``(order, x_ld, y_ld)`` where ``cusparseSpMM`` takes the block operands (a
    :class:`~cocktail.kernels.block_operands.BlockOperands` of a matrix of ``shape``) where they lie: both
    row-major or both column-major, leading dimensions at least a row (a column), both arrays 16-byte
    aligned; else None."""
    (x_row, x_col), (y_row, y_col) = operands.x_steps, operands.y_steps
    m, n, k = shape[0], shape[1], operands.k
    if not operands.aligned or k < 2:
        return None
    if x_col == 1 and y_col == 1 and x_row >= k and y_row >= k:
        return "row", x_row, y_row
    if x_row == 1 and y_row == 1 and x_col >= n and y_col >= m:
        return "col", x_col, y_col
    return None


def settings(fmt, operands, deterministic: bool = False) -> tuple[dict, ...]:
    """The algorithms a planned block product of ``fmt`` may time for ``operands``: every one of the
    storage's (only the deterministic ones with ``deterministic``), none where the operands' layout is not
    one cusparseSpMM takes, the matrix has no entries, or the library is missing."""
    if fmt.nnz == 0 or fmt.shape[0] == 0 or layout(operands, fmt.shape) is None or not available():
        return ()
    return tuple({"alg": alg} for storage, alg in ALGORITHMS if storage == fmt.name
                 and (not deterministic or (storage, alg) in DETERMINISTIC))


def bind(fmt, config: dict, props, accumulate: bool = False) -> list:
    """One ``cusparseSpMM`` on the stored arrays (no copy) for ``config["operands"]`` with ``config["alg"]``."""
    if config["alg"] is None:
        raise ValueError("cusparse_spmm: alg must be given (the block planner times each)")
    order, x_ld, y_ld = layout(config["operands"], fmt.shape)
    arrays = (fmt.indptr, fmt.indices, fmt.data) if fmt.name == "csr" else (fmt.row, fmt.col, fmt.data)
    return [SpMMLaunch(fmt.name, config["alg"], fmt.shape, fmt.nnz, arrays, fmt.dtype, fmt.index_dtype, props.id,
                       config["operands"].k, order, x_ld, y_ld, accumulate)]


def configure(spec, fmt, p, props, rules) -> dict:
    """The algorithm, checked against the storage's; the operands, which must be a layout cusparseSpMM takes."""
    alg, operands = p["alg"], p["operands"]
    if alg is not None and (isinstance(alg, bool) or (fmt.name, alg) not in ALGORITHMS):
        raise ValueError(f"cusparse_spmm: alg must be one of {sorted(a for s, a in ALGORITHMS if s == fmt.name)} "
                         f"for {fmt.name}, got {alg!r}")
    if operands is not None and layout(operands, fmt.shape) is None:
        raise ValueError("cusparse_spmm takes X and Y both row-major or both column-major (each row, or each "
                         "column, contiguous), 16-byte aligned")
    return {"alg": alg, "operands": operands, "storage": fmt.name}


def _deterministic(config: dict) -> bool:
    return (config.get("storage"), config.get("alg")) in DETERMINISTIC


BLOCK_SPEC = KernelSpec(
    name="cusparse_spmm",
    formats=("csr", "coo"),
    source=None,
    expressions=lambda v, i: [],
    bind=bind,
    configure=configure,
    defaults={"alg": None, "operands": None},
    deterministic=False,
    deterministic_when=_deterministic,
    vendor=True,
    available=available,
    extends=("rows", "balanced", "entries"),
    block_settings=settings,
    description="cuSPARSE's cusparseSpMM on the CSR or COO arrays, one algorithm (csr 1-3, coo 1-4), X and Y "
                "both row-major or both column-major; timed by the block planner, never the rule's choice",
)
