"""The call-overhead, planner and performance targets, checked against records: each a ratio per matrix, its
geometric mean and worst, and pass or miss.

Call overhead (back to back, :mod:`.overhead`): ``A.matvec(x, out=y)`` within 2x an empty
kernel launch, ``A @ x`` within 2.5x, the bound product within 1.2x an empty graph replay, on
every host-bound matrix (:func:`host_bound`); and, not a target, the bound product over a
raw replay of its own graph on every matrix (Cocktail's host cost alone).  Call time of the SpMV records (one
synchronous call): cupyx ``A @ x`` over
``cocktail-auto`` at least 2.5x in geometric mean, ``torch.mv`` never faster than
``cocktail-auto``.  On the CPU: ``cocktail-auto`` within 1.2x of SciPy's time on every matrix.
Records are dictionaries as written to JSON; records with a ``note`` (refused, failed) count as not
measured, and wrong answers (:func:`~..records.wrong.is_wrong`) as wrong: a verdict names both.

The performance targets (:func:`performance_verdicts`), on the GPU SpMV records: ``cusparse-best`` kernel time
over ``cocktail-auto``'s at least 1.5x in geometric mean and 0.95x on every matrix; the cupyx
call-time target above; on matrices whose CSR moves more than 4x the L2 size, the
``dram_fraction`` of ``cocktail-auto`` (the DRAM traffic model over the time, against the copy
bandwidth) at least 0.85 on regular matrices and 0.60 on power-law ones (the suites' families,
:mod:`.families`); and DIA on the structured suite's Laplacians within 0.8 of the floor time of
reading the values once plus ``x`` and ``y`` at the copy bandwidth.

Never slower than the vendor (:func:`vendor_verdicts`): ``cocktail-auto`` at least 0.97x
``cusparse-best`` on every matrix and 1.5x in geometric mean; our own kernels alone
(``cocktail-auto-own``) at least 1.0x in geometric mean over the power-law family;
``cocktail-auto`` at least 0.95x ``cocktail-measured`` on every matrix; analysis, planning and
the race against the vendor within 20 SpMVs of the chosen plan on matrices of 1M entries or more.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..records import metrics
from ...precision import itemsize
from ..measuring import methods as _methods, paired
from ..measuring.baselines import CUSPARSE_BEST, Scipy
from ..problems.families import POWER_LAW, REGULAR
from ..measuring.overhead_ways import BOUND, BOUND_GRAPH, EMPTY_LAUNCH, MATMUL, MATVEC
from ..records.selection import BEST_SINGLE, overhead_records, spmv_records
from ..records.wrong import is_wrong, usable

AUTO = _methods.AUTO
OWN = _methods.OWN.name
MEASURED = _methods.MEASURED.name
SCIPY = Scipy().name


@dataclass(frozen=True)
class Target:
    """A ratio per matrix and the limit its ``statistic`` (``"worst"`` or ``"geomean"``) must meet."""

    title: str
    limit: float
    higher_is_better: bool  # speedups: higher is better; time ratios: lower is better
    statistic: str = "worst"

    def limit_text(self) -> str:
        """The limit as people read it, e.g. ``worst <= 2`` or ``geomean >= 2.5``."""
        return f"{self.statistic} {'>=' if self.higher_is_better else '<='} {self.limit:.3g}"


MATVEC_TARGET = Target("back to back, host-bound matrices: A.matvec(x, out=y) / empty launch", 2.0, False)
MATMUL_TARGET = Target("back to back, host-bound matrices: A @ x / empty launch", 2.5, False)
BOUND_TARGET = Target("back to back, host-bound matrices: A.bind(x, out=y)() / empty graph replay", 1.2, False)
#: Not an issue target: the bound product against a raw replay of its own graph, i.e. Cocktail's
#: host cost alone (the empty-graph ratio also counts the product's kernels running on the GPU).
BOUND_HOST_TARGET = Target("back to back: A.bind(x, out=y)() / its own graph replayed raw", 1.2, False)
CUPYX_TARGET = Target("call time: cupyx A @ x / cocktail-auto", 2.5, True, "geomean")
TORCH_TARGET = Target("call time: torch.mv / cocktail-auto", 1.0, True)
#: On the CPU, cocktail-auto within 1.2x of SciPy's time, as a speedup like every comparison.
CPU_TARGET = Target("CPU time: SciPy / cocktail-auto", 1 / 1.2, True)

#: The planner targets, on kernel time: best-single's time over the method's (1.0: as fast).
AUTO_GEOMEAN_TARGET = Target("kernel time: best-single / cocktail-auto", 0.9, True, "geomean")
AUTO_WORST_TARGET = Target("kernel time: best-single / cocktail-auto", 0.8, True)
MEASURED_TARGET = Target("kernel time: best-single / cocktail-measured", 0.97, True, "geomean")
COCKTAIL_SUITE_TARGET = Target("cocktail suite, kernel time: best-single / cocktail-auto", 1.1, True, "geomean")
ANALYSIS_TARGET = Target("cocktail-auto analysis and planning, in SpMVs of its plan", 20.0, False)

#: The performance targets: cusparse-best's kernel time over cocktail-auto's (the cupyx call-time
#: target is CUPYX_TARGET, shared with the call-overhead targets); the DRAM model's bandwidth on matrices whose CSR
#: moves more than LARGE_L2_MULTIPLE times the L2 size; DIA against its floor on the Laplacians.
CUSPARSE_GEOMEAN_TARGET = Target("kernel time: cusparse-best / cocktail-auto", 1.5, True, "geomean")
CUSPARSE_WORST_TARGET = Target("kernel time: cusparse-best / cocktail-auto", 0.95, True)
DRAM_REGULAR_TARGET = Target("regular matrices over 4x L2: cocktail-auto DRAM-model GB/s / copy GB/s", 0.85, True)
DRAM_POWER_LAW_TARGET = Target("power-law matrices over 4x L2: cocktail-auto DRAM-model GB/s / copy GB/s", 0.60,
                               True)
LARGE_L2_MULTIPLE = 4
#: The DIA kernels judged against the floor; dia_vi (value-indexed DIA) where it exists.
DIA_METHODS = ("dia", "dia_vi")
DIA_FLOOR_TARGETS = {m: Target(f"structured Laplacians: floor time (values once + x + y at copy GB/s) / {m} kernel "
                               "time", 0.80, True) for m in DIA_METHODS}
ISSUE_10_TARGETS = (CUSPARSE_GEOMEAN_TARGET, CUSPARSE_WORST_TARGET, CUPYX_TARGET, DRAM_REGULAR_TARGET,
                    DRAM_POWER_LAW_TARGET, *DIA_FLOOR_TARGETS.values())

#: Never slower than the vendor: cusparse-best's kernel time over cocktail-auto's on every matrix (and
#: CUSPARSE_GEOMEAN_TARGET); our own kernels alone (cocktail-auto-own) on the power-law family;
#: cocktail-auto against cocktail-measured; analysis, planning and the race against the vendor in
#: SpMVs of the chosen plan, on matrices of at least ANALYSIS_MIN_NNZ entries.
VENDOR_WORST_TARGET = Target("kernel time: cusparse-best / cocktail-auto", 0.97, True)
OWN_POWER_LAW_TARGET = Target("power-law matrices, kernel time: cusparse-best / cocktail-auto-own", 1.0, True,
                              "geomean")
AUTO_OVER_MEASURED_TARGET = Target("kernel time: cocktail-measured / cocktail-auto", 0.95, True)
PLANNING_TARGET = Target("cocktail-auto analysis, planning and race, in SpMVs of its plan (1M+ entries)", 20.0,
                         False)
CACHE_HIT_TARGET = Target("cocktail-auto decision from the decision cache, in SpMVs of its plan (1M+ entries)", 2.0,
                          False)
ANALYSIS_MIN_NNZ = 1_000_000
VENDOR_TARGETS = (CUSPARSE_GEOMEAN_TARGET, VENDOR_WORST_TARGET, OWN_POWER_LAW_TARGET, AUTO_OVER_MEASURED_TARGET,
                  PLANNING_TARGET, CACHE_HIT_TARGET)

#: Overhead target -> (method, record field): the ratio comes from the overhead records.
OVERHEAD_TARGETS = {MATVEC_TARGET: (MATVEC, "over_empty_launch"), MATMUL_TARGET: (MATMUL, "over_empty_launch"),
                    BOUND_TARGET: (BOUND, "over_empty_graph")}


@dataclass(frozen=True)
class Verdict:
    """One target on one dtype: the ratio per matrix and what it comes to."""

    target: Target
    dtype: str
    ratios: dict  # matrix -> ratio
    missing: tuple = ()  # matrices where a side of the ratio was not measured
    wrong: tuple = ()  # matrices where a side of the ratio answered wrong

    @property
    def geomean(self) -> float | None:
        """Geometric mean of the ratios (None without any)."""
        positive = [v for v in self.ratios.values() if v > 0]
        return metrics.geomean(positive) if positive else None

    @property
    def worst(self) -> tuple[str, float] | None:
        """(matrix, ratio) of the worst matrix: the lowest speedup or the highest time ratio."""
        if not self.ratios:
            return None
        pick = min if self.target.higher_is_better else max
        return pick(self.ratios.items(), key=lambda item: item[1])

    @property
    def passed(self) -> bool | None:
        """True or False where measured on every matrix (a wrong answer misses); None where no matrix was
        measured and none answered wrong."""
        if self.wrong:
            return False
        if not self.ratios:
            return None
        value = self.geomean if self.target.statistic == "geomean" else self.worst[1]
        within = value >= self.target.limit if self.target.higher_is_better else value <= self.target.limit
        return within and not self.missing

    def verdict_text(self) -> str:
        """``pass``, ``miss``, ``miss (1 wrong, 2 not measured)``, or why there is no verdict."""
        if self.passed is None:
            return "not measured"
        why = [f"{n} {what}" for n, what in ((len(self.wrong), "wrong"), (len(self.missing), "not measured")) if n]
        if why:
            return f"miss ({', '.join(why)})"
        return "pass" if self.passed else "miss"


def _ratios(by_matrix: dict, numerator: str, denominator: str, field) -> tuple[dict, tuple, tuple]:
    """``(ratios, missing, wrong)``: ``field`` of ``numerator``'s record over ``denominator``'s per matrix; the
    matrices where a side did not run (or has no value), and those where a side answered wrong."""
    ratios, missing, wrong = {}, [], []
    for matrix, methods in by_matrix.items():
        a, b = methods.get(numerator), methods.get(denominator)
        if a is None and b is None:
            continue
        if any(r is not None and is_wrong(r) for r in (a, b)):
            wrong.append(matrix)
            continue
        va, vb = (None if r is None or not usable(r) else field(r) for r in (a, b))
        if va and vb:
            ratios[matrix] = va / vb
        else:
            missing.append(matrix)
    return ratios, tuple(missing), tuple(wrong)


def _by_matrix(records, dtype: str, keep=lambda r: True) -> dict:
    """``{matrix label: {method: record}}`` of one dtype; the label adds the suite where matrices repeat."""
    out = {}
    for r in records:
        if r["dtype"] == dtype and keep(r):
            out.setdefault((r.get("suite", ""), r["matrix"]), {})[r["method"]] = r
    names = [m for _, m in out]
    return {(m if names.count(m) == 1 else f"{s}/{m}"): v for (s, m), v in out.items()}


def _gpu_spmv(records) -> list:
    """The SpMV records timed on the GPU."""
    return [r for r in spmv_records(records) if r.get("kernel_timing") != "cpu"]


def _time_verdicts(by_matrix: dict, dtype: str, targets, numerator: str, denominator: str,
                   keep=lambda methods: True) -> list:
    """``targets`` judged on ``numerator``'s kernel time over ``denominator``'s, over the matrices where both
    ran and ``keep(methods)`` holds (none when there is no such matrix)."""
    relevant = {m: v for m, v in by_matrix.items() if numerator in v and denominator in v and keep(v)}
    if not relevant:
        return []
    ratios = _ratios(relevant, numerator, denominator, metrics.time_us)
    return [Verdict(target, dtype, *ratios) for target in targets]


def host_bound(methods: dict) -> bool:
    """True when host time can dominate a matrix's calls: its product's own graph replays faster than
    one empty launch from Python.  On larger matrices back-to-back calls run at the kernels' pace and
    the floor ratios measure the kernels, not the call; without the graph replay, assume host-bound."""
    graph, empty = methods.get(BOUND_GRAPH), methods.get(EMPTY_LAUNCH)
    if not graph or not empty or not usable(graph) or not usable(empty):
        return True
    g, e = graph.get("back_to_back_us"), empty.get("back_to_back_us")
    return not (g and e) or g < e


def overhead_verdicts(records) -> list[Verdict]:
    """The three back-to-back targets per dtype, on the host-bound matrices (:func:`host_bound`), and
    the bound product over its own graph replayed raw, on every matrix."""
    rows = overhead_records(records)
    out = []
    for dtype in dict.fromkeys(r["dtype"] for r in rows):
        by_matrix = _by_matrix(rows, dtype)
        for target, (method, field) in OVERHEAD_TARGETS.items():
            picked = {matrix: methods[method] for matrix, methods in by_matrix.items()
                      if host_bound(methods) and method in methods}
            out.append(Verdict(target, dtype, *_values(picked, lambda r, field=field: r.get(field))))
        out.append(Verdict(BOUND_HOST_TARGET, dtype,
                           *_ratios(by_matrix, BOUND, BOUND_GRAPH, lambda r: r.get("back_to_back_us"))))
    return out


def call_time_verdicts(records) -> list[Verdict]:
    """cupyx and torch call time over ``cocktail-auto``'s, per dtype of the GPU SpMV records where they ran."""
    rows = [r for r in spmv_records(records) if r.get("kernel_timing") != "cpu" or r["method"] != AUTO]
    out = []
    for dtype in dict.fromkeys(r["dtype"] for r in rows):
        by_matrix = _by_matrix(rows, dtype)
        for target, other in ((CUPYX_TARGET, "cupyx"), (TORCH_TARGET, "torch")):
            relevant = {m: v for m, v in by_matrix.items() if AUTO in v and other in v}
            if relevant:
                out.append(Verdict(target, dtype, *_ratios(relevant, other, AUTO, lambda r: r.get("call_us"))))
    return out


