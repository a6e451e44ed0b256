"""The sweep behind the rule spmm_diagonal_rows: dia_vi_spmm with 1, 2 or 4 consecutive rows a group (adjacent
diagonals sharing their X rows), float32 and float64, k = 4, 16 and 64, row-major blocks, on two Laplacians and a
Laplacian not in any suite (3-D 7-point, 160^3).  A probe of the kernel's launches through cocktail.timing, not
the harness: numbers reported as results come from `cocktail bench`.
Run: PYTHONPATH=src python scripts/spmm_diagonal_rows_sweep.py OUT.json"""
import json
import sys

import cupy
import numpy as np

from cocktail import SparseMatrix, timing
from cocktail.bench.problems.generators import laplacian
from cocktail.kernels.block_operands import BlockOperands
from cocktail.tuning.launch_rules import configure

out = {}
stream = cupy.cuda.Stream(non_blocking=True)
with stream:
    for name, S0 in (("laplace5_2000", laplacian(5, 2000)), ("laplace27_100", laplacian(27, 100)),
                     ("laplace7_160", laplacian(7, 160))):
        for dt in ("float32", "float64"):
            A = SparseMatrix(S0.astype(dt), format="dia_vi")
            ex = A._executor
            one, zero = np.dtype(dt).type(1), np.dtype(dt).type(0)
            for k in (4, 16, 64):
                X = cupy.random.random((S0.shape[1], k)).astype(dt)
                Y = cupy.zeros((S0.shape[0], k), dtype=dt)
                for rows in (1, 2, 4):
                    full = configure(ex.block_spec, ex._storage, {"operands": BlockOperands.of(X, Y),
                                                                  "rows_per_group": rows}, ex._props)
                    launches = ex.block_spec.bind(ex._storage, full, ex._props, False)

                    def go():
                        for launch in launches:
                            launch(X.data.ptr, Y.data.ptr, one, zero, stream.ptr)

                    us = timing.time_gpu([go], repeat=10).kernel_us
                    key = f"{name}/{dt}/k{k}/rows{rows}"
                    out[key] = us
                    print(key, round(us, 1), flush=True)
json.dump(out, open(sys.argv[1], "w"), indent=1)
