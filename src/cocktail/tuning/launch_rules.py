"""Launch configuration: every kernel parameter resolved to a concrete value, once, at construction.

:func:`configure` turns the parameters a user gave (``None`` for "let the rule choose") into
the complete configuration a kernel's binder needs: block size, threads per row, items per
thread, the COO partition, and the configurations of a composed kernel's parts.  It is the
only place that chooses a block size, and it validates every parameter before anything is
launched.
"""

from __future__ import annotations

import numbers
import operator

from .. import kernels
from ..kernels import bcsr, blocks, coo_segmented, csr_stream, csr_vector, cusparse, sell
from ..kernels import bdia as bdia_kernel
from ..kernels import dia_vi as dia_vi_kernel
from ..kernels.device import WARP_SIZE
from . import coo as coo_rules
from . import kernel_rules as rules


def block_threads(kernel: str, given, props) -> int:
    """Threads per block: ``given`` or the tuning rule; a positive multiple of the warp size within the device limit."""
    block = rules.BLOCK_THREADS if given is None else given
    try:
        if isinstance(block, bool):
            raise TypeError
        block = operator.index(block)
    except TypeError:
        raise ValueError(f"{kernel}: block_threads must be an integer, got {block!r}") from None
    if block <= 0 or block % WARP_SIZE or block > props.max_threads_per_block:
        raise ValueError(f"{kernel}: block_threads must be a positive multiple of {WARP_SIZE} "
                         f"up to {props.max_threads_per_block}, got {block}")
    return block


def _flag(kernel: str, name: str, value) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{kernel}: {name} must be True or False, got {value!r}")
    return value


def _row_kernel(spec, fmt, p, props) -> dict:
    return {"ldg": _flag(spec.name, "ldg", p["ldg"]), "block_threads": block_threads(spec.name, p["block_threads"], props)}


def _csr_vector(spec, fmt, p, props) -> dict:
    t = p["threads_per_row"]
    if t is None:
        m = fmt.shape[0]
        t = rules.csr_vector_threads(fmt.nnz / m if m else 0.0)
    if isinstance(t, bool) or t not in csr_vector.THREADS_PER_ROW:
        raise ValueError(f"csr_vector: threads_per_row must be one of {csr_vector.THREADS_PER_ROW} or None, got {t!r}")
    return {**_row_kernel(spec, fmt, p, props), "threads_per_row": int(t),
            "aligned": _flag(spec.name, "aligned", p["aligned"])}


def _sell(spec, fmt, p, props) -> dict:
    t = p["threads_per_row"]
    if t is None:
        rows = fmt.nslices * fmt.slice_height  # padded rows: every slice is slice_height rows
        t = rules.sell_threads(fmt.stored_slots / rows if rows else 0.0)
    if isinstance(t, bool) or not isinstance(t, numbers.Integral) or t not in sell.THREADS_PER_ROW:
        raise ValueError(f"sell: threads_per_row must be one of {sell.THREADS_PER_ROW} or None, got {t!r}")
    return {**_row_kernel(spec, fmt, p, props), "threads_per_row": int(t)}


def _csr_merge(spec, fmt, p, props) -> dict:
    k = p["items_per_thread"]
    if k is None:
        k = rules.MERGE_ITEMS_PER_THREAD
    try:
        if isinstance(k, bool):
            raise TypeError
        k = operator.index(k)
    except TypeError:
        k = None
    if k is None or k < 1:
        raise ValueError(f"csr_merge: items_per_thread must be a positive integer or None, got {p['items_per_thread']!r}")
    return {**_row_kernel(spec, fmt, p, props), "items_per_thread": k}


def _csr_stream(spec, fmt, p, props) -> dict:
    k = rules.STREAM_ITEMS_PER_LANE if p["items_per_lane"] is None else p["items_per_lane"]
    if isinstance(k, bool) or k not in csr_stream.ITEMS_PER_LANE:
        raise ValueError(f"csr_stream: items_per_lane must be one of {csr_stream.ITEMS_PER_LANE} or None, "
                         f"got {p['items_per_lane']!r}")
    config = {**_row_kernel(spec, fmt, p, props), "items_per_lane": int(k),
              "stream": _flag(spec.name, "stream", p["stream"])}
    shared = config["block_threads"] * int(k) * fmt.dtype.itemsize
    if shared > props.shared_memory_per_block:
        raise ValueError(f"csr_stream: block_threads={config['block_threads']} with items_per_lane={k} stages "
                         f"{shared} bytes of products, more than the {props.shared_memory_per_block} bytes of shared "
                         "memory a block may use; choose fewer threads or items")
    own_row, rows_per_item = rules.csr_stream_shape(k)
    return {**config, "own_row": own_row, "rows_per_item": rows_per_item}


