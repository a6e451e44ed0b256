"""``SparseMatrix``: the user-facing sparse matrix, stored in one format on one device.

Everything a product needs is resolved at construction: the format, the executor (and on the
GPU the kernel's launches), and the facts the operand checks compare against.  A product
checks ``x`` and ``out`` once, against those facts, and hands them to the executor
(:mod:`cocktail.matrix_products`).
"""

from __future__ import annotations

import os
import sys
import textwrap
import warnings
from typing import NamedTuple

import numpy as np

from . import _memory, describe, executors, formats, kernels, precision, torch_ops, validate
from ._device_arrays import upload
from .arrays import cuda_available, is_cupy_array, to_numpy
from .errors import CPUFallbackWarning
from .formats.csr import CSR
from .matrix_derived import Derived
from .matrix_inspection import Inspection, _block_width, _nondeterministic_error
from .matrix_operands import Operands, _guard_host, _no_guard
from .matrix_products import Products
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
    yielding: bool = False


TRANSPOSES = ("store", "scatter")


class SparseMatrix(Products, Operands, Derived, Inspection, OperatorProtocol):
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
    yielding : on the GPU, ``True`` when the products share the GPU with a kernel another stream runs beside
        them: each grid-stride grid is then a block per chunk rather than one looping wave, so its blocks retire
        all along and the other kernel gets SMs as they free (:class:`cocktail.distributed.DistributedMatrix`
        builds its blocks so, for the halo exchange).  ``format="auto"`` plans, times and caches with those
        grids.  Default ``False``; nothing on the CPU.
    **params : the format's parameters, and the kernel's when ``kernel`` is named
        (``explain()`` lists them).

    On the GPU the matrix is built on the current CuPy stream, and the constructor returns once
    that work is done: its products may then run on any stream.  ``x`` and ``out`` are the
    caller's to order: a product reads them on the stream it runs on.
    """

    def __init__(self, S, format="auto", device=None, *, executor=None, kernel=None, shape=None, dtype=None,
                 index_dtype=None, tune="auto", deterministic=False, vendor=True, transpose="store", value_dtype=None,
                 yielding=False, **params):
        for name, flag in (("deterministic", deterministic), ("vendor", vendor), ("yielding", yielding)):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be True or False, got {flag!r}")
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
                                 transpose, value_dtype, yielding)
        self._kept = {}  # derived matrices built once: "T", "H", "conj", ("dtype", d)
        build = (lambda: self._build(S, shape, format, executor, kernel, dtype, index_dtype, tune,
                                     deterministic, vendor, params, value_dtype, yielding))
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
               params, value_dtype=None, yielding=False) -> None:
        """The canonical CSR of ``S`` on the matrix's device, then its storage and executor, its launches bound
        with the launch policy ``yielding``.

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

            decision = decide(csr, self.device, executor, tune, deterministic, vendor, yielding)
            if decision.report is not None:  # its product (auto.plans.PlannedProduct) holds the storage
                self._planned = self._executor = decision.executor
                self.auto = decision.report
                return
            format, self._auto_reason = decision.format, decision.reason
        if spec is not None and "short_columns" in formats.get(format).defaults and params.get("short_columns") is None \
                and "short_columns" not in spec.layouts:
            params["short_columns"] = False  # "where it fits" is where the named kernel reads them too
        storage = formats.get(format).from_csr(csr, **format_params(format, csr.dtype, params))
        bound = executors.create(executor, storage, self.device, spec, kernel_params, deterministic=deterministic,
                                 yielding=yielding)
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

    def _made(self, *args, **kwargs) -> SparseMatrix:
        """A new matrix: what :class:`~cocktail.matrix_derived.Derived` builds a derived matrix with."""
        return SparseMatrix(*args, **kwargs)

    def _scatter_transposed(self, conjugate: bool) -> SparseMatrix:
        """``A.T`` (``A.H`` with ``conjugate``) that stores nothing (``transpose="scatter"``)."""
        return _ScatterTransposed(self, conjugate)

    def __repr__(self) -> str:
        m, n = self.shape
        stored = f" value_dtype={self.value_dtype.name}" if self.value_dtype != self.dtype else ""
        return (f"<cocktail.SparseMatrix {m}x{n} format={self.format} nnz={self.nnz} "
                f"dtype={self.dtype.name}{stored} device={self.device} executor={self.executor}>")


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
