"""One benchmark measurement, as written to JSON and CSV.

A record belongs to a ``section``: ``"spmv"`` (a method's kernel and call time on one problem),
``"spmm"`` (the same for a block of ``k`` vectors, ``cocktail bench --k``), ``"overhead"``
(per-call host+GPU time of one way of calling a product, :mod:`.overhead`), ``"end-to-end"`` (building
a matrix and ``products`` products with it, :mod:`..measuring.end_to_end`) or ``"workload"`` (building each
of many matrices and ``products`` products with each, the whole workload's time, :mod:`..measuring.workload`).
Both kinds share this class, so a run's records are one JSON list with one set of keys.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

from .wrong import usable

#: The sections a record belongs to.
SPMV, SPMM, OVERHEAD, END_TO_END, WORKLOAD = "spmv", "spmm", "overhead", "end-to-end", "workload"

#: Keys every record carries (the JSON schema the tests check).
REQUIRED_KEYS = ("section", "suite", "matrix", "rows", "cols", "nnz", "dtype", "method", "params", "kernel_us",
                 "call_us", "gflops", "gbps", "copy_gbps", "rel_err", "gpu", "cuda", "cupy", "commit", "date")
#: Keys a call-overhead record fills (``section == "overhead"``) besides the ones above.
OVERHEAD_KEYS = ("back_to_back_us", "back_to_back_calls", "sync_call_us", "samples", "over_empty_launch",
                 "over_empty_graph", "sync_over_empty_launch", "sync_over_empty_graph")
#: Keys an end-to-end record fills (``section == "end-to-end"``) besides the required ones.
END_TO_END_KEYS = ("build_from", "products", "build_us", "total_us", "samples")
#: Keys a workload record fills (``section == "workload"``): the end-to-end ones, over the whole workload.
WORKLOAD_KEYS = END_TO_END_KEYS


@dataclass
class Record:
    """One (matrix, dtype, method) measurement, or the reason the method did not run (``note``).

    SpMV records fill ``kernel_us`` and ``call_us``; overhead records leave them empty and fill
    ``back_to_back_us``, ``sync_call_us`` and the ratios to the floors of the same matrix and dtype;
    end-to-end records fill ``build_from``, ``products``, ``build_us`` and ``total_us``; workload records fill
    the same over the whole workload (``build_us`` the sum of its builds, ``total_us`` of its whole jobs).
    """

    suite: str
    matrix: str
    rows: int
    cols: int
    nnz: int
    dtype: str
    method: str
    params: dict = field(default_factory=dict)
    section: str = SPMV  # SPMV, SPMM, OVERHEAD, END_TO_END or WORKLOAD
    k: int = 1  # columns of X: 1 for an SpMV, the block's width for an SpMM record
    kernel_us: float | None = None  # graph replay or back-to-back calls: host cost amortised
    call_us: float | None = None  # one synchronous call from Python
    kernel_timing: str = ""  # "graph", "back-to-back" or "cpu"
    samples: int | None = None
    setup_ms: float | None = None  # prepare(): conversion, descriptors, bound launches (compilation included)
    gflops: float | None = None
    gbps: float | None = None
    copy_gbps: float | None = None
    bandwidth_fraction: float | None = None
    spmv_bytes: int | None = None
    l2_ratio: float | None = None  # spmv_bytes over the L2 cache size
    l2_bytes: int | None = None  # GPU: the device's L2 size the DRAM model assumed
    dram_bytes: int | None = None  # the DRAM traffic model's bytes (formats' dram_bytes at l2_bytes)
    dram_fraction: float | None = None  # GPU: dram_bytes over the time, as a fraction of copy_gbps
    padding_ratio: float | None = None
    rel_err: float | None = None
    speedup_cusparse_best: float | None = None
    speedup_cupyx: float | None = None
    paired_with: str = ""  # CPU: the method this one was timed with, call for call (:mod:`..measuring.paired`)
    paired_ratio: float | None = None  # paired: median over the rounds of paired_with's time over this one's
    paired_low: float | None = None  # paired: the 95% interval of that median (None: too few rounds to tell)
    paired_high: float | None = None
    analysis_spmvs: float | None = None  # cocktail-*: features and planning, in SpMVs of the chosen plan
    features_spmvs: float | None = None  # cocktail-*: of which the features, in SpMVs of the chosen plan
    convert_spmvs: float | None = None  # cocktail-*: building the chosen plan, in SpMVs of it
    measure_spmvs: float | None = None  # cocktail-measured: building and timing the candidates, in SpMVs
    cache_hit_spmvs: float | None = None  # cocktail-auto: deciding from the decision cache, in SpMVs
    back_to_back_us: float | None = None  # overhead: N calls from a Python loop and one stream sync, over N
    back_to_back_calls: int | None = None  # overhead: that N
    sync_call_us: float | None = None  # overhead: one call and a stream sync
    over_empty_launch: float | None = None  # back_to_back_us over the empty kernel launch's
    over_empty_graph: float | None = None  # back_to_back_us over the empty graph replay's
    sync_over_empty_launch: float | None = None  # sync_call_us over the empty kernel launch's
    sync_over_empty_graph: float | None = None  # sync_call_us over the empty graph replay's
    build_from: str = ""  # end-to-end: where the matrix was built from, "host" (SciPy) or "device" (cupyx)
    products: int | None = None  # end-to-end: N, the products A @ x after the build
    build_us: float | None = None  # end-to-end: the construction, synchronised (median of the repetitions)
    total_us: float | None = None  # end-to-end: construction and N products, synchronised at the end (median)
    kind: str = ""
    family: str = ""  # the matrix's family (cocktail.bench.problems.families), empty when unstated
    note: str = ""
    gpu: str = ""
    cuda: str = ""
    cupy: str = ""
    commit: str = ""
    date: str = ""

    def as_dict(self) -> dict:
        """The record as a JSON-ready dictionary."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Record:
        """The record :meth:`as_dict` gave (keys it does not know are ignored)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})

    def stamp(self, provenance: dict) -> Record:
        """Set the provenance fields (``gpu``, ``cuda``, ``cupy``, ``commit``, ``date``) of the measurement."""
        for key, value in provenance.items():
            setattr(self, key, value)
        return self


def fastest_per_problem(records, label: str, extra_params) -> list:
    """One record per (suite, matrix, dtype, k): a copy of the fastest of ``records``, relabelled ``label``.

    Records without a kernel time, refused or failed, or wrong (:func:`~.wrong.usable`) never win.
    The copy's params are the winner's plus ``extra_params(winner)``; the originals are untouched.
    """
    import copy

    best = {}
    for r in records:
        if r.kernel_us is not None and usable(r):
            key = (r.suite, r.matrix, r.dtype, r.k)
            if key not in best or r.kernel_us < best[key].kernel_us:
                best[key] = r
    out = []
    for r in best.values():
        b = copy.deepcopy(r)
        b.method = label
        b.params = {**r.params, **extra_params(r)}
        out.append(b)
    return out
