"""Reading and writing matrix files: Matrix Market (``.mtx``, ``.mtx.gz``, ``.mtx.bz2``) and SciPy ``.npz``.

Every failure is a :class:`~cocktail.errors.MatrixFileError` whose message names the file
and what is wrong with it.
"""

from __future__ import annotations

import bz2
import gzip
import os
import stat
import zipfile
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

from . import _memory, mmcheck, validate
from .errors import MatrixFileError, first_line

MM_SUFFIXES = (".mtx", ".mtx.gz", ".mtx.bz2")
NPZ_SUFFIX = ".npz"


def _kind(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(NPZ_SUFFIX):
        return "npz"
    if name.endswith(MM_SUFFIXES):
        return "mtx"
    raise MatrixFileError(
        f"cannot tell the type of matrix file '{path}': expected a name ending in "
        f"{', '.join(MM_SUFFIXES)} or {NPZ_SUFFIX}"
    )


def read_matrix(path) -> sp.csr_array:
    """Read a sparse matrix file into a ``scipy.sparse.csr_array``.

    Matrix Market files of every field and symmetry (general, symmetric, skew-symmetric,
    hermitian, pattern) are checked strictly (:mod:`cocktail.mmcheck`: an entry above the
    diagonal of a symmetric file, a non-integer in an integer file, an extra field, a wrong
    entry count or a value that overflows is refused naming the line), parsed by SciPy and
    expanded to their full pattern.  Pattern and integer matrices become float64.  ``.npz`` files are read without
    unpickling and their arrays checked like any other input (CSR, CSC and COO layouts).
    Special files (FIFOs, devices, sockets) are refused without being opened, and a
    Matrix Market header that declares more entries than the file could hold is refused
    before anything is allocated.

    A size line or ``.npz`` shape whose rows x cols overflows int64, or a coordinate size line
    that declares more entries than the matrix has positions, is refused as well.

    The result is a CSR array, whose row pointers take ``rows + 1`` indices whatever the entry
    count.  A file whose matrix, with the ``x`` and ``y`` of a product with it, needs more host
    memory than is free (a 3e9 x 3e9 matrix with three entries needs 24 GB of pointers and 48 GB
    for ``x`` and ``y``) is refused with :class:`~cocktail.errors.DeviceMemoryError` before the
    conversion allocates the pointers.  Reading such a file into a COO array instead would not
    help: any product with the matrix needs ``x`` and ``y`` of ``cols`` and ``rows`` values.
    """
    path = Path(os.fspath(path))
    kind = _kind(path)
    if not path.exists():
        raise MatrixFileError(f"cannot read matrix file '{path}': no such file")
    if path.is_dir():
        raise MatrixFileError(f"cannot read matrix file '{path}': it is a directory")
    mode = path.stat().st_mode
    if not stat.S_ISREG(mode):
        raise MatrixFileError(f"cannot read matrix file '{path}': not a regular file (a FIFO, device or socket), "
                              "so it is not opened")
    what = "SciPy .npz sparse matrix" if kind == "npz" else "Matrix Market"
    try:
        if kind == "npz":
            M = _read_npz(path)
        else:
            M = mmcheck.read(path)
    except MatrixFileError:
        raise
    except (MemoryError, OverflowError) as exc:
        raise MatrixFileError(f"'{path}' declares a matrix too large to read ({type(exc).__name__}: "
                              f"{first_line(exc)})") from None
    except (OSError, ValueError, TypeError, KeyError, IndexError, EOFError, RuntimeError) as exc:
        raise MatrixFileError(f"'{path}' is not a readable {what} file: {first_line(exc)}") from None
    _require_memory(path, M)
    M = sp.csr_array(M)
    if M.dtype.kind in "biu":
        M = M.astype(np.float64)
    elif M.dtype.kind not in "fc":
        raise MatrixFileError(f"'{path}' holds values of dtype {M.dtype}, which Cocktail cannot compute with")
    return M


def _require_memory(path: Path, M) -> None:
    """Refuse ``M`` (a SciPy sparse matrix or a dense array read from ``path``) when its CSR and the ``x``
    and ``y`` of a product with it do not fit in host memory, before the CSR conversion allocates.

    The CSR is counted where the conversion builds one (every layout but a CSR); ``x`` and ``y``
    (``cols`` and ``rows`` values) always, as :class:`~cocktail.SparseMatrix` counts them: a matrix
    whose product cannot fit is refused before its row pointers are allocated, not after.
    """
    m, n = (int(v) for v in M.shape)
    nnz = int(M.nnz) if sp.issparse(M) else int(np.count_nonzero(M))
    index_size = validate.index_itemsize(max(m, n, nnz))
    value_size = 8 if M.dtype.kind in "biu" else M.dtype.itemsize
    pointers, entries = _memory.csr_bytes(m, nnz, value_size, index_size)
    csr = [] if sp.issparse(M) and M.format == "csr" else [("its CSR row pointers", pointers),
                                                           ("its CSR entries", entries)]
    _memory.require(f"'{path}': a {_memory.shape_text((m, n))} matrix with {nnz:,} entries",
                    csr + [("x and y of a product with it", (m + n) * value_size)], "cpu")


def _read_npz(path: Path):
    """A SciPy sparse matrix from a ``.npz`` written by ``scipy.sparse.save_npz``, checked before use."""
    if not zipfile.is_zipfile(path):
        raise MatrixFileError(f"'{path}' is not a SciPy .npz sparse matrix file: not a zip archive")
    with np.load(path, allow_pickle=False) as archive:
        files = set(archive.files)
        if "format" not in files or "shape" not in files:
            raise MatrixFileError(f"'{path}' is not a SciPy .npz sparse matrix file: it lacks the 'format' and "
                                  f"'shape' arrays (it holds {', '.join(sorted(files)) or 'nothing'})")
        layout = archive["format"].item()
        layout = layout.decode("ascii", "replace") if isinstance(layout, bytes) else str(layout)
        need = {"csr": ("data", "indices", "indptr"), "csc": ("data", "indices", "indptr"),
                "coo": ("data", "row", "col")}.get(layout)
        if need is None:
            raise MatrixFileError(f"'{path}' holds a sparse matrix in {layout!r} layout; Cocktail reads .npz files "
                                  "in csr, csc and coo layout")
        missing = [k for k in need if k not in files]
        if missing:
            raise MatrixFileError(f"'{path}': a {layout} .npz needs the arrays {', '.join(need)}; "
                                  f"{', '.join(missing)} missing")
        shape = archive["shape"]
        arrays = {k: archive[k] for k in need}
    try:
        if shape.ndim != 1 or shape.shape[0] != 2 or shape.dtype.kind not in "iu":
            raise ValueError(f"shape must hold two integers, got {shape!r}")
        m, n = (int(v) for v in shape)
        if max(m, n) > mmcheck.INT64_MAX or m * n > mmcheck.INT64_MAX:
            raise ValueError(f"shape {m:,} x {n:,} has rows x cols = {m * n:.3g} positions, which overflows int64 "
                             "(NumPy and SciPy index a matrix's positions in it); split the matrix into blocks "
                             "of rows whose rows x cols fits")
        data = arrays["data"]
        if data.dtype.kind in "biu":
            data = data.astype(np.float64)
        if layout == "coo":
            return _checked_coo(data, arrays["row"], arrays["col"], (m, n))
        rows, cols = (m, n) if layout == "csr" else (n, m)  # CSC is the CSR of the transpose
        validate.csr_arrays(data, arrays["indices"], arrays["indptr"], (rows, cols))
    except (TypeError, ValueError) as exc:
        raise MatrixFileError(f"'{path}': the {layout} arrays are not a valid matrix: {first_line(exc)}") from None
    build = sp.csr_array if layout == "csr" else sp.csc_array
    return build((data, arrays["indices"], arrays["indptr"]), shape=(m, n))


def _checked_coo(data, row, col, shape):
    """A COO array from triplets after checking their lengths, dtypes and index ranges."""
    m, n = validate.shape2d(shape)
    validate.value_dtype(data.dtype, "COO data")
    for name, arr, limit in (("row", row, m), ("col", col, n)):
        validate.index_dtype(arr.dtype, f"COO {name}")
        if arr.ndim != 1 or arr.shape[0] != data.shape[0]:
            raise ValueError(f"COO {name} must be 1-D with len(data) = {data.shape[0]} entries, got shape {arr.shape}")
        if arr.shape[0] and (int(arr.min()) < 0 or int(arr.max()) >= limit):
            bad = int(arr.min()) if int(arr.min()) < 0 else int(arr.max())
            raise ValueError(f"COO {name} indices must lie in [0, {limit}): found {bad}")
    return sp.coo_array((data, (row, col)), shape=(m, n))


def write_matrix(path, S, *, comment: str = "", symmetry: str | None = None) -> Path:
    """Write ``S`` (a SciPy sparse matrix or array, or a ``SparseMatrix``) to ``path``.

    The suffix picks the file type (``.mtx`` through ``scipy.io.mmwrite``, or ``.npz``).
    ``symmetry`` is passed to ``mmwrite`` (default: detected).  Returns the path.
    """
    path = Path(os.fspath(path))
    kind = _kind(path)
    if not sp.issparse(S) and hasattr(S, "to_scipy"):  # a SparseMatrix (io sits below matrix: no import)
        S = S.to_scipy()
    if not sp.issparse(S):
        raise TypeError(f"write_matrix takes a scipy.sparse matrix or a SparseMatrix, got {type(S).__name__}")
    try:
        if kind == "npz":
            sp.save_npz(path, sp.csr_array(S))
        else:
            # mmwrite given a name appends '.mtx' to other suffixes and ignores unwritable
            # paths, so the file is opened here.
            name = path.name.lower()
            opener = gzip.open if name.endswith(".gz") else bz2.open if name.endswith(".bz2") else open
            with opener(path, "wb") as fh:
                scipy.io.mmwrite(fh, sp.coo_array(S), comment=comment, symmetry=symmetry)
    except OSError as exc:
        raise MatrixFileError(f"cannot write matrix file '{path}': {exc.strerror or exc}") from None
    return path
