"""What the benchmark times: a *method* turns a matrix into ready-to-run products.

A method's ``prepare`` does everything a user would do once (conversion, descriptors,
workspaces) and returns a :class:`Prepared` whose ``calls`` each compute one product on one of
the rotated input vectors; only the calls are timed.  Our GPU methods are the kernels
(labelled by kernel name), the reference executor of formats without a kernel
(``reference:<format>``) and ``cocktail-auto``.  On the CPU they are each format's default CPU
executor (labelled by the format), its reference executor (``reference:<format>``) and
``cocktail-auto``.  The baselines live in :mod:`.baselines`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import scipy.sparse as sp

from ...precision import compute_dtype, dtype_named, is_half

#: Input vectors each method rotates through, so consecutive products read different ``x``.
X_BUFFERS = 4
#: Input blocks (``k > 1``) each method rotates through: fewer, each being ``k`` vectors.
X_BLOCK_BUFFERS = 2


class Unavailable(Exception):
    """A method cannot run here (a library is missing, the format refused the matrix, ...)."""


@dataclass
class Inputs:
    """One benchmark problem: the matrix in one dtype, the rotated inputs, and the float64 answer.

    ``dtype`` is the product's (``x``, ``y`` and the stored values).  ``S`` holds the values: in ``dtype``, or for a
    half dtype (SciPy has none) in float32, rounded to the half dtype first, so that every method multiplies the
    same values and ``want`` is their exact product; :meth:`values` gives them in ``dtype``.

    ``k == 1``: vectors ``x`` (n,) and ``y`` (m,); ``k > 1``: row-major blocks ``X`` (n, k) and ``Y``
    (m, k), and on demand their column-major copies (:meth:`column_major`).
    """

    S: sp.csr_array
    x_host: list
    want: np.ndarray  # float64 product of S with x_host[0]
    x_dev: list = field(default_factory=list)
    y_dev: object = None
    k: int = 1
    _columns: tuple | None = None
    dtype: object = None
    value_dtype: object = None  # our methods store their values in this narrower dtype (None: in ``dtype``)

    def values(self):
        """``S``'s values in the product dtype (a half one's, converted from the float32 ``S`` holds)."""
        return self.S.data.astype(self.dtype, copy=False)

    @classmethod
    def create(cls, S, dtype, on_gpu: bool, buffers: int | None = None, seed: int = 0, k: int = 1,
               value_dtype=None) -> Inputs:
        """The problem ``S`` in ``dtype``; the inputs are standard normal with a fixed seed (``k > 1``: blocks);
        ``value_dtype``: our methods store the values narrower (``want`` is the product of the values as given, so
        their error shows that rounding too)."""
        dtype = dtype_named(dtype)
        S = sp.csr_array(S).astype(compute_dtype(dtype))
        if is_half(dtype):
            S.data = S.data.astype(dtype).astype(S.dtype)
        elif dtype.kind == "c":  # complex values: each entry turned by its own phase
            S.data = (S.data * np.exp(1j * np.linspace(0.0, 6.0, S.nnz))).astype(dtype)
        rng = np.random.default_rng(seed)
        shape = (S.shape[1],) if k == 1 else (S.shape[1], k)
        buffers = buffers or (X_BUFFERS if k == 1 else X_BLOCK_BUFFERS)
        parts = 2 if dtype.kind == "c" else 1
        x_host = [(rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if parts == 2 else 0)).astype(dtype)
                  for _ in range(buffers)]
        wide = np.complex128 if dtype.kind == "c" else np.float64
        want = S.astype(wide) @ x_host[0].astype(wide)
        inputs = cls(S, x_host, want, k=k, dtype=dtype, value_dtype=value_dtype)
        if on_gpu:
            import cupy

            inputs.x_dev = [cupy.asarray(x) for x in x_host]
            inputs.y_dev = cupy.zeros(S.shape[0] if k == 1 else (S.shape[0], k), dtype=dtype)
        return inputs

    def poison_outputs(self) -> None:
        """Fill every device output (``y``, and its column-major copy once made) with NaN."""
        self.y_dev.fill(np.nan)
        if self._columns is not None:
            self._columns[1].fill(np.nan)

    def column_major(self) -> tuple[list, object]:
        """Column-major device copies of the input blocks and of ``Y`` (made once)."""
        if self._columns is None:
            import cupy

            self._columns = ([cupy.asfortranarray(x) for x in self.x_dev], cupy.asfortranarray(self.y_dev))
        return self._columns

    def rel_err(self, got) -> float:
        """:func:`relative_error` of ``got`` against this problem's answer."""
        return relative_error(got, self.want)


