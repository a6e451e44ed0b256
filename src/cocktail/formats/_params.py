"""Validation of format parameters, shared by every format; messages name the format and parameter."""

from __future__ import annotations

import numbers

import numpy as np

from .. import validate


def is_int(value) -> bool:
    """True for Python and NumPy integers, False for bools."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def int_param(fmt: str, name: str, value, low: int = 1, high: int | None = None) -> int:
    """``value`` as an int in ``[low, high]``; ``TypeError``/``ValueError`` naming it otherwise."""
    if high is not None:
        wanted = f"an integer in [{low}, {high}]"
    elif low == 1:
        wanted = "a positive integer"
    else:
        wanted = f"an integer >= {low}"
    if not is_int(value):
        raise TypeError(f"{fmt}: {name} must be {wanted}, got {value!r}")
    if int(value) < low or (high is not None and int(value) > high):
        raise ValueError(f"{fmt}: {name} must be {wanted}, got {int(value)}")
    return int(value)


def max_fill_param(fmt: str, value):
    """``max_fill``: ``None`` (no limit) or a positive number, returned as float."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{fmt}: max_fill must be a positive number or None, got {value!r}")
    if not value > 0:
        raise ValueError(f"{fmt}: max_fill must be a positive number or None, got {value!r}")
    return float(value)


def pointer_dtype(index_dtype, largest: int) -> np.dtype:
    """``index_dtype``, widened to int64 when a pointer array must hold ``largest``."""
    return np.promote_types(np.dtype(index_dtype), validate.choose_index_dtype(largest))
