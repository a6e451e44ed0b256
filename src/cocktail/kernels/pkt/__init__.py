"""pkt: packets in shared memory plus a COO remainder (Bell & Garland §3.6, §4.6)."""

from __future__ import annotations

import numpy as np

from ..launch import ALPHA, X, Y, Launch, beta_arg
from ..config import flag
from ..spec import KernelSpec, type_names


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
    matrix, so it is never lowered below what another matrix's packets need.  ``ValueError``
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


def bind(fmt, config: dict, props, accumulate: bool = False) -> list[Launch]:
    """Packet phase (writes every row of y), then the COO remainder added with beta = 1.

    Reads the packet pointers on the host once, here; ``config["rest"]`` is ``(spec, config)``
    of the remainder's COO kernel, or None when the remainder is empty.
    """
    import cupy

    m, n = fmt.shape
    lanes = int(fmt.params["threads_per_packet"])
    ptr = cupy.asnumpy(fmt.packet_ptr).astype(np.int64)
    _check_cover(fmt, ptr)
    npackets = ptr.shape[0] - 1
    launches = []
    if npackets:
        max_vertices = max_packet_vertices(ptr)
        need = shared_bytes(max_vertices, fmt.dtype.itemsize)
        fn = SPEC.compiled(_expressions(*type_names(fmt))[0], config["ldg"], props.id)
        limit = shared_opt_in(need, props.shared_memory_per_block, props.shared_memory_per_block_optin)
        if limit is not None:
            fn.max_dynamic_shared_size_bytes = limit
        I = fmt.index_dtype.type
        args = (I(m), I(n), np.int64(npackets), np.int32(max_vertices), fmt.perm, fmt.packet_ptr,
                fmt.packet_offset.astype(cupy.int64, copy=False), fmt.index, fmt.data, X, Y, ALPHA,
                beta_arg(fmt, accumulate))
        launches.append(Launch(fn, min(npackets, props.max_grid_x), lanes, args, fmt.dtype, shared_mem=need))
    if config["rest"] is not None:
        rest_spec, rest_config = config["rest"]
        launches += rest_spec.bind(fmt.rest, rest_config, props, accumulate=True)
    return launches


def configure(spec, fmt, p, props, rules) -> dict:
    """One block per packet (its lanes within the device limit) and the COO kernel of the rest."""
    ldg = flag(spec.name, "ldg", p["ldg"])
    lanes = int(fmt.params["threads_per_packet"])  # one block of threads per packet
    if lanes > props.max_threads_per_block:
        raise ValueError(f"pkt: threads_per_packet={lanes} exceeds this device's {props.max_threads_per_block} "
                         f"threads per block")
    rest = rules.part(p["coo_kernel"], fmt.rest, ldg, props, "pkt: coo_kernel")
    return {"ldg": ldg, "coo_kernel": p["coo_kernel"], "rest": rest if fmt.rest.nnz else None}


SPEC = KernelSpec(
    name="pkt",
    formats=("pkt",),
    default_for=("pkt",),
    source="pkt",
    expressions=_expressions,
    bind=bind,
    configure=configure,
    defaults={"ldg": True, "coo_kernel": "coo_segmented"},
    description="one block per packet, x and y slices in shared memory, COO remainder",
    order=190,
    walk="parts",
)
