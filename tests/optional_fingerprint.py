"""Print a fingerprint of Cocktail's numbers in this install: ``python optional_fingerprint.py [HIDDEN,...]``.

Each named optional package is hidden first (as if not installed).  The fingerprint is a JSON object of a
SHA-256 per result: every format's stored values, products, transposes and scaled matrices of matrices in each
value dtype on the CPU, the result's dtype, and the suites' FEM matrices.  tests/test_optional_packages.py compares
the fingerprint with each optional package hidden against the one with all present: a missing optional package
may refuse clearly, never change a number.
"""

from __future__ import annotations

import hashlib
import json
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from hide_packages import hide  # noqa: E402

hide([n for n in (sys.argv[1] if len(sys.argv) > 1 else "").split(",") if n])

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

import cocktail  # noqa: E402
from cocktail import formats, precision  # noqa: E402

warnings.simplefilter("ignore")
#: The value dtypes every install has (bfloat16 needs ml_dtypes: hiding it refuses bfloat16, which is allowed).
DTYPES = ("float16", "float32", "float64", "complex64", "complex128")


def digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str(a.dtype).encode() + str(a.shape).encode() + a.tobytes())
    return h.hexdigest()[:16]


def source(dtype, seed=0, shape=(230, 190)):
    rng = np.random.default_rng(seed)
    S = sp.random_array(shape, density=0.04, format="csr", rng=rng)
    S = S + sp.eye_array(*shape, format="csr")  # a diagonal, for the diagonal formats
    S = sp.csr_array(S)
    data = rng.uniform(0.5, 2.0, S.nnz)
    if np.dtype(dtype).kind == "c":
        data = data + 1j * rng.uniform(0.5, 2.0, S.nnz)
    return sp.csr_array((data, S.indices, S.indptr), shape=shape), rng


def fingerprint() -> dict:
    out = {}
    for dtype in DTYPES:
        S, rng = source(dtype)
        x = rng.uniform(-1, 1, S.shape[1])
        u = rng.uniform(-1, 1, S.shape[0])
        for fmt in [*formats.names(), "auto"]:
            key = f"{dtype}/{fmt}"
            try:
                fill = {"max_fill": None} if fmt != "auto" and "max_fill" in formats.get(fmt).defaults else {}
                A = cocktail.SparseMatrix(S, format=fmt, device="cpu", dtype=dtype, **fill)
                y = A @ x.astype(A.dtype)
                out[key] = digest(A.to_scipy().data, y, (A.T @ u.astype(A.dtype)), (-A).to_scipy().data,
                                  (A * 2).to_scipy().data) + f" {A.format} {A.dtype.name} {y.dtype.name}"
            except Exception as exc:  # noqa: BLE001 - a refusal is part of the fingerprint (its kind, not text)
                out[key] = f"refused: {type(exc).__name__}"
    from cocktail.bench.problems import suites

    for suite in ("default-cpu",):
        for m in suites.get(suite):
            if "FEM" in m.kind:
                M = sp.csr_array(m.build())
                out[f"suite/{m.name}"] = digest(M.indptr, M.indices, M.data)
    out["precision.PRODUCT_DTYPES without bfloat16"] = ",".join(
        d.name for d in precision.PRODUCT_DTYPES if not precision.is_bfloat16(d))
    return out


if __name__ == "__main__":
    print(json.dumps(fingerprint(), indent=1, sort_keys=True))
