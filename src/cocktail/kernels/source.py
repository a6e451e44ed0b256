"""Kernel sources: read from the package, assembled, and compiled (CuPy at run time, NVRTC or nvcc for checks)."""

from __future__ import annotations

import functools
import re
import sys
from importlib import resources
from pathlib import Path

from . import block_build as _block_build, csr_check as _csr_check, diagonal_build as _diagonal_build
from . import part_split as _part_split, sell_build as _sell_build

COMMON = "common.cuh"
_INCLUDE = re.compile(r'^\s*#include\s+"([^"]+)"\s*$', re.M)
BASE_OPTIONS = ("-std=c++17",)


def read(filename: str) -> str:
    """Text of a kernel source: a kernel's own ``<name>.cu`` in its folder ``kernels/<name>/``, a shared header or a
    helper kernel beside this module; a kernel folder on another path of the package (``cocktail.kernels.__path__``:
    a plug-in's) is searched after the package's own."""
    bases = [resources.files(__package__), *map(Path, sys.modules[__package__].__path__[1:])]
    for base in bases:
        for path in (base.joinpath(filename.rsplit(".", 1)[0], filename), base.joinpath(filename)):
            if path.is_file():
                return path.read_text()
    raise FileNotFoundError(f"no kernel source {filename!r} in {', '.join(map(str, bases))}")


@functools.lru_cache(maxsize=None)
def assemble(stem: str) -> str:
    """``<stem>.cu`` with its local ``#include "..."`` lines replaced by the files' text (once each)."""
    seen = set()

    def expand(text: str) -> str:
        def sub(match):
            name = match.group(1)
            if name in seen:
                return ""
            seen.add(name)
            return expand(read(name))

        return _INCLUDE.sub(sub, text)

    return expand(read(f"{stem}.cu"))


def options(ldg: bool) -> tuple[str, ...]:
    """Compiler options of a kernel build: the read-only-path switch and the C++ standard."""
    return BASE_OPTIONS + (f"-DCOCKTAIL_LDG={int(bool(ldg))}",)


@functools.lru_cache(maxsize=None)
def module(stem: str, expressions: tuple[str, ...], ldg: bool, device_id: int):
    """The compiled ``cupy.RawModule`` of ``<stem>.cu`` with ``expressions`` instantiated, one per device and switch.

    The only module cache: one compilation serves every instantiation it was given (a kernel asks for those of one
    value and index type pair: :meth:`~cocktail.kernels.spec.KernelSpec.sibling_expressions`).
    """
    import cupy

    with cupy.cuda.Device(device_id):
        return cupy.RawModule(code=assemble(stem), options=options(ldg), name_expressions=list(expressions))


def function(stem: str, expressions: tuple[str, ...], expression: str, ldg: bool, device_id: int):
    """The compiled ``__global__`` function ``expression`` of ``<stem>.cu`` on device ``device_id``."""
    import cupy

    with cupy.cuda.Device(device_id):
        return module(stem, expressions, bool(ldg), device_id).get_function(expression)


#: Sources that ship with the kernels and are not SpMV kernels themselves: stem -> expressions.
#: ``scale_y`` runs ahead of the COO kernels; ``spin`` is the benchmark harness's busy wait;
#: ``clipped_histogram`` and ``length_buckets`` count the planner's features; ``features_rows`` and
#: ``features_entries`` are its fused passes (cocktail.auto.features); ``stream_partition`` cuts csr_stream's items;
#: ``rest_rows`` counts the planner's rows off a Cocktail's diagonals (cocktail.auto.planner); ``block_build``,
#: ``diagonal_build`` and ``sell_build`` build the blocked, the diagonal and the sliced formats (SELL, ELL) on a
#: device (cocktail.kernels.block_build, .diagonal_build, .sell_build), ``part_split`` splits a Cocktail's CSR among
#: its parts (cocktail.kernels.part_split); ``csr_check`` checks a device CSR's arrays (cocktail.kernels.csr_check).
HELPERS = {"scale_y": ("scale_y<float>", "scale_y<double>", "scale_y<f16>", "scale_y<bf16>", "scale_y<cfloat>",
                       "scale_y<cdouble>"), "spin": ("spin",),
           "clipped_histogram": ("clipped_histogram",),
           "length_buckets": ("length_buckets<int>", "length_buckets<long long>"),
           "stream_partition": ("stream_pieces<int>", "stream_pieces<long long>", "stream_items<int>",
                                "stream_items<long long>"),
           "features_rows": ("feature_rows<int>", "feature_rows<long long>"),
           "rest_rows": ("rest_rows<int>", "rest_rows<long long>"),
           "features_entries": ("feature_entries<int>", "feature_entries<long long>", "feature_superrows<int>",
                                "feature_superrows<long long>", "diagonal_compact",
                                "scatter_groups<int>", "scatter_groups<long long>",
                                *(f"{kernel}<{key}>" for kernel in ("value_sample", "value_facts")
                                  for key in ("unsigned short", "unsigned int", "unsigned long long"))),
           "block_build": _block_build.expressions("block_build_counts") + _block_build.expressions("block_build_write"),
           "diagonal_build": _diagonal_build.expressions(),
           "sell_build": _sell_build.expressions(),
           "part_split": _part_split.expressions(),
           "csr_check": _csr_check.expressions()}


def helper(stem: str, expression: str, device_id: int | None = None):
    """A compiled helper kernel of :data:`HELPERS` on device ``device_id`` (default: the current one)."""
    if device_id is None:
        import cupy

        device_id = cupy.cuda.Device().id
    return function(stem, HELPERS[stem], expression, False, device_id)
