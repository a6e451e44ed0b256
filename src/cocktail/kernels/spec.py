"""``KernelSpec``: what the registry knows about one kernel."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable

import numpy as np

from .. import precision

VALUE_TYPES = {np.dtype("float32"): "float", np.dtype("float64"): "double"}
INDEX_TYPES = {np.dtype("int32"): "int", np.dtype("int64"): "long long"}

#: The C++ names of the dtypes kernels read and write (precision.cuh's ``f16`` and ``bf16`` are the half types'
#: bits, ``cfloat`` and ``cdouble`` its complex type); bfloat16's code is compiled whether or not ml_dtypes is here.
_CPP_TYPES = {np.dtype("float16"): "f16", **VALUE_TYPES, np.dtype("complex64"): "cfloat",
              np.dtype("complex128"): "cdouble"}
if precision.BFLOAT16 is not None:
    _CPP_TYPES[precision.BFLOAT16] = "bf16"

#: Precisions (precision.cuh) with operands and values of one real type: float and double.
PLAIN = tuple(VALUE_TYPES.values())
#: Complex values and operands.
COMPLEX = ("cfloat", "cdouble")
#: Precisions whose operands are float, double or complex (a kernel that adds into y with atomics takes only
#: these): PLAIN, the values stored narrower (``value_dtype=``) and COMPLEX.
WIDE_OPERANDS = PLAIN + ("mixed<float, f16>", "mixed<float, bf16>", "mixed<double, float>") + COMPLEX
#: Every precision: WIDE_OPERANDS and the half matrices (x, y and values in f16 or bf16, summed in float).
EVERY_PRECISION = WIDE_OPERANDS + ("f16", "bf16")


def value_type_name(dtype) -> str:
    """The C++ type of a value dtype (``TypeError`` for dtypes the kernels do not handle)."""
    try:
        return _CPP_TYPES[np.dtype(dtype)]
    except KeyError:
        raise TypeError(f"no GPU kernel for {np.dtype(dtype).name} values (kernels take float16, bfloat16, "
                        "float32, float64, complex64, complex128)") from None


def precision_name(dtype, value_dtype=None) -> str:
    """The precision (precision.cuh) of products in ``dtype`` with values stored in ``value_dtype`` (default
    ``dtype``): ``float``, ``f16``, ``mixed<double, float>``, ..."""
    operand = value_type_name(dtype)
    stored = operand if value_dtype is None else value_type_name(value_dtype)
    return operand if stored == operand else f"mixed<{operand}, {stored}>"


def precision_words(fmt) -> str:
    """``float16``, or ``float64 with float32 values``: a stored matrix's precision, for messages."""
    if fmt.value_dtype == fmt.dtype:
        return fmt.dtype.name
    return f"{fmt.dtype.name} with {fmt.value_dtype.name} values"


def index_type_name(dtype) -> str:
    """The C++ type of an index dtype."""
    return INDEX_TYPES[np.dtype(dtype)]


def type_names(fmt) -> tuple[str, str]:
    """``(precision, index)`` C++ names of a stored matrix: its precision (:func:`precision_name` of its dtype and
    value dtype) is a kernel's first template argument."""
    return precision_name(fmt.dtype, fmt.value_dtype), index_type_name(fmt.index_dtype)


#: A CSR kernel's ``VALUES`` template argument (common.cuh's entry_value): how it finds an entry's value.
STORED_VALUES, ONE_VALUE, CODED_VALUES = 0, 1, 2
#: Every ``VALUES`` a CSR kernel of all three formats is instantiated for.
CSR_VALUES = (STORED_VALUES, ONE_VALUE, CODED_VALUES)
#: The formats the CSR kernels that take every ``VALUES`` (csr_scalar, csr_vector, csr_stream) multiply.
CSR_FORMATS = ("csr", "csr_pattern", "csr_vi")


def csr_values(fmt) -> tuple:
    """``(values, codes, mode)`` a CSR kernel reads a csr, csr_pattern or csr_vi matrix by: the value array (CSR's
    ``data``, the one ``value``, csr_vi's ``table``), the entries' one-byte codes (csr_vi's ``codes``; an empty
    array, never read, for the others) and the kernel's ``VALUES`` instantiation."""
    if fmt.coded_values:
        return fmt.table, fmt.codes, CODED_VALUES
    none = fmt.xp.empty(0, dtype=np.uint8)
    return (fmt.value, none, ONE_VALUE) if fmt.pattern_only else (fmt.data, none, STORED_VALUES)


