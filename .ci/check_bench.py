"""Check a CPU ``cocktail bench --json`` run against SciPy: CI's smoke run of the README's main job.

Every SpMV record of the run must have been measured (or say why not), answer within its dtype's rounding of
SciPy's float64 product (the harness's ``rel_err``; float64 to 1e-12, which float32-rounded values miss by
four orders of magnitude), and every matrix must have SciPy's record and ``cocktail-auto``'s.  Exits non-zero
naming each failure.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict

#: The largest relative error from SciPy's float64 product, by the dtype the product ran in: a few ulps of the
#: dtype times the row lengths of the CPU suite, far below the harness's flag (which only catches the gross).
TIGHT = {"float32": 1e-5, "float64": 1e-12, "complex64": 1e-5, "complex128": 1e-12}


def problems(records: list[dict]) -> list[str]:
    """What is wrong with the run's records, one line each (empty when all is well)."""
    out, methods = [], defaultdict(set)
    spmv = [r for r in records if r.get("section", "spmv") == "spmv" and r.get("k", 1) == 1]
    if not spmv:
        return ["no SpMV record in the run"]
    for r in spmv:
        where = f"{r['matrix']} {r['dtype']} {r['method']}"
        methods[(r["matrix"], r["dtype"])].add(r["method"])
        if r.get("kernel_us") is None:
            if not r.get("note"):
                out.append(f"{where}: no time and no note saying why")
            continue
        err, bound = r.get("rel_err"), TIGHT.get(r["dtype"])
        if err is None or bound is None or not err <= bound:
            out.append(f"{where}: relative error {err!r} from SciPy's float64 product, past {bound}")
        if (r.get("note") or "").startswith("WRONG"):
            out.append(f"{where}: {r['note']}")
    for (matrix, dtype), names in sorted(methods.items()):
        for needed in ("scipy", "cocktail-auto"):
            if needed not in names:
                out.append(f"{matrix} {dtype}: no {needed} record")
    return out


def main(path: str) -> int:
    records = json.loads(open(path).read())
    found = problems(records)
    for line in found:
        print(f"check_bench: {line}", file=sys.stderr)
    matrices = {r["matrix"] for r in records}
    print(f"check_bench: {len(records)} records on {len(matrices)} matrices, {len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
