"""``SparseMatrix``: the user-facing sparse matrix, stored in one format on one device.

Everything a product needs is resolved at construction: the format, the executor (and on the
GPU the kernel's launches), and the facts the operand checks compare against.  A product
checks ``x`` and ``out`` once, against those facts, and hands them to the executor.
"""

from __future__ import annotations

import os
import sys
import textwrap
import warnings
import weakref
from typing import NamedTuple

import numpy as np
from scipy.sparse.linalg import LinearOperator

from . import _memory, describe, executors, formats, kernels, precision, torch_ops, validate
from ._device_arrays import as_device_array, upload
from .arrays import cuda_available, is_cupy_array, to_numpy
from .bound import BoundProduct, bound_nothing
from .errors import CPUFallbackWarning, FormatFillError, FormatValuesError
from .executors.reference import combine
from .formats.csr import CSR
from .operator import OperatorProtocol

DEVICES = ("cpu", "cuda")
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_warned_cpu_fallback = False
#: Scalars taken as they are on the fast path of a real-valued product (the launch converts them).
_PLAIN_SCALARS = (int, float)


def _caller_stacklevel() -> int:
    """The ``stacklevel`` of the first frame outside the cocktail package, so warnings point at the user's line."""
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def _warn_cpu_fallback() -> None:
    global _warned_cpu_fallback
    if not _warned_cpu_fallback:
        _warned_cpu_fallback = True
        warnings.warn(
            "cocktail: no CUDA GPU found (CuPy missing or no device); products run on the CPU",
            CPUFallbackWarning,
            stacklevel=_caller_stacklevel(),
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


class _InputFacts(NamedTuple):
    """What the memory check needs of an input, read without converting it."""

    shape: tuple
    nnz: int
    value_size: int
    on_gpu: bool


def _input_facts(S, shape):
    """Shape, entry count, value size and whether ``S`` lives on the GPU; None for an input
    :func:`_source_arrays` refuses.  Reads no array, so nothing O(rows) is built yet."""
    if isinstance(S, SparseMatrix):
        return _InputFacts(S.shape, S.nnz, S.dtype.itemsize, S.device == "cuda")
    if isinstance(S, CSR):
        return _InputFacts(S.shape, S.nnz, S.dtype.itemsize, is_cupy_array(S.data))
    module = type(S).__module__
    if module.startswith(("scipy.sparse", "cupyx.scipy.sparse")) and hasattr(S, "tocsr"):
        dt = np.dtype(S.dtype)
        return _InputFacts(tuple(int(v) for v in S.shape), int(S.nnz), dt.itemsize, module.startswith("cupyx"))
    if isinstance(S, (tuple, list)) and len(S) == 3 and shape is not None:
        data = S[0]
        size = np.dtype(data.dtype).itemsize if hasattr(data, "dtype") else 8
        nnz = len(data) if np.ndim(data) == 1 else 0  # anything else is named by the CSR checks
        return _InputFacts(validate.shape2d(shape), nnz, size, any(is_cupy_array(a) for a in S))
    return None


def _require_memory(facts: _InputFacts, dtype, index_dtype, device: str) -> None:
    """Refuse, before anything is allocated, a matrix whose canonical CSR, ``x`` and ``y`` cannot fit on ``device``.

    A product of an m x n matrix needs at least its CSR (m + 1 row pointers and the entries) and
    ``x`` (n values) and ``y`` (m values); every format is built from that CSR.
    """
    m, n = facts.shape
    value_size = facts.value_size
    if dtype is not None:
        try:
            value_size = validate.value_dtype(dtype).itemsize
        except TypeError:
            pass  # the CSR build names the bad dtype
    index_size = validate.index_itemsize(max(m, n, facts.nnz), index_dtype)
    pointers, entries = _memory.csr_bytes(m, facts.nnz, value_size, index_size)
    _memory.require(f"a {_memory.shape_text(facts.shape)} matrix with {facts.nnz:,} entries",
                    [("its CSR row pointers", pointers), ("its CSR entries", entries),
                     ("x and y", (m + n) * value_size)], device)


def resolve_device(device, on_gpu: bool) -> str:
    """``device`` checked ("cpu", "cuda"), or for None the GPU where CuPy sees one (``on_gpu``: the input is on
    it), else the CPU with a :class:`CPUFallbackWarning`."""
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


class _Options(NamedTuple):
    """How a matrix was asked for: its transposes, scaled and converted copies are built the same way."""

    format: str
    executor: object
    kernel: object
    index_dtype: object
    tune: str
    deterministic: bool
    vendor: bool
    params: dict
    transpose: str
    value_dtype: object = None


TRANSPOSES = ("store", "scatter")


class SparseMatrix(OperatorProtocol):
    """A sparse matrix stored in one of Cocktail's formats, ready for ``y = alpha*A@x + beta*y``.

    It is a ``scipy.sparse.linalg.LinearOperator`` (:mod:`cocktail.operator`): SciPy's solvers take it
    as it is, and ``A.T``, ``A.H``, ``rmatvec``, ``x @ A``, ``A * 2``, ``astype`` and ``tocsr`` work as
    SciPy's do.

    Parameters
    ----------
    S : scipy.sparse matrix or array, cupyx.scipy.sparse matrix, ``(data, indices, indptr)``
        tuple (with ``shape=``), or another ``SparseMatrix``.  Never modified.
    format : ``"auto"`` (default) or a name from :func:`cocktail.formats.names`.  On the GPU,
        ``"auto"`` runs the planner (:mod:`cocktail.auto.planning`): it measures the matrix's
        features, costs candidate plans with the device profile and returns a single format
        or a Cocktail of several; on the CPU it picks ``csr`` (:mod:`cocktail.auto.fixed_rule`).
    tune : with ``format="auto"`` on the GPU, ``"auto"`` (default: the profile's plan runs from the
        first product, and the matrix times its own products, tries the few rival plans the profile
        ranks close on some of them, within a few percent of their time, and moves to one it measured
        faster: :mod:`cocktail.auto.online`; ``explain()`` says what it did), ``"model"`` (the
        profile's plan, never timed or moved) or ``"measure"`` (time the best few candidates at
        construction and keep the fastest).  Decisions are cached on disk by structure, device and
        dtype.  With ``deterministic=True`` the plan never moves.
    device : ``"cpu"``, ``"cuda"`` or ``None`` (the GPU when CuPy sees one, else the CPU
        with one warning).
    executor : ``None`` (the device's default), ``"cuda"`` (a GPU kernel), ``"cpu"`` (SciPy's
        compiled product where SciPy has the format's layout, else the reference) or
        ``"reference"`` (the product that reads the format's own arrays, on either device).
        See :mod:`cocktail.executors`.
    kernel : on the GPU, a name from :func:`cocktail.kernels.names` to force that kernel;
        by default :mod:`cocktail.tuning.kernel_rules` picks one (formats or dtypes without a
        kernel run the device reference path).
    shape : needed with a tuple input.
    dtype : convert the values to this dtype (float16, bfloat16 with ``ml_dtypes``, float32, float64,
        complex64, complex128): the dtype of ``x``, ``y``, ``alpha`` and ``beta``.  Half-precision matrices sum
        in float32 (:mod:`cocktail.precision`).
    value_dtype : ``None`` (default: values stored in the matrix dtype) or a narrower dtype to store the
        values in, products staying in the matrix dtype: ``"float32"`` under float64, ``"float16"`` or
        ``"bfloat16"`` under float32.  Each value is rounded once, when the matrix is built; a product
        widens them exactly and sums in the matrix's arithmetic (error bound in :mod:`cocktail.precision`).
        Fewer bytes per entry: about 1.5x less traffic for CSR in float64.
    index_dtype : force int32 or int64 indices (default: int32 when everything fits).
    deterministic : ``True`` to allow only kernels declared deterministic, so that repeated
        products with the same operands are bit-identical: ``"auto"`` plans without them
        (no coo_atomic part), a named format gets its deterministic kernel (coo: coo_segmented),
        and a product that would still sum with atomics (``kernel="coo_atomic"``, hyb's
        ``coo_kernel="coo_atomic"``, the GPU reference path of complex values) is a
        ``ValueError``.  Default ``False``: the fastest kernels, atomics included.  See
        :attr:`deterministic`.
    vendor : with ``format="auto"`` on the GPU, ``True`` (default) to let the planner choose
        cuSPARSE's CSR and COO algorithms (the ``cusparse_csr`` and ``cusparse_coo`` kernels)
        where it predicts them fastest, for the whole matrix or a Cocktail's part; ``False`` to
        plan with Cocktail's own kernels only.  ``explain()`` says when a plan delegates.
    transpose : how ``A.T``, ``A.H``, ``rmatvec`` and ``x @ A`` run: ``"store"`` (default) builds the
        transpose once, on first use, as a matrix of its own with the same options (``format="auto"``
        plans it anew: it is a different matrix) and keeps it, at the memory of a second matrix;
        ``"scatter"`` stores nothing and scatters each entry into the result with atomic adds
        (slower, not deterministic; on the GPU a CSR matrix needs nothing beside its arrays).
    **params : the format's parameters, and the kernel's when ``kernel`` is named
        (``explain()`` lists them).

    On the GPU the matrix is built on the current CuPy stream, and the constructor returns once
    that work is done: its products may then run on any stream.  ``x`` and ``out`` are the
    caller's to order: a product reads them on the stream it runs on.
    """

    def __init__(self, S, format="auto", device=None, *, executor=None, kernel=None, shape=None, dtype=None,
                 index_dtype=None, tune="auto", deterministic=False, vendor=True, transpose="store", value_dtype=None,
                 **params):
        if not isinstance(deterministic, bool):
            raise TypeError(f"deterministic must be True or False, got {deterministic!r}")
        if not isinstance(vendor, bool):
            raise TypeError(f"vendor must be True or False, got {vendor!r}")
        facts = _input_facts(S, shape)
        if facts is None:
            _source_arrays(S, shape)  # raises the error that names what is wrong with the input
        self.device = resolve_device(device, facts.on_gpu)
        if self.device == "cpu" and kernel is not None:
            raise ValueError(f"kernel={kernel!r} needs device='cuda': kernels run on the GPU")
        if tune not in ("auto", "model", "measure"):
            raise ValueError(f"tune must be 'auto', 'model' or 'measure', got {tune!r}")
        if format != "auto" and tune == "measure":
            raise ValueError(f"tune={tune!r} applies to format='auto' only")
        _require_memory(facts, dtype, index_dtype, self.device)
        if format != "auto" and not vendor:
            raise ValueError("vendor=False applies to format='auto' (name a kernel to choose one for a format)")
        if transpose not in TRANSPOSES:
            raise ValueError(f"transpose must be one of {TRANSPOSES}, got {transpose!r}")
        if transpose == "scatter" and deterministic and self.device == "cuda":
            raise ValueError("transpose='scatter' sums A.T's products with atomics; deterministic=True needs "
                             "transpose='store'")
        self._options = _Options(format, executor, kernel, index_dtype, tune, deterministic, vendor, dict(params),
                                 transpose, value_dtype)
        self._kept = {}  # derived matrices built once: "T", "H", "conj", ("dtype", d)
        build = (lambda: self._build(S, shape, format, executor, kernel, dtype, index_dtype, tune,
                                     deterministic, vendor, params, value_dtype))
        if self.device == "cuda":
            what = f"a {_memory.shape_text(facts.shape)} matrix with {facts.nnz:,} entries in format {format!r}"
            _memory.gpu_build(what, build)
        else:
            build()
        if deterministic and not self._executor.deterministic:
            raise _nondeterministic_error(self._executor.nondeterministic)
        if transpose == "scatter":
            from .executors.transposed import refusal

            refused = refusal(self.storage, self.device)
            if refused:
                raise ValueError(refused)
        self._bind_operand_facts()
        torch_ops.register(self)  # its name for torch's custom op (torch.compile must not have to make one)

    def _build(self, S, shape, format, executor, kernel, dtype, index_dtype, tune, deterministic, vendor,
               params, value_dtype=None) -> None:
        """The canonical CSR of ``S`` on the matrix's device, then its storage and executor.

        The device arrays live only in this frame, so a build that runs out of GPU memory frees
        them before ``_memory.gpu_build`` reports it.
        """
        from .tuning.format_rules import format_params

        data, indices, indptr, shape = _source_arrays(S, shape)
        if dtype is None and isinstance(S, (SparseMatrix, CSR)) and S.dtype != data.dtype:
            dtype = S.dtype  # values stored narrower than their matrix's dtype: the same dtype here ...
            if value_dtype is None:
                value_dtype = data.dtype  # ... and the same storage
        if self.device == "cuda":
            # arrays uploaded from the host are this matrix's own: the canonical CSR may keep them
            owned = all(isinstance(a, np.ndarray) for a in (data, indices, indptr))
            data, indices, indptr = upload((data, indices, indptr))
        else:
            owned = False
            data, indices, indptr = (to_numpy(a) for a in (data, indices, indptr))
        csr = CSR.from_arrays(data, indices, indptr, shape, index_dtype=index_dtype, dtype=dtype, owned=owned)
        del data, indices, indptr
        csr = csr.with_value_dtype(value_dtype)
        spec = kernels.get(kernel) if kernel is not None else None
        kernel_params = {k: params.pop(k) for k in list(params) if spec is not None and k in spec.defaults}
        self.auto = None  # planning.AutoReport when format="auto" ran the planner
        self._auto_reason = None  # why format="auto" took its fixed rule instead, for explain()
        if format == "auto":
            if params or kernel is not None:
                raise TypeError("format='auto' picks its own format, kernel and parameters; "
                                "name a format to pass them")
            from .auto import decide

            decision = decide(csr, self.device, executor, tune, deterministic, vendor)
            if decision.report is not None:  # its product (auto.plans.PlannedProduct) holds the storage
                self._planned = self._executor = decision.executor
                self.auto = decision.report
                return
            format, self._auto_reason = decision.format, decision.reason
        if spec is not None and "short_columns" in formats.get(format).defaults and params.get("short_columns") is None \
                and "short_columns" not in spec.layouts:
            params["short_columns"] = False  # "where it fits" is where the named kernel reads them too
        storage = formats.get(format).from_csr(csr, **format_params(format, csr.dtype, params))
        bound = executors.create(executor, storage, self.device, spec, kernel_params, deterministic=deterministic)
        self.storage, self._executor = storage, bound  # only now: a failed binding leaves self holding nothing

    def _bind_operand_facts(self) -> None:
        """What the product-time checks compare against, computed once."""
        m, n = self.shape
        self._x_shape, self._y_shape = (n,), (m,)
        self._dtype = self.storage.dtype
        #: alpha and beta are in the arithmetic dtype (float32 for a half matrix, as cuSPARSE's).
        self._scalar_dtype = precision.compute_dtype(self._dtype)
        self._fast_scalars = _PLAIN_SCALARS if self._dtype.kind != "c" else ()
        # A plain int or float within the dtype's range skips validate.scalar; anything else
        # (past it, inf, NaN) is checked there, so an overflow is refused, not computed.
        self._scalar_max = float(np.finfo(self._scalar_dtype).max) if self._scalar_dtype.kind == "f" else 0.0
        self._run, self._fresh = self._executor.run, self._executor.fresh
        if self.device == "cuda":
            import cupy

            self._module, self._array_type = cupy, cupy.ndarray
            self._device_id = cupy.cuda.Device().id
            self._has_c_contiguous = hasattr(cupy.empty(0), "_c_contiguous")
            self._current_device = cupy.cuda.runtime.getDevice
            # The build ran on the current stream; once it ends, a product on any stream reads finished arrays.
            cupy.cuda.get_current_stream().synchronize()
            self._x_bytes, self._y_bytes = n * self._dtype.itemsize, m * self._dtype.itemsize
            self._guard = self._guard_gpu
        else:
            self._module, self._array_type, self._device_id = np, np.ndarray, None
            # The host executors compute into temporaries, so overlap is harmless there; a Cocktail's
            # parts add into y one after another and would read an x already overwritten.
            self._guard = _no_guard if self._executor.overlap_safe else _guard_host

    # --- attributes ---------------------------------------------------------------
    #: The product of a matrix format="auto" planned on the GPU (auto.plans.PlannedProduct), else None.
    _planned = None
    _storage = None

    @property
    def storage(self):
        """The stored matrix (a format's object): the current plan's, which ``tune="auto"`` may replace."""
        planned = self._planned
        return self._storage if planned is None else planned.storage

    @storage.setter
    def storage(self, value) -> None:
        self._storage = value

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, cols)."""
        return self.storage.shape

    @property
    def dtype(self) -> np.dtype:
        """Value dtype."""
        return self.storage.dtype

    @property
    def value_dtype(self) -> np.dtype:
        """The dtype the values are stored in: :attr:`dtype`, or the narrower one of ``value_dtype=``."""
        return self.storage.value_dtype

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
    def executor(self) -> str:
        """The executor that runs products: ``"cuda"``, ``"cpu"`` or ``"reference"``."""
        return self._executor.name

    @property
    def kernel(self) -> str:
        """What computes a product: a GPU kernel's name, ``"scipy"`` or ``"reference"``."""
        return self._executor.kernel

    @property
    def deterministic(self) -> bool:
        """Whether repeated products with the same operands are bit-identical: every kernel the
        product runs is declared deterministic (a Cocktail or hyb with a coo_atomic part, and the
        GPU reference path, sum with atomics and are not).  The CPU executors always are.  Block
        products of a matrix planned by ``format="auto"`` keep to deterministic kernels only where
        ``deterministic=True`` was asked; otherwise they may take cuSPARSE's faster SpMM algorithms,
        which sum with atomics."""
        return self._executor.deterministic

    @property
    def kernel_params(self) -> dict:
        """The kernel parameters in effect, every rule's choice resolved (empty without a kernel)."""
        return dict(self._executor.config)

    # --- products -----------------------------------------------------------------
    def matvec(self, x, out=None, alpha=1, beta=0):
        """``alpha * A @ x + beta * out`` for a vector ``x`` of shape (cols,).

        Writes into and returns ``out`` when given (``beta == 0`` never reads it); otherwise
        returns a new array on the matrix's device.  On the GPU, with ``x`` and ``out``
        contiguous arrays of the matrix's dtype on its device, a product allocates nothing,
        never synchronises with the host and can be captured in a CUDA graph, from the first
        call; it runs on the current CuPy stream, with the matrix's device current.  Other
        operands are accepted where nothing is lost: an ``x`` of another dtype that casts safely
        (an ``int`` or ``float32`` ``x`` for a ``float64`` matrix) or not contiguous is converted
        into a new array, and a strided ``out`` is written through a temporary; a read-only
        ``x`` is fine.  ``out`` must not overlap ``x``: where that would give a wrong result (on
        the GPU, or a Cocktail's parts) it is a ``ValueError``.  A matrix is not meant to run
        products from several threads at once (its launches hold the per-product arguments).
        """
        if not (x.__class__ is self._array_type and self._ready(x, self._x_shape)):
            routed = self._route(x, out, alpha, beta, block=False)
            if routed is not None:
                return routed
            x = self._vector(x, "x")
        if alpha.__class__ not in self._fast_scalars or not -self._scalar_max <= alpha <= self._scalar_max:
            alpha = validate.scalar(alpha, self._scalar_dtype, "alpha")
        if beta.__class__ not in self._fast_scalars or not -self._scalar_max <= beta <= self._scalar_max:
            beta = validate.scalar(beta, self._scalar_dtype, "beta")
        if out is None:
            if beta != 0:
                raise ValueError("beta != 0 needs out= holding the y to scale and add to")
            self._check_current_device()  # a new y cannot overlap x: only the device is checked
            return self._fresh(x, self._module.empty(self._y_shape, dtype=self._dtype), alpha)
        if out.__class__ is self._array_type and self._ready(out, self._y_shape) and self._writable(out):
            self._guard(x, out)
            self._run(x, out, alpha, beta)
            return out
        y = self._output(out, None)
        work = y if y.flags.c_contiguous else (y.copy() if beta != 0 else self._module.empty_like(y))
        self._guard(x, work)
        self._run(x, work, alpha, beta)
        if work is not y:
            y[...] = work
        return out

    def matmat(self, X, out=None, alpha=1, beta=0):
        """``alpha * A @ X + beta * out`` for a block of vectors ``X`` of shape (cols, k).

        Writes into and returns ``out`` (shape (rows, k), the matrix's dtype) when given, else
        returns a new C-ordered array.  Any memory order is accepted: ``X`` and ``out`` may be
        C- or Fortran-ordered or windows of wider arrays (only ``out``'s own elements are
        written); on the GPU a format with a block kernel reads and writes them where they lie,
        each stored entry read once per tile of columns (``explain(k=...)`` names the block
        kernel), and other formats multiply one column at a time through C-ordered copies.  An ``X`` of
        another dtype that casts safely is converted first.  ``k = 0`` gives an empty result.
        ``out`` may lie beside ``X`` in one array (disjoint column windows) or even overlap it: ``X``
        is then read from a copy.  An ``out`` whose elements share memory (a broadcast view) is a
        ``ValueError``.
        """
        if getattr(X, "ndim", 2) != 2:  # an object without ndim is named by _operand
            raise ValueError(f"matmat takes a 2-D X of shape ({self.shape[1]}, k), got shape "
                             f"{getattr(X, 'shape', None)}")
        routed = self._route(X, out, alpha, beta, block=True)
        if routed is not None:
            return routed
        X = self._block_operand(X)
        k = X.shape[1]
        alpha = validate.scalar(alpha, self._scalar_dtype, "alpha")
        beta = validate.scalar(beta, self._scalar_dtype, "beta")
        if out is None:
            if beta != 0:
                raise ValueError("beta != 0 needs out= holding the y to scale and add to")
            Y = self._module.empty((self.shape[0], k), dtype=self._dtype)
        else:
            Y = self._output(out, k)
            if validate.may_repeat_elements(Y):
                raise ValueError("out's elements may share memory (a broadcast view, or strides that interleave); "
                                 "the product needs a separate place for every element")
        if k and self.shape[0]:
            self._check_current_device()
            if out is not None and not self._executor.overlap_safe and self._module.may_share_memory(X, Y):
                X = X.copy()  # read from a copy: X may lie beside out in one array (or overlap it)
            self._executor.run_block(X, Y, alpha, beta)
        return Y if out is None else out

    def __matmul__(self, x):
        if isinstance(x, LinearOperator):  # SciPy's lazy product of operators
            return LinearOperator.__matmul__(self, x)
        ndim = getattr(x, "ndim", None)
        if ndim == 1:
            return self.matvec(x)
        if ndim == 2:
            return self.matmat(x)
        raise TypeError(f"A @ x needs a 1-D or 2-D array, got {type(x).__name__} with ndim={ndim}")

    def bind(self, x, out, alpha=1, beta=0, *, stream=None) -> BoundProduct:
        """A product on fixed buffers, replayed with almost no host cost: ``p = A.bind(x, out=y); p()``.

        ``p()`` computes ``out = alpha*A@x + beta*out`` with the values ``x`` and ``out`` hold
        at that moment and returns ``out``.  On the GPU it replays a CUDA graph captured here,
        on ``stream`` (default: the stream current now).  Rules: ``x`` and ``out`` must be
        contiguous arrays of the matrix's dtype on its device (no copy is ever made, so new
        values must be written into them in place); ``alpha`` and ``beta`` are fixed; the
        bound product keeps the matrix and both buffers alive until ``p.close()`` (synchronise
        its stream first if replays may still be running: freed buffers return to CuPy's pool).
        A block ``x`` of shape (cols, k) binds the block product ``out = alpha*A@x + beta*out`` (``out``
        (rows, k)): both C-ordered or both Fortran-ordered; on the GPU its plan is made and bound first
        (:meth:`prepare_block_products`), so the graph holds the block kernel's launches.
        """
        if getattr(x, "ndim", 1) == 2:
            return self._bind_block(x, out, alpha, beta, stream)
        if not (x.__class__ is self._array_type and self._ready(x, self._x_shape)):
            x = self._exact(x, "x", self._x_shape)
        y = out
        if not (out.__class__ is self._array_type and self._ready(out, self._y_shape)):
            y = self._exact(out, "out", self._y_shape)
        if not self._writable(y):
            raise ValueError("bind: out is read-only")
        if self.device == "cpu" and stream is not None:
            raise ValueError("bind: stream= is for matrices on the GPU")
        self._guard(x, y)
        alpha = validate.scalar(alpha, self._scalar_dtype, "alpha")
        beta = validate.scalar(beta, self._scalar_dtype, "beta")
        return BoundProduct(self, self._bound_executor().run, x, y, out, alpha, beta, stream)

    def _bound_executor(self):
        """The executor a bound product captures: a planned matrix's current plan, kept alive for the graph
        (tuning may move the matrix to another plan later; the bound product keeps this one)."""
        if self._planned is None:
            return self._executor
        self._planned.keep_current()
        return self._planned.current

    def _bind_block(self, X, out, alpha, beta, stream) -> BoundProduct:
        """:meth:`bind` for a block ``X`` (cols, k) and ``out`` (rows, k): both C-ordered or both Fortran-ordered,
        of the matrix dtype, on its device, not overlapping.  On the GPU the block product is planned and bound
        first (:meth:`prepare_block_products`), then captured; a plan that would loop over the columns of
        row-major blocks through copies cannot be captured and is refused (bind Fortran-ordered blocks)."""
        m, n = self.shape
        X = self._device_view(X, "X")
        k = X.shape[1]
        X = self._exact_block(X, "X", (n, k))
        Y = self._exact_block(self._device_view(out, "out"), "out", (m, k))
        if X.flags.c_contiguous != Y.flags.c_contiguous and k > 1 and min(m, n) > 1:
            raise ValueError("bind: X and out must have one memory order (both C-ordered or both Fortran-ordered)")
        if not self._writable(Y):
            raise ValueError("bind: out is read-only")
        if self.device == "cpu" and stream is not None:
            raise ValueError("bind: stream= is for matrices on the GPU")
        if X.size and Y.size and self._module.may_share_memory(X, Y):
            raise ValueError("bind: X and out must not overlap")
        alpha = validate.scalar(alpha, self._scalar_dtype, "alpha")
        beta = validate.scalar(beta, self._scalar_dtype, "beta")
        if self.device == "cuda":
            self._check_current_device()
        if not (k and m):
            return BoundProduct(self, bound_nothing, X, Y, out, alpha, beta, stream)
        if self.device == "cuda":
            from .kernels.block_operands import BlockOperands

            self._executor.prepare_blocks()
            operands = BlockOperands.of(X, Y)  # these exact operands planned and bound now, outside the capture
            if k > 1 and operands is not None:
                self._executor.bind_blocks(operands)
            if not self._executor.captures_block(X, Y):
                raise ValueError("bind: this matrix multiplies a block of row-major vectors one column at a time "
                                 "through copies, which a CUDA graph cannot hold; bind Fortran-ordered X and out "
                                 "(each column contiguous), or call matmat")
        return BoundProduct(self, self._bound_executor().run_block, X, Y, out, alpha, beta, stream)

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

    # --- operand checks (the API boundary) ------------------------------------------
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

    def _as_dtype(self, dtype):
        """This matrix with values in ``dtype``, built once and kept for later products."""
        return self._derived(("dtype", dtype.name), lambda csr: csr, dtype=dtype)

    # --- matrices made from this one (operator.py's transposes, scaling and conversions) ------
    def _csr(self):
        """The canonical CSR of the matrix (its storage's, on the matrix's device)."""
        return self.storage.to_csr()

    def _transposed(self, conjugate: bool):
        """``A.T`` (``A.H`` with ``conjugate``): built once and kept, and it knows ``A`` as its own transpose."""
        key = "H" if conjugate else "T"
        made = self._kept.get(key)
        if isinstance(made, weakref.ref):  # this matrix is itself a transpose: its own is the matrix it came from
            made = made()
        if made is None:
            if self._options.transpose == "scatter":
                made = _ScatterTransposed(self, conjugate)
            else:
                try:
                    made = self._derived(None, lambda csr: csr.transposed(conjugate))
                except (FormatFillError, FormatValuesError, ValueError) as exc:
                    raise type(exc)(f"building A.{key} (A's transpose, a matrix of its own, stored with A's options: "
                                    f"format={self._options.format!r}) failed: {exc}; build A with format='auto', "
                                    "or with transpose='scatter' (nothing stored)") from exc
            made._kept[key] = weakref.ref(self)  # weak: A keeps A.T alive, not the other way round
            self._kept[key] = made
        return made

    def _derived(self, key, transform, dtype=None):
        """A new matrix of ``transform(canonical CSR)`` (values in ``dtype``), built with this matrix's options on
        its device; kept under ``key`` (None: not kept)."""
        if key is not None and key in self._kept:
            return self._kept[key]
        o = self._options
        with self._on_device():
            csr = transform(self._csr())
            target = csr.dtype if dtype is None else np.dtype(dtype)
            # a matrix made from this one keeps its values' storage where that is narrower than its dtype (a half
            # matrix times a float32 x: float32 products of the half values), else stores its own dtype
            kept = self.value_dtype in precision.NARROWER.get(target, ())
            made = SparseMatrix(csr, o.format, self.device, executor=o.executor, kernel=o.kernel,
                                dtype=target, index_dtype=o.index_dtype,
                                tune=o.tune, deterministic=o.deterministic, vendor=o.vendor,
                                transpose=o.transpose, value_dtype=self.value_dtype if kept else None, **o.params)
        if key is not None:
            self._kept[key] = made
        return made

    def _on_device(self):
        """A context with the matrix's GPU current (nothing on the CPU)."""
        import contextlib

        if self._device_id is None:
            return contextlib.nullcontext()
        import cupy

        return cupy.cuda.Device(self._device_id)

    # --- conversion and description -----------------------------------------------
    def to_scipy(self):
        """A ``scipy.sparse.csr_array`` on the host with the matrix's canonical entries."""
        return self._csr().to_scipy()

    def block_plan(self, k: int, row_major: bool = True) -> str:
        """What a block product ``A @ X`` of ``k`` columns runs (row-major blocks, or column-major with
        ``row_major=False``): per part (joined by ``+``), a block kernel with its shape (each stored entry
        read once per tile of columns) or ``"<kernel> per column"``."""
        return " + ".join(self._executor.block_kernels(_block_width(k, "block_plan"), row_major))

    def block_dram_bytes(self, l2_bytes: int | None, k: int) -> int:
        """The DRAM traffic model's bytes of a block product of ``k`` columns as this matrix runs it: the
        matrix read once where a block kernel runs, once a column (``k`` SpMVs) where none does; a
        Cocktail mixing both sums its parts so (leaving out the re-reads of y between parts); the whole
        matrix's CSR where the bucket runs it (row-major blocks)."""
        k = _block_width(k, "block_dram_bytes")
        whole = self._executor.whole_for_width(k)
        if whole is not None:  # the bucket runs the whole matrix as one CSR: its bytes
            csr = whole.storage
            return csr.dram_bytes(l2_bytes, k=k) if all(whole.reads_once(k)) else k * csr.dram_bytes(l2_bytes)
        once = self._executor.reads_once(k)
        fmt = self.storage
        if all(once):
            return fmt.dram_bytes(l2_bytes, k=k)
        if not any(once):
            return k * fmt.dram_bytes(l2_bytes)
        return sum(part.dram_bytes(l2_bytes, k=k) if read_once else k * part.dram_bytes(l2_bytes)
                   for part, read_once in zip(fmt.parts, once))

    def prepare_block_products(self, k: int | None = None, row_major: bool = True) -> None:
        """Make now what block products need beyond their launches, so that a first block product can be
        captured in a CUDA graph: a merge kernel's shares and carry buffer (device work and a host
        synchronisation), and, for a matrix planned by ``format="auto"`` and given ``k``, the plan of the
        bucket of ``k`` (row-major blocks, or column-major with ``row_major=False``): its candidates timed on
        scratch blocks.  Otherwise the first block product (of the bucket) makes them."""
        self._executor.prepare_blocks()
        if k is not None and _block_width(k, "prepare_block_products") > 1 and self.shape[0]:
            from .kernels.block_operands import BlockOperands

            operands = BlockOperands.of_width(k, self.shape, row_major)
            self._executor.bind_blocks(operands)  # planned first where format="auto" planned the matrix

    def block_timings(self, k: int, row_major: bool = True) -> dict:
        """What the block planner of a matrix planned by ``format="auto"`` measured for the bucket of ``k``
        (row-major blocks, or column-major): µs per block product of each choice it timed (per part of a
        Cocktail, prefixed ``part<i>:``), then, where the whole matrix as one CSR was its rival, the matrix as
        stored (``as stored``: a Cocktail's parts summed) against it (``whole matrix: <choice>``); empty before
        that bucket was planned, or where nothing was timed."""
        from .executors.base import block_key
        from .kernels.block_operands import BlockOperands

        k = _block_width(k, "block_timings")
        key = block_key(BlockOperands.of_width(k, self.shape, row_major))
        leaves = self._executor.block_executors()
        timed = {(f"part{i}:" if len(leaves) > 1 else "") + label: us
                 for i, leaf in enumerate(leaves) for label, us in getattr(leaf, "block_times", {}).get(key, {}).items()}
        timed.update(getattr(self._executor, "rival_times", {}).get(key, {}))  # ... against the whole matrix
        return timed

    def explain(self, k: int | None = None) -> str:
        """A readable description: format, parameters, executor, padding and bytes per SpMV; with ``k``, also
        what a block product ``A @ X`` of ``k`` columns runs (a block kernel and its shape, or one product per
        column, for each part) and its bytes under the DRAM traffic model."""
        if k is not None:
            k = _block_width(k, "explain")
        fmt = self.storage
        m, n = self.shape
        flops = 2 * self.nnz
        run = f"{self.executor} executor, {self.kernel}"
        if self.kernel_params:
            run += f" ({_param_text(self.kernel_params)})"
        lines = [
            f"{fmt.name} matrix {m} x {n}, {self.nnz:,} stored entries, {_precision_text(self)}, "
            f"{self.index_dtype.name} indices, on {self.device}",
            f"  parameters: {describe.storage_params_text(fmt)}",
            f"  products: {run}",
            "  deterministic: "
            + ("yes" if self.deterministic else f"no ({_atomic_text(self._executor.nondeterministic)})"),
            f"  value slots: {fmt.stored_slots:,} (padding ratio {fmt.padding_ratio:.3f})",
            f"  memory: {fmt.nbytes:,} bytes in {len(fmt.arrays())} arrays",
            f"  bytes per SpMV: {fmt.spmv_bytes():,}"
            + (f" ({fmt.spmv_bytes() / flops:.2f} bytes per flop)" if flops else ""),
        ]
        lines += [f"  {key}: {value}" for key, value in fmt.describe().items()]
        if k is not None:
            lines += [f"  block products (k={k}): {self.block_plan(k)}",
                      f"  bytes per block product (DRAM model, k={k}): {self.block_dram_bytes(None, k):,}"]
            timed = self.block_timings(k)
            if timed:
                lines += textwrap.wrap("  block plan timed (µs): " + ", ".join(f"{label} {us:.1f}"
                                                                           for label, us in timed.items()),
                                       describe.WIDTH, subsequent_indent="    ")
        if self.auto is not None:
            lines += describe.auto_lines(self.auto, self.nnz)
        elif self._auto_reason:
            lines += textwrap.wrap(f"format='auto': {self._auto_reason}", describe.WIDTH, initial_indent="  ",
                                   subsequent_indent="    ")
        return "\n".join(lines)

    def __repr__(self) -> str:
        m, n = self.shape
        stored = f" value_dtype={self.value_dtype.name}" if self.value_dtype != self.dtype else ""
        return (f"<cocktail.SparseMatrix {m}x{n} format={self.format} nnz={self.nnz} "
                f"dtype={self.dtype.name}{stored} device={self.device} executor={self.executor}>")


