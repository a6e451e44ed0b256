"""What a :class:`~cocktail.matrix.SparseMatrix` tells of itself: ``explain()``, what its block products run and
what they cost, and the words of its errors about determinism.
"""

from __future__ import annotations

import textwrap

import numpy as np

from . import describe, kernels, precision


class Inspection:
    """The description and block-plan inspection of :class:`~cocktail.matrix.SparseMatrix` (a part of that one
    class)."""

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


def _precision_text(A) -> str:
    """``float64 values``, ``float64 products of float32 values``, ``float16 values summed in float32``."""
    arithmetic = precision.compute_dtype(A.dtype)
    text = (f"{A.dtype.name} values" if A.value_dtype == A.dtype
            else f"{A.dtype.name} products of {A.value_dtype.name} values")
    return text + (f" summed in {arithmetic.name}" if arithmetic != A.dtype else "")


def _block_width(k, what: str) -> int:
    """``k`` as the positive int a block width is; ``ValueError`` naming ``what`` otherwise."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"{what}: k must be a positive int (the columns of X), got {k!r}")
    return int(k)


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


def _param_text(params: dict) -> str:
    return ", ".join(f"{k}={describe.value_text(v)}" for k, v in params.items())
