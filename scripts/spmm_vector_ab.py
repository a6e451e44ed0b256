"""A/B on one machine: vector strips on and off (csr_spmm, dia_vi_spmm), float32, k = 16 and 64, on the two
Laplacians of the SpMM run; a probe of the kernels' launches, not the harness.
Run: PYTHONPATH=src python scripts/spmm_vector_ab.py OUT.json"""
import sys, json
import numpy as np, cupy
from cocktail import SparseMatrix, timing
from cocktail.kernels.block_operands import BlockOperands
from cocktail.tuning.launch_rules import configure
from cocktail.bench.problems.generators import laplacian

out = {}
stream = cupy.cuda.Stream(non_blocking=True)
with stream:
    for name, S in (("laplace5_2000", laplacian(5, 2000)), ("laplace27_100", laplacian(27, 100))):
        S = S.astype(np.float32)
        for fmt, kern in (("csr", "csr_vector"), ("dia_vi", None)):
            A = SparseMatrix(S, format=fmt, kernel=kern)
            ex = A._executor
            for k in (16, 64):
                X = cupy.random.random((S.shape[1], k), dtype=cupy.float32)
                Y = cupy.zeros((S.shape[0], k), dtype=cupy.float32)
                for vec in (False, True):
                    full = configure(ex.block_spec, ex._storage, {"operands": BlockOperands.of(X, Y), "vector": vec},
                                     ex._props)
                    ls = ex.block_spec.bind(ex._storage, full, ex._props, False)
                    def go():
                        for l in ls: l(X.data.ptr, Y.data.ptr, np.float32(1), np.float32(0), stream.ptr)
                    us = timing.time_gpu([go], repeat=20).kernel_us
                    out[f"{name}/{ex.block_spec.name}/k{k}/vector={vec}"] = us
                    print(name, ex.block_spec.name, k, "vector" if vec else "scalar", round(us, 1), flush=True)
json.dump(out, open(sys.argv[1], "w"), indent=1)
