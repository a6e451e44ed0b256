"""Registries: the entries of one package, each declared by a module of its own, found in one way.

The formats (``FORMAT``, a :class:`~cocktail.formats.base.SparseFormat` subclass), the kernels
(``SPEC``, a :class:`~cocktail.kernels.spec.KernelSpec`) and the reference products (``product``)
are each declared by a module of their package; a :class:`Registry` imports the package's public
modules the first time it is asked and keeps what each declares.  Adding a format or a kernel is
adding its module: no list elsewhere names it.  :meth:`Registry.add` registers an entry declared
outside the package (a plug-in, or a test's throwaway format).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Callable


class Registry:
    """The entries that the modules of ``package`` declare as ``attribute``, keyed by ``key(module, entry)``.

    ``order(entry)``: the entries' order (that of :meth:`names`), a field each entry declares; ties, and
    every entry without ``order``, by key.  ``what`` names an entry in the error for an unknown key.
    """

    def __init__(self, package: str, attribute: str, what: str, key: Callable[[str, object], str],
                 order: Callable[[object], int] | None = None):
        self.package, self.attribute, self.what, self.key, self.order = package, attribute, what, key, order
        self._entries: dict | None = None

    def _load(self) -> dict:
        if self._entries is None:
            entries = {}
            path = importlib.import_module(self.package).__path__
            found = {m.name for m in pkgutil.iter_modules(path) if not m.name.startswith("_")}
            for name in sorted(found):
                entry = getattr(importlib.import_module(f"{self.package}.{name}"), self.attribute, None)
                if entry is not None:
                    entries[self.key(name, entry)] = entry
            self._entries = self._ordered(entries)
        return self._entries

    def add(self, entry, module: str = ""):
        """Register ``entry`` (declared outside the package; ``module`` its module's name, for the key);
        ``ValueError`` when its name is taken (a plug-in may not shadow a built-in)."""
        name = self.key(module, entry)
        if name in self._load():
            raise ValueError(f"{self.what} {name!r} is registered already")
        self._entries[name] = entry
        if self.order is not None:  # in its place among the others
            self._entries = self._ordered(self._entries)
        return entry

    def _ordered(self, entries: dict) -> dict:
        rank = self.order or (lambda entry: 0)
        return dict(sorted(entries.items(), key=lambda item: (rank(item[1]), item[0])))

    def remove(self, name: str) -> None:
        """Forget the entry ``name`` (a plug-in withdrawn)."""
        self._load().pop(name, None)

    def names(self) -> list[str]:
        """The keys, in the entries' order."""
        return list(self._load())

    def get(self, name: str):
        """The entry registered as ``name``; ``ValueError`` listing the names otherwise."""
        try:
            return self._load()[name]
        except (KeyError, TypeError):
            raise ValueError(f"unknown {self.what} {name!r}; registered {self.what}s: {', '.join(self.names())}") \
                from None
