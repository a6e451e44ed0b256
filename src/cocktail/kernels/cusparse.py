"""cuSPARSE's ``cusparseSpMV`` bound like one of our kernels: the vendor library as a launch.

The library is the libcusparse CuPy loaded (no new dependency).  Every call, from the handle to
the product, goes through ``ctypes`` into that one library: CuPy's own binding refuses to run
while a stream is being captured, and a handle made by one copy of the library must not meet a
descriptor of another (torch may load a second copy).  Descriptors, workspace and
``cusparseSpMV_preprocess`` (where the library has it) are made once, when a matrix is bound; a
product writes the ``x`` and ``y`` pointers into its vector descriptors, the scalars into host
storage, and calls ``cusparseSpMV`` on the current stream.  It allocates nothing, never
synchronises, and is captured by CUDA graphs like any launch.

The kernels ``cusparse_csr`` and ``cusparse_coo`` (their own modules, specs made by :func:`spec`)
bind through :func:`bind_spmv`; the benchmark's cuSPARSE baseline calls the same
:class:`SpMVLaunch`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import threading
import weakref

import numpy as np

from ..precision import BFLOAT16, compute_dtype
from .launch import SCALAR_CTYPES

#: ``cusparseSpMVAlg_t`` of cusparse.h: ``(storage, algorithm number) -> value``.
ALGORITHMS = {("csr", 1): 2, ("csr", 2): 3, ("coo", 1): 1, ("coo", 2): 4}
#: The algorithm numbers each storage has (1: the library's default; 2: bit-wise deterministic).
ALGS = (1, 2)
# cudaDataType: CUDA_R_32F, CUDA_R_64F, CUDA_R_16F, CUDA_C_32F, CUDA_C_64F, CUDA_R_16BF (a half product computes
# in CUDA_R_32F)
_CUDA_TYPES = {np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.float16): 2,
               np.dtype(np.complex64): 4, np.dtype(np.complex128): 5}
if BFLOAT16 is not None:
    _CUDA_TYPES[BFLOAT16] = 14
#: The precisions (kernels.spec) cuSPARSE's SpMV takes: its operands and values of one type.
PRECISIONS = ("float", "double", "f16", "bf16", "cfloat", "cdouble")
_INDEX_TYPES = {np.dtype(np.int32): 2, np.dtype(np.int64): 3}  # cusparseIndexType_t: 32I, 64I
_SCALARS = {np.dtype(np.float32): ctypes.c_float, np.dtype(np.float64): ctypes.c_double,
            np.dtype(np.complex64): SCALAR_CTYPES[np.dtype(np.complex64)],
            np.dtype(np.complex128): SCALAR_CTYPES[np.dtype(np.complex128)]}
_NON_TRANSPOSE, _INDEX_BASE_ZERO = 0, 0

_P = ctypes.c_void_p
_OUT = ctypes.POINTER(ctypes.c_void_p)
_I64, _INT = ctypes.c_int64, ctypes.c_int
_SPMV = [_P, _INT, _P, _P, _P, _P, _P, _INT, _INT, _P]
_SPMM = [_P, _INT, _INT, _P, _P, _P, _P, _P, _INT, _INT, _P]
_SIGNATURES = {
    "cusparseCreate": [_OUT],
    "cusparseSetStream": [_P, _P],
    "cusparseCreateCsr": [_OUT, _I64, _I64, _I64, _P, _P, _P, _INT, _INT, _INT, _INT],
    "cusparseCreateCoo": [_OUT, _I64, _I64, _I64, _P, _P, _P, _INT, _INT, _INT],
    "cusparseDestroySpMat": [_P],
    "cusparseCreateDnVec": [_OUT, _I64, _P, _INT],
    "cusparseDestroyDnVec": [_P],
    "cusparseDnVecSetValues": [_P, _P],
    "cusparseSpMV_bufferSize": [_P, _INT, _P, _P, _P, _P, _P, _INT, _INT, ctypes.POINTER(ctypes.c_size_t)],
    "cusparseSpMV_preprocess": _SPMV,
    "cusparseSpMV": _SPMV,
    "cusparseGetVersion": [_P, ctypes.POINTER(ctypes.c_int)],
    # SpMM (cusparse_spmm.py): dense blocks of vectors
    "cusparseCreateDnMat": [_OUT, _I64, _I64, _I64, _P, _INT, _INT],
    "cusparseDestroyDnMat": [_P],
    "cusparseDnMatSetValues": [_P, _P],
    "cusparseSpMM_bufferSize": _SPMM[:-1] + [ctypes.POINTER(ctypes.c_size_t)],
    "cusparseSpMM_preprocess": _SPMM,
    "cusparseSpMM": _SPMM,
}
_OPTIONAL = ("cusparseSpMV_preprocess", "cusparseGetVersion", "cusparseCreateDnMat", "cusparseDestroyDnMat",
             "cusparseDnMatSetValues", "cusparseSpMM_bufferSize", "cusparseSpMM_preprocess", "cusparseSpMM")


class CusparseError(RuntimeError):
    """A cuSPARSE call returned a status other than success."""


def _loaded_paths() -> list[str]:
    """Paths of the libcusparse copies this process has mapped."""
    try:
        with open("/proc/self/maps") as fh:
            return sorted({line.split()[-1] for line in fh if "libcusparse.so" in line})
    except OSError:
        return []


@functools.lru_cache(maxsize=None)
def library():
    """The libcusparse CuPy loaded, its functions typed, or None where it cannot be found.

    With several copies mapped (CuPy's and torch's) any one serves: every object we make comes
    from the same copy as the calls that use it.
    """
    try:
        import cupy

        cupy.cuda.device.get_cusparse_handle()  # makes CuPy load its libcusparse
    except Exception:  # noqa: BLE001 - no CuPy, no GPU, or CuPy without cuSPARSE
        return None
    # CuPy's copy first where torch mapped another (any copy would do: every object we make comes
    # from the copy whose calls use it), then whatever the loader finds.
    paths = sorted(_loaded_paths(), key=lambda p: "torch" in p) or [
        p for p in (ctypes.util.find_library("cusparse"),) if p]
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        if not all(hasattr(lib, name) for name in _SIGNATURES if name not in _OPTIONAL):
            continue
        for name, args in _SIGNATURES.items():
            if hasattr(lib, name):
                getattr(lib, name).argtypes = args
                getattr(lib, name).restype = ctypes.c_int
        return lib
    return None


def available() -> bool:
    """Whether cuSPARSE can be called here (CuPy with its libcusparse)."""
    return library() is not None


def _check(status: int, what: str) -> None:
    if status:
        raise CusparseError(f"{what} failed with cuSPARSE status {status}")


class _Handle:
    """One cuSPARSE handle per device and thread, and the stream it was last set to (a handle must not
    be used from two threads at once; descriptors belong to no handle, so any thread's serves)."""

    def __init__(self, lib):
        self.ptr = ctypes.c_void_p()
        _check(lib.cusparseCreate(ctypes.byref(self.ptr)), "cusparseCreate")
        self.stream = None


_HANDLES = threading.local()


def _handle(lib, device_id: int) -> _Handle:
    """This thread's handle on device ``device_id`` (made on first use)."""
    per_device = getattr(_HANDLES, "by_device", None)
    if per_device is None:
        per_device = _HANDLES.by_device = {}
    handle = per_device.get(device_id)
    if handle is None:
        handle = per_device[device_id] = _Handle(lib)
    return handle


def version() -> int | None:
    """``cusparseGetVersion`` of the library the kernels call (e.g. 12603), or None where unknown."""
    lib = library()
    if lib is None or not hasattr(lib, "cusparseGetVersion"):
        return None
    import cupy

    out = ctypes.c_int(0)
    status = lib.cusparseGetVersion(_handle(lib, cupy.cuda.Device().id).ptr, ctypes.byref(out))
    return int(out.value) if status == 0 else None


def _set_stream(lib, handle: _Handle, stream_ptr: int) -> None:
    _check(lib.cusparseSetStream(handle.ptr, stream_ptr), "cusparseSetStream")
    handle.stream = stream_ptr


def _destroy(lib, mat, vectors) -> None:
    """Release a bound product's descriptors (the handle belongs to the device and stays)."""
    lib.cusparseDestroySpMat(mat)
    for vec in vectors:
        lib.cusparseDestroyDnVec(vec)


def sparse_descriptor(lib, storage: str, shape, nnz: int, arrays, itype: int, cuda_type: int) -> ctypes.c_void_p:
    """A cuSPARSE CSR or COO matrix descriptor over the device ``arrays`` (``indptr`` or ``row``, ``indices``
    or ``col``, ``data``), zero-based; the caller destroys it."""
    m, n = shape
    ptrs = [a.data.ptr for a in arrays]
    mat = ctypes.c_void_p()
    if storage == "csr":
        status = lib.cusparseCreateCsr(ctypes.byref(mat), m, n, nnz, *ptrs, itype, itype, _INDEX_BASE_ZERO, cuda_type)
    else:
        status = lib.cusparseCreateCoo(ctypes.byref(mat), m, n, nnz, *ptrs, itype, _INDEX_BASE_ZERO, cuda_type)
    _check(status, f"cusparseCreate{storage.capitalize()}")
    return mat


class DenseOperandsCall:
    """What the vendor launches share per product: their dense descriptors pointed at the product's operands
    (only when a pointer changed) and this thread's handle on the product's stream."""

    def _point(self, x_ptr: int, y_ptr: int, what: str) -> None:
        if x_ptr != self._x_ptr:
            _check(self._set_values(self._x_desc, x_ptr), what)
            self._x_ptr = x_ptr
        if y_ptr != self._y_ptr:
            _check(self._set_values(self._y_desc, y_ptr), what)
            self._y_ptr = y_ptr

    def _handle_on(self, stream_ptr: int) -> _Handle:
        handle = _handle(self._lib, self._device_id)  # this thread's: a handle is not shared across threads
        if handle.stream != stream_ptr:
            _set_stream(self._lib, handle, stream_ptr)
        return handle


class SpMVLaunch(DenseOperandsCall):
    """One ``cusparseSpMV`` with everything resolved: ``launch(x_ptr, y_ptr, alpha, beta, stream_ptr)``.

    The same call as a :class:`~cocktail.kernels.launch.Launch`, so executors and graph capture
    treat both alike.  ``storage`` is ``"csr"`` or ``"coo"`` and ``arrays`` its device arrays
    ``(indptr or row, indices or col, data)``; the launch keeps them, its workspace and its
    descriptors alive.  ``accumulate``: the launch adds into ``y`` (beta fixed at 1), as a Cocktail's
    later parts do, like :func:`~cocktail.kernels.launch.beta_arg` for our kernels.  Not thread-safe,
    like a ``Launch`` (its pointers and scalars are written, then read by the call); each call uses
    the calling thread's handle.
    """

    def __init__(self, storage: str, alg: int, shape, nnz: int, arrays, dtype, index_dtype, device_id: int,
                 accumulate: bool = False):
        import cupy

        if alg not in ALGS:
            raise ValueError(f"cusparse_{storage}: alg must be one of {ALGS}, got {alg!r}")
        lib = library()
        if lib is None:
            raise CusparseError("cuSPARSE is not available: CuPy's libcusparse could not be loaded")
        dtype, index_dtype = np.dtype(dtype), np.dtype(index_dtype)
        if dtype not in _CUDA_TYPES:
            raise TypeError(f"cusparse kernels take float16, bfloat16, float32, float64, complex64 and complex128 "
                            f"values, not {dtype.name}")
        self.storage, self.alg, self.shape = storage, int(alg), tuple(shape)
        self._lib, self._spmv, self._set_values = lib, lib.cusparseSpMV, lib.cusparseDnVecSetValues
        self._arrays = tuple(arrays)
        self._device_id = device_id
        cuda_type, itype = _CUDA_TYPES[dtype], _INDEX_TYPES[index_dtype]
        self._type, self._alg = _CUDA_TYPES[compute_dtype(dtype)], ALGORITHMS[(storage, self.alg)]
        m, n = self.shape
        mat = sparse_descriptor(lib, storage, self.shape, nnz, self._arrays, itype, cuda_type)
        x_desc, y_desc = ctypes.c_void_p(), ctypes.c_void_p()
        self._mat = mat
        made = [x_desc, y_desc]
        self._release = weakref.finalize(self, _destroy, lib, mat, made)
        # Stand-in vectors for the analysis calls; a product points the descriptors at its own.
        x0, y0 = cupy.zeros(max(n, 1), dtype=dtype), cupy.zeros(max(m, 1), dtype=dtype)
        _check(lib.cusparseCreateDnVec(ctypes.byref(x_desc), n, x0.data.ptr, cuda_type), "cusparseCreateDnVec")
        _check(lib.cusparseCreateDnVec(ctypes.byref(y_desc), m, y0.data.ptr, cuda_type), "cusparseCreateDnVec")
        self._x_desc, self._y_desc = x_desc, y_desc
        self._x_ptr = self._y_ptr = None
        self._accumulate = accumulate
        scalar = _SCALARS[compute_dtype(dtype)]
        self._alpha, self._beta = scalar(1), scalar(0)
        self._alpha_ptr = ctypes.c_void_p(ctypes.addressof(self._alpha))
        self._beta_ptr = ctypes.c_void_p(ctypes.addressof(self._beta))
        size = ctypes.c_size_t(0)
        handle = _handle(lib, device_id)
        h = handle.ptr
        _check(lib.cusparseSpMV_bufferSize(h, _NON_TRANSPOSE, self._alpha_ptr, mat, x_desc, self._beta_ptr, y_desc,
                                           self._type, self._alg, ctypes.byref(size)), "cusparseSpMV_bufferSize")
        self.workspace_bytes = int(size.value)
        self._work = cupy.empty(max(self.workspace_bytes, 1), dtype=np.int8)
        self._work_ptr = ctypes.c_void_p(self._work.data.ptr)
        self.preprocessed = False
        if hasattr(lib, "cusparseSpMV_preprocess"):
            _set_stream(lib, handle, cupy.cuda.get_current_stream().ptr)
            _check(lib.cusparseSpMV_preprocess(h, _NON_TRANSPOSE, self._alpha_ptr, mat, x_desc, self._beta_ptr,
                                               y_desc, self._type, self._alg, self._work_ptr),
                   "cusparseSpMV_preprocess")
            self.preprocessed = True
        # The stand-ins go back to CuPy's pool on the current stream, after the work queued on it.
        del x0, y0

    def close(self) -> None:
        """Release the descriptors now (otherwise when the launch is collected)."""
        self._release()

    def __call__(self, x_ptr: int, y_ptr: int, alpha, beta, stream_ptr: int) -> None:
        self._point(x_ptr, y_ptr, "cusparseDnVecSetValues")
        self._alpha.value = alpha
        self._beta.value = 1 if self._accumulate else beta
        handle = self._handle_on(stream_ptr)
        status = self._spmv(handle.ptr, _NON_TRANSPOSE, self._alpha_ptr, self._mat, self._x_desc,
                            self._beta_ptr, self._y_desc, self._type, self._alg, self._work_ptr)
        if status:
            raise CusparseError(f"cusparseSpMV ({self.storage} algorithm {self.alg}) failed with cuSPARSE status "
                                f"{status}")

    def __repr__(self) -> str:
        return f"<SpMVLaunch {self.storage} alg={self.alg} shape={self.shape} workspace={self.workspace_bytes}>"


def bind_spmv(storage: str, fmt, config: dict, props, accumulate: bool = False) -> list:
    """The launches of one product ``y = alpha*A@x + beta*y`` of a stored CSR or COO through cuSPARSE,
    with ``config["alg"]`` (1 or 2).

    A matrix without entries only scales ``y`` (``config["scale_block"]`` threads per block; no
    launch when accumulating): cuSPARSE is not asked to multiply nothing.
    """
    from . import scale_y

    if fmt.nnz == 0:
        return [] if accumulate else [scale_y.bind(fmt, config["scale_block"], props)]
    arrays = (fmt.indptr, fmt.indices, fmt.data) if storage == "csr" else (fmt.row, fmt.col, fmt.data)
    return [SpMVLaunch(storage, config["alg"], fmt.shape, fmt.nnz, arrays, fmt.dtype, fmt.index_dtype, props.id,
                       accumulate)]


def deterministic_alg(config: dict) -> bool:
    """Whether a cusparse kernel's configuration is bit-wise deterministic: algorithm 2 is, 1 is not."""
    return config.get("alg") == 2


def configure(spec, fmt, p, props, rules) -> dict:
    """The algorithm: given, else the rule's; and the block of the ``scale_y`` pass ahead of the call."""
    alg = rules.CUSPARSE_ALG if p["alg"] is None else p["alg"]
    if isinstance(alg, bool) or alg not in ALGS:
        raise ValueError(f"{spec.name}: alg must be one of {ALGS} or None, got {p['alg']!r}")
    return {"alg": int(alg), "scale_block": rules.scale_block(props)}


def spec(storage: str, launches: int = 1, **more):
    """The :class:`~cocktail.kernels.spec.KernelSpec` of ``cusparse_<storage>`` (``csr`` or ``coo``);
    ``launches``: kernel launches per product, as the profile counts them; ``more``: any other field."""
    from .spec import KernelSpec, Sampled

    def bind(fmt, config: dict, props, accumulate: bool = False) -> list:
        return bind_spmv(storage, fmt, config, props, accumulate)

    bind.__doc__ = f"One ``cusparseSpMV`` on the stored {storage.upper()} arrays (no copy)."
    upper = storage.upper()
    return KernelSpec(
        name=f"cusparse_{storage}",
        formats=(storage,),
        source=None,
        expressions=lambda v, i: [],
        bind=bind,
        configure=configure,
        defaults={"alg": None},
        deterministic=False,
        deterministic_when=deterministic_alg,
        vendor=True,
        available=available,
        precisions=PRECISIONS,
        profile=tuple(Sampled(f"cusparse_{storage}(alg={a})", "rows", kernel_params={"alg": a}, long_rows=True,
                              launches=launches) for a in ALGS),
        description=f"cuSPARSE's cusparseSpMV on the {upper} arrays (alg 1: {upper}_ALG1; alg 2: {upper}_ALG2, "
                    "bit-wise deterministic)",
        **more,
    )
