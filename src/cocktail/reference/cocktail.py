"""Reference Cocktail product: the sum of the parts' reference products."""

from . import product_for
from .entries import Entries, entries_of


def product(fmt, X):
    """``A @ X`` as the sum over parts of ``part @ X``, each through its own reference product."""
    xp = fmt.xp
    Y = xp.zeros((fmt.shape[0], X.shape[1]), dtype=fmt.dtype)
    for part in fmt.parts:
        Y += product_for(part)(part, X)
    return Y


def entries(fmt) -> list[Entries]:
    """Every part's entries, part after part."""
    return [e for part in fmt.parts for e in entries_of(part)]
