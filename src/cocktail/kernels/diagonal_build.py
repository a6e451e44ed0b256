"""The diagonal formats' arrays built on the device in two passes over the CSR and no sort (diagonal_build.cu).

:func:`find` marks the diagonals the entries lie on in a table of the ``m + n - 1`` possible ones and counts the
explicit zeros (and, for BDIA, the diagonals that start a band), in one pass with a thread per row; CuPy's
inclusive scan of the table numbers the occupied diagonals, and one transfer brings their count (and the others)
to the host, which then sizes and checks the layout.  :meth:`Found.place` writes the sorted offsets (and the bands)
and every slot of the ``(diagonals, stride)`` array in one more pass: a thread per row puts each of its entries at
``data[d * stride + row]``, ``d`` read off the scanned table, and the fill value in the other slots.  The arrays are
those :meth:`cocktail.formats.dia.DIA.entry_layout` and a scatter make on the host, to the bit.

Written against the array module of the CSR, so that a launcher running the kernels elsewhere (the tests' CPU
emulation, on NumPy arrays) checks this host side too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..arrays import get_xp
from . import block_build
from .block_build import VALUE_WORDS, WORDS, index_type, word, zero_mask

#: Threads per block of the kernels (a row, or a possible diagonal, each).
BLOCK = 256

STEM = "diagonal_build"
#: The table's scan type, by bytes: 32-bit while the table's counts fit it.
SCANS = {4: "int", 8: "long long"}


def expressions() -> tuple[str, ...]:
    """Every instantiation: the marks and the fill per value word (the fill also of DIA-VI's one-byte codes), index
    type and scan type, the band starts per scan type."""
    marks = tuple(f"diagonal_build_marks<{WORDS[w]}, {i}, {s}>" for w in VALUE_WORDS for i in SCANS.values()
                  for s in SCANS.values())
    edges = tuple(f"diagonal_build_edges<{s}>" for s in SCANS.values())
    fill = tuple(f"diagonal_build_fill<{WORDS[w]}, {i}, {s}>" for w in (1, *VALUE_WORDS) for i in SCANS.values()
                 for s in SCANS.values())
    return marks + edges + fill


def scan_dtype(csr, bands: bool) -> np.dtype:
    """The dtype of the table and its scan: int32 when every count it holds fits (the table's marks, the explicit
    zeros, the band starts), else int64."""
    m, n = csr.shape
    largest = (2 if bands else 1) * (m + n - 1) + 2 + int(csr.nnz)
    return np.dtype(np.int32 if largest < 2 ** 31 else np.int64)


@dataclass
class Found:
    """What :func:`find` found: ``diagonals`` occupied, ``zeros`` explicit zeros, ``bands`` (None unless asked), and
    the table and its scan on the device for :meth:`place`."""

    csr: object
    launch: object
    size: int
    flags: object
    scan: object
    diagonals: int
    zeros: int
    bands: int | None

    def place(self, values, fill_bits: int, stride: int):
        """``(offsets, data, band_offsets, band_ptr)``: the sorted occupied offsets (index dtype), the
        ``(diagonals, stride)`` array of ``values``' dtype holding ``values[j]`` (one per entry: the CSR's values,
        or DIA-VI's codes) at entry j's slot and the word of bits ``fill_bits`` in every other, and, when
        :func:`find` was asked for the bands, each band's first offset (index dtype) and its first diagonal's
        index (int64, the diagonals' count last); else None.  One launch."""
        csr = self.csr
        xp = get_xp(csr.indptr)
        m = int(csr.shape[0])
        empty = block_build.uninitialised
        offsets = empty(xp, self.diagonals, csr.index_dtype)
        data = empty(xp, self.diagonals * int(stride), values.dtype).reshape(self.diagonals, int(stride))
        band_offsets = band_ptr = None
        if self.bands is not None:
            band_offsets = empty(xp, self.bands, csr.index_dtype)
            band_ptr = empty(xp, self.bands + 1, np.int64)
        itype, stype = index_type(csr.indptr.dtype), SCANS[self.scan.dtype.itemsize]
        band_base = 0 if self.bands is None else self.diagonals + self.zeros + self.bands
        self.launch(STEM, f"diagonal_build_fill<{word(values.dtype)}, {itype}, {stype}>", max(self.size, stride),
                    BLOCK, (csr.indptr, csr.indices, values, np.int64(m), np.int64(self.size), self.flags, self.scan,
                            np.int64(self.diagonals), np.int64(stride), np.uint64(fill_bits), offsets, data,
                            np.int64(band_base), np.int64(self.bands or 0), band_offsets, band_ptr))
        return offsets, data, band_offsets, band_ptr


def find(csr, bands: bool, launch) -> Found:
    """Pass 1: the occupied diagonals of ``csr`` (which holds entries), its explicit zeros and, with ``bands``, its
    bands (maximal runs of adjacent occupied diagonals).  One or two launches (the band starts need every mark),
    CuPy's scan and one synchronisation."""
    xp = get_xp(csr.indptr)
    m, n = (int(d) for d in csr.shape)
    size = m + n - 1
    sdt = scan_dtype(csr, bands)
    stype = SCANS[sdt.itemsize]
    flags = xp.zeros(size + (size + 2 if bands else 1), dtype=sdt)  # see diagonal_build.cu
    launch(STEM, f"diagonal_build_marks<{word(csr.data.dtype)}, {index_type(csr.indptr.dtype)}, {stype}>", m, BLOCK,
           (csr.indptr, csr.indices, csr.data, np.int64(m), zero_mask(csr.data.dtype), np.int64(size), flags))
    if bands:
        launch(STEM, f"diagonal_build_edges<{stype}>", size, BLOCK, (np.int64(size), flags))
    scan = xp.cumsum(flags, dtype=sdt)
    # one transfer: the diagonals, then the explicit zeros (and the bands) counted after them
    tail = [int(v) for v in launch.fetch(scan[size - 1:size + (2 if bands else 1)])]
    diagonals, zeros = tail[0], tail[1] - tail[0]
    found_bands = tail[2] - tail[1] if bands else None
    return Found(csr, launch, size, flags, scan, diagonals, zeros, found_bands)
