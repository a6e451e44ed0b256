"""Plain words about the formats, for ``cocktail formats`` and ``explain()``.

A format's own words live on its class (``summary``, ``traffic``, ``parameter_words``,
``unset_words``, ``table_hidden``: :class:`~.base.SparseFormat`); here are the meanings of the
parameters several formats share and the functions that read both.  Plain text, no markup.
"""

from __future__ import annotations

#: What a parameter means, by name, for every format that has it (a format's ``parameter_words`` override it).
PARAMETERS = {
    "align": "pads the row count of the stored arrays to a multiple of this, for aligned loads",
    "max_fill": "refuses a matrix that would need more than this many stored slots per entry "
                "(padding and fill included); off: no limit",
    "block": "the block shape (r, c), r and c each 1, 2, 3, 4 or 8",
    "slice_height": "rows per slice; each slice is padded to its own longest row",
    "sort_window": "sorts the rows by length within windows of this many rows before slicing "
                   "(1: no sorting, rows keep their order)",
    "width_multiple": "rounds each slice's width up to a multiple of this",
    "ell_width": "entries per row kept in the ELL part (K), the rest go to COO; by default the rule "
                 "picks the largest K that at least a third of the rows reach (Bell & Garland)",
    "width_rule": "the function that picks ell_width from the row lengths when ell_width is not given",
    "packet_rows": "most rows (vertices) per packet; by default as many as let a packet's slices of x "
                   "and y fit in 48 KiB of shared memory: 3072 for float64, 4096 for float32",
    "threads_per_packet": "threads that share one packet's rows; by default packet_rows rounded up "
                          "to a multiple of 32, at most 256",
    "partitioner": "how rows are grouped into packets: metis (needs pymetis), rcm (reverse "
                   "Cuthill-McKee), or auto (rcm in every install: metis only when named)",
    "parts": "the list of (format, params, selector) parts; format='auto' builds it from its plan",
}

#: The word shown for a parameter left unset (None), by name (a format's ``unset_words`` override it).
UNSET = {
    "max_fill": "off",
    "ell_width": "auto (rule)",
    "width_rule": "unused",
}

def _format(name: str):
    from . import get

    return get(name)


def summary(name: str) -> str:
    """The sentence on when format ``name`` wins (its class's ``summary``); empty for a format without one."""
    return _format(name).summary


def traffic(name: str) -> str:
    """The bytes one product of format ``name`` moves, in words (its class's ``traffic``)."""
    return _format(name).traffic


def meaning(name: str, param: str) -> str:
    """What parameter ``param`` of format ``name`` means; empty when nothing is written."""
    return _format(name).parameter_words.get(param, PARAMETERS.get(param, ""))


def unset_word(name: str, param: str) -> str:
    """The word shown for parameter ``param`` of format ``name`` left unset (``None``)."""
    return _format(name).unset_words.get(param, UNSET.get(param, "auto"))


def hidden_in_table(name: str, param: str) -> bool:
    """Whether the one-line-per-format table leaves parameter ``param`` of format ``name`` out."""
    return param in _format(name).table_hidden
