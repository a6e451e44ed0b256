"""torch tensors in and out of a ``SparseMatrix``'s products, and their gradients.

``A @ x``, ``A.matvec(x, out=y)``, ``A.matmat(X)`` and ``x @ A`` take torch tensors and answer a
tensor on the same device:

- No copies: a CUDA tensor is read and written where it lies (a CuPy view of its memory, made
  without touching torch's streams), a CPU tensor through its NumPy view.  A tensor that needs a
  conversion (a strided view, another dtype) is converted as a NumPy or CuPy array would be.
- On the GPU the product runs on torch's current stream (with the tensor's device current), and a
  result is allocated by torch, so ``torch.cuda.graph`` captures the product like any torch op.
- Autograd: where ``x`` requires grad, ``A @ x`` is :class:`MatrixProduct`, a
  ``torch.autograd.Function`` whose backward is ``A.H @ grad`` (the matrix is fixed: no gradient
  for its values).  ``out=``, ``alpha`` and ``beta`` are for tensors that need no gradient.

torch is imported only when a tensor is met: the package does not depend on it.
"""

from __future__ import annotations

import numpy as np


def _torch():
    import torch

    return torch


def _numpy_dtype(tensor) -> np.dtype:
    torch = _torch()
    names = {torch.float32: "float32", torch.float64: "float64", torch.complex64: "complex64",
             torch.complex128: "complex128", torch.float16: "float16", torch.int64: "int64", torch.int32: "int32",
             torch.int16: "int16", torch.int8: "int8", torch.uint8: "uint8", torch.bool: "bool"}
    if tensor.dtype not in names:
        raise TypeError(f"a torch tensor of dtype {tensor.dtype} has no NumPy dtype; convert it (x.double())")
    return np.dtype(names[tensor.dtype])


def _torch_dtype(dtype: np.dtype):
    torch = _torch()
    return {"float32": torch.float32, "float64": torch.float64, "complex64": torch.complex64,
            "complex128": torch.complex128}[np.dtype(dtype).name]


def array_view(tensor, device: str):
    """A NumPy (CPU tensor) or CuPy (CUDA tensor) array viewing ``tensor``'s memory: no copy, no stream sync."""
    if tensor.is_conj() or tensor.is_neg():
        raise ValueError("a torch view with a lazy conjugate or negation bit (x.conj(), W.mH) must be resolved "
                         "first: pass x.resolve_conj().resolve_neg()")
    if tensor.device.type == "cpu":
        if device == "cuda":
            raise TypeError("a CPU torch tensor was given to a matrix on the GPU; move it (x.cuda()): Cocktail never "
                            "copies silently")
        return tensor.detach().numpy()
    if device != "cuda":
        raise TypeError(f"a torch tensor on {tensor.device} was given to a matrix on the CPU; pass a CPU tensor")
    import cupy

    dtype = _numpy_dtype(tensor)
    itemsize = dtype.itemsize
    nbytes = (max((s - 1) * st for s, st in zip(tensor.shape, tensor.stride())) + 1) * itemsize if tensor.numel() else 0
    memory = cupy.cuda.UnownedMemory(tensor.data_ptr(), nbytes, tensor, tensor.device.index)
    return cupy.ndarray(tuple(tensor.shape), dtype, cupy.cuda.MemoryPointer(memory, 0),
                        strides=tuple(st * itemsize for st in tensor.stride()))


def _stream(tensor):
    """A context running CuPy work on torch's current stream of ``tensor``'s device (nothing for a CPU tensor)."""
    import contextlib

    if tensor.device.type == "cpu":
        return contextlib.nullcontext()
    import cupy

    torch = _torch()
    stack = contextlib.ExitStack()
    stack.enter_context(cupy.cuda.Device(tensor.device.index))
    stack.enter_context(_cupy_stream(torch.cuda.current_stream(tensor.device).cuda_stream, tensor.device.index))
    return stack


