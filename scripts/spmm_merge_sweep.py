"""The sweep behind the rules spmm_merge_shape and SPMM_MERGE_CHUNK: csr_spmm_merge's shapes (lanes x columns per
lane, scalar or vector strips) and columns per launch (chunk), float32 and float64, on powerlaw_1M and rmat19 at
k = 16 and 64, with cuSPARSE's SpMM (row-major, each CSR algorithm) beside them.  A probe of the kernel's
launches through cocktail.timing, not the harness: numbers reported as results come from `cocktail bench`.
Run: PYTHONPATH=src python scripts/spmm_merge_sweep.py OUT.json"""
import sys, json
import numpy as np, cupy
from cocktail import SparseMatrix, timing
from cocktail.kernels.block_operands import BlockOperands
from cocktail.tuning.launch_rules import configure
from cocktail.bench.problems.generators import power_law
from cocktail.bench.problems.holdout import rmat
from cocktail.kernels import cusparse_spmm

out = {}
stream = cupy.cuda.Stream(non_blocking=True)
mats = (("powerlaw_1M", power_law(1_000_000)), ("rmat19", rmat(k=19)))
with stream:
    for name, S0 in mats:
        for dt in ("float32", "float64"):
            S = S0.astype(dt)
            A = SparseMatrix(S, format="csr", kernel="csr_merge")
            ex = A._executor
            ex.prepare_blocks()
            for k in (16, 64):
                X = cupy.random.random((S.shape[1], k)).astype(dt)
                Y = cupy.zeros((S.shape[0], k), dtype=dt)
                ops = BlockOperands.of(X, Y)
                one, zero = np.dtype(dt).type(1), np.dtype(dt).type(0)
                shapes = [(4, 2, False), (8, 2, False), (4, 4, False), (2, 4, True), (4, 4, True), (8, 4, True),
                          (16, 4, True), (4, 2, True), (8, 2, True), (2, 8, True), (4, 8, True)]
                for lanes, cols, vec in shapes:
                    if vec and (cols * np.dtype(dt).itemsize) % 16:
                        continue
                    for chunk in ((16, 64) if k == 64 else (16,)):
                        try:
                            full = configure(ex.block_spec, ex._storage, {"operands": ops, "lanes": lanes,
                                             "columns_per_lane": cols, "vector": vec, "chunk": chunk,
                                             "prepared": ex._block_prepared if chunk == 16 else None}, ex._props)
                            ls = ex.block_spec.bind(ex._storage, full, ex._props, False)
                        except Exception as e:
                            print("skip", lanes, cols, vec, e); continue
                        def go():
                            for l in ls: l(X.data.ptr, Y.data.ptr, one, zero, stream.ptr)
                        us = timing.time_gpu([go], repeat=10).kernel_us
                        key = f"{name}/{dt}/k{k}/L{lanes}C{cols}{'v' if vec else 's'}/chunk{chunk}"
                        out[key] = us
                        print(key, round(us, 1), flush=True)
                for alg in (1, 2, 3):
                    try:
                        l = cusparse_spmm.SpMMLaunch("csr", alg, S.shape, S.nnz, (ex._storage.indptr, ex._storage.indices, ex._storage.data), dt, ex._storage.index_dtype, 0, k, "row")
                    except Exception as e:
                        print("vendor skip", alg, e); continue
                    us = timing.time_gpu([lambda: l(X.data.ptr, Y.data.ptr, one, zero, stream.ptr)], repeat=10).kernel_us
                    out[f"{name}/{dt}/k{k}/cusparse_alg{alg}_row"] = us
                    print(name, dt, k, "cusparse alg", alg, round(us, 1), flush=True)
json.dump(out, open(sys.argv[1], "w"), indent=1)
