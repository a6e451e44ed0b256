"""The device builds of the blocked, diagonal and sliced formats and of a Cocktail's parts, provided by the layer that
launches kernels.

The formats never import :mod:`cocktail.kernels` (it lies above them); the kernels layer provides, when it is imported
(``import cocktail`` imports it), how a matrix on a device is built there: :func:`cocktail.kernels.helper_launch`'s
launcher for its arrays, the launch modules :mod:`cocktail.kernels.block_build` (BCSR, BELL, SBELL),
:mod:`cocktail.kernels.diagonal_build` (DIA, DIA-VI, BDIA), :mod:`cocktail.kernels.sell_build` (SELL, ELL) and
:mod:`cocktail.kernels.part_split` (a Cocktail's split among its parts), and :mod:`cocktail.kernels.csr_check`, the
one-pass check of a device CSR's arrays.  Nothing provided, or a matrix on the host: the formats
build on the host (their NumPy path, the oracle of the device's).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..arrays import is_cupy_array

_PROVIDED = None


def provide(launcher_for, blocks, diagonals, csr_check, slices, parts) -> None:
    """Set the device builds: ``launcher_for(array)`` (the launcher building a matrix holding ``array``, or None to
    build on the host), the launch modules of the blocked (``blocks``), diagonal (``diagonals``) and sliced
    (``slices``) formats, the CSR check's (``csr_check``) and the Cocktail's split (``parts``)."""
    global _PROVIDED
    _PROVIDED = SimpleNamespace(launcher_for=launcher_for, blocks=blocks, diagonals=diagonals, csr_check=csr_check,
                                slices=slices, parts=parts)


def launcher_for(array):
    """The launcher that builds a matrix holding ``array`` on its device, or None: build on the host."""
    return None if _PROVIDED is None else _PROVIDED.launcher_for(array)


def csr_launcher(csr):
    """:func:`launcher_for` a CSR whose row pointers and indices are both of its index dtype, int32 or int64 (the
    kernels read both as one type); None otherwise: build on the host or by CuPy's passes."""
    index = np.dtype(csr.index_dtype)
    if csr.indptr.dtype != index or csr.indices.dtype != index or index not in (np.int32, np.int64):
        return None
    return launcher_for(csr.indptr)


def blocks():
    """The blocked formats' launch module (:mod:`cocktail.kernels.block_build`), once a launcher was given."""
    return _PROVIDED.blocks


def diagonals():
    """The diagonal formats' launch module (:mod:`cocktail.kernels.diagonal_build`), once a launcher was given."""
    return _PROVIDED.diagonals


def slices():
    """SELL's and ELL's launch module (:mod:`cocktail.kernels.sell_build`), once a launcher was given."""
    return _PROVIDED.slices


def parts():
    """The Cocktail's split among its parts (:mod:`cocktail.kernels.part_split`), once a launcher was given."""
    return _PROVIDED.parts


def csr_facts(indptr, indices, data_entries: int, cols: int):
    """:func:`cocktail.kernels.csr_check.device_facts` of a device CSR's arrays; None for host arrays, where
    nothing was provided or where the check does not apply (the host checks then run)."""
    if _PROVIDED is None or not is_cupy_array(indices):
        return None
    return _PROVIDED.csr_check.device_facts(indptr, indices, data_entries, cols, _PROVIDED.launcher_for(indices))
