"""The test tiers (tests/conftest.py): a large parametrisation keeps a sample in the default tier, the rest is marked
``exhaustive`` (run by ``pytest --exhaustive``, as CI does)."""

from __future__ import annotations

import itertools

import pytest

EXHAUSTIVE = pytest.mark.exhaustive


def in_turn(axes, ids, turned: int = 1, keep: int = 1) -> list:
    """Every combination of ``axes`` as ``pytest.param``s, with the ids stacked ``parametrize`` decorators give
    (``ids``: one function per axis, joined by '-').  The default tier keeps each combination of the leading axes
    once with each of ``keep`` combinations of the last ``turned`` axes, taken in turn (numbers: the sum of the
    leading axes' positions and the ``keep - 1`` after it, modulo their count): a format config over the zoo meets
    every dtype.  The other combinations are marked ``exhaustive``."""
    fixed, turning = axes[:-turned], list(itertools.product(*axes[-turned:]))
    params = []
    for positions in itertools.product(*(range(len(a)) for a in fixed)):
        kept = {(sum(positions) + j) % len(turning) for j in range(keep)}
        head = tuple(axis[p] for axis, p in zip(fixed, positions))
        for k, tail in enumerate(turning):
            values = head + tail
            params.append(pytest.param(*values, id="-".join(f(v) for f, v in zip(ids, values)),
                                       marks=() if k in kept else EXHAUSTIVE))
    return params
