"""The operands of :class:`~cocktail.matrix.SparseMatrix`'s products, checked at the API boundary.

A product takes ``x`` and ``out`` as they are where they are ready (shape, dtype, layout, device: :meth:`Operands._ready`)
and otherwise converts them where nothing is lost, or routes the product another way: torch tensors, an (n, 1) ``x``,
an ``x`` of a dtype the matrix does not hold.  The checks compare against the facts the matrix computed once at
construction (``SparseMatrix._bind_operand_facts``).
"""

from __future__ import annotations

import numpy as np

from . import torch_ops, validate
from ._device_arrays import as_device_array
from .arrays import is_cupy_array
from .executors.reference import combine


class Operands:
    """The operand checks and routes of :class:`~cocktail.matrix.SparseMatrix` (a part of that one class)."""

    def _exact_block(self, a, name: str, shape):
        """``a`` for a bound block product: exactly the shape and dtype, C- or Fortran-contiguous (never copied)."""
        if getattr(a, "shape", None) != shape:
            raise ValueError(f"bind: {name} must have shape {shape}, got {getattr(a, 'shape', None)}")
        found = getattr(a, "dtype", None)
        if not isinstance(found, np.dtype) or found != self._dtype:
            raise TypeError(f"bind: {name} must have the matrix dtype {self._dtype.name} (a bound product never "
                            f"converts), got {getattr(found, 'name', found)}")
        if not (a.flags.c_contiguous or a.flags.f_contiguous):
            raise ValueError(f"bind: {name} must be C- or Fortran-contiguous (a bound product never copies its "
                             "buffers)")
        return a

    def _ready(self, a, shape) -> bool:
        """True when ``a`` (already of the device's array type) needs no conversion: shape, dtype, layout, device."""
        if a.shape != shape or a.dtype != self._dtype:
            return False
        if self._device_id is None:
            return a.flags.c_contiguous
        # CuPy's ``flags`` builds an object per access; ``_c_contiguous`` is the attribute behind it.
        contiguous = a._c_contiguous if self._has_c_contiguous else a.flags.c_contiguous
        return contiguous and a.data.device_id == self._device_id

    def _guard_gpu(self, x, y) -> None:
        """The product's device must be current, and ``x`` and ``y`` must not overlap (kernels read x while writing y)."""
        self._check_current_device()
        xp, yp = x.data.ptr, y.data.ptr
        if xp < yp + self._y_bytes and yp < xp + self._x_bytes:
            raise ValueError("x and out overlap in memory; the product needs out separate from x")

    def _check_current_device(self) -> None:
        if self._device_id is not None and self._current_device() != self._device_id:
            raise ValueError(f"the matrix lives on GPU {self._device_id} but GPU {self._current_device()} is current; "
                             f"run its products under cupy.cuda.Device({self._device_id})")

    def _writable(self, a) -> bool:
        """CuPy arrays are always writable; a NumPy array may be a read-only view."""
        return self._device_id is not None or a.flags.writeable

    def _device_view(self, a, name: str):
        """``a`` as an array of the matrix's device, without copying; a clear error otherwise."""
        if self.device == "cuda":
            a = as_device_array(a, name)
            if a.data.device_id != self._device_id:
                raise ValueError(f"{name} is on GPU {a.data.device_id} but the matrix is on GPU {self._device_id}")
            return a
        if is_cupy_array(a):
            raise TypeError(f"{name} is a CuPy array but the matrix is on the CPU; pass a NumPy array")
        if not isinstance(a, np.ndarray) and hasattr(a, "__array__") and hasattr(a, "dtype"):
            return np.asarray(a)
        return a

    def _operand(self, x, name: str):
        """``x`` checked and converted to a contiguous array of the matrix dtype on its device."""
        x = self._device_view(x, name)
        validate.operand(x, self.shape, self._dtype, name)
        return self._module.ascontiguousarray(x.astype(self._dtype, copy=False))

    def _block_operand(self, X):
        """``X`` checked and converted to the matrix dtype on its device, in the memory order it has."""
        X = self._device_view(X, "X")
        validate.operand(X, self.shape, self._dtype, "X")
        return self._module.asarray(X).astype(self._dtype, copy=False)

    def _vector(self, x, name: str):
        if getattr(x, "ndim", 1) != 1:  # an object without ndim is named by _operand
            raise ValueError(f"matvec takes a 1-D {name} of shape ({self.shape[1]},), got shape "
                             f"{getattr(x, 'shape', None)}")
        return self._operand(x, name)

    def _output(self, out, ncols):
        """``out`` checked (shape, exact dtype, writable) as a view on the matrix's device."""
        y = self._device_view(out, "out")
        validate.output(y, self.shape, self._dtype, ncols)
        return y

    def _exact(self, a, name: str, shape):
        """``a`` for a bound product: exactly the shape and dtype, contiguous, on the device (never copied)."""
        a = self._device_view(a, name)
        if getattr(a, "shape", None) != shape:
            raise ValueError(f"bind: {name} must have shape {shape}, got {getattr(a, 'shape', None)}")
        found = getattr(a, "dtype", None)  # not "!= self._dtype" alone: None != float64 is False in NumPy
        if not isinstance(found, np.dtype) or found != self._dtype:
            raise TypeError(f"bind: {name} must have the matrix dtype {self._dtype.name} (a bound product never "
                            f"converts), got {getattr(found, 'name', found)}")
        if not a.flags.c_contiguous:
            raise ValueError(f"bind: {name} must be contiguous (a bound product never copies its buffers)")
        return a

    def _route(self, x, out, alpha, beta, block: bool):
        """The product done another way, or None for the usual path: torch tensors (:mod:`cocktail.torch_ops`),
        an (n, 1) ``x`` for ``matvec`` (SciPy's LinearOperator contract: the result is (m, 1)), and an ``x`` whose
        dtype the matrix's does not hold (the result in ``numpy.result_type(A.dtype, x.dtype)``, computed by a
        wider copy of the matrix or, for complex ``x`` on real values, by one block product of its real and
        imaginary parts side by side)."""
        if _is_torch(x) or _is_torch(out):
            return torch_ops.product(self, x, out, alpha, beta, block)
        dtype = getattr(x, "dtype", None)
        if isinstance(dtype, np.dtype) and dtype.kind in "biufc" and not np.can_cast(dtype, self._dtype, "safe"):
            try:
                result = np.result_type(self._dtype, dtype)
            except TypeError:  # NumPy's DTypePromotionError: float16 and bfloat16 have no common dtype
                raise TypeError(f"x has dtype {dtype.name}, which does not mix with the matrix dtype "
                                f"{self._dtype.name}; convert it with .astype(...)") from None
            return self._widened(result, x, out, alpha, beta, block)
        if not block and getattr(x, "ndim", 1) == 2 and x.shape[1] == 1:
            return self.matmat(x, out, alpha, beta)
        return None

    def _widened(self, result, x, out, alpha, beta, block: bool):
        """The product in the wider dtype ``result``: a complex ``x`` on real values multiplies its real and
        imaginary parts as one block of twice the columns (the matrix in ``result``'s real dtype); otherwise
        the matrix in ``result`` (built once, on first use, and kept: a second matrix's memory) runs it."""
        x = self._device_view(x, "x")  # checked before a wider copy of the matrix is built for it
        validate.operand(x, self.shape, result, "x")
        if not block and not (x.ndim == 1 or x.shape[1] == 1):
            raise ValueError(f"matvec takes a 1-D x of shape ({self.shape[1]},) or ({self.shape[1]}, 1), got shape "
                             f"{x.shape}")
        alpha, beta = validate.scalar(alpha, result, "alpha"), validate.scalar(beta, result, "beta")
        out_dtype = getattr(out, "dtype", result)
        if out is not None and not _is_torch(out) and out_dtype != result:
            raise TypeError(f"out must have the result dtype {result.name} (numpy.result_type of the matrix's "
                            f"{self._dtype.name} and x's {x.dtype.name}), got {getattr(out_dtype, 'name', out_dtype)}")
        if result.kind == "c" and self._dtype.kind != "c":
            real = np.dtype(result.char.lower())
            base = self if real == self._dtype else self._as_dtype(real)
            return _complex_on_real(base, x, out, alpha, beta, result)
        wider = self._as_dtype(result)
        return wider.matmat(x, out, alpha, beta) if block else wider.matvec(x, out, alpha, beta)


