"""Rules that pick a GPU kernel and its launch parameters for a stored matrix.

Every threshold behind a kernel choice or a launch configuration lives here.
"""

from __future__ import annotations

import math

from .. import kernels
from ..kernels.block_operands import VECTOR_BYTES
from ..kernels.device import WARP_SIZE
from ..kernels.spec import CSR_FORMATS

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
#: csr_spmm_merge: merge items (row ends + nonzeros) per share, at most and at least (fewer on smaller
#: matrices, so that SPMM_MERGE_SHARES_PER_THREAD_SLOT shares per resident thread of the device keep it
#: busy), and the longest run of shares carrying one row that the fix-up sums a thread per column
#: (longer runs get a block each).
SPMM_MERGE_ITEMS, SPMM_MERGE_MIN_ITEMS, SPMM_MERGE_SHORT_RUN = 128, 16, 8
SPMM_MERGE_SHARES_PER_THREAD_SLOT = 0.25
#: Block products of a matrix bound to a vendor SpMV kernel (cusparse_csr, cusparse_coo) run our block kernel
#: from this many columns on, one vendor SpMV per column below it: the vendor's SpMV is better balanced than ours on
#: the irregular matrices the planner gives it, so reading the matrix once pays only from a few columns.
#: Measured crossover between 4 and 16 columns on a power-law matrix (powerlaw_1M, H100, float32); to be
#: replaced by the device profile's samples over k.
SPMM_VENDOR_MIN_COLUMNS = 8
#: dia_vi_spmm: bytes of values of one column a group's consecutive rows span (4 rows of float32, 2 of float64),
#: so that adjacent diagonals share their X rows.  Fastest in a sweep at k = 4, 16 and 64 on three Laplacians
#: (H200, scripts/spmm_diagonal_rows_sweep.py, docs/benchmarks/2026-11-26-h200-spmm/rows_sweep_3d215ea.json):
#: 1.16-1.44x over one row in float32, 1.0-1.45x in float64, where 4 rows ran out of registers.
SPMM_DIAGONAL_ROW_BYTES = 16
#: A planned matrix keeps one block plan per bucket of k: the smallest of these at least k (the last for
#: any wider block), so blocks of 5 to 8 columns share one plan.
SPMM_K_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
#: csr_spmm_merge: columns per launch (the carry buffer made once per matrix holds this many per share).
#: Every launch walks the whole matrix: at k = 64, 64 columns a launch ran 2.0-3.1x faster than 16 on
#: powerlaw_1M and rmat19 (H200, float32 and float64, scripts/spmm_merge_sweep.py,
#: docs/benchmarks/2026-11-26-h200-spmm/merge_sweep_35650d5.json.gz); the buffer is shares x 64 values.
SPMM_MERGE_CHUNK = 64
#: csr_spmm_merge: lanes per share, within these bounds, and columns per lane: SPMM_MERGE_COLUMNS, or for a
#: row-major X a 16-byte word of them (4 float32, 2 float64: vector strips, 1.1-1.3x faster at k = 16
#: in the same sweep).  A share is a long serial walk, so the kernel wants many lanes in flight more than
#: long strips: narrower strips and more lanes (idle ones included when k is small) than csr_spmm.
SPMM_MERGE_MIN_LANES, SPMM_MERGE_MAX_LANES, SPMM_MERGE_COLUMNS = 4, 8, 2
#: csr_vector: the smallest power of two covering the mean row length, within these bounds.
VECTOR_MIN_THREADS, VECTOR_MAX_THREADS = 2, 32
#: sell: threads per row, the smallest power of two giving each lane at most SELL_SLOTS_PER_LANE
#: slots of the mean slice width, within these bounds (the kernel is instantiated for 1, 2, 4, 8).
SELL_MIN_THREADS, SELL_MAX_THREADS = 1, 8
SELL_SLOTS_PER_LANE = 8
#: csr: rows this long on average go to csr_vector rather than csr_scalar (Bell & Garland §4.3).
VECTOR_MIN_MEAN_ROW = 4.0
#: csr: merge-path when the longest row is this many times the mean and at least MERGE_MIN_LONGEST.
MERGE_LONGEST_OVER_MEAN = 64.0
MERGE_MIN_LONGEST = 2048
#: csr_merge: merge items (row ends + nonzeros) per thread (Merrill & Garland use 7 on Maxwell-class GPUs).
MERGE_ITEMS_PER_THREAD = 7
#: csr_stream: nonzeros per lane of a warp item (an item holds 32 times as many).
STREAM_ITEMS_PER_LANE = 8
#: csr_stream: rows longer than this share of an item get items of their own (their lanes then
#: reduce them together); shorter rows are packed into runs, so a run's start is never more than
#: this far behind its nominal place and a run fills about ``1 - share`` of an item on average.
STREAM_OWN_ROW_SHARE = 1 / 4
#: csr_stream: rows per run of short rows, as a multiple of the item's nonzeros (bounds the
#: lane-per-row loop on runs of empty or one-entry rows).
STREAM_ROWS_PER_NONZERO = 1
#: bcsr: lanes per superrow, the smallest power of two covering the mean blocks per superrow, within these bounds.
BCSR_MIN_THREADS, BCSR_MAX_THREADS = 2, 32
#: Flegar & Anzt's oversubscription: omega by nonzero count (their Fig. 5 heuristic).
OMEGA_STEPS = ((1e5, 8), (1e6, 32), (math.inf, 128))
#: FP32 cores per SM by compute capability major version (Flegar & Anzt count threads per core).
CORES_PER_SM = {7: 64, 8: 64, 9: 128, 10: 128, 12: 128}
#: bdia: bytes of shared memory a block's staged slice of x may take by default (caps piece_width).
#: 16 KiB keeps 8 blocks of 256 threads per SM on H100 (228 KiB) and fits the 48 KiB portable limit.
BDIA_SHARED_BUDGET = 16 * 1024
#: cusparse_csr, cusparse_coo: the algorithm unless named (1: the library's default for the storage;
#: 2: bit-wise deterministic, which the planner's deterministic plans use and a caller names as alg=2).
CUSPARSE_ALG = 1
#: dia_vi: rows per thread when a thread's codes of a diagonal can be loaded as one word (else 1).
DIA_VI_ROWS_PER_THREAD = 4