def cpu_verdicts(records) -> list[Verdict]:
    """SciPy's time over ``cocktail-auto``'s on the CPU (a speedup), per dtype of the CPU SpMV records."""
    rows = [r for r in spmv_records(records) if r.get("kernel_timing") == "cpu"]
    out = []
    for dtype in dict.fromkeys(r["dtype"] for r in rows):
        relevant = {m: v for m, v in _by_matrix(rows, dtype).items() if AUTO in v and SCIPY in v}
        if relevant:
            ratios, missing, wrong = _ratios(relevant, SCIPY, AUTO, metrics.time_us)
            paired_ratios = {m: paired.speedup(relevant[m][AUTO], relevant[m][SCIPY]) for m in ratios}
            out.append(Verdict(CPU_TARGET, dtype, paired_ratios, missing, wrong))
    return out


def planner_verdicts(records) -> list[Verdict]:
    """The planner targets per dtype: cocktail-auto and cocktail-measured against best-single, the
    cocktail suite, and the analysis cost in SpMVs (GPU SpMV records)."""
    rows = _gpu_spmv(records)
    out = []
    for dtype in dict.fromkeys(r["dtype"] for r in rows):
        by_matrix = _by_matrix(rows, dtype)
        for target, method, keep in ((AUTO_GEOMEAN_TARGET, AUTO, None), (AUTO_WORST_TARGET, AUTO, None),
                                     (MEASURED_TARGET, MEASURED, None),
                                     (COCKTAIL_SUITE_TARGET, AUTO, "cocktail")):
            out += _time_verdicts(by_matrix, dtype, (target,), BEST_SINGLE, method,
                                  lambda v, method=method, keep=keep: keep is None or v[method].get("suite") == keep)
        picked = {m: v[AUTO] for m, v in by_matrix.items() if AUTO in v and (v[AUTO].get("analysis_spmvs")
                                                                            or is_wrong(v[AUTO]))}
        if picked:
            out.append(Verdict(ANALYSIS_TARGET, dtype, *_values(picked, lambda r: r.get("analysis_spmvs"))))
    return out


