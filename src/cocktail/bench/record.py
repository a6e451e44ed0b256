"""One benchmark measurement, as written to JSON and CSV."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

#: Keys every record carries (the JSON schema the tests check).
REQUIRED_KEYS = ("suite", "matrix", "rows", "cols", "nnz", "dtype", "method", "params", "kernel_us", "call_us",
                 "gflops", "gbps", "copy_gbps", "rel_err", "gpu", "cuda", "cupy", "commit", "date")


@dataclass
class Record:
    """One (matrix, dtype, method) measurement, or the reason the method did not run (``note``)."""

    suite: str
    matrix: str
    rows: int
    cols: int
    nnz: int
    dtype: str
    method: str
    params: dict = field(default_factory=dict)
    kernel_us: float | None = None  # graph replay or back-to-back calls: host cost amortised
    call_us: float | None = None  # one synchronous call from Python
    kernel_timing: str = ""  # "graph", "back-to-back" or "cpu"
    samples: int | None = None
    setup_ms: float | None = None  # prepare(): conversion, descriptors, plan (compilation on first use)
    gflops: float | None = None
    gbps: float | None = None
    copy_gbps: float | None = None
    bandwidth_fraction: float | None = None
    spmv_bytes: int | None = None
    l2_ratio: float | None = None  # spmv_bytes over the L2 cache size
    padding_ratio: float | None = None
    rel_err: float | None = None
    speedup_cusparse_best: float | None = None
    speedup_cupyx: float | None = None
    kind: str = ""
    note: str = ""
    gpu: str = ""
    cuda: str = ""
    cupy: str = ""
    commit: str = ""
    date: str = ""

    def as_dict(self) -> dict:
        """The record as a JSON-ready dictionary."""
        return asdict(self)