def _power_of_two_covering(value: float, low: int, high: int) -> int:
    """The smallest power of two >= ``value``, within [``low``, ``high``] (both powers of two)."""
    t = low
    while t < value and t < high:
        t *= 2
    return t


def spmm_shape(k: int, row_major: bool = True) -> tuple[int, int]:
    """``(lanes per row, columns per lane)`` of a block kernel for ``k`` columns.

    Row-major X: each lane the smallest power of two of columns covering ``k`` up to
    SPMM_ROW_MAJOR_COLUMNS, and lanes the smallest power of two covering the rest up to a warp, so a
    tile of ``lanes * columns`` columns covers ``k`` up to 128 (wider blocks run in tiles).  Another
    layout: one lane per row for up to SPMM_ROW_MAJOR_COLUMNS columns (its reads of X gather like an
    SpMV's), two lanes past that, each SPMM_ROW_MAJOR_COLUMNS columns."""
    if not row_major:
        return (1, SPMM_ROW_MAJOR_COLUMNS) if k <= SPMM_ROW_MAJOR_COLUMNS else (2, SPMM_ROW_MAJOR_COLUMNS)
    columns = _power_of_two_covering(k, 1, SPMM_ROW_MAJOR_COLUMNS)
    return _power_of_two_covering(k / columns, 1, SPMM_MAX_LANES), columns


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


