"""The block-product (SpMM) part of the console report: per dtype and block width, a headline against
cuSPARSE's best SpMM and a table of ``cocktail-auto`` beside ``cusparse-spmm-best`` and ``k`` SpMVs."""

from __future__ import annotations

from collections import defaultdict

from ..measuring.blocks import AUTO_COLUMNS, SPMM_BEST
from ..measuring.methods import AUTO
from ..records import metrics
from ..records.selection import spmm_records
from ..records.wrong import is_wrong, usable

#: What a cell of a wrong answer says (:mod:`..records.wrong`).
WRONG = "wrong"


def _by(records) -> dict:
    """Records grouped by (dtype, k), then keyed by (suite, matrix, method)."""
    out = defaultdict(dict)
    for r in records:
        out[(r["dtype"], r.get("k", 1))][(r.get("suite", ""), r["matrix"], r["method"])] = r
    return dict(sorted(out.items(), key=lambda item: (item[0][0], item[0][1])))


def _us(r) -> float | None:
    """The record's kernel time where it ran and answered right (:func:`~..records.wrong.usable`)."""
    return metrics.time_us(r) if r is not None and usable(r) else None


def _time_cell(r) -> str:
    """A time cell: ``wrong`` for a wrong answer, ``-`` without a time."""
    if r is not None and is_wrong(r):
        return WRONG
    t = _us(r)
    return f"{t:.1f}" if t else "-"


def sections(records) -> list[tuple[str, list[str], list[list[str]]]]:
    """``(headline, header, rows)`` per (dtype, k) of the SpMM records: each matrix's ``cocktail-auto``
    time and block kernel, ``cusparse-spmm-best`` (and its algorithm), the speedup, ``k`` separate SpMVs
    of the same plan and what the block product gains over them, and the DRAM model's share of the copy
    bandwidth.  The gain is left out (``-``) where the k-SpMV record planned differently; a wrong answer's
    times say ``wrong`` and give no figure."""
    out = []
    for (dtype, k), by in _by(spmm_records(records)).items():
        matrices = list(dict.fromkeys((suite, matrix) for suite, matrix, _ in by))
        rows, speedups, gains, wrong = [], [], [], 0
        for suite, matrix in matrices:
            auto = by.get((suite, matrix, AUTO))
            best = by.get((suite, matrix, SPMM_BEST))
            spmvs = by.get((suite, matrix, AUTO_COLUMNS))
            t_auto, t_best, t_spmvs = _us(auto), _us(best), _us(spmvs)
            wrong += auto is not None and is_wrong(auto)
            speedup = t_best / t_auto if t_auto and t_best else None
            # k SpMVs of the same plan only: each record plans for itself, and a raced plan may differ
            same_plan = bool(auto and spmvs) and auto["params"].get("plan") == spmvs["params"].get("plan")
            gain = t_spmvs / t_auto if t_auto and t_spmvs and same_plan else None
            if speedup:
                speedups.append(speedup)
            if gain:
                gains.append(gain)
            dram = auto.get("dram_fraction") if t_auto else None
            rows.append([matrix, _time_cell(auto), (auto or {}).get("params", {}).get("block", "-"),
                         _time_cell(best), _alg(best) if best else "-",
                         f"{speedup:.2f}x" if speedup else "-", _time_cell(spmvs),
                         f"{gain:.2f}x" if gain else "-", f"{dram:.0%}" if dram else "-"])
        out.append((_headline(dtype, k, speedups, gains, wrong), _header(k), rows))
    return out


def _headline(dtype: str, k: int, speedups: list, gains: list, wrong: int) -> str:
    """One (dtype, k)'s line: the geometric-mean speedup over cusparse-spmm-best, the matrices where
    cocktail-auto answered wrong, the gain over k SpMVs."""
    head = f"{dtype}, k = {k}: {AUTO} "
    if speedups:
        head += (f"{metrics.geomean(speedups):.2f}x {SPMM_BEST} in geometric mean over {len(speedups)} "
                 f"matrices (lowest {min(speedups):.2f}x)")
        head += f" ({wrong} more where {AUTO} answered wrong)" if wrong else ""
    elif wrong:
        head += f"answered wrong on {wrong} matri{'ces' if wrong != 1 else 'x'}: no speedup to give"
    else:
        head += f"has no {SPMM_BEST} to compare with"
    if gains:
        head += f"; {metrics.geomean(gains):.2f}x {k} separate SpMVs of its plan"
    return head


def _header(k: int) -> list[str]:
    return ["matrix", "auto µs", "block kernel", "cuSPARSE µs", "cuSPARSE alg", "speedup", f"{k} SpMVs µs", "gain",
            "DRAM of copy"]


def _alg(best) -> str:
    """The winning cuSPARSE SpMM algorithm of a ``cusparse-spmm-best`` record, as ``csr alg2 row``."""
    p = best.get("params", {})
    order = p.get("layout", "").replace("-major", "")
    return f"{p.get('storage', '?')} alg{p.get('alg', '?')} {order}".strip()
