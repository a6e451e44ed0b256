"""The rule-derived parameters of the formats: what ``SparseMatrix`` adds before ``from_csr``.

A format holds no rules (``cocktail.formats`` never imports ``cocktail.tuning``); the
parameters that a rule decides are filled in here:

- ``hyb``: ``width_rule=bell_garland_ell_width`` unless ``ell_width`` or ``width_rule``
  was given;
- ``pkt``: ``packet_rows=default_packet_rows(itemsize)`` and then
  ``threads_per_packet=default_threads_per_packet(packet_rows)`` when not given;
- every other format: nothing.

A key given as ``None`` counts as not given.  Explicit values are passed on untouched
(the format checks them).
"""

from __future__ import annotations

import numbers

import numpy as np

from .hyb import bell_garland_ell_width
from .pkt import default_packet_rows, default_threads_per_packet


def _missing(given: dict, key: str) -> bool:
    return given.get(key) is None


def _hyb(dtype, given: dict) -> dict:
    if _missing(given, "ell_width") and _missing(given, "width_rule"):
        return {"width_rule": bell_garland_ell_width}
    return {}


def _pkt(dtype, given: dict) -> dict:
    out = {}
    rows = given.get("packet_rows")
    if rows is None:
        rows = out["packet_rows"] = default_packet_rows(np.dtype(dtype).itemsize)
    # A packet_rows that is no integer gets no lanes: the format then reports the bad packet_rows.
    if _missing(given, "threads_per_packet") and isinstance(rows, numbers.Integral) and not isinstance(rows, bool):
        out["threads_per_packet"] = default_threads_per_packet(int(rows))
    return out


def _cocktail(dtype, given: dict) -> dict:
    """Each part's parameters completed with its own format's rules."""
    parts = given.get("parts")
    if not parts or not all(isinstance(p, (tuple, list)) and len(p) == 3 for p in parts):
        return {}  # nothing to complete; the format reports a missing or malformed parts=
    return {"parts": [(name, format_params(name, dtype, dict(params or {})), selector)
                      for name, params, selector in parts]}


_RULES = {"hyb": _hyb, "pkt": _pkt, "cocktail": _cocktail}


def format_params(name: str, dtype, given: dict) -> dict:
    """A new dict: ``given`` completed with the rule-derived parameters of format ``name``.

    ``dtype`` is the matrix's value dtype (PKT's packet size depends on its item size).
    ``given`` is not modified; a key it holds with a value other than ``None`` is kept as
    it is.  Formats without rule-derived parameters get ``given`` back as a copy.
    """
    out = dict(given)
    rule = _RULES.get(name)
    if rule is not None:
        out.update(rule(dtype, given))
    return out