def relative_error(got, want) -> float:
    """``||got - want|| / ||want||`` in float64 (complex128 for a complex answer; the absolute norm when the answer is
    zero); ``got`` on either device."""
    got = np.asarray(got.get() if hasattr(got, "get") else got,
                     dtype=np.complex128 if np.iscomplexobj(want) else np.float64)
    norm = float(np.linalg.norm(want))
    diff = float(np.linalg.norm(got - want))
    return diff / norm if norm else diff


@dataclass
class Prepared:
    """A method made ready on one problem: the timed calls and what the record needs."""

    label: str  # the record's ``method``
    calls: list
    result: Callable  # runs one product on x_host[0]'s buffer and returns its output
    params: dict
    spmv_bytes: int
    padding_ratio: float = 1.0
    on_gpu: bool = True
    close: Callable = lambda: None
    planning_s: dict | None = None  # format="auto": seconds of analysis (features), conversion, measuring
    dram_bytes: Callable | None = None  # the storage's dram_bytes(l2_bytes): the DRAM traffic model
    rel_err: Callable | None = None  # a method with inputs of its own (the transpose's): its relative error


def csr_model(S, index_dtype=np.int32, dtype=None):
    """A :class:`~cocktail.formats.csr.CSR` over SciPy's ``S`` for the byte models (baselines store CSR), its
    values counted in ``dtype`` (default ``S``'s).

    Nothing is copied: the models read the arrays' sizes, counting indices at ``index_dtype``.
    """
    from ...formats.csr import CSR

    dtype = S.dtype if dtype is None else np.dtype(dtype)
    return CSR(S.shape, dtype, index_dtype, S.nnz, {}, data=_sized(S.data, dtype),
               indices=_sized(S.indices, index_dtype), indptr=_sized(S.indptr, index_dtype))


def coo_model(S, index_dtype=np.int32, dtype=None):
    """A :class:`~cocktail.formats.coo.COO` of ``S``'s sizes for the byte models (cuSPARSE's COO algorithms), its
    values counted in ``dtype`` (default ``S``'s)."""
    from ...formats.coo import COO

    dtype = S.dtype if dtype is None else np.dtype(dtype)
    rows = np.empty(S.nnz, dtype=index_dtype)  # the models read sizes only
    return COO(S.shape, dtype, index_dtype, S.nnz, COO.resolve_params({}), row=rows,
               col=_sized(S.indices, index_dtype), data=_sized(S.data, dtype))


def _sized(arr, dtype):
    """``arr`` itself when it has ``dtype``, else an uninitialised array of its size in ``dtype``."""
    return arr if arr.dtype == dtype else np.empty(arr.shape, dtype=dtype)


def _json_value(value):
    """``value`` itself when JSON writes it as is, else its name (functions, dtypes) or string."""
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    return getattr(value, "__name__", None) or str(value)  # a function's repr holds its address


@dataclass(frozen=True)
class KernelMethod:
    """One of our formats with one kernel (``kernel=None``: the format's default kernel)."""

    format: str
    kernel: str | None = None
    needs_gpu = True

    @property
    def name(self) -> str:
        """The record's label: the kernel (:func:`kernel_label`), the format (its default kernel depends on the
        matrix), or ``reference:<format>`` for a format without a kernel."""
        from ... import kernels

        if self.kernel:
            return kernel_label(self.kernel, self.format)
        return self.format if kernels.for_format(self.format) else f"reference:{self.format}"

    def prepare(self, inputs: Inputs) -> Prepared:
        """Build the format on the device; construction binds the kernel's launches."""
        from ... import kernels

        A = _build(inputs, self.format, "cuda", self.kernel)
        ran_kernel = A.kernel in kernels.names()
        return _prepared(A, inputs, kernel_label(A.kernel, A.format) if ran_kernel else f"reference:{A.format}")


def kernel_label(kernel: str, format: str) -> str:
    """A record's label for ``kernel`` on ``format``: the kernel's name, and ``@<format>`` where the format is not
    the kernel's first (``csr_stream@csr_pattern``: the planner's name for such a part), so that one kernel's
    records on two formats stay apart."""
    from ... import kernels

    return kernel if kernels.get(kernel).formats[0] == format else f"{kernel}@{format}"


#: The name of ``format="auto"`` as the reports compare it with the baselines.
AUTO = "cocktail-auto"
#: ``cocktail-auto``'s record times the plan it runs after this many of the user's products (``tune="auto"``
#: tunes on them): the issue's "after 200 products".
TUNED_AFTER = 200


