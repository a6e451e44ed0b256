"""Shape sweep of the block kernels: rule shapes in both layouts, a grid of merge shapes and items,
column-major shapes, against k SpMVs of format="auto" and cupyx, float32. Exploration for the rules in
cocktail.tuning.kernel_rules (spmm_shape, spmm_merge_shape), not a benchmark: numbers that are reported
come from cocktail bench. Run: PYTHONPATH=src python scripts/spmm_shape_sweep.py OUT.json"""
import sys, json
import numpy as np, cupy, cupyx.scipy.sparse as cps
from cocktail import SparseMatrix, timing
from cocktail.kernels.block_operands import BlockOperands
from cocktail.tuning.launch_rules import configure
from cocktail.bench.problems.generators import laplacian, power_law
from cocktail.bench.problems import holdout

def launches_for(A, X, Y, **p):
    ex = A._executor
    spec = ex.block_spec
    full = configure(spec, ex._storage, {"operands": BlockOperands.of(X, Y), **p}, ex._props)
    return spec.bind(ex._storage, full, ex._props, False)

def t(fn, r=10):
    return round(timing.time_gpu([fn], repeat=r).kernel_us, 1)

out = {}
mats = [("lap2d_2000", lambda: laplacian(5, 2000)), ("lap27_100", lambda: laplacian(27, 100)),
        ("powerlaw_1M", lambda: power_law(1_000_000)), ("rmat19", lambda: holdout.rmat(k=19))]
stream = cupy.cuda.Stream(non_blocking=True)
with stream:
  for name, build in mats:
    S = build().astype(np.float32); S.sum_duplicates(); S.sort_indices()
    V = SparseMatrix(S, format="csr", kernel="csr_vector")
    M = SparseMatrix(S, format="csr", kernel="csr_merge")
    auto = SparseMatrix(S)
    C = cps.csr_matrix(S)
    m, n = S.shape
    print(name, S.shape, S.nnz, "auto:", auto.format, auto.kernel, flush=True)
    for k in (4, 16, 64):
        X = cupy.random.random((n, k), dtype=cupy.float32); XF = cupy.asfortranarray(X)
        Y = cupy.zeros((m, k), dtype=cupy.float32); YF = cupy.asfortranarray(Y)
        ref = C @ X
        res = {}
        for label, A in (("vec", V), ("merge", M)):
            res[label] = t(lambda: A.matmat(X, out=Y))
            res[label + "_err"] = float(cupy.abs(Y - ref).max() / cupy.abs(ref).max())
            res[label + "_F"] = t(lambda: A.matmat(XF, out=YF))
            res[label + "_F_err"] = float(cupy.abs(YF - ref).max() / cupy.abs(ref).max())
        cols = [cupy.ascontiguousarray(XF[:, j]) for j in range(k)]
        ys = [cupy.empty(m, dtype=cupy.float32) for j in range(k)]
        def kspmv():
            for j in range(k):
                auto.matvec(cols[j], out=ys[j])
        res["k_spmv_auto"] = t(kspmv, 5)
        res["cupyx_row"] = t(lambda: C @ X)
        res["cupyx_col"] = t(lambda: C @ XF)
        # shape sweep for the merge kernel (row-major) and column-major shapes
        for lanes, cols_ in ((1, 4), (2, 4), (4, 4), (8, 4), (16, 4), (4, 2), (8, 2), (16, 2), (32, 2)):
            if lanes * cols_ > 2 * k and lanes > 1: continue
            for items in (32, 64, 128):
                ls = launches_for(M, X, Y, lanes=lanes, columns_per_lane=cols_, items_per_share=items)
                def go():
                    for l in ls: l(X.data.ptr, Y.data.ptr, np.float32(1), np.float32(0), stream.ptr)
                res[f"mL{lanes}C{cols_}i{items}"] = t(go)
        for lanes, cols_ in ((1, 2), (1, 4), (1, 8), (2, 4), (4, 4)):
            ls = launches_for(V, XF, YF, lanes=lanes, columns_per_lane=cols_)
            def go():
                for l in ls: l(XF.data.ptr, YF.data.ptr, np.float32(1), np.float32(0), stream.ptr)
            res[f"vF_L{lanes}C{cols_}"] = t(go)
        print(name, k, res, flush=True)
        out[f"{name}/{k}"] = res
        json.dump(out, open(sys.argv[1], "w"), indent=1)
