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
    """Inside yielding_grids a grid that would be one looping wave is a block per chunk (capped at gridDim.x),
    whatever the occupancy: blocks retire all along for the kernel beside them; outside it, the wave again."""
    from cocktail.kernels import device

    monkeypatch.setattr(device, "blocks_per_sm", lambda fn, block, shared=0: 6)
    monkeypatch.setattr(device, "props", lambda device_id: fake_props())
    block, kernel = 256, object()
    items = fake_props().sm_count * 8 * block * 10
    with device.yielding_grids():
        props = device.for_launches(0)
        with device.yielding_grids():  # nested: still yielding, and the outer block's mark survives the inner's end
            assert device.for_launches(0).yielding
        assert device.for_launches(0).yielding
        with device.yielding_grids(False):  # off: the grids as they are around it
            assert device.for_launches(0).yielding
    with device.yielding_grids(False):
        assert not device.for_launches(0).yielding
    assert props.yielding and not device.for_launches(0).yielding and not fake_props().yielding
    assert grid_for(items, block, props, kernel) == items // block
    assert grid_for(items, block, device.for_launches(0), kernel) == fake_props().sm_count * 6
    assert grid_for(HUGE * 1024, 32, props, kernel) == props.max_grid_x  # past gridDim.x: capped, so it loops


def test_plans_raced_with_yielding_grids_are_kept_apart():
    """A plan raced inside yielding_grids (a distributed block's) is cached under its own key: a matrix outside
    it times its own race."""
    from cocktail.auto import decisions
    from cocktail.kernels import device

    args = ("f" * 32, "model-gpu-sm90-cuda13000", np.float64, np.int32)
    assert decisions.key(*args) != decisions.key(*args, yielding=True)
    assert decisions.key(*args, yielding=True).endswith("|yielding")
    with device.yielding_grids():
        assert device.yielding()
    assert not device.yielding()


def test_the_whole_matrix_rival_binds_as_its_matrix_did():
    """The whole-matrix rival of a block product is built on the first block product, maybe long after its
    matrix: it binds with the grids the matrix was bound with."""
    from cocktail import formats
    from cocktail.auto.block_plans import WholeRival
    from cocktail.kernels import device

    storage = formats.get("csr").from_csr(sp.random(40, 30, density=0.2, format="csr", random_state=0))
    with device.yielding_grids():
        inside = WholeRival(storage)
    assert inside._yielding and not WholeRival(storage)._yielding


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
