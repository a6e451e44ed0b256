"""Reading and writing matrix files: Matrix Market (``.mtx``, ``.mtx.gz``, ``.mtx.bz2``) and SciPy ``.npz``.

Every failure is a :class:`~cocktail.errors.MatrixFileError` whose message names the file
and what is wrong with it.
"""

from __future__ import annotations

import bz2
import gzip
import os
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

from .errors import MatrixFileError

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
    hermitian, pattern) are read through ``scipy.io.mmread`` and expanded to their full
    pattern.  Pattern and integer matrices become float64.
    """
    path = Path(os.fspath(path))
    kind = _kind(path)
    if not path.exists():
        raise MatrixFileError(f"cannot read matrix file '{path}': no such file")
    if path.is_dir():
        raise MatrixFileError(f"cannot read matrix file '{path}': it is a directory")
    try:
        if kind == "npz":
            M = sp.load_npz(path)
        else:
            M = scipy.io.mmread(path)
    except MatrixFileError:
        raise
    except (OSError, ValueError, TypeError, KeyError, IndexError, EOFError, RuntimeError) as exc:
        what = "SciPy .npz sparse matrix" if kind == "npz" else "Matrix Market"
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise MatrixFileError(f"'{path}' is not a readable {what} file: {detail}") from None
    M = sp.csr_array(M)
    if M.dtype.kind in "biu":
        M = M.astype(np.float64)
    elif M.dtype.kind not in "fc":
        raise MatrixFileError(f"'{path}' holds values of dtype {M.dtype}, which Cocktail cannot compute with")
    return M


def write_matrix(path, S, *, comment: str = "", symmetry: str | None = None) -> Path:
    """Write ``S`` (a SciPy sparse matrix or array, or a ``SparseMatrix``) to ``path``.

    The suffix picks the file type (``.mtx`` through ``scipy.io.mmwrite``, or ``.npz``).
    ``symmetry`` is passed to ``mmwrite`` (default: detected).  Returns the path.
    """
    from .matrix import SparseMatrix

    path = Path(os.fspath(path))
    kind = _kind(path)
    if isinstance(S, SparseMatrix):
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