def _values(picked: dict, value) -> tuple[dict, tuple, tuple]:
    """``(values, missing, wrong)``: ``{matrix: value(record)}`` of the records in ``picked`` (``{matrix:
    record}``); one refused, failed or without a value is not measured; a wrong answer is wrong."""
    ratios, missing, wrong = {}, [], []
    for matrix, r in picked.items():
        v = value(r) if usable(r) else None
        if is_wrong(r):
            wrong.append(matrix)
        elif v:
            ratios[matrix] = float(v)
        else:
            missing.append(matrix)
    return ratios, tuple(missing), tuple(wrong)


def csr_dram_bytes(record) -> int:
    """The size of a record's matrix for the L2 test: the DRAM model of its CSR with int32 indices
    (values and column indices, row pointers, ``x`` and ``y`` once), whatever method ran, so the
    matrices judged do not change with the format the planner picks."""
    val = itemsize(record["dtype"])  # a bfloat16 record read without ml_dtypes too
    m, n, nnz = int(record["rows"]), int(record["cols"]), int(record["nnz"])
    return nnz * (val + 4) + (m + 1) * 4 + n * val + m * val


def beyond_l2(methods: dict) -> bool:
    """True when a matrix (``{method: record}``) moves more than ``LARGE_L2_MULTIPLE`` times the L2 size
    in CSR (:func:`csr_dram_bytes` over the ``l2_bytes`` of a record that has it)."""
    sized = [r for r in methods.values() if r.get("l2_bytes")]
    return bool(sized) and csr_dram_bytes(sized[0]) > LARGE_L2_MULTIPLE * sized[0]["l2_bytes"]


