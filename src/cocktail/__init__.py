"""Cocktail: sparse matrix-vector products on NVIDIA GPUs, every format of the GPU-SpMV literature.

Quick use::

    import cocktail, scipy.sparse as sp
    A = cocktail.SparseMatrix(sp.random(1000, 1000, density=0.01, format="csr"), format="ell")
    y = A @ x
"""

from . import formats
from .errors import (CocktailError, CPUFallbackWarning, DeviceMemoryError, FormatFillError, FormatValuesError,
                     MatrixFileError)
from .io import read_matrix, write_matrix
from .matrix import SparseMatrix

__version__ = "0.1.0"

__all__ = [
    "SparseMatrix",
    "formats",
    "read_matrix",
    "write_matrix",
    "CocktailError",
    "MatrixFileError",
    "DeviceMemoryError",
    "FormatFillError",
    "FormatValuesError",
    "CPUFallbackWarning",
    "__version__",
]