def _block_kernel(spec, fmt, p, props) -> dict:
    """ldg and block_threads of a blocked-format kernel, after checking its block shape is instantiated."""
    if tuple(fmt.block) not in blocks.BLOCK_SHAPES:
        shapes = ", ".join(f"{r}x{c}" for r, c in blocks.BLOCK_SHAPES)
        raise ValueError(f"{spec.name}: no instantiation for block {fmt.block!r}; supported block shapes: {shapes}")
    return _row_kernel(spec, fmt, p, props)


def _bcsr(spec, fmt, p, props) -> dict:
    t = p["threads_per_superrow"]
    if t is None:
        superrows = int(fmt.row_ptr.shape[0]) - 1
        t = rules.bcsr_threads(fmt.nblocks / superrows if superrows else 0.0)
    if isinstance(t, bool) or t not in bcsr.THREADS_PER_SUPERROW:
        raise ValueError(f"bcsr: threads_per_superrow must be one of {bcsr.THREADS_PER_SUPERROW} or None, got {t!r}")
    return {**_block_kernel(spec, fmt, p, props), "threads_per_superrow": int(t)}


def _scale_block(props) -> int:
    """Threads per block of the ``scale_y`` pass ahead of a COO kernel (a grid-stride loop over y)."""
    return block_threads("scale_y", None, props)


def _coo_segmented(spec, fmt, p, props) -> dict:
    config = _row_kernel(spec, fmt, p, props)
    nnz = int(fmt.row.shape[0])
    interval, warps = 0, 0
    if nnz:
        per_sm = coo_segmented.occupancy(fmt, config["block_threads"], config["ldg"], props)
        resident = coo_rules.resident_warps(props.sm_count, per_sm, config["block_threads"])
        interval, warps = coo_rules.segmented_partition(nnz, resident)
    return {**config, "interval": interval, "warps": warps, "scale_block": _scale_block(props)}


def _coo_atomic(spec, fmt, p, props) -> dict:
    config = _row_kernel(spec, fmt, p, props)
    nnz = int(fmt.row.shape[0])
    omega = rules.coo_omega(nnz) if p["omega"] is None else p["omega"]
    warps = coo_rules.atomic_warps(nnz, omega, props.sm_count, rules.cores_per_sm(props.compute_capability))
    return {**config, "omega": coo_rules.check_omega(omega), "warps": warps, "scale_block": _scale_block(props)}


def _cusparse(spec, fmt, p, props) -> dict:
    alg = rules.CUSPARSE_ALG if p["alg"] is None else p["alg"]
    if isinstance(alg, bool) or alg not in cusparse.ALGS:
        raise ValueError(f"{spec.name}: alg must be one of {cusparse.ALGS} or None, got {p['alg']!r}")
    return {"alg": int(alg), "scale_block": _scale_block(props)}


def _part(kernel_name: str, fmt, ldg, props, what: str):
    """``(spec, config)`` of a composed kernel's part, with the parent's ``ldg``."""
    spec = kernels.get(kernel_name)
    if fmt.name not in spec.formats:
        raise ValueError(f"{what} must be a kernel for {fmt.name} matrices "
                         f"({', '.join(s.name for s in kernels.for_format(fmt.name))}), got {kernel_name!r}")
    return spec, configure(spec, fmt, {"ldg": ldg} if "ldg" in spec.defaults else {}, props)


def _hyb(spec, fmt, p, props) -> dict:
    ldg = _flag(spec.name, "ldg", p["ldg"])
    return {"ldg": ldg, "coo_kernel": p["coo_kernel"],
            "parts": {"ell": _part("ell", fmt.ell, ldg, props, "hyb's ELL kernel"),
                      "coo": _part(p["coo_kernel"], fmt.coo, ldg, props, "hyb: coo_kernel")}}


