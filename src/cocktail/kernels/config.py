"""Checks shared by the kernels' ``configure`` functions: each kernel declares how its launch is configured
(``KernelSpec.configure``); the values it may choose come from its own rules (``kernels/<name>/rules.py``) and from
the rules several kernels share, passed in (``rules``: :data:`cocktail.tuning.launch_rules.RULES`)."""

from __future__ import annotations

import operator

from .device import WARP_SIZE


def flag(kernel: str, name: str, value) -> bool:
    """``value`` when it is True or False; ``ValueError`` naming the parameter otherwise."""
    if not isinstance(value, bool):
        raise ValueError(f"{kernel}: {name} must be True or False, got {value!r}")
    return value


def integer_or_none(value) -> int | None:
    """``value`` as an ``int`` when it is an integer (``operator.index`` takes it; a bool is not one), else None."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def block_threads(kernel: str, given, props, default: int) -> int:
    """Threads per block: ``given`` or ``default``; a positive multiple of the warp size within the device limit."""
    chosen = default if given is None else given
    block = integer_or_none(chosen)
    if block is None:
        raise ValueError(f"{kernel}: block_threads must be an integer, got {chosen!r}")
    if block <= 0 or block % WARP_SIZE or block > props.max_threads_per_block:
        raise ValueError(f"{kernel}: block_threads must be a positive multiple of {WARP_SIZE} "
                         f"up to {props.max_threads_per_block}, got {block}")
    return block


def row_kernel(spec, fmt, p, props, rules) -> dict:
    """``ldg`` and ``block_threads`` (the configuration of a kernel with no other parameter)."""
    return {"ldg": flag(spec.name, "ldg", p["ldg"]),
            "block_threads": block_threads(spec.name, p["block_threads"], props, rules.BLOCK_THREADS)}


def power_of_two_covering(value: float, low: int, high: int) -> int:
    """The smallest power of two >= ``value``, within [``low``, ``high``] (both powers of two): a kernel rule's
    lanes per row for a mean row length."""
    t = low
    while t < value and t < high:
        t *= 2
    return t
