"""Padding parameters (align, slice_height, width_multiple) are refused before a huge value allocates.

A parameter may at most double what it pads (or add ``PADDING_ALLOWANCE`` on small matrices);
max_fill does not count alignment padding, so without this check ``align=10**12`` allocated for
padding alone (a hostile parameter found while hardening the inputs, docs/reliability.md).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail import SparseMatrix
from cocktail.formats.padding import PADDING_ALLOWANCE


def _matrix(m=3000):
    return sp.random(m, m, density=3.0 / m, format="csr", random_state=0) + sp.eye(m, format="csr")


@pytest.mark.parametrize("fmt, param, what", [
    ("dia", "align", "rows"), ("dia_vi", "align", "rows"), ("bdia", "align", "rows"), ("ell", "align", "rows"),
    ("hyb", "align", "rows"), ("bell", "align", "superrows"), ("sell", "slice_height", "rows"),
    ("sbell", "slice_height", "superrows"), ("sell", "width_multiple", "summed slice widths"),
])
def test_a_huge_padding_parameter_is_refused_by_name(fmt, param, what):
    S = _matrix()
    if fmt == "dia_vi":
        S = S.copy()
        S.data[:] = 1.0
    with pytest.raises(ValueError, match=rf"{fmt}: {param}=1000000000000 would pad [\d,]+ {what} to [\d,]+; "
                                         rf"padding may at most double them"):
        fill = {} if fmt == "hyb" else {"max_fill": None}
        SparseMatrix(S, format=fmt, device="cpu", **fill, **{param: 10**12})


def test_reasonable_padding_is_kept():
    S = _matrix(5)  # a tiny matrix may still be padded to PADDING_ALLOWANCE rows
    A = SparseMatrix(S, format="ell", device="cpu", align=PADDING_ALLOWANCE, max_fill=None)
    np.testing.assert_allclose(A @ np.ones(5), S @ np.ones(5))
    B = SparseMatrix(_matrix(), format="sell", device="cpu", slice_height=64, width_multiple=8, max_fill=None)
    assert B.storage.params["width_multiple"] == 8
    with pytest.raises(ValueError, match="align=4096 would pad 5 rows to 4,096"):
        SparseMatrix(S, format="dia", device="cpu", align=4096, max_fill=None)


def test_a_small_width_multiple_on_a_narrow_matrix_is_kept():
    # Found by the GPU hypothesis campaign: 257 x 1 with one entry per row, t=4 pads 3 slice widths to 12.
    S = sp.csr_array((np.ones(257), (np.arange(257), np.zeros(257, dtype=int))), shape=(257, 1))
    A = SparseMatrix(S, format="sell", device="cpu", slice_height=128, width_multiple=4, max_fill=None)
    assert A.storage.params["width_multiple"] == 4
    np.testing.assert_array_equal(A @ np.array([2.0]), np.full(257, 2.0))
