"""GPU kernels: CUDA C++ sources in this package, compiled at run time through CuPy.

One name, one folder per kernel, ``kernels/<name>/``: ``<name>.cu`` holds ``__global__ <name>`` (and its helper
kernels, prefixed ``<name>_``); ``__init__.py`` declares the rest of it: its :class:`KernelSpec` (most through
:func:`~.spec.own_kernel`) with its binder, its launch configuration (``configure``), the formats it is the
default of and when, its place in the registry's order, its walk (what the planner costs and block kernels
extend), its profile variants and its plot colour; ``rules.py``, where it has one, holds its own thresholds.  The
registry key is ``<name>`` and benchmarks label it ``<name>``.  The ``cusparse_*`` kernels have no source: they
call the vendor library (:mod:`.cusparse`), and their specs say ``vendor``.  Beside the folders: the shared
device code, the helper kernels of the device builds and the planner's features, and the machinery (spec,
launch, source, check).
"""

from __future__ import annotations

from ..registry import Registry
from . import helper_launch  # noqa: F401  (provides the formats' device builds)
from .spec import KernelSpec, value_type_name

#: Every module of this package that declares a ``SPEC`` (a kernel's folder), in the order of their ``order``
#: fields (the device profile's order of variants: flat, diagonal, block, composed).
_REGISTRY = Registry(__name__, "SPEC", "kernel", lambda module, spec: spec.name, order=lambda spec: spec.order)


#: Block kernels (``BLOCK_SPEC``): a product of the matrix and a block of k vectors, bound for one k.
_BLOCKS = Registry(__name__, "BLOCK_SPEC", "block kernel", lambda module, spec: spec.name)


def names() -> list[str]:
    """Names of the registered kernels, in their ``order``."""
    return _REGISTRY.names()


def get(name: str) -> KernelSpec:
    """The kernel registered as ``name``; ``ValueError`` listing the names otherwise."""
    return _REGISTRY.get(name)


def register(spec: KernelSpec) -> KernelSpec:
    """Register a kernel declared outside this package."""
    return _REGISTRY.add(spec)


def block_names() -> list[str]:
    """Names of the registered block kernels (``A @ X`` for a block ``X`` of k vectors)."""
    return _BLOCKS.names()


def get_block(name: str) -> KernelSpec:
    """The block kernel registered as ``name``; ``ValueError`` listing the names otherwise."""
    return _BLOCKS.get(name)


def block_for(format_name: str, spec: KernelSpec) -> KernelSpec | None:
    """The block kernel of matrices stored in ``format_name`` (its ``default_for``) that extends the SpMV
    kernel ``spec``, or None: a block is then multiplied one column at a time."""
    return next((get_block(n) for n in block_names()
                 if format_name in get_block(n).default_for and get_block(n).extends_product(format_name, spec)), None)


def blocks_for(format_name: str, spec: KernelSpec) -> list[KernelSpec]:
    """Every block kernel that extends the SpMV kernel ``spec`` on matrices stored in ``format_name``: first
    :func:`block_for`'s (the rule's choice), then the others (a vendor's, timed by a planned matrix)."""
    first = block_for(format_name, spec)
    others = [get_block(n) for n in block_names()
              if get_block(n).extends_product(format_name, spec) and get_block(n) is not first]
    return ([first] if first is not None else []) + others


def for_format(format_name: str) -> list[KernelSpec]:
    """The kernels that multiply matrices stored in ``format_name``."""
    return [get(n) for n in names() if format_name in get(n).formats]


def nondeterministic(spec: KernelSpec, config: dict) -> tuple[str, ...]:
    """Names of the kernels in one product of ``spec`` with its resolved ``config`` that are not
    deterministic: ``spec`` itself, and the part kernels a composed kernel runs (hyb's
    ``config["parts"]``, pkt's ``config["rest"]``: the COO kernel each names by ``coo_kernel``).
    """
    found = [] if spec.is_deterministic(config) else [spec.name]
    parts = list(config.get("parts", {}).values())
    if config.get("rest") is not None:
        parts.append(config["rest"])
    for part_spec, part_config in parts:
        found += [name for name in nondeterministic(part_spec, part_config) if name not in found]
    return tuple(found)


__all__ = ["KernelSpec", "names", "get", "register", "for_format", "nondeterministic", "value_type_name",
           "block_names", "get_block", "block_for",
           "blocks_for"]