@dataclass(frozen=True)
class AutoMethod:
    """``SparseMatrix(S, format="auto", device=..., tune=...)``: the format (or Cocktail) Cocktail picks by itself.

    ``cocktail-auto`` is the default (``tune="auto"``): the device profile's plan, tuned on the user's own
    products; its record times the plan it runs after :data:`TUNED_AFTER` products (the user's first, which
    the matrix times and may move on).  ``cocktail-auto-own`` the same with our own kernels only
    (``vendor=False``: no cuSPARSE kernel as a candidate); ``cocktail-measured`` times the best candidates on
    the matrix at construction (``tune="measure"``, GPU only; the benchmark turns the decision cache off so
    every record pays its own measurement).
    """

    name: str = AUTO
    device: str = "cuda"
    tune: str = "auto"
    vendor: bool = True

    @property
    def needs_gpu(self) -> bool:
        """True for the GPU build (``device="cuda"``)."""
        return self.device == "cuda"

    def prepare(self, inputs: Inputs) -> Prepared:
        """Let the planner choose; construction binds its kernels (GPU) or the default CPU executor."""
        A = _build(inputs, "auto", self.device, tune=self.tune, vendor=self.vendor)
        if not self.needs_gpu:
            return _host_prepared(A, inputs, self.name)
        if A.auto is not None and A.auto.tuning is not None:  # the user's first products, which it tunes on
            y = inputs.y_dev
            for i in range(TUNED_AFTER):
                A.matvec(inputs.x_dev[i % len(inputs.x_dev)], out=y)
            y[:1].get()
        prep = _prepared(A, inputs, self.name)
        if A.auto is not None:
            report = A.auto
            prep.params.update(plan=report.plan.label(A.nnz), plan_detail=report.plan.detail(),
                               predicted_us=report.plan.predicted_us, tune=report.tune, cached=report.cached,
                               vendor=report.plan.delegates, timed_us=dict(report.measured))
            prep.planning_s = {"analysis": report.analysis_s, "features": report.features_s,
                               "convert": report.convert_s, "measure": report.measure_s}
        return prep

    def cache_hit_s(self, inputs: Inputs) -> float | None:
        """Seconds ``format="auto"`` spends deciding when the decision cache holds the matrix's structure
        (fingerprint and lookup; the conversion is reported apart): a construction in an empty cache of
        its own, then a second that reuses its decision.  ``tune="auto"`` or ``"model"`` on the GPU only; None
        otherwise, or when the second did not hit."""
        if not (self.needs_gpu and self.tune in ("auto", "model")):
            return None
        import tempfile
        from pathlib import Path

        import cupy

        from ...errors import DeviceMemoryError
        from ...auto import decisions

        with tempfile.TemporaryDirectory() as where, decisions.using(Path(where) / decisions.FILE_NAME):
            try:
                first = _build(inputs, "auto", "cuda", vendor=self.vendor)
                del first
                cupy.cuda.Device().synchronize()  # the first's conversion is not the second's lookup
                again = _build(inputs, "auto", "cuda", vendor=self.vendor).auto
            except (DeviceMemoryError, Unavailable):
                return None
        return again.analysis_s if again is not None and again.cached else None


#: The CPU's cocktail-auto: the method the CPU headline times call for call with SciPy.
CPU_AUTO = AutoMethod(device="cpu")
MEASURED = AutoMethod("cocktail-measured", "cuda", "measure")
OWN = AutoMethod("cocktail-auto-own", "cuda", "auto", vendor=False)


@dataclass(frozen=True)
class TransposedMethod:
    """``cocktail-auto-T``: ``A.T @ u`` of a ``format="auto"`` matrix, the transpose built by ``A.T`` on first use
    (planned as a matrix of its own).  Its inputs are its own: ``u`` of the matrix's row count, drawn like
    the problem's ``x``; its error is against SciPy's ``S.T @ u`` in float64.  GPU, SpMV only."""

    name: str = "cocktail-auto-T"
    needs_gpu = True

    def prepare(self, inputs: Inputs) -> Prepared:
        """Build ``A`` (planned), then ``A.T``; the calls multiply ``A.T`` with rotated vectors into one ``v``."""
        import cupy

        T = _build(inputs, "auto", "cuda").T
        rng = np.random.default_rng(1)
        m, n = inputs.S.shape
        u_host = [(rng.standard_normal(m) + (1j * rng.standard_normal(m) if inputs.dtype.kind == "c" else 0))
                  .astype(inputs.dtype) for _ in range(X_BUFFERS)]
        u_dev = [cupy.asarray(u) for u in u_host]
        v = cupy.zeros(n, dtype=inputs.dtype)
        wide = np.complex128 if inputs.dtype.kind == "c" else np.float64
        want = inputs.S.T.astype(wide) @ u_host[0].astype(wide)
        prep = Prepared(self.name, [(lambda u=u: T.matvec(u, out=v)) for u in u_dev],
                        lambda: T.matvec(u_dev[0], out=v), matrix_params(T), T.storage.spmv_bytes(),
                        T.storage.padding_ratio, dram_bytes=T.storage.dram_bytes)

        def error() -> float:
            v.fill(np.nan)  # a product that writes nothing must not pass on an earlier answer
            return relative_error(prep.result(), want)  # u_dev[0]'s product

        prep.rel_err = error
        if T.auto is not None:
            prep.params.update(plan=T.auto.plan.label(T.nnz), vendor=T.auto.plan.delegates)
        return prep