def _precision_text(A) -> str:
    """``float64 values``, ``float64 products of float32 values``, ``float16 values summed in float32``."""
    arithmetic = precision.compute_dtype(A.dtype)
    text = (f"{A.dtype.name} values" if A.value_dtype == A.dtype
            else f"{A.dtype.name} products of {A.value_dtype.name} values")
    return text + (f" summed in {arithmetic.name}" if arithmetic != A.dtype else "")


class _ScatterTransposed(SparseMatrix):
    """``A.T`` or ``A.H`` of a matrix built with ``transpose="scatter"``: no transpose is stored; its products
    scatter ``A``'s own entries into the result (:mod:`cocktail.executors.transposed`)."""

    def __init__(self, parent: SparseMatrix, conjugate: bool):  # noqa: D107 - made by SparseMatrix._transposed
        from .executors import transposed

        self.storage, self.device, self._options, self._kept = parent.storage, parent.device, parent._options, {}
        self.auto, self._auto_reason = None, None
        self._parent = parent  # strong: this view stores nothing of its own, and its transpose is the parent
        self._conjugate = bool(conjugate and parent.dtype.kind == "c")
        m, n = parent.shape
        self._shape = (n, m)
        with parent._on_device():
            self._executor = transposed.create(parent.storage, parent.device, self._conjugate)
            self._bind_operand_facts()
        torch_ops.register(self)

    def _transposed(self, conjugate: bool):
        """The parent where this view's transpose undoes it (T of A.T, H of A.H), else the parent's conjugate."""
        conjugate = bool(conjugate and self.dtype.kind == "c")
        return self._parent if conjugate == self._conjugate else self._parent.conj()

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, cols): the stored matrix's, swapped."""
        return self._shape

    @property
    def format(self) -> str:
        """The stored matrix's format, marked as its (conjugate) transpose."""
        return f"{self.storage.name}{'^H' if self._conjugate else '^T'}"

    def _csr(self):
        return self.storage.to_csr().transposed(self._conjugate)

    def block_dram_bytes(self, l2_bytes: int | None, k: int) -> int:
        """``k`` scatters over the stored matrix: its bytes per SpMV, ``k`` times."""
        return _block_width(k, "block_dram_bytes") * self.storage.dram_bytes(l2_bytes)

    def explain(self, k: int | None = None) -> str:
        """What runs the products: the stored matrix's entries scattered (its own description follows)."""
        what = "conjugate transpose" if self._conjugate else "transpose"
        head = (f"the {what} of a {self.storage.name} matrix {self.shape[1]} x {self.shape[0]} "
                f"(transpose='scatter': nothing stored): products by {self.kernel} on {self.device}"
                + (", summed with atomic adds" if self.device == "cuda" else ""))
        return "\n".join(textwrap.wrap(head, describe.WIDTH, subsequent_indent="  "))


