"""The ways of calling a product that the call-overhead section (:mod:`.overhead`) times.

Cocktail's ``A.matvec(x, out=y)``, ``A @ x`` and the bound product ``A.bind(x, out=y)()`` of
``SparseMatrix(S, format="auto", device="cuda")``; cupyx ``A @ x``; ``torch.mv`` on a sparse CSR
tensor; ``cusparseSpMV`` through ctypes with its descriptors made once (the ``cusparse-csr-alg1``
baseline); and the floors: one empty ``RawKernel`` launch and one replay of a CUDA graph holding
that launch.  Each is a method whose ``prepare`` returns a :class:`~.methods.Prepared`; the
section times its first call.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from . import baselines
from .methods import Inputs, Prepared, Unavailable, matrix_params

MATVEC, MATMUL, BOUND, BOUND_GRAPH = "cocktail-matvec", "cocktail-matmul", "cocktail-bound", "cocktail-graph"
EMPTY_LAUNCH, EMPTY_GRAPH = "empty-launch", "empty-graph"

_EMPTY_SOURCE = 'extern "C" __global__ void cocktail_empty() {}'


def _auto(inputs: Inputs):
    from ... import SparseMatrix

    return SparseMatrix(inputs.S, format="auto", device="cuda", dtype=inputs.dtype)


@dataclass(frozen=True)
class Matvec:
    """``A.matvec(x, out=y)``: allocates nothing."""

    name: str = MATVEC

    def prepare(self, inputs: Inputs) -> Prepared:
        """The auto-chosen matrix and one product into the fixed ``y``."""
        A, x, y = _auto(inputs), inputs.x_dev[0], inputs.y_dev
        return Prepared(self.name, [lambda: A.matvec(x, out=y)], lambda: A.matvec(x, out=y),
                        {"call": "A.matvec(x, out=y)", **matrix_params(A)}, A.storage.spmv_bytes())


@dataclass(frozen=True)
class Matmul:
    """``A @ x``: allocates its result every call."""

    name: str = MATMUL

    def prepare(self, inputs: Inputs) -> Prepared:
        """The auto-chosen matrix and one allocating product."""
        A, x = _auto(inputs), inputs.x_dev[0]
        return Prepared(self.name, [lambda: A @ x], lambda: A @ x, {"call": "A @ x", **matrix_params(A)},
                        A.storage.spmv_bytes())


@dataclass(frozen=True)
class Bound:
    """The bound product ``p = A.bind(x, out=y)``; each call is ``p()`` (a CUDA graph replay)."""

    name: str = BOUND

    def prepare(self, inputs: Inputs) -> Prepared:
        """Bind on the current (non-default) stream; ``close`` frees the bound product."""
        A = _auto(inputs)
        p = A.bind(inputs.x_dev[0], out=inputs.y_dev)  # replays on the stream current here
        return Prepared(self.name, [p], p, {"call": "A.bind(x, out=y)()", **matrix_params(A)},
                        A.storage.spmv_bytes(), close=p.close)


@dataclass(frozen=True)
class BoundGraph:
    """The bound product's own CUDA graph replayed with ``graph.launch(stream)``: its floor, GPU time included.

    Beside the bound product it separates Cocktail's host cost (bound / this) from the time the
    product's kernels themselves take on the GPU (this / the empty graph).
    """

    name: str = BOUND_GRAPH

    def prepare(self, inputs: Inputs) -> Prepared:
        """Bind as :class:`Bound` does, then replay the captured graph directly."""
        A = _auto(inputs)
        p = A.bind(inputs.x_dev[0], out=inputs.y_dev)
        graph, stream = p.graph, p.stream
        return Prepared(self.name, [lambda: graph.launch(stream)], p,
                        {"call": "graph.launch(stream) of the bound product's graph", **matrix_params(A)},
                        A.storage.spmv_bytes(), close=p.close)


@functools.lru_cache(maxsize=None)
def _empty_kernel(device_id: int):
    """The empty kernel for ``device_id`` (CuPy compiles it at its first launch)."""
    import cupy

    return cupy.RawKernel(_EMPTY_SOURCE, "cocktail_empty")


def _empty():
    import cupy

    return _empty_kernel(cupy.cuda.Device().id)


@dataclass(frozen=True)
class EmptyLaunch:
    """The floor of a kernel call from Python: ``cocktail_empty<<<1, 1>>>`` through ``cupy.RawKernel``."""

    name: str = EMPTY_LAUNCH

    def prepare(self, inputs: Inputs) -> Prepared:
        """The compiled empty kernel; each call launches it on the current stream."""
        kernel = _empty()

        def launch():
            kernel((1,), (1,), ())

        return Prepared(self.name, [launch], lambda: None, {"call": "RawKernel cocktail_empty<<<1, 1>>>"}, 0)


@dataclass(frozen=True)
class EmptyGraph:
    """The floor of a graph replay: that empty launch captured once, then ``graph.launch(stream)``."""

    name: str = EMPTY_GRAPH

    def prepare(self, inputs: Inputs) -> Prepared:
        """Capture the empty launch on the current stream, which must not be the default one."""
        import cupy

        stream = cupy.cuda.get_current_stream()
        if stream.ptr == 0:
            raise Unavailable("graph capture needs a non-default stream")
        kernel = _empty()
        kernel((1,), (1,), (), stream=stream)  # compiled and loaded before the capture
        stream.synchronize()
        stream.begin_capture()
        try:
            kernel((1,), (1,), (), stream=stream)
        finally:
            graph = stream.end_capture()
        return Prepared(self.name, [lambda: graph.launch(stream)], lambda: None,
                        {"call": "graph.launch(stream) of one empty launch"}, 0)


#: The ways of calling, in the order of the tables.
METHODS = (EmptyLaunch(), EmptyGraph(), Matvec(), Matmul(), Bound(), BoundGraph(), baselines.Cupyx(), baselines.Torch(),
           baselines.Cusparse("csr-alg1"))