def _is_torch(a) -> bool:
    """Whether ``a`` is a torch tensor (without importing torch)."""
    return type(a).__module__.startswith("torch") and hasattr(a, "requires_grad")


def _complex_on_real(base, x, out, alpha, beta, result: np.dtype):
    """``alpha*A@x + beta*out`` for a complex ``x`` (n,) or (n, k) and real ``base``: the real and imaginary parts of
    ``x`` side by side as one real block of twice the columns, one block product, the result viewed as complex."""
    xp = base._module
    m, n = base.shape
    columns = 1 if x.ndim == 1 else x.shape[1]
    Xc = xp.ascontiguousarray(x.astype(result, copy=False)).reshape(n, columns)
    Y = base.matmat(Xc.view(base.dtype))  # (m, 2 * columns): real and imaginary parts interleaved
    y = Y.view(result).reshape((m,) if x.ndim == 1 else (m, columns))
    if out is None:
        if beta != 0:
            raise ValueError("beta != 0 needs out= holding the y to scale and add to")
        if alpha != 1:
            y *= alpha
        return y
    target = base._device_view(out, "out")
    validate.output(target, (m, n), result, None if x.ndim == 1 else columns)
    combine(target, y, alpha, beta)
    return out


def _no_guard(x, y) -> None:
    return None


def _guard_host(x, y) -> None:
    """``x`` and ``y`` (contiguous host arrays) must not overlap: the executor reads x while writing y."""
    if np.may_share_memory(x, y):
        raise ValueError("x and out overlap in memory; the product needs out separate from x")
