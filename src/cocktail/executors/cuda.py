"""The ``cuda`` executor: the matrix's kernel bound once into launches; a product only fills four slots."""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import kernels
from ..kernels import device
from ..kernels.block_operands import BlockOperands
from ..kernels.cusparse import CusparseError
from ..kernels.spec import precision_words
from ..precision import is_half
from ..tuning.kernel_rules import choose_kernel
from ..tuning.launch_rules import RULES, configure, user_view
from .base import Executor, block_key


class CudaExecutor(Executor):
    """The launches of one kernel bound to one stored matrix on the current device; ``yielding``: the launch policy
    (:func:`~cocktail.kernels.device.for_launches`), kept in its props for the block products it binds later."""

    name = "cuda"

    def __init__(self, storage, spec, params: dict, accumulate: bool = False, yielding: bool = False):
        import cupy

        props = device.for_launches(cupy.cuda.Device().id, yielding)
        self.kernel = spec.name
        self.spec = spec
        full = configure(spec, storage, params, props)
        self.config = user_view(full)
        self.launches = tuple(spec.bind(storage, full, props, accumulate)) if storage.shape[0] else ()
        self.nondeterministic = kernels.nondeterministic(spec, full)
        self._current_stream = cupy.cuda.get_current_stream
        # Block products: the rule's block kernel extending this one (None: blocks loop over their columns),
        # every block kernel extending it (a vendor's too), the choice each bucket of k and layout runs (a
        # BlockChoice: the rule's, or the one a planned matrix set), and the launches per BlockOperands (k and
        # the steps of X and Y), bound on first use of each.
        self._storage, self._props, self._accumulate = storage, props, accumulate
        block_spec = kernels.block_for(storage.name, spec)
        self.block_spec = block_spec if block_spec is not None and block_spec.takes(storage) else None
        self.block_specs = tuple(s for s in kernels.blocks_for(storage.name, spec) if s.takes(storage))
        self._block_plans = {}
        self.block_times = {}  # block_key -> {choice label: µs}, what a planned matrix's block planner measured
        self._block_launches = {}
        self._block_prepared = None  # the rule's block kernel's prepare(), made by prepare_blocks()

    @property
    def storage(self):
        """The stored matrix this executor's launches are bound to."""
        return self._storage

    def run(self, x, y, alpha, beta) -> None:
        """Fill the per-product slots of every launch and issue them on the current stream."""
        stream = self._current_stream().ptr
        xp, yp = x.data.ptr, y.data.ptr
        for launch in self.launches:
            launch(xp, yp, alpha, beta, stream)

    def _blocks_run(self, k: int) -> bool:
        """Whether the rule runs the block kernel for ``k`` columns (the rule ``spmm_min_columns``, read now)."""
        return self.block_spec is not None and k >= RULES.spmm_min_columns(self.spec)

    def rule_choice(self, k: int) -> BlockChoice:
        """What a block of ``k`` columns runs unless planned: the rule's block kernel, or one product per column."""
        return BlockChoice(self.block_spec) if self._blocks_run(k) else BlockChoice(None)

    def block_choices(self, operands: BlockOperands, deterministic: bool = False) -> list[BlockChoice]:
        """Everything a block product of ``operands`` can run: one product per column, then each block kernel
        extending this kernel with each of its settings (only deterministic ones with ``deterministic``)."""
        found = [BlockChoice(None)]
        for spec in self.block_specs:
            found += [BlockChoice(spec, tuple(sorted(s.items())))
                      for s in spec.settings_for(self._storage, operands, deterministic)]
        return found

    def block_choice(self, operands: BlockOperands) -> BlockChoice:
        """The choice the bucket of k and the layout of ``operands`` runs: the one set for it
        (:meth:`set_block_choice`), else the rule's, kept from its first use."""
        key = block_key(operands)
        found = self._block_plans.get(key)
        if found is None:
            found = self._block_plans[key] = self.rule_choice(operands.k)
        return found

    def set_block_choice(self, operands: BlockOperands, choice: BlockChoice) -> None:
        """Run ``choice`` for block products of the bucket of k and the layout of ``operands`` from now on (launches
        bound for another choice of that bucket are dropped)."""
        key = block_key(operands)
        if self._block_plans.get(key) != choice:
            self._block_plans[key] = choice
            self._block_launches = {ops: launches for ops, launches in self._block_launches.items()
                                    if block_key(ops) != key}

    def bind_blocks(self, operands: BlockOperands) -> None:
        """Bind the launches of ``operands``' choice now, then the whole matrix's where it runs their bucket: a
        CUDA graph capture can then use them."""
        if operands not in self._block_launches and self._storage.shape[0]:
            launches, keep = self._bind_planned(operands)
            if keep:
                self._block_launches[operands] = launches
        super().bind_blocks(operands)

    def own_reads_once(self, k: int) -> tuple[bool, ...]:
        """Whether a block of ``k`` row-major columns reads the matrix once (a block kernel) rather than once a
        column."""
        return (self.block_choice(BlockOperands.row_major(k)).spec is not None,) if k > 1 else (True,)

    def own_block_kernels(self, k: int, row_major: bool = True) -> tuple[str, ...]:
        """What an aligned block of ``k`` columns runs (row-major, or column-major X and Y): a block kernel with
        its shape or settings, or the SpMV kernel per column."""
        if k == 1:
            return (self.kernel,)
        operands = BlockOperands.of_width(k, self._storage.shape, row_major)
        choice = self.block_choice(operands)
        if choice.spec is None:
            return super().own_block_kernels(k)
        config = self.block_config(operands, choice)
        shape = ", ".join(f"{p}={config[p]}" for p in ("lanes", "columns_per_lane", "vector", "items_per_share",
                                                       "alg") if config.get(p) is not None)
        return (f"{choice.spec.name} ({shape})",)

    def prepare_blocks(self) -> None:
        """Make what the rule's block kernel's launches need for any block (its ``prepare``: a merge kernel's
        shares and carry buffer) now, once; a first block product makes it otherwise, which cannot happen
        inside a CUDA graph capture."""
        spec = self.block_spec
        if self._block_prepared is None and spec is not None and spec.prepare is not None and self._storage.shape[0]:
            self._block_prepared = spec.prepare(self._storage, self._props, RULES)

    def block_config(self, operands: BlockOperands, choice: BlockChoice | None = None) -> dict:
        """The configuration of ``choice`` (default: the rule's block kernel) for ``operands``: its settings, the
        read path and block size the matrix's kernel was given, the rest from the rules."""
        spec = self.block_spec if choice is None else choice.spec
        given = {p: self.config[p] for p in ("ldg", "block_threads") if p in self.config and p in spec.defaults}
        if spec is self.block_spec and self._block_prepared is not None:
            given["prepared"] = self._block_prepared
        params = {} if choice is None else dict(choice.settings)
        return configure(spec, self._storage, {"operands": operands, **given, **params}, self._props)

    def bind_choice(self, choice: BlockChoice, operands: BlockOperands):
        """The launches of ``choice`` for ``operands`` (None: one product per column), after
        :meth:`prepare_blocks` where it is the rule's kernel."""
        spec = choice.spec
        if spec is None:
            return None
        if spec.prepare is not None:
            if spec is not self.block_spec:
                raise ValueError(f"{spec.name}: only the rule's block kernel may need a prepare")
            if self._block_prepared is None and self._current_stream().is_capturing():
                raise RuntimeError(f"the first block product of a matrix on {self.kernel} ran inside a CUDA graph "
                                   f"capture: {spec.name} first prepares what its launches need with device work; "
                                   "call A.prepare_block_products() (or run one block product) before capturing")
            self.prepare_blocks()
        storage = self._storage
        full = self.block_config(operands, choice)
        return tuple(spec.bind(storage, full, self._props, self._accumulate)) if storage.shape[0] else ()

    def run_block(self, X, Y, alpha, beta) -> None:
        """``Y = alpha*A@X + beta*Y`` for ``X`` (n, k): the plan of k's bucket and the layout (:meth:`block_choice`):
        a block kernel, each stored entry read once per tile of columns, reading ``X`` and writing ``Y`` where
        they lie (any memory order, a window of a wider array), or one product per column."""
        if X.shape[1] == 1:  # the tuned SpMV kernel
            return super().run_block(X, Y, alpha, beta)
        operands = BlockOperands.of(X, Y)
        whole = self.whole_for(operands) if operands is not None else None
        if whole is not None:
            return whole.run_block(X, Y, alpha, beta)
        if not self.block_specs:  # no block kernel: one product per column
            return super().run_block(X, Y, alpha, beta)
        if operands is None:  # negative or partial-element steps: through C-ordered copies
            import cupy

            work = cupy.ascontiguousarray(Y) if beta != 0 else cupy.empty(Y.shape, dtype=Y.dtype)
            self.run_block(cupy.ascontiguousarray(X), work, alpha, beta)
            Y[...] = work
            return
        launches = self._block_launches.get(operands, _UNBOUND)
        if launches is _UNBOUND:
            launches, keep = self._bind_planned(operands)
            if keep:
                self._block_launches[operands] = launches
        if launches is None:
            return super().run_block(X, Y, alpha, beta)
        stream = self._current_stream().ptr
        xp, yp = X.data.ptr, Y.data.ptr
        for launch in launches:
            launch(xp, yp, alpha, beta, stream)

    def captures_block(self, X, Y) -> bool:
        """Whether a block product of ``X`` and ``Y`` can be captured: a block kernel's launches, or a column loop
        in place (:meth:`Executor.captures_block`)."""
        if X.shape[1] == 1:
            return super().captures_block(X, Y)
        operands = BlockOperands.of(X, Y)
        whole = self.whole_for(operands) if operands is not None else None
        if whole is not None:
            return whole.captures_block(X, Y)
        if not self.block_specs:
            return super().captures_block(X, Y)
        if operands is None:
            return False
        launches = self._block_launches.get(operands, _UNBOUND)  # what is bound for them, where it is
        if launches is not _UNBOUND:
            return launches is not None or super().captures_block(X, Y)
        return self.block_choice(operands).spec is not None or super().captures_block(X, Y)

    def _bind_planned(self, operands: BlockOperands) -> tuple:
        """``(launches, keep)``: :meth:`bind_choice` of the plan of ``operands`` (``keep``: cache them for these
        operands).  A vendor plan falls back to the rule's choice for these operands alone where cuSPARSE cannot
        take them (the bucket was planned on other operands: unaligned, or a window it refuses), and, uncached,
        inside a CUDA graph capture, where building its launch (workspace, preprocessing) cannot be captured."""
        choice = self.block_choice(operands)
        if choice.vendor:
            if self._current_stream().is_capturing():
                return self.bind_choice(self.rule_choice(operands.k), operands), False
            if choice not in self.block_choices(operands):
                return self.bind_choice(self.rule_choice(operands.k), operands), True
            try:
                return self.bind_choice(choice, operands), True
            except CusparseError:
                return self.bind_choice(self.rule_choice(operands.k), operands), True
        return self.bind_choice(choice, operands), True


