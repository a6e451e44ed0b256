"""The matrices made from a :class:`~cocktail.matrix.SparseMatrix`: its transposes, its values in another dtype, and the
other matrices :mod:`cocktail.operator` derives (scaled, conjugated), each built with the matrix's own options on its
device, from its canonical CSR.
"""

from __future__ import annotations

import weakref

import numpy as np

from . import precision
from .errors import FormatFillError, FormatValuesError


class Derived:
    """The matrices derived from a :class:`~cocktail.matrix.SparseMatrix` (a part of that one class): the class
    makes them through its ``_made`` (a new matrix) and ``_scatter_transposed`` (a transpose that stores nothing)."""

    def _as_dtype(self, dtype):
        """This matrix with values in ``dtype``, built once and kept for later products."""
        return self._derived(("dtype", dtype.name), lambda csr: csr, dtype=dtype)

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
                made = self._scatter_transposed(conjugate)
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
            made = self._made(csr, o.format, self.device, executor=o.executor, kernel=o.kernel,
                                dtype=target, index_dtype=o.index_dtype,
                                tune=o.tune, deterministic=o.deterministic, vendor=o.vendor,
                                transpose=o.transpose, value_dtype=self.value_dtype if kept else None,
                                yielding=o.yielding, **o.params)
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

    def to_scipy(self):
        """A ``scipy.sparse.csr_array`` on the host with the matrix's canonical entries."""
        return self._csr().to_scipy()
