"""The property-based campaign on the GPU: random matrices through every format and kernel, checked
against the format's own-array reference within the γ bound (``tests/hypothesis_cases.py``).

One hypothesis test per format draws the kernel configuration, dtypes and scalars of each example,
so ``COCKTAIL_HYPOTHESIS_EXAMPLES`` random matrices run per format (100 by default; 2000 in
``scripts/hypothesis_campaign.sh``).  A failure prints the seed, shape and pattern that rebuild the
matrix, and hypothesis's falsifying example with its reproduction blob.

Marked ``gpu``: skipped where CuPy sees no CUDA device.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cocktail import formats
from hypothesis_cases import campaign_settings, check_random_product, gpu_cases

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("name", formats.names())
@campaign_settings()
@given(data=st.data())
def test_random_matrices_within_gamma_bound(name, data):
    check_random_product(data, name, gpu_cases(name), "cuda")
