"""Plain words about each format, for ``cocktail formats`` and ``explain()``.

Everything a user reads about a format that its code does not say: one sentence on when it
wins, what each parameter means, the word shown for a parameter left unset, and the bytes a
product moves (the format's ``spmv_bytes`` model) in words.  Plain text, no markup.
"""

from __future__ import annotations

#: When each format wins, one sentence each.
SUMMARY = {
    "csr": "The safe default: any matrix, best when row lengths vary with no pattern to exploit.",
    "coo": "Very uneven rows (a few huge ones): the work is split evenly by entry, not by row.",
    "dia": "A few full diagonals, as in stencils and banded matrices: no column indices at all.",
    "dia_vi": "As dia, with at most 256 distinct values: a one-byte code per slot, not a value.",
    "bdia": "Diagonals that come in dense bands of adjacent offsets: each band shares its x.",
    "ell": "Rows of nearly equal length: fixed-width rows give perfectly regular memory access.",
    "sell": "Rows of similar length within each slice of rows, where ell would pad too much.",
    "hyb": "Mostly even rows with a few long ones: ell holds the usual width, coo the overflow.",
    "pkt": "Meshes and other local structure: each packet of rows keeps its x in shared memory.",
    "bcsr": "Entries in small dense blocks (several unknowns per mesh node): one index per block.",
    "bell": "Small dense blocks with about the same number of blocks in every block row.",
    "sbell": "Small dense blocks whose count per block row varies from one slice to the next.",
    "cocktail": "Mixed structure: format='auto' splits it into parts, each in its best format.",
}

#: What a parameter means, by name; a (format, name) key overrides the plain name.
PARAMETERS = {
    "align": "pads the row count of the stored arrays to a multiple of this, for aligned loads",
    "max_fill": "refuses a matrix that would need more than this many stored slots per entry "
                "(padding and fill included); off: no limit",
    "block": "the block shape (r, c), r and c each 1, 2, 3, 4 or 8",
    "slice_height": "rows per slice; each slice is padded to its own longest row",
    ("sbell", "slice_height"): "block rows per slice; each slice is padded to its own longest block row",
    "sort_window": "sorts the rows by length within windows of this many rows before slicing "
                   "(1: no sorting, rows keep their order)",
    "width_multiple": "rounds each slice's width up to a multiple of this",
    ("ell", "width"): "slots per row; by default the longest row (a smaller width is refused: use hyb)",
    "ell_width": "entries per row kept in the ELL part (K), the rest go to COO; by default the rule "
                 "picks the largest K that at least a third of the rows reach (Bell & Garland)",
    "width_rule": "the function that picks ell_width from the row lengths when ell_width is not given",
    "packet_rows": "most rows (vertices) per packet; by default as many as let a packet's slices of x "
                   "and y fit in 48 KiB of shared memory: 3072 for float64, 4096 for float32",
    "threads_per_packet": "threads that share one packet's rows; by default packet_rows rounded up "
                          "to a multiple of 32, at most 256",
    "partitioner": "how rows are grouped into packets: metis (needs pymetis), rcm (reverse "
                   "Cuthill-McKee), or auto (metis when pymetis is installed, else rcm)",
    "parts": "the list of (format, params, selector) parts; format='auto' builds it from its plan",
}

#: The word shown for a parameter left unset (None), by (format, name) or by name.
UNSET = {
    ("ell", "width"): "longest row",
    ("cocktail", "parts"): "from the planner",
    "max_fill": "off",
    "ell_width": "auto (rule)",
    "width_rule": "unused",
}

#: Parameters left out of the one-line-per-format table (the table's "auto (rule)" stands for them).
TABLE_HIDDEN = {("hyb", "width_rule")}

#: The bytes one product moves, in words (the format's ``spmv_bytes`` model).
TRAFFIC = {
    "csr": "the row pointers, each entry's value and column index, one read of x per entry "
           "and one write of y",
    "coo": "each entry's value, row and column index, one read of x per entry and one write of y",
    "dia": "the diagonal offsets, every slot of each stored diagonal that lies inside the matrix "
           "(zero fill included) with one read of x each, and one write of y",
    "dia_vi": "as dia, but a one-byte code per slot in place of its value, plus the value table",
    "bdia": "as dia (one offset per band), plus the band pointers",
    "ell": "every slot of the real rows (value and column index, padding included), one read of x "
           "per entry and one write of y",
    "sell": "the slice pointers, every slot of the real rows (value and column index, padding "
            "included), the row permutation, one read of x per entry and one write of y",
    "hyb": "the ell part's bytes plus the coo part's, which reads and writes again only the rows "
           "it adds into",
    "pkt": "the row permutation and packet pointers, a packed 4-byte index and a value per packet "
           "slot (empty slots included), x read once into shared memory, y written once, plus the "
           "coo remainder",
    "bcsr": "the block-row pointers, one column index per block, every value slot of each block "
            "(fill included), one x segment per block (reused by its rows) and one write of y",
    "bell": "one column index and r x c value slots per block slot (padding blocks included), one "
            "x segment per real block and one write of y",
    "sbell": "the slice pointers, then as bell slice by slice (each slice padded to its widest "
             "block row)",
    "cocktail": "the sum of its parts' bytes, plus one read of y for every part after the first",
}


def summary(name: str) -> str:
    """The sentence on when format ``name`` wins; empty for a format without one."""
    return SUMMARY.get(name, "")


def meaning(name: str, param: str) -> str:
    """What parameter ``param`` of format ``name`` means; empty when nothing is written."""
    return PARAMETERS.get((name, param), PARAMETERS.get(param, ""))


def unset_word(name: str, param: str) -> str:
    """The word shown for parameter ``param`` of format ``name`` left unset (``None``)."""
    return UNSET.get((name, param), UNSET.get(param, "auto"))
