"""The storage formats and their registry.

One module per format, declaring ``FORMAT`` (found by :class:`cocktail.registry.Registry`); its
class's ``name`` is the registry key, the reference product's module name and the benchmark label.
"""

from __future__ import annotations

from ..registry import Registry
from .base import SparseFormat
from .coo import COO
from .csr import CSR

#: Every module of this package that declares a ``FORMAT``, in the order of their classes' ``order`` (general
#: formats first, then the padded ones).
_REGISTRY = Registry(__name__, "FORMAT", "format", lambda module, cls: cls.name, order=lambda cls: cls.order)


def register(cls: type[SparseFormat]) -> type[SparseFormat]:
    """Register a format class declared outside this package, under ``cls.name``."""
    return _REGISTRY.add(cls)


def names() -> list[str]:
    """Names of the registered formats, in their classes' ``order``."""
    return _REGISTRY.names()


def get(name: str) -> type[SparseFormat]:
    """The format class registered as ``name``; ``ValueError`` listing the names otherwise."""
    return _REGISTRY.get(name)


__all__ = ["SparseFormat", "CSR", "COO", "names", "get", "register"]