def floor_fraction(record) -> float | None:
    """DIA's floor time over the record's kernel time: the values read once plus ``x`` and ``y``
    (``(nnz + cols + rows)`` values) at the record's copy bandwidth; None without both."""
    t, copy = metrics.time_us(record), record.get("copy_gbps")
    if not t or not copy:
        return None
    floor = (int(record["nnz"]) + int(record["cols"]) + int(record["rows"])) * itemsize(record["dtype"])
    return floor / (t * 1e-6) / (copy * 1e9)


def performance_verdicts(records) -> list[Verdict]:
    """The performance targets per dtype of the GPU SpMV records (see the module docstring)."""
    rows = _gpu_spmv(records)
    cupyx = [v for v in call_time_verdicts(records) if v.target == CUPYX_TARGET]
    out = []
    for dtype in dict.fromkeys(r["dtype"] for r in rows):
        by_matrix = _by_matrix(rows, dtype)
        out += _time_verdicts(by_matrix, dtype, (CUSPARSE_GEOMEAN_TARGET, CUSPARSE_WORST_TARGET), CUSPARSE_BEST, AUTO)
        out += [v for v in cupyx if v.dtype == dtype]
        for target, family in ((DRAM_REGULAR_TARGET, REGULAR), (DRAM_POWER_LAW_TARGET, POWER_LAW)):
            picked = {m: v[AUTO] for m, v in by_matrix.items()
                      if AUTO in v and v[AUTO].get("family") == family and beyond_l2(v)}
            if picked:
                out.append(Verdict(target, dtype, *_values(picked, lambda r: r.get("dram_fraction"))))
        for method, target in DIA_FLOOR_TARGETS.items():
            picked = {m: v[method] for m, v in by_matrix.items()
                      if method in v and v[method].get("suite") == "structured" and v[method].get("family") == REGULAR}
            if picked:
                out.append(Verdict(target, dtype, *_values(picked, floor_fraction)))
    return out


