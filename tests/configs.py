"""Format configurations exercised by the conformance suite: every format, several parameter sets."""

from __future__ import annotations


def one_column_rule(lengths):
    """A HYB width rule that always keeps one column in ELL (tests the rule hook)."""
    return 1


CONFIGS = [
    ("csr", {}),
    ("csr_pattern", {}),
    ("csr_vi", {}),
    ("csr_pattern", {"short_columns": None}),
    ("csr_vi", {"short_columns": None}),
    ("coo", {}),
    ("dia", {}),
    ("dia", {"align": 1}),
    ("dia_vi", {}),
    ("dia_vi", {"align": 1}),
    ("bdia", {}),
    ("bdia", {"align": 4}),
    ("ell", {}),
    ("ell", {"align": 1}),
    ("sell", {}),
    ("sell", {"slice_height": 1}),
    ("sell", {"slice_height": 4, "sort_window": 16, "width_multiple": 2}),
    ("sell", {"slice_height": 8, "sort_window": 1 << 20, "width_multiple": 4}),
    ("sell", {"slice_height": 4, "sort_window": 16, "short_columns": None}),
    ("hyb", {}),
    ("hyb", {"ell_width": 0}),
    ("hyb", {"ell_width": 2}),
    ("hyb", {"width_rule": one_column_rule}),
    ("pkt", {}),
    ("pkt", {"packet_rows": 8, "threads_per_packet": 4, "partitioner": "rcm"}),
    ("pkt", {"packet_rows": 32, "threads_per_packet": 8}),
    ("bcsr", {}),
    ("bcsr", {"block": (1, 1)}),
    ("bcsr", {"block": (2, 3)}),
    ("bcsr", {"block": (8, 2)}),
    ("bell", {}),
    ("bell", {"block": (2, 2), "align": 1}),
    ("bell", {"block": (3, 8)}),
    ("sbell", {}),
    ("sbell", {"block": (2, 2), "slice_height": 2}),
    ("sbell", {"block": (4, 1), "slice_height": 3}),
    ("sbell", {"block": (8, 8), "slice_height": 1}),
    ("cocktail", {"parts": [("dia", {"max_fill": None}, ("diagonals", [0])), ("csr", {}, ("rest",))]}),
    ("cocktail", {"parts": [("ell", {"max_fill": None}, ("row_prefix", 2)),
                            ("sell", {"max_fill": None, "slice_height": 4}, ("row_prefix", 3)),
                            ("coo", {}, ("rest",))]}),
    ("cocktail", {"parts": [("dia", {"max_fill": None}, ("diagonals", [-1, 0, 1])), ("hyb", {}, ("rest",))]}),
    ("cocktail", {"parts": [("dia_vi", {"max_fill": None}, ("diagonals", [-1, 0, 1])), ("csr", {}, ("rest",))]}),
    ("cocktail", {"parts": [("ell", {"max_fill": None}, ("row_prefix", 2)), ("csr_pattern", {}, ("rest",))]}),
    ("cocktail", {"parts": [("dia", {"max_fill": None}, ("diagonals", [0])), ("csr_vi", {}, ("rest",))]}),
]

BLOCK_SIZES = (1, 2, 3, 4, 8)


def config_id(config) -> str:
    name, params = config
    if name == "cocktail":  # the parts by format and selector, not their whole repr
        return name + "[" + "+".join(f"{f}:{s[0]}" for f, _, s in params["parts"]) + "]"
    parts = [f"{k}={getattr(v, '__name__', v)}".replace(" ", "") for k, v in params.items()]
    return name + ("[" + ",".join(parts) + "]" if parts else "")
