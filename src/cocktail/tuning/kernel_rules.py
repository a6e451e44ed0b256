"""Rules that pick a GPU kernel and its launch parameters for a stored matrix: which kernel a format runs by
default (from the kernels' own declarations: ``default_for``, ``default_when``, ``precedence``), and the launch
rules several kernels share (block size, the block products' shapes, Flegar & Anzt's oversubscription,
cuSPARSE's algorithm).  A kernel's own thresholds live in its folder (``kernels/<name>/rules.py``).
"""

from __future__ import annotations

import math

from .. import kernels
from ..kernels.config import power_of_two_covering
from ..kernels.spec import RowShape

#: Threads per block of every kernel unless the user names one (see ``tuning.launch_rules.block_threads``).
BLOCK_THREADS = 256
#: Block kernels (csr_spmm, csr_spmm_merge): lanes per row or share, at most; columns each lane holds in
#: registers for a row-major X (four independent loads and sums per stored entry) and, at most, for X
#: in another layout (a lane per row, reading its strip like an SpMV reads x).
SPMM_MAX_LANES, SPMM_ROW_MAJOR_COLUMNS, SPMM_MAX_COLUMNS = 32, 4, 8
#: Block kernels of the blocked formats (bcsr_spmm, bell_spmm, sbell_spmm): partial sums (block rows x
#: columns per lane) a lane holds, at most, in the shape the rule picks: spmm_shape's strips are narrowed
#: to fit and spread over more lanes.  16 keeps a float64 lane's sums in 32 registers beside its block
#: pieces and X values (4 columns up to 4-row blocks, 2 for 8-row ones); a guess, not yet measured.
BLOCK_SPMM_MAX_SUMS = 16
#: Block products of a matrix bound to a vendor SpMV kernel (cusparse_csr, cusparse_coo) run our block kernel
#: from this many columns on, one vendor SpMV per column below it: the vendor's SpMV is better balanced than ours on
#: the irregular matrices the planner gives it, so reading the matrix once pays only from a few columns.
#: Measured crossover between 4 and 16 columns on a power-law matrix (powerlaw_1M, H100, float32); to be
#: replaced by the device profile's samples over k.
SPMM_VENDOR_MIN_COLUMNS = 8
#: dia_vi_spmm: bytes of values of one column a group's consecutive rows span (4 rows of float32, 2 of float64),
#: so that adjacent diagonals share their X rows.  Fastest in a sweep at k = 4, 16 and 64 on three Laplacians
#: (H200, docs/benchmarks/2026-11-26-h200-spmm/rows_sweep_3d215ea.json, measured by
#: scripts/spmm_diagonal_rows_sweep.py, removed after 1bf8873; in git history):
#: 1.16-1.44x over one row in float32, 1.0-1.45x in float64, where 4 rows ran out of registers.
SPMM_DIAGONAL_ROW_BYTES = 16
#: A planned matrix keeps one block plan per bucket of k: the smallest of these at least k (the last for
#: any wider block), so blocks of 5 to 8 columns share one plan.
SPMM_K_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
#: Flegar & Anzt's oversubscription: omega by nonzero count (their Fig. 5 heuristic).
OMEGA_STEPS = ((1e5, 8), (1e6, 32), (math.inf, 128))
#: FP32 cores per SM by compute capability major version (Flegar & Anzt count threads per core).
CORES_PER_SM = {7: 64, 8: 64, 9: 128, 10: 128, 12: 128}
#: cusparse_csr, cusparse_coo: the algorithm unless named (1: the library's default for the storage;
#: 2: bit-wise deterministic, which the planner's deterministic plans use and a caller names as alg=2).
CUSPARSE_ALG = 1


def spmm_shape(k: int, row_major: bool = True) -> tuple[int, int]:
    """``(lanes per row, columns per lane)`` of a block kernel for ``k`` columns.

    Row-major X: each lane the smallest power of two of columns covering ``k`` up to
    SPMM_ROW_MAJOR_COLUMNS, and lanes the smallest power of two covering the rest up to a warp, so a
    tile of ``lanes * columns`` columns covers ``k`` up to 128 (wider blocks run in tiles).  Another
    layout: one lane per row for up to SPMM_ROW_MAJOR_COLUMNS columns (its reads of X gather like an
    SpMV's), two lanes past that, each SPMM_ROW_MAJOR_COLUMNS columns."""
    if not row_major:
        return (1, SPMM_ROW_MAJOR_COLUMNS) if k <= SPMM_ROW_MAJOR_COLUMNS else (2, SPMM_ROW_MAJOR_COLUMNS)
    columns = power_of_two_covering(k, 1, SPMM_ROW_MAJOR_COLUMNS)
    return power_of_two_covering(k / columns, 1, SPMM_MAX_LANES), columns


