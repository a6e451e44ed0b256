"""One benchmark measurement."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class Record:
    """One measurement: a matrix in one format, or why the format was refused."""

    matrix: str
    rows: int
    cols: int
    nnz: int
    dtype: str
    method: str
    kernel: str = ""
    time_us: float | None = None
    gflops: float | None = None
    gbps: float | None = None
    padding_ratio: float | None = None
    spmv_bytes: int | None = None
    rel_err: float | None = None
    note: str = ""
    gpu: str = ""
    cuda: str = ""
    cupy: str = ""
    commit: str = ""
    date: str = ""

    def as_dict(self) -> dict:
        return asdict(self)
