"""The block-product (SpMM) part of the console report: per dtype and block width, a headline against
cuSPARSE's best SpMM and a table of ``cocktail-auto`` beside ``cusparse-spmm-best`` and ``k`` SpMVs."""

from __future__ import annotations

from collections import defaultdict

from ..measuring.blocks import AUTO_COLUMNS, SPMM_BEST
from ..records import metrics
from ..records.selection import spmm_records

AUTO = "cocktail-auto"


def _by(records) -> dict:
    """Records grouped by (dtype, k), then keyed by (suite, matrix, method)."""
    out = defaultdict(dict)
    for r in records:
        out[(r["dtype"], r.get("k", 1))][(r.get("suite", ""), r["matrix"], r["method"])] = r
    return dict(sorted(out.items(), key=lambda item: (item[0][0], item[0][1])))


def _us(r) -> float | None:
    return metrics.time_us(r) if r is not None and not r.get("note") else None


def sections(records) -> list[tuple[str, list[str], list[list[str]]]]:
    """``(headline, header, rows)`` per (dtype, k) of the SpMM records: each matrix's ``cocktail-auto``
    time and block kernel, ``cusparse-spmm-best`` (and its algorithm), the speedup, ``k`` separate SpMVs
    of the same plan and what the block product gains over them, and the DRAM model's share of the copy
    bandwidth.  The gain is left out (``-``) where the k-SpMV record planned differently."""
    out = []
    for (dtype, k), by in _by(spmm_records(records)).items():
        matrices = list(dict.fromkeys((suite, matrix) for suite, matrix, _ in by))
        rows, speedups, gains = [], [], []
        for suite, matrix in matrices:
            auto = by.get((suite, matrix, AUTO))
            best = by.get((suite, matrix, SPMM_BEST))
            spmvs = by.get((suite, matrix, AUTO_COLUMNS))
            t_auto, t_best, t_spmvs = _us(auto), _us(best), _us(spmvs)
            speedup = t_best / t_auto if t_auto and t_best else None
            # k SpMVs of the same plan only: each record plans for itself, and a raced plan may differ
            same_plan = bool(auto and spmvs) and auto["params"].get("plan") == spmvs["params"].get("plan")
            gain = t_spmvs / t_auto if t_auto and t_spmvs and same_plan else None
            if speedup:
                speedups.append(speedup)
            if gain:
                gains.append(gain)
            dram = auto.get("dram_fraction") if auto else None
            rows.append([matrix, f"{t_auto:.1f}" if t_auto else "-", (auto or {}).get("params", {}).get("block", "-"),
                         f"{t_best:.1f}" if t_best else "-",
                         _alg(best) if best else "-",
                         f"{speedup:.2f}x" if speedup else "-", f"{t_spmvs:.1f}" if t_spmvs else "-",
                         f"{gain:.2f}x" if gain else "-", f"{dram:.0%}" if dram else "-"])
        head = f"{dtype}, k = {k}: {AUTO} "
        if speedups:
            head += (f"{metrics.geomean(speedups):.2f}x {SPMM_BEST} in geometric mean over {len(speedups)} "
                     f"matrices (lowest {min(speedups):.2f}x)")
        else:
            head += f"has no {SPMM_BEST} to compare with"
        if gains:
            head += f"; {metrics.geomean(gains):.2f}x {k} separate SpMVs of its plan"
        header = ["matrix", "auto µs", "block kernel", "cuSPARSE µs", "cuSPARSE alg", "speedup", f"{k} SpMVs µs",
                  "gain", "DRAM of copy"]
        out.append((head, header, rows))
    return out


def _alg(best) -> str:
    """The winning cuSPARSE SpMM algorithm of a ``cusparse-spmm-best`` record, as ``csr alg2 row``."""
    p = best.get("params", {})
    order = p.get("layout", "").replace("-major", "")
    return f"{p.get('storage', '?')} alg{p.get('alg', '?')} {order}".strip()
