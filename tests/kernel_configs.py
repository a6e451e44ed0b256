"""Kernel configurations the GPU suite runs: (kernel, format, format params, kernel params)."""

from __future__ import annotations

KERNEL_CONFIGS = [
    ("csr_scalar", "csr", {}, {}),
    ("csr_scalar", "csr", {}, {"ldg": False}),
    *[("csr_vector", "csr", {}, {"threads_per_row": t}) for t in (2, 4, 8, 16, 32)],
    ("csr_vector", "csr", {}, {"threads_per_row": 8, "aligned": False}),
    ("csr_vector", "csr", {}, {"ldg": False}),
    ("csr_merge", "csr", {}, {}),
    ("csr_merge", "csr", {}, {"items_per_thread": 1}),
    ("csr_merge", "csr", {}, {"items_per_thread": 13, "block_threads": 64}),
    ("csr_stream", "csr", {}, {}),
    ("csr_stream", "csr", {}, {"stream": False, "ldg": False}),
    ("csr_stream", "csr", {}, {"items_per_lane": 4, "block_threads": 64}),
    ("csr_stream", "csr", {}, {"items_per_lane": 16}),
    # csr_pattern: the csr kernels' PATTERN instantiations (no value per entry).
    ("csr_scalar", "csr_pattern", {}, {}),
    *[("csr_vector", "csr_pattern", {}, {"threads_per_row": t}) for t in (2, 32)],
    ("csr_vector", "csr_pattern", {}, {"threads_per_row": 8, "aligned": False, "ldg": False}),
    ("csr_stream", "csr_pattern", {}, {}),
    ("csr_stream", "csr_pattern", {}, {"stream": False, "items_per_lane": 4, "block_threads": 64}),
    # csr_vi: the csr kernels' CODED_VALUES instantiations (a one-byte code per entry into the value table).
    ("csr_scalar", "csr_vi", {}, {}),
    *[("csr_vector", "csr_vi", {}, {"threads_per_row": t}) for t in (4, 32)],
    ("csr_vector", "csr_vi", {}, {"threads_per_row": 2, "aligned": False, "ldg": False}),
    ("csr_stream", "csr_vi", {}, {}),
    ("csr_stream", "csr_vi", {}, {"stream": False, "items_per_lane": 4, "block_threads": 64}),
    # short columns (16-bit offsets from a base column per chunk of 256 entries) where they fit: csr_stream alone
    ("csr_stream", "csr_vi", {"short_columns": None}, {"items_per_lane": 16}),
    ("csr_stream", "csr_pattern", {"short_columns": None}, {"stream": False}),
    ("coo_segmented", "coo", {}, {}),
    ("coo_segmented", "coo", {}, {"ldg": False}),
    ("coo_atomic", "coo", {}, {}),
    ("coo_atomic", "coo", {}, {"omega": 1}),
    ("coo_atomic", "coo", {}, {"omega": 128}),
    ("dia", "dia", {"max_fill": None}, {}),
    ("dia", "dia", {"max_fill": None, "align": 1}, {"ldg": False}),
    # dia_vi: the four-row load (default align 32), one row per thread by choice and where the stride forces it.
    ("dia_vi", "dia_vi", {"max_fill": None}, {}),
    ("dia_vi", "dia_vi", {"max_fill": None}, {"rows_per_thread": 1, "block_threads": 64}),
    ("dia_vi", "dia_vi", {"max_fill": None, "align": 1}, {"ldg": False}),
    ("dia_vi", "dia_vi", {"max_fill": None, "align": 4}, {"rows_per_thread": 4, "block_threads": 32}),
    ("ell", "ell", {"max_fill": None}, {}),
    ("ell", "ell", {"max_fill": None, "align": 1}, {"ldg": False}),
    ("hyb", "hyb", {}, {}),
    ("hyb", "hyb", {"ell_width": 1}, {}),
    ("pkt", "pkt", {"max_fill": None}, {}),
    ("pkt", "pkt", {"max_fill": None, "packet_rows": 64, "threads_per_packet": 32, "partitioner": "rcm"}, {}),
    ("bdia", "bdia", {"max_fill": None}, {}),
    ("bdia", "bdia", {"max_fill": None, "align": 1}, {"ldg": False}),
    ("bdia", "bdia", {"max_fill": None}, {"piece_width": 3, "block_threads": 32}),  # wide bands split in pieces
    ("bdia_direct", "bdia", {"max_fill": None}, {}),
    ("bdia_direct", "bdia", {"max_fill": None, "align": 1}, {"ldg": False}),
    ("sell", "sell", {"max_fill": None}, {}),
    ("sell", "sell", {"max_fill": None, "sort_window": 128}, {"threads_per_row": 1}),
    ("sell", "sell", {"max_fill": None, "sort_window": 128, "short_columns": True}, {"threads_per_row": 4}),
    ("sell", "sell", {"max_fill": None, "slice_height": 64}, {"threads_per_row": 2}),
    ("sell", "sell", {"max_fill": None, "slice_height": 128, "width_multiple": 4},
     {"threads_per_row": 4, "block_threads": 64}),
    ("sell", "sell", {"max_fill": None, "slice_height": 256}, {"threads_per_row": 8}),
    ("sell", "sell", {"max_fill": None, "sort_window": 256, "width_multiple": 2}, {"threads_per_row": 8, "ldg": False}),
    ("sell", "sell", {"max_fill": None, "slice_height": 3, "sort_window": 12}, {"threads_per_row": 4}),
    ("sell", "sell", {"max_fill": None, "slice_height": 1}, {"threads_per_row": 2}),
    # Blocked formats: clSpMV's ten block shapes on bcsr, other shapes on bell and sbell (every c on each).
    *[("bcsr", "bcsr", {"max_fill": None, "block": b}, {}) for b in ((1, 4), (1, 8), (2, 8), (4, 8), (2, 2), (3, 3))],
    ("bcsr", "bcsr", {"max_fill": None, "block": (2, 4)}, {"threads_per_superrow": 32}),
    ("bcsr", "bcsr", {"max_fill": None, "block": (4, 4)}, {"threads_per_superrow": 1, "block_threads": 64}),
    ("bcsr", "bcsr", {"max_fill": None, "block": (8, 4)}, {"ldg": False}),
    ("bcsr", "bcsr", {"max_fill": None, "block": (8, 8)}, {"threads_per_superrow": 2}),
    ("bell", "bell", {"max_fill": None, "block": (4, 1), "align": 1}, {}),
    *[("bell", "bell", {"max_fill": None, "block": b}, {}) for b in ((8, 2), (2, 3), (3, 4), (3, 8))],
    ("sbell", "sbell", {"max_fill": None, "block": (1, 4)}, {}),
    ("sbell", "sbell", {"max_fill": None, "block": (1, 1), "slice_height": 32}, {}),
    ("sbell", "sbell", {"max_fill": None, "block": (3, 2), "slice_height": 3}, {}),
    ("sbell", "sbell", {"max_fill": None, "block": (8, 3), "slice_height": 1}, {}),
    ("sbell", "sbell", {"max_fill": None, "block": (8, 8), "slice_height": 5}, {"block_threads": 128}),
    # cuSPARSE's algorithms, bound like our kernels, alone and as the part that adds into y.
    *[(f"cusparse_{f}", f, {}, {"alg": a}) for f in ("csr", "coo") for a in (1, 2)],
    ("hyb", "hyb", {"ell_width": 1}, {"coo_kernel": "cusparse_coo"}),
    ("pkt", "pkt", {"max_fill": None}, {"coo_kernel": "cusparse_coo"}),
]


def kernel_config_id(config) -> str:
    kernel, fmt, fparams, kparams = config
    parts = [f"{k}={v}" for k, v in {**fparams, **kparams}.items() if k != "max_fill"]
    return kernel + (f"@{fmt}" if fmt in ("csr_pattern", "csr_vi") else "") + ("[" + ",".join(parts) + "]" if parts else "")