def block_spmm_shape(k: int, row_major: bool, rows: int, columns) -> tuple[int, int]:
    """``(lanes per superrow, columns per lane)`` of a blocked format's block kernel for ``k`` columns and
    blocks of ``rows`` rows, ``columns`` the columns per lane it is instantiated for (1 among them): the tile
    of :func:`spmm_shape`, its strips narrowed to the widest instantiated ones of at most BLOCK_SPMM_MAX_SUMS
    partial sums (``rows`` per column) and spread over correspondingly more lanes, up to a warp."""
    lanes, wanted = spmm_shape(k, row_major)
    narrow = max(c for c in columns if c == 1 or (c <= wanted and rows * c <= BLOCK_SPMM_MAX_SUMS))
    return min(SPMM_MAX_LANES, lanes * max(1, wanted // narrow)), narrow


def spmm_min_columns(spmv_kernel) -> int:
    """The fewest columns a block product runs the block kernel for, on a matrix bound to ``spmv_kernel``
    (a :class:`~cocktail.kernels.spec.KernelSpec`): SPMM_VENDOR_MIN_COLUMNS after a vendor kernel, else 2."""
    return SPMM_VENDOR_MIN_COLUMNS if spmv_kernel.vendor else 2


def spmm_bucket(k: int) -> int:
    """The bucket of a block of ``k`` columns: the smallest of SPMM_K_BUCKETS at least ``k``, else the last."""
    return next((b for b in SPMM_K_BUCKETS if b >= k), SPMM_K_BUCKETS[-1])


def spmm_diagonal_rows(itemsize: int) -> int:
    """Consecutive rows a group of lanes of the diagonal block kernels (dia_spmm, dia_vi_spmm, bdia_spmm; swept
    on dia_vi_spmm) takes for values of ``itemsize`` bytes: those spanning
    SPMM_DIAGONAL_ROW_BYTES (a power of two, 1 to 4)."""
    return int(min(4, max(1, SPMM_DIAGONAL_ROW_BYTES // itemsize)))


def coo_omega(nnz: int) -> int:
    """Flegar & Anzt's oversubscription parameter: 8 below 1e5 nonzeros, 32 below 1e6, else 128."""
    for limit, omega in OMEGA_STEPS:
        if nnz < limit:
            return omega
    return OMEGA_STEPS[-1][1]  # pragma: no cover


def cores_per_sm(compute_capability: tuple[int, int]) -> int:
    """FP32 cores per SM (used to turn omega into a thread count)."""
    major, minor = compute_capability
    if major == 8 and minor != 0:
        return 128
    return CORES_PER_SM.get(major, 128)


def default_kernel(storage):
    """The kernel a stored matrix runs unless the caller names one: of the kernels that declare themselves its
    format's default (``KernelSpec.default_for``), the first by ``precedence`` whose row rule (``default_when``)
    holds for its row lengths, or which has none (the CSR formats: a load-balanced kernel for long-tailed rows,
    csr_vector for long rows, else csr_scalar); None without one."""
    declared = sorted((s for s in map(kernels.get, kernels.names()) if storage.name in s.default_for),
                      key=lambda s: -s.precedence)
    rows = RowShape.of(storage.row_lengths()) if any(s.default_when for s in declared) else None
    return next((s for s in declared if s.default_when is None or s.default_when(rows)), None)


def format_kernels() -> dict[str, str]:
    """The kernel each format runs unless the caller names one and no row rule of a kernel holds: the kernel that
    declares itself the format's default without a rule (``KernelSpec.default_for``)."""
    return {fmt: name for name in kernels.names() if kernels.get(name).default_when is None
            for fmt in kernels.get(name).default_for}


def choose_kernel(storage, deterministic: bool = False) -> str | None:
    """The kernel name for a stored matrix, or None when no GPU kernel handles its format and precision
    (complex values; a format whose kernels take float and double only, in a half precision).

    ``deterministic``: when the usual kernel (:func:`default_kernel`) is not declared deterministic (coo:
    coo_atomic), the first registered kernel of the format that is (coo: coo_segmented), or None without one.
    """
    usual = default_kernel(storage)
    if usual is not None and usual.takes(storage) and (not deterministic or usual.deterministic):
        return usual.name
    # the usual kernel is not deterministic, or has no instantiation for the matrix's precision (a half
    # matrix's COO: atomics into y take float and double only): the first kernel of the format that fits
    return next((spec.name for spec in kernels.for_format(storage.name)
                 if spec.takes(storage) and not spec.vendor and (spec.deterministic or not deterministic)), None)
