"""Snapshots of what a call must leave alone, compared bit for bit afterwards (NumPy or CuPy arrays).

``take(obj)`` records an array, a tuple of arrays, a SciPy or cupyx sparse matrix (each of its
attributes) or a ``SparseMatrix`` (its storage arrays); ``assert_unchanged(obj, taken)`` fails,
naming the part, when any byte, dtype, shape, stride, layout flag or array identity differs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def host(a) -> np.ndarray:
    """``a`` as a NumPy array (a copy from the GPU for a CuPy array)."""
    return np.asarray(a) if isinstance(a, np.ndarray) else a.get()


def is_array(a) -> bool:
    """A NumPy or CuPy array (CuPy is not imported)."""
    return isinstance(a, np.ndarray) or (type(a).__module__.startswith("cupy")
                                         and hasattr(a, "__cuda_array_interface__"))


@dataclass(frozen=True)
class ArraySnapshot:
    """One array as it was: the object itself (identity), its layout and its bytes."""

    array: object
    dtype: np.dtype
    shape: tuple
    strides: tuple
    flags: tuple
    raw: np.ndarray

    @classmethod
    def of(cls, a) -> ArraySnapshot:
        flags = (a.flags.c_contiguous, a.flags.f_contiguous, getattr(a.flags, "writeable", None))
        raw = np.ascontiguousarray(host(a)).reshape(-1).view(np.uint8).copy()
        return cls(a, a.dtype, a.shape, a.strides, flags, raw)

    def check(self, a, where: str) -> None:
        assert a is self.array, f"{where}: replaced by another array"
        now = ArraySnapshot.of(a)
        for field in ("dtype", "shape", "strides", "flags"):
            assert getattr(now, field) == getattr(self, field), \
                f"{where}: {field} changed from {getattr(self, field)} to {getattr(now, field)}"
        if not np.array_equal(now.raw, self.raw):
            first = int(np.flatnonzero(now.raw != self.raw)[0]) // max(self.dtype.itemsize, 1)
            flat_before = self.raw.view(self.dtype) if self.dtype.itemsize else self.raw
            flat_now = now.raw.view(self.dtype) if self.dtype.itemsize else now.raw
            raise AssertionError(f"{where}: element {first} (flat, C order) changed from "
                                 f"{flat_before[first]!r} to {flat_now[first]!r}")


@dataclass(frozen=True)
class _Nested:
    """A tuple of arrays held by an object (a COO matrix's ``coords``): the tuple itself and its snapshot."""

    value: object
    shot: dict


def _parts(obj) -> dict:
    """The named pieces of ``obj`` a snapshot records."""
    if is_array(obj):
        return {"": obj}
    if isinstance(obj, (tuple, list)):
        return {f"[{i}]": v for i, v in enumerate(obj)}
    if hasattr(obj, "storage") and hasattr(obj, "matvec"):  # a cocktail.SparseMatrix
        return {f".storage.{k}": v for k, v in obj.storage.arrays().items()}
    if type(obj).__module__.startswith("cupyx"):  # its arrays (cupyx caches descriptors and flags beside them)
        return {f".{k}": getattr(obj, k) for k in ("data", "indices", "indptr", "shape") if hasattr(obj, k)}
    if hasattr(obj, "__dict__"):  # a SciPy sparse matrix (or a format object): every attribute
        return {f".{k}": v for k, v in vars(obj).items()}
    return {"": obj}


def take(obj) -> dict:
    """A snapshot of ``obj`` and everything it holds (nested tuples of arrays too)."""
    shot = {}
    for key, value in _parts(obj).items():
        if is_array(value):
            shot[key] = ArraySnapshot.of(value)
        elif isinstance(value, (tuple, list)) and value and all(is_array(v) for v in value):
            shot[key] = _Nested(value, take(value))
        else:
            shot[key] = value
    return shot


def assert_unchanged(obj, shot: dict, name: str = "input") -> None:
    """Fail unless ``obj`` is exactly as :func:`take` recorded it.

    Attributes added since (a SciPy matrix caching a property it computed) are not compared;
    every recorded one must be there, the same object for arrays, equal otherwise.
    """
    now = _parts(obj)
    for key, before in shot.items():
        where = f"{name}{key}"
        assert key in now, f"{where}: removed"
        if isinstance(before, ArraySnapshot):
            before.check(now[key], where)
        elif isinstance(before, _Nested):
            assert now[key] is before.value, f"{where}: replaced"
            assert_unchanged(now[key], before.shot, where)
        else:
            assert now[key] == before, f"{where}: changed from {before!r} to {now[key]!r}"
