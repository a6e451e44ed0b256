"""PKT: greedy lane packing on Bell & Garland's Fig. 13-14 packets, 16-bit packing, packet budget,
partitioners (RCM and a fake pymetis), remainder, fill guard, round trips and products."""

import heapq
import sys
import types

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail.errors import FormatFillError
from cocktail.formats import get
from cocktail.formats.csr import CSR
from cocktail.formats.pkt import MAX_PACKET_ROWS, MAX_THREADS_PER_PACKET, PKT, SENTINEL, pack_lanes
from cocktail.reference import product_for, spmv
from cocktail.tuning import pkt as rules
from cocktail.tuning.format_rules import format_params

# The two diagonal submatrices of Bell & Garland Fig. 13, read off Fig. 14 (local row -> local cols).
PKT0 = {0: [0, 1, 3, 4], 1: [0, 1, 2, 4, 5], 2: [1, 2, 5], 3: [0, 3, 4], 4: [0, 1, 3, 4, 5], 5: [1, 2, 4, 5]}
PKT1 = {0: [0, 1, 3], 1: [0, 1, 2, 3, 4], 2: [1, 2, 4], 3: [0, 1, 3, 4], 4: [1, 2, 3, 4]}
CUT = [(5, 6), (6, 5), (2, 9), (9, 2)]  # a few cut edges between the two packets


def csr_from(rows, cols, vals, shape, index_dtype=np.int32):
    return CSR.from_triplets(np.asarray(rows, np.int64), np.asarray(cols, np.int64), np.asarray(vals),
                             shape, index_dtype)


def fig13_csr():
    """11 x 11 matrix: pkt0 on vertices 0-5, pkt1 on 6-10, plus the CUT entries; value = 100*i + j."""
    ent = [(i, j) for i, cs in PKT0.items() for j in cs] + [(6 + i, 6 + j) for i, cs in PKT1.items() for j in cs]
    ent += CUT
    r, c = np.array(ent).T
    return csr_from(r, c, (100 * r + c).astype(float), (11, 11))


def build(csr, **params):
    """PKT with the tuning rules filling in what ``params`` leaves out, as ``SparseMatrix`` does."""
    return PKT.from_csr(csr, **format_params("pkt", csr.dtype, params))


def fake_pymetis(membership_fn, calls=None):
    """A stand-in ``pymetis`` module whose ``part_graph`` returns ``membership_fn(nparts, nvertices)``."""
    mod = types.ModuleType("pymetis")

    def part_graph(nparts, xadj=None, adjncy=None):
        if calls is not None:
            calls.append((nparts, np.asarray(xadj).copy(), np.asarray(adjncy).copy()))
        return 0, list(membership_fn(nparts, len(xadj) - 1))

    mod.part_graph = part_graph
    return mod


@pytest.fixture
def no_pymetis(monkeypatch):
    monkeypatch.setitem(sys.modules, "pymetis", None)  # import pymetis -> ImportError


def random_csr(rng, m, n, nnz, dtype=np.float64, index_dtype=np.int32):
    """Random entries with duplicates and explicit zeros."""
    if m == 0 or n == 0:
        return csr_from([], [], np.zeros(0, dtype), (m, n), index_dtype)
    rows, cols = rng.integers(0, m, nnz), rng.integers(0, n, nnz)
    vals = rng.standard_normal(nnz)
    if np.dtype(dtype).kind == "c":
        vals = vals + 1j * rng.standard_normal(nnz)
    vals = vals.astype(dtype)
    vals[rng.random(nnz) < 0.1] = 0
    rows, cols, vals = np.r_[rows, rows[:3]], np.r_[cols, cols[:3]], np.r_[vals, vals[:3]]
    return csr_from(rows, cols, vals, (m, n), index_dtype)


