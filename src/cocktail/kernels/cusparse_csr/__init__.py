"""cusparse_csr: cuSPARSE's CSR SpMV (CSR_ALG1, or the bit-wise deterministic CSR_ALG2) on our CSR arrays.

The vendor's kernel as one of ours, bound through :mod:`.cusparse`: the planner may choose it
for a whole matrix or for a Cocktail's CSR part, and ``vendor=False`` plans without it.
"""

from ..cusparse import spec

SPEC = spec("csr", order=80, walk="balanced")
