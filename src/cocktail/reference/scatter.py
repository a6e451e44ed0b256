"""A reference product that never synchronises with the host: gathers and a scatter-add.

:class:`ScatterProduct` lists a format's stored entries once (``entries(fmt)``, where every
host synchronisation happens) and afterwards computes ``Y = A @ X`` with, per value array
of the format, one gather of the values (``values[pos]``), one gather of ``X`` rows
(``X[cols]``), one elementwise product and one scatter-add into ``Y``.  No boolean mask,
no ``nonzero``, no device-to-host copy and no loop whose trip count depends on device data,
so on CuPy a call can be captured in a CUDA graph.
"""

from __future__ import annotations

import numpy as np

from .._xp import get_xp, scatter_add
from .entries import entries_of


class ScatterProduct:
    """``A @ X`` from the stored entries of format object ``fmt``, without host synchronisation.

    The entries (three int64 arrays per value array of the format, ``nbytes`` in all) are
    computed at construction; the format's value arrays are referenced, not copied, so the
    format must outlive this object (it is immutable).  ``self(X, Y)`` writes ``A @ X`` into
    ``Y`` for ``X`` (n, k) and ``Y`` (m, k) in the format's dtype and array module.
    """

    def __init__(self, fmt):
        self.shape = fmt.shape
        self.dtype = fmt.dtype
        self.xp = fmt.xp
        # Empty parts are dropped here, on the host, so a call launches nothing for them.
        self.entries = tuple(e for e in entries_of(fmt) if e.size)

    @property
    def nnz(self) -> int:
        """Number of entries (the canonical CSR's stored entries)."""
        return sum(e.size for e in self.entries)

    @property
    def nbytes(self) -> int:
        """Bytes of the index arrays kept (the values are the format's own arrays)."""
        return sum(e.nbytes for e in self.entries)

    def _check(self, X, Y):
        m, n = self.shape
        for name, a, rows in (("X", X, n), ("Y", Y, m)):
            if get_xp(a) is not self.xp:
                raise TypeError(f"{name} is a {type(a).__module__}.{type(a).__name__}, "
                                f"the format's arrays are {self.xp.__name__} arrays")
            if a.dtype != self.dtype:
                raise TypeError(f"{name} has dtype {a.dtype}, the format's dtype is {self.dtype}")
            if a.ndim != 2 or a.shape[0] != rows:
                raise ValueError(f"{name} must have shape ({rows}, k), got {a.shape}")
        if X.shape[1] != Y.shape[1]:
            raise ValueError(f"X has {X.shape[1]} columns but Y has {Y.shape[1]}")

    def __call__(self, X, Y):
        """Write ``A @ X`` into ``Y`` and return ``Y``; ``X`` is only read."""
        self._check(X, Y)
        xp = self.xp
        k = int(X.shape[1])
        Y[...] = 0
        if not self.entries or k == 0:
            return Y
        # The scatter needs a C-contiguous target (complex values are scattered through a real view).
        acc = Y if Y.flags.c_contiguous else xp.zeros(Y.shape, dtype=self.dtype)
        complex_values = self.dtype.kind == "c"
        if complex_values:
            # CuPy's add.at has no complex atomics: scatter the real and imaginary parts as
            # 2k real columns.  NumPy takes the same path, so the CPU tests exercise it.
            real = np.dtype(self.dtype.char.lower())
            target = acc.view(real)
        else:
            target = acc
        for e in self.entries:
            contrib = e.values[e.pos][:, None] * X[e.cols]  # (size, k)
            scatter_add(target, e.rows, contrib.view(real) if complex_values else contrib)
        if acc is not Y:
            Y[...] = acc
        return Y