def mesh_csr(k, dtype=np.float64, index_dtype=np.int32):
    """A k x k grid with 8 neighbours (a triangle-ish FEM pattern), symmetric."""
    T = sp.diags_array([np.ones(k - 1), np.ones(k), np.ones(k - 1)], offsets=[-1, 0, 1])
    A = sp.kron(T, T).tocsr()
    A.data = np.arange(1, A.nnz + 1, dtype=float)
    return CSR.from_arrays(A.data, A.indices, A.indptr, A.shape, index_dtype=index_dtype, dtype=dtype)


def dense_of(csr):
    return csr.to_scipy().toarray()


def assert_same_csr(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype and got.index_dtype == want.index_dtype
    for name in ("indptr", "indices", "data"):
        a, b = getattr(got, name), getattr(want, name)
        assert a.dtype == b.dtype
        assert a.tobytes() == b.tobytes(), name


def expected_layout(csr, perm, packet_ptr, lanes):
    """Independent per-packet heapq implementation of the documented layout (index, data, offsets)."""
    perm, packet_ptr = np.asarray(perm), np.asarray(packet_ptr)
    pos = np.empty(perm.shape[0], np.int64)
    pos[perm] = np.arange(perm.shape[0])
    pkt = np.repeat(np.arange(packet_ptr.shape[0] - 1), np.diff(packet_ptr))
    S = csr.to_scipy().tocoo()
    per_packet = [dict() for _ in range(packet_ptr.shape[0] - 1)]
    for i, j, v in zip(S.row, S.col, S.data):
        if pkt[pos[i]] == pkt[pos[j]]:
            p = pkt[pos[i]]
            lr, lc = pos[i] - packet_ptr[p], pos[j] - packet_ptr[p]
            per_packet[p].setdefault(lr, []).append((lc, v))
    index, data, offsets = [], [], [0]
    for rows in per_packet:
        heap = [(0, lane) for lane in range(lanes)]
        lane_entries = [[] for _ in range(lanes)]
        for lr in sorted(rows, key=lambda r: (-len(rows[r]), r)):
            load, lane = heapq.heappop(heap)
            lane_entries[lane] += [((lr << 16) | lc, v) for lc, v in sorted(rows[lr])]
            heapq.heappush(heap, (load + len(rows[lr]), lane))
        width = max(len(e) for e in lane_entries)
        for i in range(width):
            for lane in range(lanes):
                e = lane_entries[lane]
                index.append(e[i][0] if i < len(e) else SENTINEL)
                data.append(e[i][1] if i < len(e) else 0)
        offsets.append(offsets[-1] + width * lanes)
    return np.array(index, np.uint32), np.array(data, csr.dtype), np.array(offsets)


# --- tuning rules and parameters -------------------------------------------------------

def test_default_rules():
    assert rules.default_packet_rows(4) == 4096  # 6144 fits, capped
    assert rules.default_packet_rows(8) == 3072
    assert rules.default_packet_rows(16) == 1536
    for itemsize in (4, 8, 16):
        rows = rules.default_packet_rows(itemsize)
        assert 2 * rows * itemsize <= rules.SHARED_MEMORY_BUDGET and rows % 32 == 0
    assert rules.default_threads_per_packet(3072) == 256
    assert rules.default_threads_per_packet(100) == 128
    assert rules.default_threads_per_packet(6) == 32
    assert rules.PACKET_ROWS_CAP <= MAX_PACKET_ROWS and rules.THREADS_PER_PACKET_CAP <= MAX_THREADS_PER_PACKET
    assert rules.default_threads_per_packet(MAX_PACKET_ROWS) <= MAX_THREADS_PER_PACKET


def test_layout_limits():
    assert MAX_PACKET_ROWS == 0xFFFF  # 16-bit local indices; 0xFFFFFFFF is the empty slot
    assert MAX_THREADS_PER_PACKET == 1024  # one packet is one CUDA block


@pytest.mark.parametrize("kwargs, missing", [
    ({}, "packet_rows"),
    ({"threads_per_packet": 32}, "packet_rows"),
    ({"packet_rows": 8}, "threads_per_packet"),
    ({"packet_rows": 8, "threads_per_packet": None}, "threads_per_packet"),
])
def test_sizes_without_a_rule_are_refused(kwargs, missing):
    with pytest.raises(TypeError, match=rf"pkt needs {missing}=") as info:
        PKT.from_csr(mesh_csr(3), **kwargs)
    assert "SparseMatrix" in str(info.value) and "cocktail.tuning.format_rules.format_params" in str(info.value)
    assert PKT.defaults["packet_rows"] is None and PKT.defaults["threads_per_packet"] is None


def test_resolved_params_are_stored(no_pymetis):
    fmt = build(mesh_csr(5))
    assert fmt.params == {"packet_rows": 3072, "threads_per_packet": 256, "partitioner": "rcm", "max_fill": 20.0}
    fmt = build(mesh_csr(5, dtype=np.complex128), packet_rows=40)
    assert fmt.params["packet_rows"] == 40 and fmt.params["threads_per_packet"] == 64
    assert build(mesh_csr(5, dtype=np.float32)).params["packet_rows"] == 4096


def test_auto_is_rcm_whether_or_not_pymetis_imports(monkeypatch):
    """One matrix stores the same packets in every install: 'auto' never turns to METIS because pymetis is there."""
    without = build(mesh_csr(6), packet_rows=8)
    monkeypatch.setitem(sys.modules, "pymetis", fake_pymetis(lambda k, nv: np.arange(nv) % k))
    with_metis = build(mesh_csr(6), packet_rows=8)
    assert without.params["partitioner"] == with_metis.params["partitioner"] == "rcm"
    assert np.array_equal(without.perm, with_metis.perm) and np.array_equal(without.index, with_metis.index)
    assert build(mesh_csr(6), packet_rows=8, partitioner="metis").params["partitioner"] == "metis"


@pytest.mark.parametrize("kwargs, exc, text", [
    ({"packet_rows": 0}, ValueError, "packet_rows must be an integer in [1, 65535]"),
    ({"packet_rows": 65536}, ValueError, "packet_rows must be an integer in [1, 65535]"),
    ({"packet_rows": 2.5}, TypeError, "packet_rows must be an integer"),
    ({"packet_rows": True}, TypeError, "packet_rows must be an integer"),
    ({"threads_per_packet": 0}, ValueError, "threads_per_packet must be an integer in [1, 1024]"),
    ({"threads_per_packet": 2048}, ValueError, "threads_per_packet must be an integer in [1, 1024]"),
    ({"partitioner": "spectral"}, ValueError, "partitioner must be one of 'auto', 'metis', 'rcm'"),
    ({"max_fill": -1}, ValueError, "max_fill must be a positive number or None"),
    ({"block": 2}, TypeError, "its parameters are: max_fill, packet_rows, partitioner, threads_per_packet"),
])
def test_parameter_errors(kwargs, exc, text):
    with pytest.raises(exc) as info:
        build(mesh_csr(3), **kwargs)
    assert text in str(info.value)


def test_metis_without_pymetis_names_the_extra(no_pymetis):
    with pytest.raises(ImportError, match=r"pip install 'cocktail\[pkt\]'"):
        build(mesh_csr(3), partitioner="metis")


# --- Fig. 13/14: greedy least-occupied-lane packing --------------------------------------

def test_fig14_packets_exact_layout(monkeypatch):
    calls = []
    membership = lambda k, nv: [0] * 6 + [1] * 5  # Fig. 12's two parts  # noqa: E731
    monkeypatch.setitem(sys.modules, "pymetis", fake_pymetis(membership, calls))
    csr = fig13_csr()
    fmt = PKT.from_csr(csr, packet_rows=6, threads_per_packet=4, partitioner="metis")
    # metis was asked for ceil(11 / 6) = 2 parts on the symmetric graph without self loops
    nparts, xadj, adjncy = calls[0]
    G = sp.csr_array((np.ones(adjncy.shape[0]), adjncy, xadj), shape=(11, 11))
    pattern = (dense_of(csr) != 0)
    np.fill_diagonal(pattern, False)
    assert nparts == 2 and (G.toarray().astype(bool) == (pattern | pattern.T)).all()

    np.testing.assert_array_equal(fmt.perm, np.arange(11))
    np.testing.assert_array_equal(fmt.packet_ptr, [0, 6, 11])
    # pkt0: row counts 4,5,3,3,5,4 -> rows taken 1,4,0,5,2,3 -> lanes [1], [4], [0,2], [5,3]: width 7
    # pkt1: row counts 3,5,3,4,4 -> rows taken 1,3,4,0,2 -> lanes [1], [3], [4], [0,2]: width 6
    # (Fig. 14 applies the same least-occupied rule to rows in natural order, giving widths 8 and 7.)
    np.testing.assert_array_equal(fmt.packet_offset, [0, 28, 52])
    def lane_of(rows, pkt):
        return [(r, c) for r in rows for c in pkt[r]]

    lanes0 = [lane_of([1], PKT0), lane_of([4], PKT0), lane_of([0, 2], PKT0), lane_of([5, 3], PKT0)]
    lanes1 = [lane_of([1], PKT1), lane_of([3], PKT1), lane_of([4], PKT1), lane_of([0, 2], PKT1)]
    for p, lanes, base in ((0, lanes0, 0), (1, lanes1, 6)):
        start, stop = fmt.packet_offset[p], fmt.packet_offset[p + 1]
        width = (stop - start) // 4
        idx = fmt.index[start:stop].reshape(width, 4)  # column-major: slot (i, lane) at i*4 + lane
        val = fmt.data[start:stop].reshape(width, 4)
        for lane, entries in enumerate(lanes):
            want = [(r << 16) | c for r, c in entries] + [SENTINEL] * (width - len(entries))
            assert idx[:, lane].tolist() == want
            wantv = [100 * (base + r) + base + c for r, c in entries] + [0] * (width - len(entries))
            assert val[:, lane].tolist() == wantv
    # the cut entries are the remainder, row-sorted, in original indices
    assert fmt.rest.row.tolist() == [2, 5, 6, 9] and fmt.rest.col.tolist() == [9, 6, 5, 2]
    assert fmt.rest.data.tolist() == [209.0, 506.0, 605.0, 902.0]
    assert_same_csr(fmt.to_csr(), csr)
    x = np.arange(11, dtype=float) + 1
    np.testing.assert_allclose(spmv(fmt, x), dense_of(csr) @ x)


def test_pack_lanes_ties_and_loads():
    # one packet of 5 rows: counts 2,2,1,0,3 over 2 lanes
    counts = np.array([2, 2, 1, 0, 3])
    lane, start, width = pack_lanes(counts, np.array([0, 5]), np.zeros(5, np.int64), 2)
    # order: row 4 (3) -> lane 0; row 0 (2) -> lane 1; row 1 (2) -> lane 1 (load 2 < 3); row 2 (1) -> lane 0
    assert lane[[4, 0, 1, 2]].tolist() == [0, 1, 1, 0]
    assert start[[4, 0, 1, 2]].tolist() == [0, 0, 2, 3]
    assert width.tolist() == [4]


def test_layout_matches_independent_greedy(no_pymetis):
    rng = np.random.default_rng(7)
    for csr, budget, lanes in ((mesh_csr(9), 16, 4), (random_csr(rng, 50, 40, 300), 12, 3),
                               (mesh_csr(7), 49, 32), (random_csr(rng, 30, 70, 200), 70, 1)):
        fmt = PKT.from_csr(csr, packet_rows=budget, threads_per_packet=lanes, max_fill=None)
        index, data, offsets = expected_layout(csr, fmt.perm, fmt.packet_ptr, lanes)
        np.testing.assert_array_equal(fmt.index, index)
        np.testing.assert_array_equal(fmt.data, data)
        np.testing.assert_array_equal(fmt.packet_offset, offsets)


# --- 16-bit packing, budget, partitioners ----------------------------------------------

def test_sixteen_bit_packing_at_the_largest_packet():
    m = MAX_PACKET_ROWS  # 65535 vertices in one packet, the 2-D Laplacian of a path
    T = sp.diags_array([-np.ones(m - 1), 2 * np.ones(m), -np.ones(m - 1)], offsets=[-1, 0, 1]).tocsr()
    csr = CSR.from_arrays(T.data, T.indices, T.indptr, T.shape)
    fmt = PKT.from_csr(csr, packet_rows=m, threads_per_packet=1024, partitioner="rcm")
    assert fmt.npackets == 1 and fmt.rest.nnz == 0
    filled = fmt.index[fmt.index != SENTINEL].astype(np.int64)
    assert filled.shape[0] == csr.nnz
    local_row, local_col = filled >> 16, filled & 0xFFFF
    assert local_row.max() == m - 1 and local_col.max() == m - 1
    assert ((m - 1) << 16 | (m - 1)) in set(filled.tolist())  # 0xFFFEFFFE is not the sentinel
    perm = np.asarray(fmt.perm).astype(np.int64)
    decoded = np.sort(perm[local_row] * m + perm[local_col])
    np.testing.assert_array_equal(decoded, csr.row_ids().astype(np.int64) * m + csr.indices)
    assert_same_csr(fmt.to_csr(), csr)


@pytest.mark.parametrize("budget", [1, 5, 32, 100])
def test_rcm_respects_the_budget(budget, no_pymetis):
    rng = np.random.default_rng(budget)
    csr = random_csr(rng, 230, 170, 900)
    fmt = PKT.from_csr(csr, packet_rows=budget, threads_per_packet=8, max_fill=None)
    sizes = np.diff(fmt.packet_ptr)
    assert sizes.max() <= budget and sizes.min() >= 1 and sizes.sum() == 230
    assert sorted(fmt.perm.tolist()) == list(range(230))
    assert fmt.npackets == -(-230 // budget)
    assert fmt.perm.dtype == fmt.packet_ptr.dtype == np.int32


def test_rcm_keeps_a_banded_matrix_inside_packets(no_pymetis):
    csr = mesh_csr(30)  # bandwidth 31 under RCM-like orders
    fmt = PKT.from_csr(csr, packet_rows=300, threads_per_packet=32)
    assert fmt.rest.nnz < 0.25 * csr.nnz
    assert fmt.describe()["share of entries inside packets"] > 0.75


def test_metis_oversized_and_empty_parts_are_split(monkeypatch):
    # part 2 has 9 vertices, part 0 has 4, part 1 none, part 3 has 1 -> chunks 4 | 4 4 1 | 1
    membership = lambda k, nv: [2, 0, 2, 2, 0, 2, 2, 3, 2, 2, 0, 2, 0, 2]  # noqa: E731
    monkeypatch.setitem(sys.modules, "pymetis", fake_pymetis(membership))
    csr = random_csr(np.random.default_rng(3), 14, 9, 60)
    fmt = PKT.from_csr(csr, packet_rows=4, threads_per_packet=2, partitioner="metis", max_fill=None)
    np.testing.assert_array_equal(fmt.packet_ptr, [0, 4, 8, 12, 13, 14])
    np.testing.assert_array_equal(fmt.perm, [1, 4, 10, 12, 0, 2, 3, 5, 6, 8, 9, 11, 13, 7])
    assert_same_csr(fmt.to_csr(), csr)
    x = np.linspace(-1, 1, 9)
    np.testing.assert_allclose(spmv(fmt, x), dense_of(csr) @ x)


def test_metis_result_within_budget_on_a_mesh(monkeypatch):
    # an unbalanced fake: part 0 gets 9 vertices in 10, part 1 the rest, the other parts nothing
    monkeypatch.setitem(sys.modules, "pymetis", fake_pymetis(lambda k, nv: (np.arange(nv) % 10 == 0).astype(int)))
    csr = mesh_csr(20)
    fmt = PKT.from_csr(csr, packet_rows=37, threads_per_packet=8, partitioner="metis")
    sizes = np.diff(fmt.packet_ptr)
    assert sizes.max() <= 37 and sizes.sum() == 400
    assert sizes.tolist() == [37] * 9 + [27] + [37] + [3]  # 360 = 9*37 + 27, then 40 = 37 + 3
    assert_same_csr(fmt.to_csr(), csr)


# --- remainder, fill guard, byte model, description -------------------------------------

def test_remainder_holds_exactly_the_cut_entries(no_pymetis):
    csr = random_csr(np.random.default_rng(11), 60, 45, 400)
    fmt = PKT.from_csr(csr, packet_rows=10, threads_per_packet=4, max_fill=None)
    pos = np.empty(60, np.int64)
    pos[fmt.perm] = np.arange(60)
    pkt = np.repeat(np.arange(fmt.npackets), np.diff(fmt.packet_ptr))
    S = csr.to_scipy().tocoo()
    cut = pkt[pos[S.row]] != pkt[pos[S.col]]
    assert fmt.rest.nnz == cut.sum() and fmt.rest.shape == csr.shape
    np.testing.assert_array_equal(fmt.rest.row, S.row[cut])  # row-sorted, columns in order
    np.testing.assert_array_equal(fmt.rest.col, S.col[cut])
    np.testing.assert_array_equal(fmt.rest.data, S.data[cut])
    assert (fmt.index != SENTINEL).sum() == csr.nnz - fmt.rest.nnz
    assert (fmt.data[fmt.index == SENTINEL] == 0).all()
    assert fmt.rest.index_dtype == csr.index_dtype


def test_max_fill_refusal():
    # a diagonal: 32 one-entry rows per packet spread over 1024 lanes -> 32 slots per entry
    csr = csr_from(np.arange(64), np.arange(64), np.ones(64), (64, 64))
    with pytest.raises(FormatFillError, match=r"format 'pkt' would store 2,048 values for 64 stored entries"):
        PKT.from_csr(csr, packet_rows=32, threads_per_packet=1024, partitioner="rcm")
    fmt = PKT.from_csr(csr, packet_rows=32, threads_per_packet=1024, partitioner="rcm", max_fill=None)
    assert fmt.stored_slots == 2048 and fmt.padding_ratio == 32.0


def test_spmv_bytes_and_describe(monkeypatch):
    monkeypatch.setitem(sys.modules, "pymetis", fake_pymetis(lambda k, nv: [0] * 6 + [1] * 5))
    fmt = PKT.from_csr(fig13_csr(), packet_rows=6, threads_per_packet=4, partitioner="metis")
    # perm 11*4 + ptr/offset 3*(4+4) + x 11*8 + slots 52*(4+8) + y 11*8 + COO 4*(2*4+8) + 4*8, and the
    # COO remainder adds into y: a read and a write of the CUT entries' 4 rows (5, 6, 2, 9)
    assert fmt.spmv_bytes() == 44 + 24 + 88 + 624 + 88 + (64 + 32 + 2 * 4 * 8)
    assert fmt.spmv_bytes("float32") == 44 + 24 + 44 + 52 * 8 + 44 + (4 * 12 + 16 + 2 * 4 * 4)
    # DRAM model: perm 11*4, packet_ptr and packet_offset 3*4 each, index and data 52*(4+8), the
    # remainder's 4*(4+4+8); x 11*8 staged once; y 11*8 plus the remainder's 4 rows read and written
    arrays = 44 + 12 + 12 + 52 * 12 + 4 * 16
    assert fmt.dram_bytes() == arrays + 88 + 88 + 2 * 4 * 8
    assert fmt.dram_bytes(l2_bytes=0) == arrays + (11 + 4) * 8 + 88 + 2 * 4 * 8  # the remainder gathers x
    assert fmt.stored_slots == 52 + 4
    d = fmt.describe()
    assert d["packets"] == 2 and d["threads per packet"] == 4 and d["partitioner"] == "metis"
    assert d["mean rows per lane"] == round(11 / 8, 2)
    assert d["share of entries inside packets"] == round(43 / 47, 3) and d["remainder entries"] == 4


def test_arrays_are_read_only_and_typed(no_pymetis):
    fmt = PKT.from_csr(mesh_csr(6, index_dtype=np.int64), packet_rows=10, threads_per_packet=4)
    for name in PKT.array_fields:
        assert not getattr(fmt, name).flags.writeable
    assert fmt.index.dtype == np.uint32
    assert fmt.perm.dtype == fmt.packet_ptr.dtype == fmt.packet_offset.dtype == np.int64
    assert get("pkt") is PKT


# --- round trips and products -----------------------------------------------------------

@pytest.mark.parametrize("shape", [(0, 0), (0, 7), (5, 0), (6, 9), (40, 13), (13, 40), (64, 64)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_round_trip_and_products(shape, dtype, index_dtype, no_pymetis):
    rng = np.random.default_rng(sum(shape))
    m, n = shape
    nnz = 0 if shape == (6, 9) else 4 * max(m, n)
    csr = random_csr(rng, m, n, nnz, dtype, index_dtype)
    for budget, lanes in ((None, None), (7, 3), (16, 32)):
        fmt = build(csr, packet_rows=budget, threads_per_packet=lanes, max_fill=None)
        assert fmt.dtype == np.dtype(dtype) and fmt.index_dtype == np.dtype(index_dtype)
        assert_same_csr(fmt.to_csr(), csr)
        A = dense_of(csr)
        X = rng.standard_normal((n, 3)).astype(dtype)
        Y = product_for(fmt)(fmt, X)
        assert Y.dtype == np.dtype(dtype) and Y.shape == (m, 3)
        tol = 1e-4 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(Y, A @ X, rtol=tol, atol=tol)
        np.testing.assert_allclose(spmv(fmt, X[:, 0]), A @ X[:, 0], rtol=tol, atol=tol)


def test_explicit_zeros_survive_inside_and_outside(no_pymetis):
    rows = [0, 0, 1, 2, 3, 3, 4]
    cols = [0, 4, 1, 2, 0, 3, 4]
    vals = [0.0, 0.0, -0.0, 1.0, 0.0, 2.0, 3.0]
    csr = csr_from(rows, cols, vals, (5, 5))
    fmt = PKT.from_csr(csr, packet_rows=2, threads_per_packet=2, max_fill=None)
    assert fmt.rest.nnz > 0 and (fmt.rest.data == 0).any()
    assert ((fmt.index != SENTINEL) & (fmt.data == 0)).any()
    assert_same_csr(fmt.to_csr(), csr)
    assert np.signbit(fmt.to_csr().data[2])  # -0.0 kept bit for bit


def test_products_on_a_mesh_with_metis_fake(monkeypatch):
    # contiguous blocks of the natural order, like a decent partition of a grid
    monkeypatch.setitem(sys.modules, "pymetis", fake_pymetis(lambda k, nv: np.arange(nv) * k // nv))
    csr = mesh_csr(25)
    fmt = build(csr, packet_rows=100, partitioner="metis")
    assert fmt.params["partitioner"] == "metis" and np.diff(fmt.packet_ptr).max() <= 100
    X = np.random.default_rng(0).standard_normal((625, 2))
    np.testing.assert_allclose(product_for(fmt)(fmt, X), dense_of(csr) @ X, rtol=1e-12)
