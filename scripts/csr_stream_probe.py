"""csr_stream on csr_pattern and on csr, every entry 1: µs of one product (the best of 3 medians of 5 graph replays
of 10 products) on the web graphs and holdout graphs, float32 and float64.  A probe (GPU), not the benchmark.

Usage: PYTHONPATH=src python scripts/csr_stream_probe.py LABEL   (prints: LABEL matrix dtype pattern_us csr_us)
"""

import sys

import cupy
import numpy as np
from cocktail.bench.problems import suites
from cocktail import SparseMatrix
from cocktail.timing import replay_us, side_stream
names = ["eu2005", "in2004", "webbase", "circuit5m", "holdout_rmat", "holdout_preferential", "economics"]
out = []
for name in names:
    m = next(m for s in ("cocktail", "williams", "holdout") for m in suites.get(s) if m.name == name)
    S0 = suites.load(m)
    for dtype in (np.float32, np.float64):
        S = S0.astype(dtype); S.data[:] = 1
        x = cupy.ones(S.shape[1], dtype=dtype); y = cupy.zeros(S.shape[0], dtype=dtype)
        row = [name, np.dtype(dtype).name]
        for fmt in ("csr_pattern", "csr"):
            A = SparseMatrix(S, format=fmt, kernel="csr_stream")
            with side_stream():
                row.append(min(replay_us(lambda: A.matvec(x, out=y), 10, 5) for _ in range(3)))
        print(sys.argv[1], *row, flush=True)
