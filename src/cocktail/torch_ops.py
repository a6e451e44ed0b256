"""torch tensors in and out of a ``SparseMatrix``'s products, and their gradients.

``A @ x``, ``A.matvec(x, out=y)``, ``A.matmat(X)`` and ``x @ A`` take torch tensors and answer a
tensor on the same device:

- No copies: a CUDA tensor is read and written where it lies (a CuPy view of its memory, made
  without touching torch's streams), a CPU tensor through its NumPy view.  A tensor that needs a
  conversion (a strided view, another dtype) is converted as a NumPy or CuPy array would be.
- On the GPU the product runs on torch's current stream (with the tensor's device current), and a
  result is allocated by torch, so ``torch.cuda.graph`` captures the product like any torch op.
- Autograd and ``torch.compile``: where ``x`` requires grad, ``A @ x`` is :func:`matmul`, the torch custom op
  ``torch.ops.cocktail.matmul(x, handle(A), False)`` whose backward is ``A.H @ grad`` (the matrix is fixed: no
  gradient for its values) and whose fake implementation lets ``torch.compile`` keep it in a graph.
  ``out=``, ``alpha`` and ``beta`` are for tensors that need no gradient.

torch is imported only when a tensor is met: the package does not depend on it.
"""

from __future__ import annotations

import itertools
import sys
import weakref

import numpy as np

from .precision import dtype_named


def _torch():
    import torch

    return torch


def _numpy_dtype(tensor) -> np.dtype:
    torch = _torch()
    names = {torch.float32: "float32", torch.float64: "float64", torch.complex64: "complex64",
             torch.complex128: "complex128", torch.float16: "float16", torch.bfloat16: "bfloat16",
             torch.int64: "int64", torch.int32: "int32", torch.int16: "int16", torch.int8: "int8", torch.uint8: "uint8",
             torch.bool: "bool"}
    if tensor.dtype not in names:
        raise TypeError(f"a torch tensor of dtype {tensor.dtype} has no NumPy dtype; convert it (x.double())")
    return dtype_named(names[tensor.dtype])  # bfloat16 through ml_dtypes


def _torch_dtype(dtype: np.dtype):
    torch = _torch()
    return {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32, "float64": torch.float64,
            "complex64": torch.complex64, "complex128": torch.complex128}[np.dtype(dtype).name]


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


def _compiling(torch) -> bool:
    """Whether ``torch.compile`` is tracing: the product is then the custom op, which it keeps in its graph."""
    compiler = getattr(torch, "compiler", None)
    return bool(compiler is not None and getattr(compiler, "is_compiling", lambda: False)())


def product(matrix, x, out, alpha, beta, block: bool):
    """``alpha * A @ x + beta * out`` with torch tensors ``x`` (and ``out``): a tensor on ``x``'s device."""
    torch = _torch()
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"out is a torch tensor but x is a {type(x).__name__}; pass both as tensors")
    if (x.requires_grad and torch.is_grad_enabled()) or _compiling(torch):
        if out is not None or beta != 0:
            raise TypeError("x requires grad: out= and beta= write in place, which autograd cannot record; call "
                            "A @ x (times alpha) or detach x")
        y = matmul(matrix, x)
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


#: The matrices the custom op can name: handle -> weak reference (a graph holds the int, never the matrix).
_MATRICES: dict = {}
_COUNTER = itertools.count(1)
_OP = []


def handle(matrix) -> int:
    """The int naming ``matrix`` to the custom op ``cocktail::matmul`` (given once per matrix, at its construction
    where it can be: ``torch.compile`` reads it without making one, held weakly)."""
    found = matrix.__dict__.get("_torch_handle")
    return found if found is not None else register(matrix)


def register(matrix) -> int:
    """Give ``matrix`` its handle (no torch needed): every ``SparseMatrix`` gets one when it is built, and where torch
    is loaded by then the custom op is defined too (a matrix is built outside any graph ``torch.compile`` traces)."""
    if not _OP and "torch" in sys.modules:
        _op()
    key = matrix._torch_handle = next(_COUNTER)
    _MATRICES[key] = weakref.ref(matrix, lambda _, key=key: _MATRICES.pop(key, None))
    return key


def _matrix(key: int):
    ref = _MATRICES.get(key)
    matrix = ref() if ref is not None else None
    if matrix is None:
        raise RuntimeError(f"cocktail::matmul: matrix {key} no longer exists (keep the SparseMatrix alive while a "
                           "graph or a backward that uses it may run)")
    return matrix


def _op():
    """``torch.ops.cocktail.matmul(x, handle, adjoint)``: ``A @ x`` (``A.H @ x``) as a torch custom op, defined when
    this module is imported after torch or a matrix is built after it, else on first use: its fake (shape and dtype without
    running) lets ``torch.compile`` keep it in a graph, and its autograd formula is ``dx = A.H @ dy`` (``A``
    fixed)."""
    if _OP:
        return _OP[0]
    torch = _torch()

    # ``adjoint``: multiply by A.H, resolved when the op runs, never while torch traces a graph (building A.H
    # there would make a matrix that the traced graph outlives).
    @torch.library.custom_op("cocktail::matmul", mutates_args=(), schema="(Tensor x, int key, bool adjoint) -> Tensor")
    def matmul_op(x, key, adjoint):
        matrix = _matrix(key)
        return product(matrix.H if adjoint else matrix, x.detach(), None, 1, 0, x.ndim == 2)

    @matmul_op.register_fake
    def _(x, key, adjoint):
        matrix = _matrix(key)
        result = np.result_type(matrix.dtype, _numpy_dtype(x))
        rows = matrix.shape[1] if adjoint else matrix.shape[0]
        return x.new_empty((rows,) + tuple(x.shape[1:]), dtype=_torch_dtype(result))

    def setup_context(ctx, inputs, output):
        x, key, adjoint = inputs
        ctx.key, ctx.adjoint, ctx.real_x = key, adjoint, not x.is_complex()

    def backward(ctx, grad):
        dx = matmul_op(grad.contiguous(), ctx.key, not ctx.adjoint)  # (A.H).H is A
        return (dx.real if ctx.real_x and dx.is_complex() else dx), None, None

    matmul_op.register_autograd(backward, setup_context=setup_context)
    _OP.append(matmul_op)
    return matmul_op


def matmul(matrix, x):
    """``A @ x`` for a torch tensor ``x`` (n,) or (n, k) through the custom op ``cocktail::matmul``: recorded by
    autograd (backward ``A.H @ grad``) and kept whole by ``torch.compile`` (``fullgraph=True`` holds)."""
    return _op()(x, handle(matrix), False)


def sparse_csr_tensor(csr, device: str):
    """A ``torch.sparse_csr_tensor`` of a SciPy (CPU) or cupyx (GPU) CSR matrix, its arrays shared."""
    torch = _torch()
    if device == "cuda":
        parts = [torch.from_dlpack(a) for a in (csr.indptr, csr.indices, csr.data)]
    else:
        parts = [torch.from_numpy(np.ascontiguousarray(a)) for a in (csr.indptr, csr.indices, csr.data)]
    return torch.sparse_csr_tensor(*parts, size=tuple(csr.shape))


if "torch" in sys.modules:  # torch is loaded: define the op now, outside any compiled region
    _op()