_STREAMS: dict = {}


def _cupy_stream(pointer: int, device_index: int):
    """The CuPy stream of torch's stream ``pointer``, made once per stream (torch keeps a small pool of them)."""
    stream = _STREAMS.get((pointer, device_index))
    if stream is None:
        import warnings

        import cupy

        with warnings.catch_warnings():  # CuPy 14 prefers Stream.from_external; ExternalStream works from CuPy 9
            warnings.simplefilter("ignore", DeprecationWarning)
            stream = _STREAMS[(pointer, device_index)] = cupy.cuda.ExternalStream(pointer, device_index)
    return stream


def product(matrix, x, out, alpha, beta, block: bool):
    """``alpha * A @ x + beta * out`` with torch tensors ``x`` (and ``out``): a tensor on ``x``'s device."""
    torch = _torch()
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"out is a torch tensor but x is a {type(x).__name__}; pass both as tensors")
    if x.requires_grad and torch.is_grad_enabled():
        if out is not None or beta != 0:
            raise TypeError("x requires grad: out= and beta= write in place, which autograd cannot record; call "
                            "A @ x (times alpha) or detach x")
        y = MatrixProduct.apply(x, matrix)
        return y if alpha == 1 else y * alpha
    x = x.resolve_conj().resolve_neg()  # the memory must hold the values (a copy only for such lazy views)
    rows = matrix.shape[0]
    shape = (rows, x.shape[1]) if x.ndim == 2 else (rows,)
    if out is None:
        if beta != 0:
            raise ValueError("beta != 0 needs out= holding the y to scale and add to")
        result = np.result_type(matrix.dtype, _numpy_dtype(x))
        out = torch.empty(shape, dtype=_torch_dtype(result), device=x.device)
    elif not isinstance(out, torch.Tensor):
        raise TypeError(f"x is a torch tensor but out is a {type(out).__name__}; pass both as tensors")
    with _stream(x):
        xv, yv = array_view(x, matrix.device), array_view(out, matrix.device)
        if block:
            matrix.matmat(xv, out=yv, alpha=alpha, beta=beta)
        else:
            matrix.matvec(xv, out=yv, alpha=alpha, beta=beta)
    return out


class _Function:
    """Made on first use: the ``torch.autograd.Function`` subclass (torch is imported only then)."""

    _cls = None

    def apply(self, x, matrix):
        if self._cls is None:
            self._cls = _make_function()
        return self._cls.apply(x, matrix)


def _make_function():
    torch = _torch()

    class _MatrixProduct(torch.autograd.Function):
        """``y = A @ x`` for a fixed ``A``; ``dx = A.H @ dy``."""

        @staticmethod
        def forward(ctx, x, matrix):
            ctx.matrix, ctx.real_x = matrix, not x.is_complex()
            return product(matrix, x.detach(), None, 1, 0, x.ndim == 2)

        @staticmethod
        def backward(ctx, grad):
            dx = product(ctx.matrix.H, grad, None, 1, 0, grad.ndim == 2)
            return (dx.real if ctx.real_x and dx.is_complex() else dx), None

    return _MatrixProduct


#: ``MatrixProduct.apply(x, A)``: ``A @ x`` recorded by autograd (``A`` fixed, backward through ``A.H``).
MatrixProduct = _Function()


def sparse_csr_tensor(csr, device: str):
    """A ``torch.sparse_csr_tensor`` of a SciPy (CPU) or cupyx (GPU) CSR matrix, its arrays shared."""
    torch = _torch()
    if device == "cuda":
        parts = [torch.from_dlpack(a) for a in (csr.indptr, csr.indices, csr.data)]
    else:
        parts = [torch.from_numpy(np.ascontiguousarray(a)) for a in (csr.indptr, csr.indices, csr.data)]
    return torch.sparse_csr_tensor(*parts, size=tuple(csr.shape))
