"""Bound products: ``p = A.bind(x, out=y); p()`` replays one product on fixed buffers.

On the GPU the product's launches are captured once in a CUDA graph; a call replays the
graph on the stream chosen at binding, so its host cost is one graph launch.  On the CPU a
call runs the executor directly, with every check already done.
"""

from __future__ import annotations


class BoundProduct:
    """``y = alpha*A@x + beta*y`` on buffers fixed at binding; call it to run, ``close()`` to release.

    ``run(x, y, alpha, beta)`` computes the product: an executor's ``run`` (vectors) or ``run_block`` (a
    block of vectors).

    Keeps the matrix, ``x`` and ``y`` alive.  Write new input values into ``x`` in place; the
    product reads whatever ``x`` and ``y`` hold when it runs.  ``stream`` is the CuPy stream
    replays run on (GPU only).
    """

    def __init__(self, matrix, run, x, y, out, alpha, beta, stream=None):
        self.matrix, self.x, self.y, self.alpha, self.beta = matrix, x, y, alpha, beta
        self._out = out
        self.stream = None
        self._graph = None  # the captured CUDA graph (GPU); ``graph`` exposes it
        if matrix.device == "cuda" and run is not bound_nothing:
            self._capture(run, stream)
        else:
            self._run = lambda: run(x, y, alpha, beta)

    def _capture(self, run, stream) -> None:
        import cupy

        self.stream = stream if stream is not None else cupy.cuda.get_current_stream()
        side = cupy.cuda.Stream(non_blocking=True)  # capture needs a stream other than the legacy default
        with side:
            side.begin_capture()
            try:
                run(self.x, self.y, self.alpha, self.beta)
            except BaseException:
                try:
                    side.end_capture()
                except Exception:  # noqa: BLE001 - an invalidated capture; the product's own error matters
                    pass
                raise
            self._graph = side.end_capture()
        launch, where = self._graph.launch, self.stream
        self._run = lambda: launch(where)

    @property
    def graph(self):
        """The captured ``cupy.cuda.graph.Graph`` (GPU), or None (CPU, or after ``close``)."""
        return self._graph

    def __call__(self):
        """Run the product; returns the ``out`` given at binding."""
        self._run()
        return self._out

    def close(self) -> None:
        """Release the graph and the references to the matrix and buffers; later calls raise."""
        self._graph = self.matrix = self.x = self.y = self._out = None
        self._run = _closed

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.matrix is None else f"on {self.matrix!r}"
        return f"<cocktail.BoundProduct {state}>"


def bound_nothing(x, y, alpha, beta) -> None:
    """The product of an empty block (no columns, or a matrix without rows): nothing to compute or capture."""


def _closed():
    raise RuntimeError("this bound product was closed")