_UNBOUND = object()


@dataclass(frozen=True)
class BlockChoice:
    """What a block product runs: a block kernel ``spec`` with ``settings`` (sorted ``(name, value)`` pairs;
    empty: the rule's), or one product per column (``spec`` None).  Equal, and hashed, by the kernel's name
    and the settings (a spec holds dicts)."""

    spec: object = field(default=None, compare=False)
    settings: tuple = ()
    name: str | None = field(default=None, init=False)

    def __post_init__(self):
        object.__setattr__(self, "name", None if self.spec is None else self.spec.name)

    @property
    def vendor(self) -> bool:
        """Whether a vendor library computes it (a block kernel of cuSPARSE's)."""
        return self.spec is not None and self.spec.vendor

    def label(self, kernel: str) -> str:
        """``csr_spmm_merge``, ``cusparse_spmm(alg=2)``, or ``<kernel> per column`` for the SpMV ``kernel``."""
        if self.spec is None:
            return f"{kernel} per column"
        return self.spec.name + (f"({', '.join(f'{k}={v}' for k, v in self.settings)})" if self.settings else "")


def create(storage, spec, params: dict, required: bool, accumulate: bool = False, deterministic: bool = False,
           yielding: bool = False):
    """The cuda executor with ``spec`` (None: the kernel ``cocktail.tuning`` picks), or the device reference.

    Without a kernel for the format or dtype, the device reference path runs, unless
    ``required`` (``executor="cuda"`` was asked for), which is a ``ValueError``.
    ``deterministic``: the picked kernel is one declared deterministic, where the format has one.
    ``yielding``: its launches, and the block products it binds later, share the GPU with another stream's
    kernel (:func:`cocktail.kernels.device.for_launches`).
    """
    if spec is None:
        name = choose_kernel(storage, deterministic)
        if name is None:
            from .reference import DeviceReference, no_device_path

            if required or params:
                if storage.value_dtype != storage.dtype or is_half(storage.dtype):
                    raise ValueError(no_device_path(storage))  # the device reference path does not take it either
                raise ValueError(f"no GPU kernel multiplies {storage.name} matrices of {precision_words(storage)}; "
                                 "leave executor=None to run the device reference path")

            return DeviceReference(storage)
        spec = kernels.get(name)
    return CudaExecutor(storage, spec, params, accumulate, yielding)
