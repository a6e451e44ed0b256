"""The products of :class:`~cocktail.matrix.SparseMatrix`: ``matvec``, ``matmat``, ``A @ x`` and the bound products
(``bind``).

A product checks ``x`` and ``out`` once, against the facts the matrix computed at construction
(:mod:`cocktail.matrix_operands`), and hands them to the matrix's executor; a bound product
(:class:`~cocktail.bound.BoundProduct`) does so once, then replays.
"""

from __future__ import annotations

from scipy.sparse.linalg import LinearOperator

from . import validate
from .bound import BoundProduct, bound_nothing


class Products:
    """The products of :class:`~cocktail.matrix.SparseMatrix` (a part of that one class): ``matvec``, ``matmat``,
    ``A @ x`` and ``bind``."""

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
