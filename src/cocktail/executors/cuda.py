"""The ``cuda`` executor: the matrix's kernel bound once into launches; a product only fills four slots."""

from __future__ import annotations

from .. import kernels
from ..kernels import device
from ..kernels.block_operands import BlockOperands
from ..tuning.kernel_rules import choose_kernel
from ..tuning.launch_rules import RULES, configure, user_view
from .base import Executor


class CudaExecutor(Executor):
    """The launches of one kernel bound to one stored matrix on the current device."""

    name = "cuda"

    def __init__(self, storage, spec, params: dict, accumulate: bool = False):
        import cupy

        if storage.dtype.kind == "c":
            raise TypeError(f"kernel {spec.name!r} has no {storage.dtype.name} instantiation; GPU kernels take "
                            "float32 and float64 (complex runs on the reference executor)")
        props = device.props(cupy.cuda.Device().id)
        self.kernel = spec.name
        self.spec = spec
        full = configure(spec, storage, params, props)
        self.config = user_view(full)
        self.launches = tuple(spec.bind(storage, full, props, accumulate)) if storage.shape[0] else ()
        self.nondeterministic = kernels.nondeterministic(spec, full)
        self._current_stream = cupy.cuda.get_current_stream
        # The block kernel extending this one (None: blocks loop over their columns) and its launches
        # per BlockOperands (k and the steps of X and Y), bound on first use of each (a compilation on the
        # first, as for any kernel).
        self._storage, self._props, self._accumulate = storage, props, accumulate
        self.block_spec = kernels.block_for(storage.name, spec)
        self._block_launches = {}
        self._block_prepared = None  # the block kernel's prepare(), made by prepare_blocks()

    def run(self, x, y, alpha, beta) -> None:
        """Fill the per-product slots of every launch and issue them on the current stream."""
        stream = self._current_stream().ptr
        xp, yp = x.data.ptr, y.data.ptr
        for launch in self.launches:
            launch(xp, yp, alpha, beta, stream)

    def _blocks_run(self, k: int) -> bool:
        """Whether a block of ``k`` columns runs the block kernel (the rule ``spmm_min_columns``, read now)."""
        return self.block_spec is not None and k >= RULES.spmm_min_columns(self.spec)

    def reads_once(self, k: int) -> tuple[bool, ...]:
        """Whether a block of ``k`` columns reads the matrix once (a block kernel) rather than once a column."""
        return (self._blocks_run(k),)

    def block_kernels(self, k: int, row_major: bool = True) -> tuple[str, ...]:
        """The block kernel with its shape for an aligned block of ``k`` columns (row-major, or column-major
        X and Y), or the SpMV kernel per column."""
        if not self._blocks_run(k):
            return super().block_kernels(k) if k > 1 else (self.kernel,)
        m, n = self._storage.shape
        operands = BlockOperands.row_major(k) if row_major else BlockOperands(k, (1, max(n, 1)), (1, max(m, 1)))
        config = self.block_config(operands)
        shape = ", ".join(f"{p}={config[p]}" for p in ("lanes", "columns_per_lane", "vector", "items_per_share")
                          if p in config)
        return (f"{self.block_spec.name} ({shape})",)

    def prepare_blocks(self) -> None:
        """Make what the block kernel's launches need for any block (its ``prepare``: a merge kernel's shares
        and carry buffer) now, once; a first block product makes it otherwise, which cannot happen inside
        a CUDA graph capture."""
        spec = self.block_spec
        if self._block_prepared is None and spec is not None and spec.prepare is not None and self._storage.shape[0]:
            self._block_prepared = spec.prepare(self._storage, self._props, RULES)

    def block_config(self, operands: BlockOperands) -> dict:
        """The block kernel's resolved configuration for ``operands``: the read path and block size the
        matrix's kernel was given, the rest from the rules."""
        spec = self.block_spec
        given = {p: self.config[p] for p in ("ldg", "block_threads") if p in self.config and p in spec.defaults}
        if self._block_prepared is not None:
            given["prepared"] = self._block_prepared
        return configure(spec, self._storage, {"operands": operands, **given}, self._props)

    def run_block(self, X, Y, alpha, beta) -> None:
        """``Y = alpha*A@X + beta*Y`` for ``X`` (n, k): the format's block kernel, each stored entry read once
        per tile of columns, reading ``X`` and writing ``Y`` where they lie (any memory order, a window of a
        wider array); without a block kernel, one product per column."""
        if not self._blocks_run(X.shape[1]):  # k == 1: the tuned SpMV kernel
            return super().run_block(X, Y, alpha, beta)
        operands = BlockOperands.of(X, Y)
        if operands is None:  # negative or partial-element steps: through C-ordered copies
            import cupy

            work = cupy.ascontiguousarray(Y) if beta != 0 else cupy.empty(Y.shape, dtype=Y.dtype)
            self.run_block(cupy.ascontiguousarray(X), work, alpha, beta)
            Y[...] = work
            return
        launches = self._block_launches.get(operands)
        if launches is None:
            launches = self._block_launches[operands] = self._bind_block(operands)
        stream = self._current_stream().ptr
        xp, yp = X.data.ptr, Y.data.ptr
        for launch in launches:
            launch(xp, yp, alpha, beta, stream)

    def _bind_block(self, operands: BlockOperands) -> tuple:
        """The block kernel's launches for ``operands`` (:meth:`block_config`), after :meth:`prepare_blocks`."""
        spec = self.block_spec
        if self._block_prepared is None and spec.prepare is not None and self._current_stream().is_capturing():
            raise RuntimeError(f"the first block product of a matrix on {self.kernel} ran inside a CUDA graph "
                               f"capture: {spec.name} first prepares what its launches need with device work; call "
                               "A.prepare_block_products() (or run one block product) before capturing")
        self.prepare_blocks()
        storage = self._storage
        full = self.block_config(operands)
        return tuple(self.block_spec.bind(storage, full, self._props, self._accumulate)) if storage.shape[0] else ()


def create(storage, spec, params: dict, required: bool, accumulate: bool = False, deterministic: bool = False):
    """The cuda executor with ``spec`` (None: the kernel ``cocktail.tuning`` picks), or the device reference.

    Without a kernel for the format or dtype, the device reference path runs, unless
    ``required`` (``executor="cuda"`` was asked for), which is a ``ValueError``.
    ``deterministic``: the picked kernel is one declared deterministic, where the format has one.
    """
    if spec is None:
        name = choose_kernel(storage, deterministic)
        if name is None:
            if required or params:
                raise ValueError(f"no GPU kernel multiplies {storage.name} matrices of {storage.dtype.name}; "
                                 "leave executor=None to run the device reference path")
            from .reference import DeviceReference

            return DeviceReference(storage)
        spec = kernels.get(name)
    return CudaExecutor(storage, spec, params, accumulate)
