"""The end-to-end targets ("decide in the time of a transfer"), each met or missed, from one run's committed JSON.

Usage: python scripts/decide_targets.py PROBE.json WORKLOAD.json E2E.json [E2E.json ...]

PROBE.json is scripts/construction_probe.py's (float64: each stage of a build, the plan's SpMV, a build from the
decision cache, the plan after 200, 1,000 and 5,000 products against tune="measure"'s); WORKLOAD.json is
`cocktail bench --workload --json`'s; each E2E.json is `cocktail bench --end-to-end --json`'s (one dtype and
suite each).  Prints a markdown list, one line a target.
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict

from cocktail.bench.records.files import load_json

BIG = 1_000_000  # the analysis targets hold on matrices of at least this many nonzeros


def _records(path):
    data = load_json(path)
    return data["records"] if isinstance(data, dict) else data


def _verdict(ok: bool) -> str:
    return "met" if ok else "missed"


def _count(met: int, total: int) -> str:
    """``met on all 8`` or ``missed on 2 of 8``."""
    return f"met on all {total}" if met == total else f"missed on {total - met} of {total}"


def analysis(probe) -> list[str]:
    """Analysis (features, planning, conversion) and a cache hit, in SpMVs of the chosen plan."""
    big = [r for r in probe if r["nnz"] >= BIG and r.get("report_ms")]
    spmvs = {r["matrix"]: (r["report_ms"]["analysis_s"] + r["report_ms"]["convert_s"]) * 1e3 / r["spmv_us"]
             for r in big}
    features = {r["matrix"]: r["report_ms"]["features_s"] * 1e3 / r["spmv_us"] for r in big}
    worst = max(spmvs, key=spmvs.get)
    median = statistics.median(spmvs.values())
    hits = {r["matrix"]: r["cache_hit_spmvs"] for r in probe if "cache_hit_spmvs" in r}
    out = [f"- Analysis at most 20 SpMVs in median and 40 at most ({len(big)} matrices of 1M+ nonzeros, float64, "
           f"built from the device): {_verdict(median <= 20 and spmvs[worst] <= 40)}, median "
           f"{median:.0f}, most {spmvs[worst]:.0f} ({worst}); of which the features median "
           f"{statistics.median(features.values()):.0f} SpMVs."]
    if hits:
        hw = max(hits, key=hits.get)
        out.append(f"- A decision-cache hit at most 2 SpMVs ({len(hits)} matrices, float64, from the device): "
                   f"{_verdict(max(hits.values()) <= 2)}, median {statistics.median(hits.values()):.1f}, most "
                   f"{hits[hw]:.1f} ({hw}).")
    return out


def whole_jobs(e2e_files, probe) -> list[str]:
    """The whole job against cupyx's at N = 10, 100 and 1,000, built from the host."""
    out = []
    kernel = {r["matrix"]: r["cupyx_spmv_us"] / r["spmv_us"] for r in probe if r.get("spmv_us")}
    for path in e2e_files:
        totals = defaultdict(dict)
        records = [r for r in _records(path) if r.get("section") == "end-to-end" and r["build_from"] == "host"]
        for r in records:
            if r["method"] in ("cocktail-auto", "cupyx") and r.get("total_us"):
                totals[(r["matrix"], r["products"])][r["method"]] = r["total_us"]
        ratio = {key: pair["cupyx"] / pair["cocktail-auto"] for key, pair in totals.items() if len(pair) == 2}
        dtype = records[0]["dtype"] if records else "?"
        suite = records[0].get("suite", "?") if records else "?"
        for n, floor in ((10, 0.9), (100, 1.0)):
            at = {m: v for (m, k), v in ratio.items() if k == n}
            if not at:
                continue
            low = min(at, key=at.get)
            met = sum(v >= floor for v in at.values())
            out.append(f"- Whole job at least {floor}x cupyx's at N = {n} ({suite}, {dtype}, from the host): "
                       f"{_count(met, len(at))}, lowest {at[low]:.2f}x ({low}), "
                       f"geometric mean {statistics.geometric_mean(at.values()):.2f}x.")
        at = {m: v / kernel[m] for (m, k), v in ratio.items() if k == 1000 and m in kernel}
        if at and dtype == "float64":
            low = min(at, key=at.get)
            met = sum(v >= 0.95 for v in at.values())
            out.append(f"- At N = 1,000 at least 0.95 of our kernel-time speedup over cupyx ({suite}, {dtype}; the "
                       f"kernel times are the probe's): {_count(met, len(at))}, "
                       f"lowest {at[low]:.2f} ({low}).")
    return out


def tuning(probe) -> list[str]:
    """After 200 products within 3% of tune="measure"'s kernel time; never moved to a slower plan."""
    rows = [r for r in probe if "us_after_200" in r]
    slow = {r["matrix"]: r["us_after_200"] / r["measure_us"] for r in rows if r["us_after_200"] > 1.03 * r["measure_us"]}
    late = {r["matrix"]: r["us_after_5000"] / r["measure_us"] for r in rows
            if r["us_after_5000"] > 1.03 * r["measure_us"]}
    worse = [r["matrix"] for r in rows  # moved, and the graph replays read the new plan slower than the first
             if r["plan_after_5000"] != r["plan"] and r["us_after_5000"] > 1.03 * r["spmv_us"]]
    worst = max(slow, key=slow.get) if slow else None
    return [f"- After 200 products within 3% of tune='measure''s kernel time ({len(rows)} matrices, float64): "
            f"{_verdict(not slow)}, {len(slow)} of {len(rows)} slower"
            + (f" (up to {slow[worst]:.2f}x, {worst})" if worst else "")
            + f"; after 5,000 products {len(late)} of {len(rows)}.",
            f"- Never a move to a plan not measured faster: {_verdict(not worse)} "
            f"({len(worse)} of {len(rows)} matrices moved to a plan that graph replays read over 3% slower than their first"
            + (f": {', '.join(worse)}" if worse else "") + ")."]


def workload(path) -> list[str]:
    """The 50-matrix workload against cupyx."""
    total = {r["method"]: r["total_us"] for r in _records(path) if r.get("section") == "workload"}
    ratio = total["cupyx"] / total["cocktail-auto"]
    return [f"- Workload of 50 matrices, 20 products each, at least 1.0x cupyx: {_verdict(ratio >= 1.0)}, "
            f"{ratio:.2f}x ({total['cocktail-auto'] / 1e6:.2f} s against {total['cupyx'] / 1e6:.2f} s)."]


def main(argv) -> None:
    probe, work, e2e = load_json(argv[0]), argv[1], argv[2:]
    for line in analysis(probe) + whole_jobs(e2e, probe) + tuning(probe) + workload(work):
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
