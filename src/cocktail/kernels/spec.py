"""``KernelSpec``: what the registry knows about one kernel."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

VALUE_TYPES = {np.dtype("float32"): "float", np.dtype("float64"): "double"}
INDEX_TYPES = {np.dtype("int32"): "int", np.dtype("int64"): "long long"}


def value_type_name(dtype) -> str:
    """The C++ type of a value dtype (``TypeError`` for dtypes the kernels do not handle)."""
    try:
        return VALUE_TYPES[np.dtype(dtype)]
    except KeyError:
        raise TypeError(f"no GPU kernel for {np.dtype(dtype).name} values (kernels take float32, float64)") from None


def index_type_name(dtype) -> str:
    """The C++ type of an index dtype."""
    return INDEX_TYPES[np.dtype(dtype)]


@dataclass(frozen=True)
class KernelSpec:
    """One kernel: its source file, the formats it multiplies, its instantiations and launcher.

    ``expressions(value, index)`` lists the template instantiations (CuPy name expressions)
    of the ``.cu`` file for one value and index type; ``launch(plan, x, y, alpha, beta)``
    runs ``y = alpha*A@x + beta*y`` for 1-D device arrays.  ``defaults`` are the kernel
    parameters a user may pass as ``SparseMatrix(..., kernel=name, **params)``; ``None``
    means "chosen by the rule in ``cocktail.tuning``".
    """

    name: str
    formats: tuple[str, ...]
    expressions: Callable[[str, str], list[str]]
    launch: Callable
    defaults: dict = field(default_factory=dict)
    source: str | None = None          # .cu file stem; None for composed kernels (hyb)
    deterministic: bool = True
    description: str = ""

    def all_expressions(self) -> list[str]:
        """Every instantiation: all value types x index types."""
        return [e for v in VALUE_TYPES.values() for i in INDEX_TYPES.values() for e in self.expressions(v, i)]

    def resolve_params(self, given: dict) -> dict:
        """Merge ``given`` over the defaults; an unknown name is a ``TypeError``."""
        unknown = set(given) - set(self.defaults)
        if unknown:
            known = ", ".join(sorted(self.defaults)) or "none"
            raise TypeError(f"kernel {self.name!r} has no parameter {', '.join(map(repr, sorted(unknown)))}; "
                            f"its parameters are: {known}")
        return {**self.defaults, **given}
