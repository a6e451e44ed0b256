"""Matrix families: the classes the bandwidth target tells apart.

- ``regular``: rows of similar length whose columns stay near the diagonal or in dense
  blocks, so ``x`` is read with locality (Laplacians and stencils, FEM meshes, QCD, banded,
  block-diagonal, dense).
- ``power-law``: heavy-tailed row lengths (a few rows or columns hold a large share of the
  entries) or columns scattered at random, so ``x`` is gathered with little reuse (web graphs,
  circuits, R-MAT, the uneven LP, economics and rectangle matrices).

A suite matrix names its family in its suite's definition; a record carries it (empty for a
matrix read from a file, whose family nobody stated).
"""

REGULAR = "regular"
POWER_LAW = "power-law"
FAMILIES = (REGULAR, POWER_LAW)
