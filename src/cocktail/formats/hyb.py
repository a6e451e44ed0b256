"""HYB: the first K entries of every row in ELL, the rest in COO (Bell & Garland §3.5).

K is ``ell_width`` when given, otherwise ``width_rule(row_lengths)``.  The format holds no
rule of its own: ``SparseMatrix`` (through :func:`cocktail.tuning.format_rules.format_params`)
passes Bell & Garland's, :func:`cocktail.tuning.hyb.bell_garland_ell_width` (the largest K
that at least a third of the rows reach).
"""

from __future__ import annotations

from ..arrays import pointers_from_ids
from ..errors import FormatFillError
from .padding import DEFAULT_MAX_FILL, aligned, check_fill, check_padding
from .base import SparseFormat
from .coo import COO
from .csr import CSR
from ._params import int_param
from .ell import ELL, ell_arrays


class HYB(SparseFormat):
    """Hybrid ELL + COO: parts ``ell`` (an :class:`ELL` of width K) and ``coo`` (row-sorted)."""

    name = "hyb"
    order = 100
    colour = "#8d6e63"
    family = "ell"
    summary = "Mostly even rows with a few long ones: ell holds the usual width, coo the overflow."
    traffic = ("the ell part's bytes plus the coo part's, which reads and writes again only the rows "
               "it adds into")
    table_hidden = ("width_rule",)
    part_fields = ("ell", "coo")
    defaults = {"ell_width": None, "width_rule": None, "align": 32}

    @classmethod
    def from_csr(cls, csr: CSR, **params):
        """Split ``csr`` at K entries per row: positions ``< K`` to ELL, the rest to COO.

        K is ``ell_width`` when given, else ``width_rule(row_lengths)``; with neither it is a
        ``TypeError``.  An explicit ``ell_width`` is refused (``FormatFillError``) when the ELL
        part alone would store more than ``DEFAULT_MAX_FILL`` slots per entry.
        """
        params = cls.resolve_params(params)
        align = int_param("hyb", "align", params["align"])
        check_padding("hyb", "align", align, aligned(csr.shape[0], align), csr.shape[0], "rows")
        if params["ell_width"] is not None:
            k = int_param("hyb", "ell_width", params["ell_width"], low=0)
            try:
                check_fill("hyb", k * csr.shape[0], csr, DEFAULT_MAX_FILL, indexed=True)
            except FormatFillError as exc:
                msg = str(exc).replace("or pass a larger max_fill=", "or pass a smaller ell_width=")
                raise FormatFillError(f"{msg} (or leave ell_width out and let width_rule pick K)") from None
        else:
            rule = params["width_rule"]
            if rule is None:
                raise TypeError(
                    "hyb needs ell_width= or width_rule=: the format holds no width rule; SparseMatrix and "
                    "cocktail.tuning.format_rules.format_params pass cocktail.tuning.hyb.bell_garland_ell_width"
                )
            if not callable(rule):
                raise TypeError(f"hyb: width_rule must be a callable taking the row lengths, got {rule!r}")
            k = int_param("hyb", f"width_rule result ({getattr(rule, '__name__', rule)})",
                           rule(csr.row_lengths()), low=0)
        col, data, overflow = ell_arrays(csr, k, align)
        n_coo = int(overflow.sum())
        ell = ELL(csr.shape, csr.dtype, csr.index_dtype, csr.nnz - n_coo,
                  ELL.resolve_params({"width": k, "align": align, "max_fill": None}), col=col, data=data)
        coo = COO.from_entries(csr.row_ids()[overflow], csr.indices[overflow], csr.data[overflow],
                               csr.shape, csr.index_dtype, dtype=csr.dtype)
        return cls(csr.shape, csr.dtype, csr.index_dtype, csr.nnz, params, ell=ell, coo=coo)

    @property
    def ell_width(self) -> int:
        """K: slots per row in the ELL part."""
        return self.ell.width

    def resolved_params(self) -> dict:
        """The parameters with ``ell_width`` as built (the rule's K when it was left unset)."""
        return {**self.params, "ell_width": self.ell_width}

    def to_csr(self) -> CSR:
        """Merge the parts: in every row the ELL entries come first, then that row's COO entries."""
        xp = self.xp
        m = self.shape[0]
        idt = self.index_dtype
        part = self.ell.to_csr()
        eptr = part.indptr.astype(xp.int64)
        crow = self.coo.row.astype(xp.int64)
        cptr = pointers_from_ids(crow, m, xp.int64)
        indptr = (eptr + cptr).astype(idt)
        erow = part.row_ids().astype(xp.int64)
        epos = cptr[erow] + xp.arange(part.nnz, dtype=xp.int64)  # = indptr[r] + (i - eptr[r])
        cpos = eptr[crow + 1] + xp.arange(crow.shape[0], dtype=xp.int64)  # after row r's ELL entries
        indices = xp.empty(self.nnz, dtype=idt)
        data = xp.empty(self.nnz, dtype=self.value_dtype)
        indices[epos] = part.indices
        data[epos] = part.data
        indices[cpos] = self.coo.col
        data[cpos] = self.coo.data
        return CSR(self.shape, self.dtype, idt, self.nnz, {}, data=data, indices=indices, indptr=indptr)

    @property
    def stored_slots(self) -> int:
        return self.ell.stored_slots + self.coo.stored_slots

    def spmv_bytes(self, dtype=None) -> int:
        """ELL part's bytes plus COO part's bytes, ``y`` counted once: the ELL kernel writes every
        row, then the COO kernel reads and writes again only the rows holding a COO entry."""
        val, _ = self._sizes(dtype)
        coo_y = self.shape[0] * val  # the COO part's own model writes all of y
        return self.ell.spmv_bytes(dtype) + self.coo.spmv_bytes(dtype) - coo_y + self.coo.y_bytes(val, accumulate=True)

    def y_bytes(self, val: int, accumulate: bool = False) -> int:
        """The ELL kernel's ``y`` then the COO kernel's, which adds into it."""
        return self.ell.y_bytes(val, accumulate) + self.coo.y_bytes(val, accumulate=True)

    def describe(self) -> dict:
        total = max(self.nnz, 1)
        return {
            "ell width K": self.ell_width,
            "share in ELL": round(self.ell.nnz / total, 4),
            "share in COO": round(self.coo.nnz / total, 4),
        }


FORMAT = HYB
