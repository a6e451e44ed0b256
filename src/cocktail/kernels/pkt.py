"""pkt: packets in shared memory plus a COO remainder (Bell & Garland §3.6, §4.6)."""

from __future__ import annotations


import numpy as np

from . import device, source
from .spec import KernelSpec, index_type_name, value_type_name

#: Workspace key of the launch state computed once per plan (see ``_prepare``).
_STATE = "pkt"


def _expressions(v: str, i: str) -> list[str]:
    return [f"pkt<{v}, {i}>"]


def max_packet_vertices(packet_ptr) -> int:
    """The largest number of vertices in one packet, from host packet pointers."""
    ptr = np.asarray(packet_ptr, dtype=np.int64)
    return int(np.diff(ptr).max()) if ptr.shape[0] > 1 else 0


def shared_bytes(max_vertices: int, itemsize: int) -> int:
    """Dynamic shared memory of one packet's block: ``x_local`` and ``y_local``."""
    return 2 * int(max_vertices) * int(itemsize)


def shared_opt_in(need: int, portable: int, opt_in: int) -> int | None:
    """The ``max_dynamic_shared_size_bytes`` to set for a launch needing ``need`` bytes.

    ``None`` when ``need`` fits the portable per-block limit (nothing to set); else the
    device's opt-in maximum: the attribute belongs to the compiled function, shared by every
    plan, so it is never lowered below what another plan's packets need.  ``ValueError``
    when ``need`` exceeds even the opt-in maximum.
    """
    if need <= portable:
        return None
    if need > opt_in:
        raise ValueError(
            f"pkt: a packet needs {need} bytes of shared memory (x_local and y_local of its largest "
            f"packet) but this device allows at most {opt_in} per block; rebuild the matrix with a "
            f"smaller packet_rows (or the default)"
        )
    return opt_in


def _check_cover(fmt, ptr) -> None:
    """Every vertex must be in exactly one packet: the packet phase alone writes all of y."""
    nv = max(fmt.shape)
    if fmt.perm.shape[0] != nv or ptr.shape[0] < 1 or ptr[0] != 0 or ptr[-1] != nv or (np.diff(ptr) < 0).any():
        raise ValueError(f"pkt: packet_ptr does not cut perm ({fmt.perm.shape[0]} vertices) into packets "
                         f"covering all {nv} vertices")


def _prepare(plan) -> dict:
    """Launch state computed once per plan: 64-bit slot offsets, shared memory, grid, remainder plan."""
    state = plan.workspace.get(_STATE)
    if state is not None:
        return state
    import cupy

    from . import get
    from .plan import Plan

    fmt = plan.storage
    props = device.current()
    lanes = int(fmt.params["threads_per_packet"])
    if lanes > props.max_threads_per_block:
        raise ValueError(f"pkt: threads_per_packet={lanes} exceeds this device's {props.max_threads_per_block} "
                         f"threads per block")
    ptr = cupy.asnumpy(fmt.packet_ptr).astype(np.int64)
    _check_cover(fmt, ptr)
    max_vertices = max_packet_vertices(ptr)
    need = shared_bytes(max_vertices, fmt.dtype.itemsize)
    opt_in, max_grid = props.shared_memory_per_block_optin, props.max_grid_x
    fn = source.function(SPEC, _expressions(value_type_name(fmt.dtype), index_type_name(fmt.index_dtype))[0],
                         plan.params["ldg"])
    limit = shared_opt_in(need, props.shared_memory_per_block, opt_in)
    if limit is not None:
        fn.max_dynamic_shared_size_bytes = limit
    rest = None
    if fmt.rest.nnz:
        spec = get(plan.params["coo_kernel"])
        rest = Plan(spec, fmt.rest, {"ldg": plan.params["ldg"]} if "ldg" in spec.defaults else {})
    npackets = ptr.shape[0] - 1
    state = {
        "function": fn,
        "packet_offset": fmt.packet_offset.astype(cupy.int64, copy=False),
        "npackets": npackets,
        "grid": min(npackets, max_grid),
        "lanes": lanes,
        "max_vertices": max_vertices,
        "shared_bytes": need,
        "rest": rest,
    }
    plan.workspace[_STATE] = state
    return state


def launch(plan, x, y, alpha, beta) -> None:
    """Packet phase (writes every row of y), then the COO remainder added with beta = 1."""
    fmt = plan.storage
    m, n = fmt.shape
    if m == 0:
        return
    s = _prepare(plan)
    if s["npackets"]:
        I = fmt.index_dtype.type
        s["function"]((s["grid"],), (s["lanes"],),
                      (I(m), I(n), np.int64(s["npackets"]), np.int32(s["max_vertices"]), fmt.perm, fmt.packet_ptr,
                       s["packet_offset"], fmt.index, fmt.data, x, y, alpha, beta),
                      shared_mem=s["shared_bytes"])
    if s["rest"] is not None:
        s["rest"].run(x, y, alpha, fmt.dtype.type(1))


SPEC = KernelSpec(
    name="pkt",
    formats=("pkt",),
    source="pkt",
    expressions=_expressions,
    launch=launch,
    defaults={"ldg": True, "coo_kernel": "coo_segmented"},
    description="one block per packet, x and y slices in shared memory, COO remainder",
)