TRANSPOSED = TransposedMethod()


def _build(inputs: Inputs, format: str, device: str, kernel: str | None = None, executor: str | None = None,
           tune: str = "auto", vendor: bool = True):
    """``SparseMatrix`` of the problem; a format that refuses the matrix makes the method unavailable.

    ``executor=None`` leaves the keyword out: the device's default executor runs.
    """
    from ... import SparseMatrix
    from ...errors import FormatFillError, FormatValuesError

    chosen = {} if executor is None else {"executor": executor}
    if tune != "auto":
        chosen["tune"] = tune
    if not vendor:
        chosen["vendor"] = False
    try:
        return SparseMatrix(inputs.S, format=format, device=device, kernel=kernel, dtype=inputs.dtype,
                            value_dtype=inputs.value_dtype, **chosen)
    except FormatFillError as exc:
        raise Unavailable(f"refused: fill {exc.fill:.1f} > max_fill {exc.max_fill:g}") from None
    except FormatValuesError as exc:
        raise Unavailable(f"refused: {exc.distinct} distinct values > {exc.limit}") from None


def matrix_params(A) -> dict:
    """A GPU ``SparseMatrix``'s format, kernel and their parameters, as a record's ``params``."""
    return {"format": A.format, "kernel": A.kernel, **{k: _json_value(v) for k, v in A.params.items()},
            **{k: _json_value(v) for k, v in A.kernel_params.items()}, **_stored(A)}


def _stored(A) -> dict:
    """``{"value_dtype": name}`` for a matrix whose values are stored narrower than its dtype, else nothing."""
    return {"value_dtype": A.value_dtype.name} if A.value_dtype != A.dtype else {}


def _prepared(A, inputs: Inputs, label: str) -> Prepared:
    y = inputs.y_dev
    calls = [(lambda x=x: A.matvec(x, out=y)) for x in inputs.x_dev]
    return Prepared(label, calls, lambda: A.matvec(inputs.x_dev[0], out=y), matrix_params(A),
                    A.storage.spmv_bytes(), A.storage.padding_ratio, dram_bytes=A.storage.dram_bytes)


def _host_prepared(A, inputs: Inputs, label: str) -> Prepared:
    """Products of a CPU ``SparseMatrix`` as a user writes them (each allocates its result, as SciPy's do)."""
    calls = [(lambda x=x: A.matvec(x)) for x in inputs.x_host]
    params = {"format": A.format, "executor": A.executor, **{k: _json_value(v) for k, v in A.params.items()},
              **_stored(A)}
    return Prepared(label, calls, lambda: A.matvec(inputs.x_host[0]), params, A.storage.spmv_bytes(),
                    A.storage.padding_ratio, on_gpu=False, dram_bytes=A.storage.dram_bytes)


def ours(format_names, all_kernels: bool) -> list:
    """Our GPU methods: each format's default kernel, or with ``all_kernels`` every kernel of it that is our
    own (cuSPARSE's are timed as the baselines)."""
    from ... import kernels

    methods = []
    for fname in format_names:
        specs = [s for s in kernels.for_format(fname) if not s.vendor] if all_kernels else []
        methods += [KernelMethod(fname, s.name) for s in specs] or [KernelMethod(fname)]
    return methods


@dataclass(frozen=True)
class HostMethod:
    """One format on the CPU with its default executor (SciPy's compiled routine where it has the layout)."""

    format: str
    needs_gpu = False

    @property
    def name(self) -> str:
        """The format's name."""
        return self.format

    def prepare(self, inputs: Inputs) -> Prepared:
        """Build the format on the host; ``params["executor"]`` says which executor runs."""
        return _host_prepared(_build(inputs, self.format, "cpu"), inputs, self.name)


@dataclass(frozen=True)
class ReferenceMethod:
    """The NumPy reference executor of one format, on the CPU (``executor="reference"``)."""

    format: str
    needs_gpu = False

    @property
    def name(self) -> str:
        """``reference:<format>``."""
        return f"reference:{self.format}"

    def prepare(self, inputs: Inputs) -> Prepared:
        """Build the format on the host for the reference executor."""
        return _host_prepared(_build(inputs, self.format, "cpu", executor="reference"), inputs, self.name)
