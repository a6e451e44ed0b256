"""Launch configuration: every kernel parameter resolved to a concrete value, once, at construction.

:func:`configure` turns the parameters a user gave (``None`` for "let the rule choose") into
the complete configuration a kernel's binder needs: block size, threads per row, items per
thread, the COO partition, and the configurations of a composed kernel's parts.  Each kernel
declares how (its ``KernelSpec.configure``, in its own module); the choices come from the rule
book :data:`RULES` passed to it (the thresholds of :mod:`.kernel_rules` and :mod:`.coo` that several kernels
share) and the kernel's own rules in its folder (``kernels/<name>/rules.py``); :func:`configure` is the one
way in, and every parameter is validated before anything is launched.
"""

from __future__ import annotations

from .. import kernels
from ..kernels import config as checks
from . import coo as coo_rules
from . import kernel_rules as rules


def block_threads(kernel: str, given, props) -> int:
    """Threads per block: ``given`` or the tuning rule; a positive multiple of the warp size within the device limit."""
    return checks.block_threads(kernel, given, props, rules.BLOCK_THREADS)


def _scale_block(props) -> int:
    """Threads per block of the ``scale_y`` pass ahead of a COO kernel (a grid-stride loop over y)."""
    return block_threads("scale_y", None, props)


def _part(kernel_name: str, fmt, ldg, props, what: str):
    """``(spec, config)`` of a composed kernel's part, with the parent's ``ldg``."""
    spec = kernels.get(kernel_name)
    if fmt.name not in spec.formats:
        raise ValueError(f"{what} must be a kernel for {fmt.name} matrices "
                         f"({', '.join(s.name for s in kernels.for_format(fmt.name))}), got {kernel_name!r}")
    return spec, configure(spec, fmt, {"ldg": ldg} if "ldg" in spec.defaults else {}, props)


class _RuleBook:
    """What a kernel's ``configure`` may ask of the tuning layer, the rules several kernels share: the block size
    (``BLOCK_THREADS``), the block products' shapes (``spmm_shape``, ``block_spmm_shape``, ``spmm_diagonal_rows``,
    ``spmm_bucket``, ``spmm_min_columns``), Flegar & Anzt's oversubscription (``coo_omega``, ``cores_per_sm``) and
    the COO partition rules (``coo``), cuSPARSE's algorithm (``CUSPARSE_ALG``), the block of the ``scale_y`` pass (``scale_block(props)``)
    and the configuration of a composed kernel's part (``part(kernel, storage, ldg, props, what)``).  A kernel's
    own rules and thresholds live in its folder (``kernels/<name>/rules.py``)."""

    BLOCK_THREADS = rules.BLOCK_THREADS
    CUSPARSE_ALG = rules.CUSPARSE_ALG
    spmm_shape = staticmethod(rules.spmm_shape)
    block_spmm_shape = staticmethod(rules.block_spmm_shape)
    spmm_diagonal_rows = staticmethod(rules.spmm_diagonal_rows)
    spmm_bucket = staticmethod(rules.spmm_bucket)
    spmm_min_columns = staticmethod(rules.spmm_min_columns)
    coo_omega = staticmethod(rules.coo_omega)
    cores_per_sm = staticmethod(rules.cores_per_sm)
    coo = coo_rules
    scale_block = staticmethod(_scale_block)
    part = staticmethod(_part)


RULES = _RuleBook()


def configure(spec, storage, params: dict, props) -> dict:
    """The complete configuration of kernel ``spec`` for ``storage`` on the device ``props`` describes.

    ``params`` are the user's kernel parameters (unknown names are a ``TypeError``; bad values a
    ``ValueError`` naming the parameter); every ``None`` is replaced by the rule's choice.
    """
    if storage.name not in spec.formats:
        raise ValueError(f"kernel {spec.name!r} multiplies {', '.join(spec.formats)} matrices, not {storage.name!r}")
    if not spec.takes(storage):
        from ..kernels.spec import precision_words

        unread = sorted(set(storage.layouts()) - set(spec.layouts))
        if unread:
            raise TypeError(f"kernel {spec.name!r} does not read {storage.name} stored with {', '.join(unread)}; "
                            f"build it without (or name another kernel)")
        raise TypeError(f"kernel {spec.name!r} has no instantiation for {precision_words(storage)}; it takes "
                        f"{', '.join(spec.precisions)}")
    return spec.configure(spec, storage, spec.resolve_params(params), props, RULES)


def user_view(config: dict) -> dict:
    """The configuration as ``SparseMatrix.kernel_params`` shows it: every resolved value, parts left out."""
    return {k: v for k, v in config.items() if k not in ("parts", "rest")}
