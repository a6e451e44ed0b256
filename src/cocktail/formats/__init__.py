"""The storage formats and their registry.

One module per format; its class's ``name`` is the registry key, the reference
executor's module name, and (later) the kernel name and benchmark label.
"""

from __future__ import annotations

from .base import SparseFormat
from .coo import COO
from .csr import CSR

_REGISTRY: dict[str, type[SparseFormat]] = {}


def register(cls: type[SparseFormat]) -> type[SparseFormat]:
    """Add a format class to the registry under ``cls.name``."""
    _REGISTRY[cls.name] = cls
    return cls


def names() -> list[str]:
    """Names of the registered formats, in registration order."""
    return list(_REGISTRY)


def get(name: str) -> type[SparseFormat]:
    """The format class registered as ``name``; ``ValueError`` listing the names otherwise."""
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown format {name!r}; registered formats: {', '.join(names())}") from None


# Registration order is the order of names(): general formats first, then the padded ones.
_MODULES = ("csr", "coo", "dia", "dia_vi", "bdia", "ell", "sell", "hyb", "pkt", "bcsr", "bell", "sbell", "cocktail")


def _load_all() -> None:
    from importlib import import_module

    for mod_name in _MODULES:
        module = import_module(f"{__name__}.{mod_name}")
        register(module.FORMAT)


_load_all()

__all__ = ["SparseFormat", "CSR", "COO", "names", "get", "register"]