def spmm_merge_items(merge_items: int, resident_threads: int) -> int:
    """Merge items per share of csr_spmm_merge for a matrix of ``merge_items`` (``m + nnz``): enough shares
    for SPMM_MERGE_SHARES_PER_THREAD_SLOT of the device's ``resident_threads`` each, within
    [SPMM_MERGE_MIN_ITEMS, SPMM_MERGE_ITEMS]."""
    wanted_shares = max(1.0, resident_threads * SPMM_MERGE_SHARES_PER_THREAD_SLOT)
    return int(min(SPMM_MERGE_ITEMS, max(SPMM_MERGE_MIN_ITEMS, merge_items // wanted_shares)))


def spmm_diagonal_rows(itemsize: int) -> int:
    """Consecutive rows a group of lanes of the diagonal block kernels (dia_spmm, dia_vi_spmm, bdia_spmm; swept
    on dia_vi_spmm) takes for values of ``itemsize`` bytes: those spanning
    SPMM_DIAGONAL_ROW_BYTES (a power of two, 1 to 4)."""
    return int(min(4, max(1, SPMM_DIAGONAL_ROW_BYTES // itemsize)))


def spmm_merge_shape(k: int, row_major: bool = True, itemsize: int = 8) -> tuple[int, int]:
    """``(lanes per share, columns per lane)`` of csr_spmm_merge for ``k`` columns of values of ``itemsize``
    bytes: strips of SPMM_MERGE_COLUMNS columns, or for a row-major X of a 16-byte word of columns (at least
    SPMM_MERGE_COLUMNS), lanes the smallest power of two covering ``k`` within [SPMM_MERGE_MIN_LANES,
    SPMM_MERGE_MAX_LANES] (wider blocks run in tiles, each its own unit of work)."""
    columns = max(SPMM_MERGE_COLUMNS, VECTOR_BYTES // itemsize) if row_major else SPMM_MERGE_COLUMNS
    return _power_of_two_covering(k / columns, SPMM_MERGE_MIN_LANES, SPMM_MERGE_MAX_LANES), columns


def csr_vector_threads(mean_row_length: float) -> int:
    """Threads per row for csr_vector: the smallest power of two >= the mean row length, in [2, 32]."""
    return _power_of_two_covering(mean_row_length, VECTOR_MIN_THREADS, VECTOR_MAX_THREADS)


def sell_threads(mean_slice_width: float) -> int:
    """Threads per row for sell: the smallest power of two t with ``mean_slice_width / t <=
    SELL_SLOTS_PER_LANE``, in [1, 8].

    Every row of a slice walks the slice's width (up to its own length), so the mean slice
    width is the work per row.  Slots of one column are coalesced across rows already, so a
    single lane per row suits short rows; longer rows get more lanes so that a warp keeps more
    loads in flight and the shuffle reduction stays short next to the loads.
    """
    return _power_of_two_covering(mean_slice_width / SELL_SLOTS_PER_LANE, SELL_MIN_THREADS, SELL_MAX_THREADS)


def bcsr_threads(mean_blocks: float) -> int:
    """Lanes per superrow for bcsr: the smallest power of two >= the mean blocks per superrow, in [2, 32]."""
    return _power_of_two_covering(mean_blocks, BCSR_MIN_THREADS, BCSR_MAX_THREADS)


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


def bdia_piece_width(widest_band: int, block: int, itemsize: int) -> int:
    """Diagonals per staged piece for the bdia kernel: the widest band, capped so that a block's slice
    of x (``block + piece - 1`` values) fits ``BDIA_SHARED_BUDGET``; at least 1."""
    cap = BDIA_SHARED_BUDGET // int(itemsize) - int(block) + 1
    return max(1, min(int(widest_band), cap))


def csr_stream_shape(items_per_lane: int) -> tuple[int, int]:
    """``(own_row, rows_per_item)`` of csr_stream's partition for ``items_per_lane`` nonzeros per lane."""
    capacity = WARP_SIZE * int(items_per_lane)
    return max(1, int(capacity * STREAM_OWN_ROW_SHARE)), max(1, int(capacity * STREAM_ROWS_PER_NONZERO))


def staged_block_threads(block: int, bytes_per_thread: int, shared_limit: int) -> int:
    """The rule's ``block`` threads, halved (whole warps, at least one) until what each thread stages in shared memory
    fits the block's ``shared_limit`` (csr_stream's products of a complex128 matrix at 16 items per lane)."""
    while block > WARP_SIZE and block * bytes_per_thread > shared_limit:
        block = max(WARP_SIZE, block // 2 // WARP_SIZE * WARP_SIZE)
    return block


def dia_vi_rows_per_thread(aligned) -> int:
    """Rows per thread for dia_vi: DIA_VI_ROWS_PER_THREAD when ``aligned(rows)`` says the codes of that
    many rows load as one word (a warp then reads 128 contiguous bytes of codes per diagonal), else 1."""
    return DIA_VI_ROWS_PER_THREAD if aligned(DIA_VI_ROWS_PER_THREAD) else 1


def csr_kernel(row_lengths, merge: bool = True) -> str:
    """Which CSR kernel suits these row lengths: csr_merge, csr_vector or csr_scalar; without ``merge`` (a
    csr_pattern or csr_vi matrix, which csr_merge does not read) csr_stream in csr_merge's place, the other
    load-balanced kernel."""
    m = int(row_lengths.shape[0])
    if m == 0:
        return "csr_scalar"
    longest = int(row_lengths.max())
    mean = float(row_lengths.sum()) / m
    if longest >= MERGE_MIN_LONGEST and longest > MERGE_LONGEST_OVER_MEAN * max(mean, 1.0):
        return "csr_merge" if merge else "csr_stream"
    if mean >= VECTOR_MIN_MEAN_ROW:
        return "csr_vector"
    return "csr_scalar"


def format_kernels() -> dict[str, str]:
    """The kernel each format uses unless the caller names one: the kernel that declares itself the
    format's default (``KernelSpec.default_for``).  The CSR formats have a rule instead (:func:`csr_kernel`)."""
    return {fmt: name for name in kernels.names() for fmt in kernels.get(name).default_for}


def choose_kernel(storage, deterministic: bool = False) -> str | None:
    """The kernel name for a stored matrix, or None when no GPU kernel handles its format and precision
    (complex values; a format whose kernels take float and double only, in a half precision).

    ``deterministic``: when the usual kernel is not declared deterministic (coo: coo_atomic), the
    first registered kernel of the format that is (coo: coo_segmented), or None without one.
    """
    if storage.name in CSR_FORMATS:  # the CSR kernels' formats: a rule over the row lengths
        name = csr_kernel(storage.row_lengths(), storage.name in kernels.get("csr_merge").formats)
    else:
        name = format_kernels().get(storage.name)
    if name is not None and kernels.get(name).takes(storage) and (not deterministic or kernels.get(name).deterministic):
        return name
    # the usual kernel is not deterministic, or has no instantiation for the matrix's precision (a half
    # matrix's COO: atomics into y take float and double only): the first kernel of the format that fits
    return next((spec.name for spec in kernels.for_format(storage.name)
                 if spec.takes(storage) and not spec.vendor and (spec.deterministic or not deterministic)), None)
