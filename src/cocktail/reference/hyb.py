"""Reference HYB product: the ELL part's product plus the COO part's product."""

from . import product_for
from .entries import Entries, entries_of


def product(fmt, X):
    """``A @ X`` as ``ELL @ X + COO @ X``, each part through its own reference product."""
    Y = product_for(fmt.ell)(fmt.ell, X)
    Y += product_for(fmt.coo)(fmt.coo, X)
    return Y


def entries(fmt) -> list[Entries]:
    """The ELL part's entries followed by the COO part's."""
    return entries_of(fmt.ell) + entries_of(fmt.coo)
