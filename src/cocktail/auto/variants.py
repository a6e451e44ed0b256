"""Kernel variants: the units the device profile samples and the planner costs (clSpMV §3.2).

A variant is one kernel with its parameters fixed (``csr_vector(t=8)``, ``sell(C=64,t=2)``,
``bell(2x4)``), the format it multiplies with that format's parameters, and the synthetic
pattern it is sampled on. Each kernel declares its own (``profile`` on its spec: the
:class:`~cocktail.kernels.spec.Sampled` settings); this module gathers them. The patterns:

- ``rows``: every row holds ``k`` entries in adjacent columns (wrapping at the last column);
  the flat formats (CSR, COO, ELL, SELL).
- ``band``: ``k`` adjacent dense diagonals (DIA, BDIA, DIA-VI), as clSpMV's dense banded matrices.
- ``blocks``: every super-row holds ``k / c`` dense ``r x c`` blocks along the diagonal
  (BCSR, BELL, SBELL), as clSpMV's dense diagonal blocked matrices.

Each variant's cost is sampled against its *slots*: the values it reads, padding included.
The planner computes the same slot count for a real matrix from its features.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import kernels
from .features import BLOCK_SIZES


@dataclass(frozen=True)
class Variant:
    """One kernel with fixed parameters, on one format, sampled on one pattern."""

    key: str
    format: str
    kernel: str
    pattern: str  # "rows", "band" or "blocks"
    format_params: dict = field(default_factory=dict, hash=False, compare=False)
    kernel_params: dict = field(default_factory=dict, hash=False, compare=False)
    block: tuple | None = None
    #: Several lanes share a row: sampled on longer rows too (clSpMV: hundreds to thousands).
    long_rows: bool = False
    #: Kernel launches per product (COO kernels scale y first).
    launches: int = 1

    @property
    def category(self) -> str:
        """clSpMV's category: ``flat``, ``diagonal`` or ``block``."""
        return {"rows": "flat", "band": "diagonal", "blocks": "block"}[self.pattern]


def _of(spec, sampled) -> list[Variant]:
    """The variants of one :class:`~cocktail.kernels.spec.Sampled` setting of kernel ``spec`` (one per block
    shape of :data:`~.features.BLOCK_SIZES`, keyed ``key(rxc)``, when it is ``per_block``)."""
    return [Variant(f"{sampled.key}({b[0]}x{b[1]})" if b else sampled.key, spec.formats[0], spec.name,
                    sampled.pattern, {**({"block": b} if b else {}), **sampled.format_params},
                    dict(sampled.kernel_params), b, sampled.long_rows, sampled.launches)
            for b in (BLOCK_SIZES if sampled.per_block else (None,))]


def _all() -> tuple[Variant, ...]:
    """Every kernel's sampled settings (its spec's ``profile``), in the kernel registry's order."""
    return tuple(v for name in kernels.names() for sampled in kernels.get(name).profile
                 for v in _of(kernels.get(name), sampled))


VARIANTS: tuple[Variant, ...] = _all()
_BY_KEY = {v.key: v for v in VARIANTS}


def get(key: str) -> Variant:
    """The variant named ``key``; ``ValueError`` otherwise."""
    try:
        return _BY_KEY[key]
    except KeyError:
        raise ValueError(f"unknown kernel variant {key!r}") from None


def keys() -> list[str]:
    """Every variant's key, in profile order."""
    return list(_BY_KEY)


def of_format(fmt: str) -> tuple[str, ...]:
    """The keys of the variants that multiply format ``fmt``, in profile order."""
    return tuple(v.key for v in VARIANTS if v.format == fmt)


def on_pattern(pattern: str) -> tuple[str, ...]:
    """The keys of the variants sampled on ``pattern``, in profile order."""
    return tuple(v.key for v in VARIANTS if v.pattern == pattern)


#: Names that stand for several variants in :func:`parse`: the flat variants (the ``rows`` pattern).
GROUPS = {"flat": lambda v: v.pattern == "rows"}


def parse(text: str) -> list[str]:
    """Variant keys from a comma-separated list (commas inside a key's parentheses belong to the key);
    ``flat`` stands for every flat variant.  ``ValueError`` names an unknown key."""
    out, depth, part = [], 0, []
    for ch in text + ",":
        if ch == "," and depth == 0:
            name = "".join(part).strip()
            part = []
            if name in GROUPS:
                out += [v.key for v in VARIANTS if GROUPS[name](v)]
            elif name:
                out.append(get(name).key)
            continue
        depth += (ch == "(") - (ch == ")")
        part.append(ch)
    return list(dict.fromkeys(out))
