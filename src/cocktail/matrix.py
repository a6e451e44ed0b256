"""``SparseMatrix``: the user-facing sparse matrix, stored in one format on one device."""

from __future__ import annotations

import warnings

import numpy as np

from . import formats, kernels, reference, validate
from ._device_arrays import as_device_array
from .kernels.plan import Plan
from .kernels.plan import spmv as kernel_spmv
from ._xp import cuda_available, is_cupy_array, to_numpy
from .errors import CPUFallbackWarning
from .formats.csr import CSR
from .tuning.formats import format_params

DEVICES = ("cpu", "cuda")
_warned_cpu_fallback = False


def _warn_cpu_fallback() -> None:
    global _warned_cpu_fallback
    if not _warned_cpu_fallback:
        _warned_cpu_fallback = True
        warnings.warn(
            "cocktail: no CUDA GPU found (CuPy missing or no device); "
            "products run on the CPU reference executor",
            CPUFallbackWarning,
            stacklevel=3,
        )


def _source_arrays(S, shape):
    """``(data, indices, indptr, shape)`` of any accepted input, without copying."""
    if isinstance(S, SparseMatrix):
        csr = S.storage.to_csr()
        return csr.data, csr.indices, csr.indptr, csr.shape
    if isinstance(S, CSR):
        return S.data, S.indices, S.indptr, S.shape
    module = type(S).__module__
    if module.startswith(("scipy.sparse", "cupyx.scipy.sparse")) and hasattr(S, "tocsr"):
        if shape is not None and tuple(shape) != tuple(S.shape):
            raise ValueError(f"shape={tuple(shape)} disagrees with the matrix's shape {tuple(S.shape)}")
        if getattr(S, "format", None) == "dia":
            validate.dia_offsets(S.offsets, S.shape)  # tocsr would sum a repeated diagonal twice
        csr = S.tocsr()
        return csr.data, csr.indices, csr.indptr, tuple(csr.shape)
    if isinstance(S, (tuple, list)) and len(S) == 3:
        if shape is None:
            raise ValueError("a (data, indices, indptr) tuple needs shape=(rows, cols)")
        data, indices, indptr = (a if hasattr(a, "dtype") else np.asarray(a) for a in S)
        return data, indices, indptr, validate.shape2d(shape)
    raise TypeError(
        "SparseMatrix takes a scipy.sparse matrix or array, a cupyx.scipy.sparse matrix, "
        f"a (data, indices, indptr) tuple with shape=, or a SparseMatrix; got {type(S).__name__}"
    )


def _resolve_device(device, on_gpu: bool) -> str:
    if device is None:
        if on_gpu or cuda_available():
            return "cuda"
        _warn_cpu_fallback()
        return "cpu"
    if device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES} or None, got {device!r}")
    if device == "cuda" and not cuda_available():
        raise RuntimeError("device='cuda' was asked for but CuPy sees no CUDA GPU (is cupy installed?)")
    return device


def _plan_for(storage, spec, kernel_params):
    """Bind the named kernel (or the one ``cocktail.tuning`` picks) to ``storage``; None: reference."""
    from .tuning.kernels import choose_kernel

    if spec is None:
        name = choose_kernel(storage)
        if name is None or name not in kernels.names():
            return None
        spec = kernels.get(name)
    elif storage.dtype.kind == "c":
        raise TypeError(f"kernel {spec.name!r} has no {storage.dtype.name} instantiation; "
                        "GPU kernels take float32 and float64 (complex runs on the reference executor)")
    return Plan(spec, storage, kernel_params)


