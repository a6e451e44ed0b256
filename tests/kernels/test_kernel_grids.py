"""Launch grids never exceed the device's gridDim.x limit and still cover every row, item or merge block.

Host-side only: the grid arithmetic of the binders, and Python replays of the kernels' stride loops
(csr_stream's warp-stride loop over items, csr_merge's block-stride loop over merge blocks) with a
fake device whose grid limit is tiny, so capping actually happens.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail.kernels import csr_merge, csr_stream
from cocktail.kernels.device import capped_grid, grid_for
from cocktail.kernels.launch import MAX_GRID_X, Launch
from oracle import fake_props

HUGE = 3_000_000_000


def tiny_grid_props(limit: int):
    return dataclasses.replace(fake_props(), max_grid_x=limit)


@pytest.mark.parametrize("items", [1, 1000, HUGE, 100_000_000 * 32, 2**40])
@pytest.mark.parametrize("block", [32, 256, 1024])
def test_grid_stride_grids_are_within_the_limit(items, block):
    for props in (fake_props(), tiny_grid_props(7)):
        grid = grid_for(items, block, props, None)
        assert 1 <= grid <= props.max_grid_x
        assert grid <= -(-items // block)  # never more blocks than there is work for


def test_a_looping_grid_is_one_wave_of_the_kernels_occupancy(monkeypatch):
    """More blocks than the SMs hold by threads: one wave of the function's own occupancy (the driver's, faked
    here at 6 blocks an SM); no loop needed: a block per chunk, whatever the occupancy."""
    from cocktail.kernels import device

    asked = []
    monkeypatch.setattr(device, "blocks_per_sm", lambda fn, block, shared=0: asked.append((fn, block, shared)) or 6)
    props, block, kernel = fake_props(), 256, object()
    by_threads = props.sm_count * (props.max_threads_per_sm // block)
    assert grid_for(by_threads * block * 10, block, props, kernel, 1024) == props.sm_count * 6
    assert asked == [(kernel, block, 1024)]
    assert grid_for(by_threads * block, block, props, kernel) == by_threads  # no loop: as many blocks as chunks
    assert grid_for(block * 7 + 1, block, props, kernel) == 8
    assert len(asked) == 1  # a grid that needs no loop asks no occupancy
    assert grid_for(by_threads * block * 10, block, props, None) == by_threads  # host simulations: threads alone


def test_yielding_props_take_a_block_per_chunk(monkeypatch):
    """Props bound with the yielding launch policy size a grid that would be one looping wave a block per chunk
    (capped at gridDim.x), whatever the occupancy: blocks retire all along for the kernel beside them; props bound
    without it, the wave again.  The policy is the caller's argument: the device's own props never carry it."""
    from cocktail.kernels import device

    monkeypatch.setattr(device, "blocks_per_sm", lambda fn, block, shared=0: 6)
    monkeypatch.setattr(device, "props", lambda device_id: fake_props())
    block, kernel = 256, object()
    items = fake_props().sm_count * 8 * block * 10
    props = device.for_launches(0, yielding=True)
    assert props.yielding and not device.for_launches(0).yielding and not fake_props().yielding
    assert dataclasses.replace(props, yielding=False) == fake_props()  # the device's properties as they are
    assert grid_for(items, block, props, kernel) == items // block
    assert grid_for(items, block, device.for_launches(0), kernel) == fake_props().sm_count * 6
    assert grid_for(HUGE * 1024, 32, props, kernel) == props.max_grid_x  # past gridDim.x: capped, so it loops


def _csr():
    from cocktail.formats import CSR

    S = sp.random(40, 30, density=0.2, format="csr", random_state=0)
    return CSR.from_arrays(S.data, S.indices, S.indptr, S.shape)


class _Bound:
    """A stand-in for the cuda executor (no GPU here): what it was asked to bind with."""

    name = "cuda"
    config, nondeterministic, block_specs = {}, (), ()

    def __init__(self, storage, spec, params, accumulate=False, yielding=False):
        self.storage, self.kernel, self.yielding = storage, spec.name, yielding

    def block_executors(self):
        return (self,)


def test_the_launch_policy_reaches_every_cuda_executor(monkeypatch):
    """executors.create hands the launch policy to the cuda executor of a matrix and of each part of a Cocktail;
    without it, they bind as a matrix alone does."""
    from cocktail import executors, formats
    from cocktail.executors import cuda
    from cocktail.formats.cocktail import Cocktail

    monkeypatch.setattr(cuda, "CudaExecutor", _Bound)
    csr = _csr()
    assert executors.create(None, csr, "cuda", yielding=True).yielding
    assert not executors.create(None, csr, "cuda").yielding
    mixed = Cocktail.from_csr(csr, parts=[("ell", {}, ("row_prefix", 2)), ("csr", {}, ("rest",))])
    parts = executors.create(None, mixed, "cuda", yielding=True).parts
    assert len(parts) == 2 and all(p.yielding for p in parts)
    assert executors.create(None, csr, "cpu", yielding=True).name == "cpu"  # no grids on the host: nothing to take


def test_a_matrix_builds_its_executors_and_derived_matrices_with_its_policy(monkeypatch):
    """SparseMatrix(yielding=...) is the policy's one way in: it reaches the executor the matrix binds, and the
    matrices made from it (built with its options) bind with it too."""
    from cocktail import SparseMatrix, executors

    asked, made = [], executors.create

    def create(*args, **kwargs):
        asked.append(kwargs["yielding"])
        return made(*args, **kwargs)

    monkeypatch.setattr(executors, "create", create)
    S = sp.random(40, 30, density=0.2, format="csr", random_state=0)
    A = SparseMatrix(S, format="csr", device="cpu", yielding=True)
    x = np.ones(40)
    np.testing.assert_allclose(A.T @ x, S.T @ x)
    SparseMatrix(S, device="cpu")
    assert asked == [True, True, False] and A._options.yielding
    with pytest.raises(TypeError, match="yielding must be True or False"):
        SparseMatrix(S, device="cpu", yielding=1)


def test_plans_raced_with_yielding_launches_are_kept_apart():
    """A plan raced with yielding grids (a distributed block's) is cached under its own key: a matrix without
    them times its own race."""
    from cocktail.auto import decisions

    args = ("f" * 32, "model-gpu-sm90-cuda13000", np.float64, np.int32)
    assert decisions.key(*args) != decisions.key(*args, yielding=True)
    assert decisions.key(*args) == decisions.key(*args, yielding=False)
    assert decisions.key(*args, yielding=True).endswith("|yielding")


def test_a_planned_matrix_binds_every_plan_with_its_policy(monkeypatch):
    """format="auto" on the GPU (here its fixed rule, without a profile) binds the plan it builds with the policy it
    was given, and the planned product hands it to the whole-matrix rival."""
    from cocktail import formats
    from cocktail.auto import planning, profile
    from cocktail.auto.planner import PlannerNotice
    from cocktail.executors import cuda

    monkeypatch.setattr(cuda, "CudaExecutor", _Bound)
    monkeypatch.setattr(profile, "current_device", lambda: {"name": "a test GPU"})
    monkeypatch.setattr(profile, "for_device", lambda device: None)
    csr = _csr()
    for yielding in (True, False):
        with pytest.warns(PlannerNotice, match="no device profile"):
            _, product, _ = planning.choose(csr, "model", yielding=yielding)
        assert product.current.yielding is yielding and product._yielding is yielding


def test_the_whole_matrix_rival_binds_as_its_matrix_did(monkeypatch):
    """The whole-matrix rival of a block product is built on the first block product, maybe long after its
    matrix: it binds with the launch policy its matrix's planned product gave it."""
    import types

    from cocktail import formats
    from cocktail.auto.plans import PlannedProduct
    from cocktail.executors import cuda

    made = []
    monkeypatch.setattr(cuda, "create", lambda csr, spec, params, required, accumulate=False, deterministic=False,
                        yielding=False: made.append((csr.shape, yielding)) or "whole")
    storage = formats.get("coo").from_csr(_csr())
    composed = types.SimpleNamespace(block_executors=lambda: ())  # parts one after another: the rival is wanted
    for yielding in (True, False):
        rival = PlannedProduct(None, storage, composed, yielding=yielding)._rival
        assert rival._whole() == "whole"
    assert made == [((40, 30), True), ((40, 30), False)]


def test_capped_grid():
    props = fake_props()
    assert capped_grid(0, props) == 1
    assert capped_grid(12345, props) == 12345
    assert capped_grid(2**31, props) == 2**31 - 1 == props.max_grid_x == MAX_GRID_X


def _replay_stream(n_items: int, block: int, grid: int) -> np.ndarray:
    """How many times csr_stream's warp-stride loop visits each item."""
    warps = block // 32
    seen = np.zeros(n_items, dtype=np.int64)
    for b in range(grid):
        for w in range(warps):
            seen[b * warps + w::grid * warps] += 1
    return seen


@pytest.mark.parametrize("n_items, block, limit", [(1, 32, 1), (1000, 32, 7), (1000, 256, 3), (4097, 1024, 2)])
def test_stream_grid_covers_every_item_once(n_items, block, limit):
    props = tiny_grid_props(limit)
    grid = csr_stream.stream_grid(n_items, block, props)
    assert 1 <= grid <= limit
    assert (_replay_stream(n_items, block, grid) == 1).all()


def test_stream_grid_for_huge_item_counts():
    props = fake_props()
    # 3e9 items, one warp per block: more blocks than gridDim.x may have, so the grid is capped
    assert csr_stream.stream_grid(HUGE, 32, props) == props.max_grid_x
    assert csr_stream.stream_grid(HUGE, 256, props) == -(-HUGE // 8)  # fits: one pass, as before
    assert csr_stream.stream_grid(0, 256, props) == 1


def _kernel_merge_blocks(m: int, nnz: int, items: int, block: int) -> int:
    """csr_merge's own count of merge blocks (the kernel's formula)."""
    total = m + nnz
    per_block = items * block
    return (total + per_block - 1) // per_block if total > 0 else 1


@pytest.mark.parametrize("m, nnz, items, block", [
    (0, 0, 7, 32), (1, 0, 7, 32), (10, 90, 3, 32), (1000, 5000, 7, 256),
    (HUGE, HUGE, 1, 32), (HUGE, 2**33, 7, 256), (2**31 - 1, 2**31 - 1, 1, 32),
])
def test_merge_blocks_agree_between_binder_and_kernel(m, nnz, items, block):
    _, blocks = csr_merge.merge_grid(m, nnz, items, block)
    assert blocks == _kernel_merge_blocks(m, nnz, items, block)
    grid = capped_grid(blocks, fake_props())
    assert grid <= MAX_GRID_X
    passes = -(-blocks // grid)
    assert grid * passes >= blocks  # the block-stride loop reaches every merge block


@pytest.mark.parametrize("blocks, limit", [(1, 1), (10, 3), (10, 10), (1001, 64)])
def test_merge_block_loop_visits_each_block_once(blocks, limit):
    grid = capped_grid(blocks, tiny_grid_props(limit))
    seen = np.zeros(blocks, dtype=np.int64)
    for b in range(grid):
        seen[b::grid] += 1
    assert grid <= limit and (seen == 1).all()


def test_launch_refuses_a_grid_past_the_limit():
    with pytest.raises(ValueError, match="grid 2,147,483,648 exceeds the 2,147,483,647 blocks"):
        Launch(None, 2**31, 32, (), np.float32)
