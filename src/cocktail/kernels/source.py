"""Kernel sources: read from the package, assembled, and compiled (CuPy at run time, NVRTC or nvcc for checks)."""

from __future__ import annotations

import functools
import re
from importlib import resources

COMMON = "common.cuh"
_INCLUDE = re.compile(r'^\s*#include\s+"([^"]+)"\s*$', re.M)
BASE_OPTIONS = ("-std=c++17",)


def read(filename: str) -> str:
    """Text of a file shipped in ``cocktail/kernels``."""
    return resources.files(__package__).joinpath(filename).read_text()


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
def _module(stem: str, expressions: tuple[str, ...], ldg: bool, device_id: int):
    import cupy

    return cupy.RawModule(code=assemble(stem), options=options(ldg), name_expressions=list(expressions))


def function(spec, expression: str, ldg: bool = True):
    """The compiled ``__global__`` function ``expression`` of ``spec``'s source, memoised per device.

    The module holds every instantiation of the file, so one compilation serves all of them.
    """
    import cupy

    device_id = cupy.cuda.Device().id
    module = _module(spec.source, tuple(spec.all_expressions()), bool(ldg), device_id)
    return module.get_function(expression)


#: Sources that are not SpMV kernels but ship with them (the harness's busy wait): stem -> expressions.
HELPERS = {"spin": ("spin",)}


def helper(stem: str, expression: str):
    """A compiled helper kernel of :data:`HELPERS`, memoised per device."""
    import cupy

    return _module(stem, HELPERS[stem], False, cupy.cuda.Device().id).get_function(expression)