def _pkt(spec, fmt, p, props) -> dict:
    ldg = _flag(spec.name, "ldg", p["ldg"])
    lanes = int(fmt.params["threads_per_packet"])  # one block of threads per packet
    if lanes > props.max_threads_per_block:
        raise ValueError(f"pkt: threads_per_packet={lanes} exceeds this device's {props.max_threads_per_block} "
                         f"threads per block")
    rest = _part(p["coo_kernel"], fmt.rest, ldg, props, "pkt: coo_kernel")
    return {"ldg": ldg, "coo_kernel": p["coo_kernel"], "rest": rest if fmt.rest.nnz else None}


def _bdia(spec, fmt, p, props) -> dict:
    config = _row_kernel(spec, fmt, p, props)
    block, itemsize = config["block_threads"], fmt.dtype.itemsize
    piece = p["piece_width"]
    if piece is None:
        piece = rules.bdia_piece_width(bdia_kernel.widest_band(fmt.band_ptr), block, itemsize)
    if isinstance(piece, bool) or not isinstance(piece, numbers.Integral) or piece < 1:
        raise ValueError(f"bdia: piece_width must be a positive integer or None, got {piece!r}")
    need = bdia_kernel.shared_bytes(block, piece, itemsize)
    if need > props.shared_memory_per_block:
        raise ValueError(f"bdia: piece_width={int(piece)} with block_threads={block} stages {block + int(piece) - 1} "
                         f"values of x ({need} bytes), more than the {props.shared_memory_per_block} bytes of shared "
                         f"memory a block may use; choose a smaller piece_width")
    return {**config, "piece_width": int(piece)}


def _dia_vi(spec, fmt, p, props) -> dict:
    config = _row_kernel(spec, fmt, p, props)
    rows = p["rows_per_thread"]
    if rows is None:
        rows = rules.dia_vi_rows_per_thread(lambda r: dia_vi_kernel.codes_aligned(fmt, r))
    choices = dia_vi_kernel.ROWS_PER_THREAD
    if isinstance(rows, bool) or not isinstance(rows, numbers.Integral) or rows not in choices:
        raise ValueError(f"dia_vi: rows_per_thread must be one of {choices} or None, got {rows!r}")
    if not dia_vi_kernel.codes_aligned(fmt, int(rows)):
        why = (f"got stride {fmt.stride} (build with an align that is a multiple of {int(rows)}, or "
               f"rows_per_thread=1)" if fmt.stride % int(rows) else
               f"the stride is, but the codes array does not start at a multiple of {int(rows)} bytes "
               f"(use rows_per_thread=1)")
        raise ValueError(f"dia_vi: rows_per_thread={int(rows)} loads {int(rows)} codes as one word and needs a row "
                         f"stride and a codes address that are multiples of {int(rows)}: {why}")
    return {**config, "rows_per_thread": int(rows)}


_CONFIGURE = {
    "csr_scalar": _row_kernel,
    "csr_vector": _csr_vector,
    "csr_merge": _csr_merge,
    "csr_stream": _csr_stream,
    "coo_segmented": _coo_segmented,
    "coo_atomic": _coo_atomic,
    "dia": _row_kernel,
    "ell": _row_kernel,
    "hyb": _hyb,
    "pkt": _pkt,
    "bdia": _bdia,
    "bdia_direct": _row_kernel,
    "sell": _sell,
    "bcsr": _bcsr,
    "bell": _block_kernel,
    "sbell": _block_kernel,
    "dia_vi": _dia_vi,
    "cusparse_csr": _cusparse,
    "cusparse_coo": _cusparse,
}


def configure(spec, storage, params: dict, props) -> dict:
    """The complete configuration of kernel ``spec`` for ``storage`` on the device ``props`` describes.

    ``params`` are the user's kernel parameters (unknown names are a ``TypeError``; bad values a
    ``ValueError`` naming the parameter); every ``None`` is replaced by the rule's choice.
    """
    if storage.name not in spec.formats:
        raise ValueError(f"kernel {spec.name!r} multiplies {', '.join(spec.formats)} matrices, not {storage.name!r}")
    return _CONFIGURE[spec.name](spec, storage, spec.resolve_params(params), props)


def user_view(config: dict) -> dict:
    """The configuration as ``SparseMatrix.kernel_params`` shows it: every resolved value, parts left out."""
    return {k: v for k, v in config.items() if k not in ("parts", "rest")}
