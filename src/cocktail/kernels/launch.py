"""Bound launches: a compiled kernel with its grid, block, shared memory and argument list, resolved once.

A product is a short sequence of :class:`Launch` objects built when a matrix is bound to a
kernel.  Each launch keeps its argument list in ``ctypes`` storage laid out for
``cuLaunchKernel``; the four values that change between products (the ``x`` and ``y``
pointers, ``alpha`` and ``beta``) sit in slots written just before the call.  Nothing is
allocated, converted or looked up per product, and ``cuLaunchKernel`` is captured by CUDA
graphs like any other launch.
"""

from __future__ import annotations

import ctypes

import numpy as np

from ..precision import compute_dtype
from .device import function_pointer, grid_for


class Slot:
    """A per-product argument: the ``x`` or ``y`` pointer, ``alpha`` or ``beta``."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


X, Y, ALPHA, BETA = Slot("X"), Slot("Y"), Slot("ALPHA"), Slot("BETA")

def _complex_ctype(part):
    """A ``ctypes`` structure laid out as a complex of ``part`` (real first), with ``value`` as the simple types'."""

    class Complex(ctypes.Structure):
        _fields_ = [("re", part), ("im", part)]

        def __init__(self, value=0):
            super().__init__()
            self.value = value

        @property
        def value(self) -> complex:
            return complex(self.re, self.im)

        @value.setter
        def value(self, v) -> None:
            v = complex(v)
            self.re, self.im = v.real, v.imag

    return Complex


#: The ``ctypes`` type of each scalar dtype a kernel takes (a complex as its two parts, as the kernels lay it out).
SCALAR_CTYPES = {
    np.dtype(np.int32): ctypes.c_int32,
    np.dtype(np.int64): ctypes.c_int64,
    np.dtype(np.float32): ctypes.c_float,
    np.dtype(np.float64): ctypes.c_double,
    np.dtype(np.complex64): _complex_ctype(ctypes.c_float),
    np.dtype(np.complex128): _complex_ctype(ctypes.c_double),
}


def _fixed(value):
    """``ctypes`` storage for one fixed argument: a device array's pointer or a typed NumPy scalar."""
    if hasattr(value, "data") and hasattr(value.data, "ptr"):  # a CuPy array
        return ctypes.c_void_p(value.data.ptr)
    if isinstance(value, np.generic) and value.dtype in SCALAR_CTYPES:
        return SCALAR_CTYPES[value.dtype](value.item())
    raise TypeError(f"launch argument {value!r} must be a device array or an int32/int64/float32/float64/complex "
                    "NumPy scalar (the kernel's C type must be explicit)")


#: The most blocks ``gridDim.x`` may have on every GPU Cocktail runs on (compute capability 3.0 on).
MAX_GRID_X = 2**31 - 1

#: ``CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK``: the most threads a block of a compiled function may have.
_MAX_THREADS_PER_BLOCK = 0


class Launch:
    """One kernel launch with everything resolved: ``launch(x_ptr, y_ptr, alpha, beta, stream_ptr)``.

    ``args`` lists the kernel's parameters in order: device arrays and typed NumPy scalars
    (fixed), or the slots :data:`X`, :data:`Y`, :data:`ALPHA`, :data:`BETA`.  ``scalar_dtype``
    is the matrix dtype: ``alpha`` and ``beta`` are in its arithmetic dtype (float32 for a half one).  The launch keeps the arrays whose pointers are
    fixed arguments, and the compiled function, alive.  The grid and block are checked against
    the compiled function's limits here, so a launch that cannot run fails at construction.

    Not thread-safe: a call writes the slots and then launches; two threads sharing a launch
    must not call it at the same time.
    """

    __slots__ = ("function", "grid", "block", "shared_mem", "args", "_ptr", "_params", "_params_addr", "_x", "_y",
                 "_alpha", "_beta", "_storage", "_launch")

    @classmethod
    def striding(cls, function, items: int, block: int, props, args, scalar_dtype, shared_mem: int = 0) -> "Launch":
        """The launch of ``function``'s grid-stride loop over ``items`` in blocks of ``block`` threads, its grid
        sized by :func:`~cocktail.kernels.device.grid_for` from ``props`` and the ``shared_mem`` bytes a block."""
        grid = grid_for(items, block, props, function, shared_mem)
        return cls(function, grid, block, args, scalar_dtype, shared_mem=shared_mem)

    def __init__(self, function, grid: int, block: int, args, scalar_dtype, shared_mem: int = 0):
        self.function = function
        self.grid, self.block, self.shared_mem = int(grid), int(block), int(shared_mem)
        if self.grid < 1 or self.block < 1:
            raise ValueError(f"launch of {function!r}: grid {grid} and block {block} must be positive")
        if self.grid > MAX_GRID_X:  # binders cap their grids; this names a launch that would wrap
            raise ValueError(f"launch of {function!r}: grid {self.grid:,} exceeds the {MAX_GRID_X:,} blocks "
                             "gridDim.x may have")
        from cupy.cuda import driver

        self.args = tuple(args)
        scalar = SCALAR_CTYPES[compute_dtype(scalar_dtype)]  # float32 for a half matrix
        self._x, self._y = ctypes.c_void_p(0), ctypes.c_void_p(0)
        self._alpha, self._beta = scalar(1), scalar(0)
        slots = {X: self._x, Y: self._y, ALPHA: self._alpha, BETA: self._beta}
        self._storage = [slots[a] if isinstance(a, Slot) else _fixed(a) for a in self.args]
        self._params = (ctypes.c_void_p * max(1, len(self._storage)))(
            *[ctypes.addressof(s) for s in self._storage])
        self._params_addr = ctypes.addressof(self._params)
        self._ptr = function_pointer(function)
        self._check_limits(driver)
        self._launch = driver.launchKernel

    def _check_limits(self, driver) -> None:
        limit = driver.funcGetAttribute(_MAX_THREADS_PER_BLOCK, self._ptr)
        if self.block > limit:
            raise ValueError(f"{self.function!r}: {self.block} threads per block exceed the {limit} this compiled "
                             "kernel allows (its registers); choose a smaller block_threads")

    def __call__(self, x_ptr: int, y_ptr: int, alpha, beta, stream_ptr: int) -> None:
        self._x.value = x_ptr
        self._y.value = y_ptr
        self._alpha.value = alpha
        self._beta.value = beta
        self._launch(self._ptr, self.grid, 1, 1, self.block, 1, 1, self.shared_mem, stream_ptr,
                     self._params_addr, 0)

    def __repr__(self) -> str:
        return f"<Launch grid={self.grid} block={self.block} shared={self.shared_mem} args={self.args!r}>"


def beta_arg(fmt, accumulate: bool):
    """The ``beta`` argument of a binder's launch: the per-product slot, or 1 when the product accumulates."""
    return compute_dtype(fmt.dtype).type(1) if accumulate else BETA