class SparseMatrix:
    """A sparse matrix stored in one of Cocktail's formats, ready for ``y = alpha*A@x + beta*y``.

    Parameters
    ----------
    S : scipy.sparse matrix or array, cupyx.scipy.sparse matrix, ``(data, indices, indptr)``
        tuple (with ``shape=``), or another ``SparseMatrix``.  Never modified.
    format : a name from :func:`cocktail.formats.names`, or ``"auto"`` (see
        :mod:`cocktail.tuning.auto` for the rule).
    kernel : on the GPU, a name from :func:`cocktail.kernels.names` to force that kernel;
        by default :mod:`cocktail.tuning.kernels` picks one (formats or dtypes without a
        kernel run the reference executor on the device).
    device : ``"cpu"``, ``"cuda"`` or ``None`` (the GPU when CuPy sees one, else the CPU
        with one warning).
    shape : needed with a tuple input.
    dtype : convert the values to this dtype (float32, float64, complex64, complex128).
    index_dtype : force int32 or int64 indices (default: int32 when everything fits).
    **params : the format's parameters, and the kernel's when ``kernel`` is named
        (``explain()`` lists them).
    """

    def __init__(self, S, format="csr", device=None, *, kernel=None, shape=None, dtype=None, index_dtype=None,
                 **params):
        data, indices, indptr, shape = _source_arrays(S, shape)
        on_gpu = any(is_cupy_array(a) for a in (data, indices, indptr))
        self.device = _resolve_device(device, on_gpu)
        if self.device == "cuda":
            import cupy

            data, indices, indptr = (cupy.asarray(a) for a in (data, indices, indptr))
        else:
            if kernel is not None:
                raise ValueError(f"kernel={kernel!r} needs device='cuda': kernels run on the GPU")
            data, indices, indptr = (to_numpy(a) for a in (data, indices, indptr))
        csr = CSR.from_arrays(data, indices, indptr, shape, index_dtype=index_dtype, dtype=dtype)
        spec = kernels.get(kernel) if kernel is not None else None
        kernel_params = {k: params.pop(k) for k in list(params) if spec is not None and k in spec.defaults}
        if format == "auto":
            from .tuning.auto import choose_format

            if params:
                raise TypeError("format='auto' picks its own parameters; name a format to pass them")
            format = choose_format(csr)
        self.storage = formats.get(format).from_csr(csr, **format_params(format, csr.dtype, params))
        self._plan = None
        if self.device == "cuda":
            self._plan = _plan_for(self.storage, spec, kernel_params)

    # --- attributes ---------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, int]:
        """(rows, cols)."""
        return self.storage.shape

    @property
    def dtype(self) -> np.dtype:
        """Value dtype."""
        return self.storage.dtype

    @property
    def index_dtype(self) -> np.dtype:
        """Index dtype (int32 or int64)."""
        return self.storage.index_dtype

    @property
    def nnz(self) -> int:
        """Stored entries after summing duplicates (explicit zeros count)."""
        return self.storage.nnz

    @property
    def format(self) -> str:
        """Name of the storage format."""
        return self.storage.name

    @property
    def params(self) -> dict:
        """The format parameters in effect (defaults filled in)."""
        return dict(self.storage.params)

    @property
    def kernel(self) -> str:
        """The GPU kernel that runs products, or ``"reference"`` (the reference executor)."""
        return self._plan.spec.name if self._plan is not None else "reference"

    @property
    def kernel_params(self) -> dict:
        """The kernel parameters in effect (``None`` values are chosen per call by ``cocktail.tuning``)."""
        return dict(self._plan.params) if self._plan is not None else {}

    # --- products -----------------------------------------------------------------
    def matvec(self, x, out=None, alpha=1, beta=0):
        """``alpha * A @ x + beta * out`` for a vector ``x`` of shape (cols,).

        Writes into and returns ``out`` when given (``beta == 0`` never reads it);
        otherwise returns a new array on the matrix's device.
        """
        if getattr(x, "ndim", None) != 1:
            raise ValueError(f"matvec takes a 1-D x of shape ({self.shape[1]},), got shape {getattr(x, 'shape', None)}")
        return self._product(x, out, alpha, beta)

    def matmat(self, X, out=None, alpha=1, beta=0):
        """``alpha * A @ X + beta * out`` for a block of vectors ``X`` of shape (cols, k)."""
        if getattr(X, "ndim", None) != 2:
            raise ValueError(f"matmat takes a 2-D X of shape ({self.shape[1]}, k), got shape {getattr(X, 'shape', None)}")
        return self._product(X, out, alpha, beta)

    def _product(self, x, out, alpha, beta):
        if self.device == "cpu":
            for name, arr in (("x", x), ("out", out)):
                if arr is not None and is_cupy_array(arr):
                    raise TypeError(f"{name} is a CuPy array but the matrix is on the CPU; pass a NumPy array")
            return reference.spmv(self.storage, x, out=out, alpha=alpha, beta=beta)
        x = as_device_array(x, "x")
        out_dev = None if out is None else as_device_array(out, "out")
        if self._plan is None:
            y = reference.spmv(self.storage, x, out=out_dev, alpha=alpha, beta=beta)
        else:
            y = kernel_spmv(self._plan, x, out=out_dev, alpha=alpha, beta=beta)
        return y if out is None else out

    def __matmul__(self, x):
        ndim = getattr(x, "ndim", None)
        if ndim == 1:
            return self.matvec(x)
        if ndim == 2:
            return self.matmat(x)
        raise TypeError(f"A @ x needs a 1-D or 2-D array, got {type(x).__name__} with ndim={ndim}")

    # --- conversion and description -----------------------------------------------
    def to_scipy(self):
        """A ``scipy.sparse.csr_array`` on the host with the matrix's canonical entries."""
        return self.storage.to_csr().to_scipy()

    def explain(self) -> str:
        """A readable description: format, parameters, padding and bytes per SpMV."""
        fmt = self.storage
        m, n = self.shape
        flops = 2 * self.nnz
        lines = [
            f"{fmt.name} matrix {m} x {n}, {self.nnz:,} stored entries, {self.dtype.name} values, "
            f"{self.index_dtype.name} indices, on {self.device}",
            f"  parameters: {_plain(self.params) or 'none'}",
            f"  value slots: {fmt.stored_slots:,} (padding ratio {fmt.padding_ratio:.3f})",
            f"  memory: {fmt.nbytes:,} bytes in {len(fmt.arrays())} arrays",
            f"  bytes per SpMV: {fmt.spmv_bytes():,}"
            + (f" ({fmt.spmv_bytes() / flops:.2f} bytes per flop)" if flops else ""),
        ]
        lines += [f"  {k}: {v}" for k, v in fmt.describe().items()]
        return "\n".join(lines)

    def __repr__(self) -> str:
        m, n = self.shape
        return (f"<cocktail.SparseMatrix {m}x{n} format={self.format} nnz={self.nnz} "
                f"dtype={self.dtype.name} device={self.device}>")


def _plain(params: dict) -> str:
    return ", ".join(f"{k}={getattr(v, '__name__', v)!s}" for k, v in params.items())