def vendor_verdicts(records) -> list[Verdict]:
    """The never-slower-than-the-vendor targets per dtype of the GPU SpMV records (:data:`VENDOR_TARGETS`)."""
    rows = _gpu_spmv(records)
    out = []
    for dtype in dict.fromkeys(r["dtype"] for r in rows):
        by_matrix = _by_matrix(rows, dtype)
        out += _time_verdicts(by_matrix, dtype, (CUSPARSE_GEOMEAN_TARGET, VENDOR_WORST_TARGET), CUSPARSE_BEST, AUTO)
        out += _time_verdicts(by_matrix, dtype, (OWN_POWER_LAW_TARGET,), CUSPARSE_BEST, OWN,
                              lambda v: v[OWN].get("family") == POWER_LAW)
        out += _time_verdicts(by_matrix, dtype, (AUTO_OVER_MEASURED_TARGET,), MEASURED, AUTO)
        large = {m: v[AUTO] for m, v in by_matrix.items() if AUTO in v and int(v[AUTO]["nnz"]) >= ANALYSIS_MIN_NNZ
                 and (v[AUTO].get("analysis_spmvs") and usable(v[AUTO]) or is_wrong(v[AUTO]))}
        wrong = tuple(m for m, r in large.items() if is_wrong(r))
        right = {m: r for m, r in large.items() if m not in wrong}
        planning = {m: r["analysis_spmvs"] + (r.get("measure_spmvs") or 0) for m, r in right.items()}
        if planning or wrong:
            out.append(Verdict(PLANNING_TARGET, dtype, planning, (), wrong))
        hits = {m: r["cache_hit_spmvs"] for m, r in right.items() if r.get("cache_hit_spmvs") is not None}
        if hits or (wrong and any(r.get("cache_hit_spmvs") is not None for r in large.values())):
            out.append(Verdict(CACHE_HIT_TARGET, dtype, hits, (), wrong))
    return out


def verdicts(records) -> list[Verdict]:
    """Every call-overhead and planner target the records allow checking (the performance targets:
    :func:`performance_verdicts`)."""
    return overhead_verdicts(records) + call_time_verdicts(records) + cpu_verdicts(records) + planner_verdicts(records)
