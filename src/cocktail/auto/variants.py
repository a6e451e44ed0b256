"""Kernel variants: the units the device profile samples and the planner costs (clSpMV §3.2).

A variant is one kernel with its parameters fixed (``csr_vector(t=8)``, ``sell(C=64,t=2)``,
``bell(2x4)``), the format it multiplies with that format's parameters, and the synthetic
pattern it is sampled on:

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

from ..kernels.cusparse import ALGS
from .features import BLOCK_SIZES

#: Lanes per row of csr_vector and of sell that the profile samples.
VECTOR_THREADS = (2, 4, 8, 16, 32)
SELL_THREADS = (1, 2, 4, 8)
#: Nonzeros per lane of csr_stream's items that the profile samples.
STREAM_ITEMS = (8, 16)
#: Slice heights C of SELL (multiples of the 128-byte alignment, as clSpMV).
SELL_HEIGHTS = (32, 64, 128, 256)
#: Slice height of SBELL in the profile and in plans.
SBELL_HEIGHT = 32
#: cuSPARSE's algorithms the profile samples: all the kernels have.
CUSPARSE_ALGS = ALGS


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


def _all() -> tuple[Variant, ...]:
    out = [Variant("csr_scalar", "csr", "csr_scalar", "rows")]
    out += [Variant(f"csr_vector(t={t})", "csr", "csr_vector", "rows", kernel_params={"threads_per_row": t},
                    long_rows=t >= 8) for t in VECTOR_THREADS]
    out += [Variant("csr_merge", "csr", "csr_merge", "rows", long_rows=True),
            *[Variant(f"csr_stream(k={k})", "csr", "csr_stream", "rows", kernel_params={"items_per_lane": k},
                      long_rows=True) for k in STREAM_ITEMS],
            Variant("coo_atomic", "coo", "coo_atomic", "rows", long_rows=True, launches=2),
            Variant("coo_segmented", "coo", "coo_segmented", "rows", long_rows=True, launches=2),
            Variant("ell", "ell", "ell", "rows", format_params={"max_fill": None}),
            *[Variant(f"cusparse_csr(alg={a})", "csr", "cusparse_csr", "rows", kernel_params={"alg": a},
                      long_rows=True) for a in CUSPARSE_ALGS],
            *[Variant(f"cusparse_coo(alg={a})", "coo", "cusparse_coo", "rows", kernel_params={"alg": a},
                      long_rows=True, launches=2) for a in CUSPARSE_ALGS]]
    out += [Variant(f"sell(C={c},t={t})", "sell", "sell", "rows",
                    format_params={"slice_height": c, "max_fill": None}, kernel_params={"threads_per_row": t},
                    long_rows=t >= 4)
            for c in SELL_HEIGHTS for t in SELL_THREADS]
    out += [Variant("dia", "dia", "dia", "band", format_params={"max_fill": None}),
            Variant("bdia", "bdia", "bdia", "band", format_params={"max_fill": None}),
            Variant("bdia_direct", "bdia", "bdia_direct", "band", format_params={"max_fill": None}),
            Variant("dia_vi", "dia_vi", "dia_vi", "band", format_params={"max_fill": None})]
    for fmt, extra in (("bcsr", {}), ("bell", {}), ("sbell", {"slice_height": SBELL_HEIGHT})):
        out += [Variant(f"{fmt}({r}x{c})", fmt, fmt, "blocks", format_params={"block": (r, c), "max_fill": None,
                                                                             **extra},
                        block=(r, c), long_rows=fmt == "bcsr")
                for r, c in BLOCK_SIZES]
    return tuple(out)


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