def _is_torch(a) -> bool:
    """Whether ``a`` is a torch tensor (without importing torch)."""
    return type(a).__module__.startswith("torch") and hasattr(a, "requires_grad")


def _complex_on_real(base: SparseMatrix, x, out, alpha, beta, result: np.dtype):
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


def _block_width(k, what: str) -> int:
    """``k`` as the positive int a block width is; ``ValueError`` naming ``what`` otherwise."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"{what}: k must be a positive int (the columns of X), got {k!r}")
    return int(k)


def _no_guard(x, y) -> None:
    return None


def _atomic_text(names) -> str:
    """``coo_atomic sums with floating-point atomics``: why a product is not deterministic (a vendor
    kernel's order is the library's: ``cusparse_csr sums in an order that may vary between runs``)."""
    ours = [n for n in names if n not in kernels.names() or not kernels.get(n).vendor]
    vendor = [n for n in names if n not in ours]
    said = []
    if ours:
        named = ["the GPU reference path" if n == "reference" else n for n in ours]
        said.append(f"{' and '.join(named)} sum{'s' if len(named) == 1 else ''} with floating-point atomics")
    if vendor:
        said.append(f"{' and '.join(vendor)} sum{'s' if len(vendor) == 1 else ''} in an order that may vary between "
                    "runs (cuSPARSE's algorithm 1; alg=2 is deterministic)")
    return "; ".join(said)


def _nondeterministic_error(names) -> ValueError:
    """The error of ``deterministic=True`` for a product that runs the non-deterministic ``names``."""
    alternatives = sorted({spec.name for n in names if n in kernels.names() for f in kernels.get(n).formats
                           for spec in kernels.for_format(f) if spec.deterministic})
    if alternatives:
        hint = (f"name a deterministic kernel instead ({', '.join(alternatives)}), "
                "or leave kernel= and coo_kernel= unset")
    else:
        hint = ("the GPU reference path runs complex values, formats without a kernel and executor='reference'; "
                "use device='cpu' for a deterministic product")
    return ValueError(f"deterministic=True, but {_atomic_text(names)}, so repeated products may differ in their "
                      f"last bits; {hint}")


def _guard_host(x, y) -> None:
    """``x`` and ``y`` (contiguous host arrays) must not overlap: the executor reads x while writing y."""
    if np.may_share_memory(x, y):
        raise ValueError("x and out overlap in memory; the product needs out separate from x")


def _param_text(params: dict) -> str:
    return ", ".join(f"{k}={describe.value_text(v)}" for k, v in params.items())