def csr_columns(fmt) -> tuple:
    """``(indices, column_base, shift)`` a CSR kernel that reads short columns takes a CSR-family matrix by: its
    ``indices`` (16-bit offsets where short), the base column of each chunk (an empty array, never read, for
    full columns) and the kernel's ``SHORT_SHIFT`` instantiation (0 for full columns)."""
    from ..formats.csr_family import CHUNK_SHIFT

    if "short_columns" in fmt.layouts():
        return fmt.indices, fmt.column_base, CHUNK_SHIFT
    return fmt.indices, fmt.xp.empty(0, dtype=fmt.index_dtype), 0


def cpp_bool(flag: bool) -> str:
    """A template argument's spelling of ``flag``."""
    return "true" if flag else "false"


@dataclass(frozen=True)
class Sampled:
    """One setting of a kernel that the device profile samples and the planner costs: a variant of
    :mod:`cocktail.auto.variants`, declared with its kernel.

    ``key`` names it in the profile; ``pattern`` is the synthetic matrix it is sampled on
    (``rows``, ``band`` or ``blocks``); ``format_params`` and ``kernel_params`` fix its format's and
    its own parameters; ``long_rows``: several lanes share a row, so it is sampled on longer rows
    too; ``launches``: kernel launches per product; ``per_block``: one variant per block shape the
    planner weighs, keyed ``key(rxc)``.
    """

    key: str
    pattern: str
    format_params: dict = field(default_factory=dict, hash=False, compare=False)
    kernel_params: dict = field(default_factory=dict, hash=False, compare=False)
    long_rows: bool = False
    launches: int = 1
    per_block: bool = False


@dataclass(frozen=True)
class RowShape:
    """What the kernels' default rules (``KernelSpec.default_when``) read of a matrix's row lengths."""

    rows: int
    longest: int
    mean: float

    @classmethod
    def of(cls, row_lengths) -> "RowShape":
        """The shape of ``row_lengths`` (an array, host or device)."""
        m = int(row_lengths.shape[0])
        if m == 0:
            return cls(0, 0, 0.0)
        return cls(m, int(row_lengths.max()), float(row_lengths.sum()) / m)


#: Format parameters of a padded format's samples: no fill limit (the synthetic patterns are dense).
UNLIMITED_FILL = MappingProxyType({"max_fill": None})


#: How a kernel's product may walk the matrix (``KernelSpec.walk``).
WALKS = ("rows", "full_width", "balanced", "entries", "diagonals", "bands", "blocks", "parts")

#: ``(kernel, expression, types)`` -> the instantiations compiled with it (:meth:`KernelSpec.sibling_expressions`).
_SIBLINGS: dict = {}


