"""Run csr_stream(k=8), csr_stream(k=16) and cuSPARSE's CSR ALG1 on a few graph matrices, a few products each,
for ncu to count (the first step of the graph work: counters before code).  Prints one line per (matrix, method) with nnz and rows."""
import sys
import numpy as np
import cupy
from cocktail import SparseMatrix
from cocktail.bench.problems import suites

names = sys.argv[1:]
by = {m.name: m for s in ("holdout", "cocktail", "williams") for m in suites.get(s)}
for name in names:
    S = suites.load(by[name]).astype(np.float64)
    x = cupy.asarray(np.random.default_rng(0).standard_normal(S.shape[1]))
    for label, kw in (("csr_stream8", dict(kernel="csr_stream", items_per_lane=8)),
                      ("csr_stream16", dict(kernel="csr_stream", items_per_lane=16)),
                      ("cusparse_csr1", dict(kernel="cusparse_csr", alg=1))):
        A = SparseMatrix(S, format="csr", **kw)
        y = cupy.empty(S.shape[0])
        for _ in range(3):
            A.matvec(x, out=y)
        cupy.cuda.Device().synchronize()
        print(f"MARK {name} {label} nnz={S.nnz} rows={S.shape[0]}", flush=True)
