"""cusparse_coo: cuSPARSE's COO SpMV (COO_ALG1, or the bit-wise deterministic COO_ALG2) on our COO arrays.

The vendor's kernel as one of ours, bound through :mod:`.cusparse`: the planner may choose it
for a whole matrix or for a Cocktail's COO part, and ``vendor=False`` plans without it.
"""

from ..cusparse import spec

SPEC = spec("coo", launches=2, order=90, walk="entries")  # as the COO kernels of our own are counted