@dataclass(frozen=True)
class KernelSpec:
    """One kernel: its source file, the formats it multiplies, its instantiations and its binder.

    ``expressions(precision, index)`` lists the template instantiations (CuPy name expressions)
    of the ``.cu`` file for one precision (precision.cuh: ``float``, ``mixed<double, float>``, ...) and
    index type; ``precisions`` are those the kernel is instantiated for.  ``bind(storage, config, props,
    accumulate)`` returns the :class:`~cocktail.kernels.launch.Launch` sequence of one product
    ``y = alpha*A@x + beta*y`` (with ``accumulate``: ``y += alpha*A@x``, beta fixed at 1) for a
    matrix with at least one row; ``config`` holds every kernel parameter resolved to a
    concrete value by ``configure(spec, storage, params, props, rules)``, which checks the
    user's ``params`` (the defaults merged in) and fills every ``None`` from the kernel's own rules (its
    folder's ``rules.py``) or from ``rules``, the rules several kernels share, passed in by the tuning
    layer (:data:`cocktail.tuning.launch_rules.RULES`).  ``defaults`` are the parameters a user may pass as
    ``SparseMatrix(..., kernel=name, **params)``; ``None`` means "chosen by the rule".
    ``default_for``: the formats whose matrices run this kernel unless the caller names one, where its
    ``default_when`` holds and no kernel of higher ``precedence`` is chosen first
    (:func:`cocktail.tuning.kernel_rules.default_kernel`).
    """

    name: str
    formats: tuple[str, ...]
    expressions: Callable[[str, str], list[str]]
    bind: Callable
    configure: Callable
    defaults: dict = field(default_factory=dict)
    default_for: tuple[str, ...] = ()
    source: str | None = None          # .cu file stem; None for composed kernels (hyb) and vendor calls
    deterministic: bool = True
    description: str = ""
    #: ``deterministic_when(config)``: whether a resolved configuration is deterministic, for a kernel
    #: whose parameters decide it (cuSPARSE's algorithms); None: ``deterministic`` holds for every one.
    deterministic_when: Callable[[dict], bool] | None = None
    #: A vendor library's kernel (cuSPARSE), not one of our own: ``vendor=False`` plans without it.
    vendor: bool = False
    #: ``available()``: whether the kernel can run here (a vendor library may be missing); None: always.
    available: Callable[[], bool] | None = None
    #: The settings the device profile samples (:class:`Sampled`); none: the planner never weighs it.
    profile: tuple[Sampled, ...] = ()
    #: A block kernel only: the walks (:attr:`walk`) of the SpMV kernels whose products it extends to a block of
    #: vectors on its formats (a matrix bound to a kernel of another walk keeps multiplying a block one column at a
    #: time).
    extends: tuple[str, ...] = ()
    #: How a product walks the matrix (one of :data:`WALKS`), which the planner costs and block kernels extend:
    #: ``rows`` (a group of lanes per row, the rows of a group padded to its longest: :attr:`group_rows`),
    #: ``full_width`` (every row as wide as the widest), ``balanced`` (work split over rows and nonzeros alike),
    #: ``entries`` (one slot per entry), or the format's own unit (``diagonals``, ``bands``, ``blocks``, ``parts``);
    #: "" for a block kernel (its SpMV kernels' walks are its :attr:`extends`).
    walk: str = ""
    #: A ``rows`` walk only: ``group_rows(kernel_params, format_params)``, the rows a group pads to its longest.
    group_rows: Callable[[dict, dict], int] | None = None
    #: ``default_for``'s formats run this kernel unless the caller names one and a kernel of higher
    #: :attr:`precedence` is chosen first; ``default_when(rows)``: only where it holds for the matrix's
    #: :class:`RowShape` (None: always).
    default_when: Callable[["RowShape"], bool] | None = None
    precedence: int = 0
    #: Place in the registry's order (the device profile's order of variants: flat, diagonal, block, composed).
    order: int = 1000
    #: Colour of the kernel's lines and bars in plots; "" where the kernel is named like its format (the format's).
    colour: str = ""
    #: A block kernel only: ``prepare(storage, props, rules)``, the device work its launches need for any block,
    #: made once per matrix, by the executor's ``prepare_blocks`` (``A.prepare_block_products()``) or its
    #: first block product, so that later block products allocate nothing and one run after it can be
    #: captured; it reaches ``configure`` as the parameter ``prepared``.  None: binding needs none.
    prepare: Callable | None = None
    #: The precisions (precision.cuh) it is instantiated for; a matrix of another runs another kernel.
    precisions: tuple[str, ...] = PLAIN
    #: The format layout options it reads (``SparseFormat.layouts()``: SELL's ``short_columns``); a matrix stored
    #: with another runs another kernel.
    layouts: tuple[str, ...] = ()
    #: A block kernel only: ``block_settings(storage, operands, deterministic)``, the parameter settings a planned
    #: matrix times for a block of these :class:`~cocktail.kernels.block_operands.BlockOperands` (a vendor
    #: kernel's algorithms); empty where the kernel cannot multiply them.  None: one setting, the rule's.
    block_settings: Callable | None = None

    def __post_init__(self):
        unknown = sorted({self.walk, *self.extends} - {"", *WALKS})
        if unknown:
            raise ValueError(f"kernel {self.name!r}: unknown walk {', '.join(map(repr, unknown))}; walks: "
                             f"{', '.join(WALKS)}")
        if (self.walk == "rows") != (self.group_rows is not None):
            raise ValueError(f"kernel {self.name!r}: group_rows is given with walk='rows' and only then")

    def settings_for(self, storage, operands, deterministic: bool = False) -> tuple[dict, ...]:
        """The settings :attr:`block_settings` gives, or the rule's alone (``{}``), deterministic ones only with
        ``deterministic``."""
        if self.block_settings is not None:
            return tuple(self.block_settings(storage, operands, deterministic))
        return ({},) if not deterministic or self.deterministic else ()

    def is_deterministic(self, config: dict) -> bool:
        """Whether a product with ``config`` (resolved, or a variant's parameters) is bit-wise deterministic."""
        if self.deterministic_when is not None:
            return bool(self.deterministic_when(config))
        return self.deterministic

    def runs_here(self) -> bool:
        """Whether the kernel can run in this process (its vendor library loads)."""
        return self.available is None or bool(self.available())

    def takes(self, fmt) -> bool:
        """Whether the kernel is instantiated for the precision of ``fmt``'s products and reads its layout."""
        try:
            precise = type_names(fmt)[0] in self.precisions
        except TypeError:  # a dtype no kernel takes
            return False
        return precise and set(getattr(fmt, "layouts", tuple)()) <= set(self.layouts)

    def all_expressions(self) -> tuple[str, ...]:
        """Every instantiation: all its precisions x index types."""
        return tuple(e for v in self.precisions for i in INDEX_TYPES.values() for e in self.expressions(v, i))

    def compiled(self, expression: str, ldg: bool, device_id: int, types: tuple[str, str] | None = None):
        """The compiled ``__global__`` function ``expression`` of this kernel's source on ``device_id``, compiled
        with the other instantiations for its precision and index type (:meth:`sibling_expressions`; ``types``:
        the C++ precision and index type of the matrix, for a helper whose instantiation does not name both)."""
        from . import source

        return source.function(self.source, self.sibling_expressions(expression, types), expression, ldg, device_id)

    def sibling_expressions(self, expression: str, types: tuple[str, str] | None = None) -> tuple[str, ...]:
        """The instantiations compiled with ``expression`` into one module: those of the value and index ``types``
        when their list holds it, else of the first types whose list does (a quarter of the file's: a first
        product in float64 compiles no float32 code), or every one where none does."""
        key = (self.name, expression, types)
        if key not in _SIBLINGS:
            pairs = [tuple(types)] if types else []
            pairs += [(v, i) for v in self.precisions for i in INDEX_TYPES.values()]
            groups = (tuple(self.expressions(v, i)) for v, i in pairs)
            _SIBLINGS[key] = next((g for g in groups if expression in g), self.all_expressions())
        return _SIBLINGS[key]

    def resolve_params(self, given: dict) -> dict:
        """Merge ``given`` over the defaults; an unknown name is a ``TypeError``."""
        unknown = set(given) - set(self.defaults)
        if unknown:
            known = ", ".join(sorted(self.defaults)) or "none"
            raise TypeError(f"kernel {self.name!r} has no parameter {', '.join(map(repr, sorted(unknown)))}; "
                            f"its parameters are: {known}")
        return {**self.defaults, **given}

    def extends_product(self, format_name: str, spec: "KernelSpec") -> bool:
        """A block kernel only: whether it extends the SpMV kernel ``spec`` on matrices stored in ``format_name``."""
        return format_name in self.formats and format_name in spec.formats and spec.walk in self.extends


#: The parameters of every kernel of our own that launches with a block of threads: whether ``x`` is
#: read through the read-only cache, and the block size (None: the rule's).
LAUNCH_DEFAULTS = {"ldg": True, "block_threads": None}


def own_kernel(name: str, formats, description: str, expressions, bind, configure, *, params=None,
               default: bool = False, **more) -> KernelSpec:
    """The spec of a kernel of our own whose source is ``<name>.cu`` (in its folder ``kernels/<name>/``): its
    ``params`` then :data:`LAUNCH_DEFAULTS`; ``default``: a default kernel of every format it multiplies
    (``default_for``; where its ``default_when`` holds, by ``precedence``); ``more``: any other
    :class:`KernelSpec` field."""
    formats = tuple(formats)
    return KernelSpec(name=name, formats=formats, source=name, expressions=expressions, bind=bind,
                      configure=configure, defaults={**(params or {}), **LAUNCH_DEFAULTS},
                      default_for=formats if default else (), description=description, **more)
