"""Executors: how a stored matrix computes ``y = alpha*A@x + beta*y``, chosen once at construction.

- ``cuda``: the matrix's GPU kernel, bound once into a sequence of launches (:mod:`.cuda`).
- ``cpu``: SciPy's compiled product where SciPy has the format's layout (csr, coo, dia, bcsr),
  else the reference executor (:mod:`.cpu`).
- ``reference``: the product that reads the format's own arrays, on either device: NumPy's on
  the CPU (the test oracle), a gather/scatter over the format's entries on the GPU that never
  touches the host (:mod:`.reference`).

Executors receive operands already checked at the API boundary (``SparseMatrix``): ``x`` and
``y`` contiguous, in the matrix's dtype, on its device; blocks ``X`` and ``Y`` (``run_block``) in
the matrix's dtype and on its device but in any memory order, ``Y`` with no element twice and
sharing no memory with ``X``.  They validate nothing per product.
"""

from __future__ import annotations

NAMES = ("cuda", "cpu", "reference")


def create(name, storage, device: str, kernel=None, kernel_params=None, accumulate: bool = False,
           deterministic: bool = False, yielding: bool = False):
    """The executor ``name`` (None: the device's default) for ``storage`` on ``device``.

    On the GPU the default is ``cuda`` when a kernel multiplies the format and dtype, else the
    device reference path; ``kernel`` (a registry spec) forces a kernel.  ``ValueError`` for a
    name that does not fit the device, ``TypeError`` for kernel parameters the kernel lacks.
    For a Cocktail, ``kernel`` may list one ``(spec or None, params)`` per part (the planner's
    choice).  ``accumulate``: the product only ever adds into ``y`` (beta = 1), as a Cocktail's later parts
    do; a kernel then binds beta as the constant 1 and skips scaling ``y``.  ``deterministic``:
    where no kernel is given, pick one declared deterministic (the executor's ``deterministic``
    says whether the product is).  ``yielding``: the launch policy of a ``cuda`` executor's grids
    (:func:`cocktail.kernels.device.for_launches`); nothing on the other executors.
    """
    from ..formats.cocktail import Cocktail

    if isinstance(storage, Cocktail):
        if kernel_params or (kernel is not None and not isinstance(kernel, (list, tuple))):
            raise ValueError("kernel= names one kernel; a cocktail's parts each get their own")
        from .composed import Composed

        chosen = list(kernel) if kernel is not None else [(None, {})] * len(storage.parts)
        if len(chosen) != len(storage.parts):
            raise ValueError(f"a cocktail of {len(storage.parts)} parts needs as many kernels, got {len(chosen)}")
        return Composed([create(name, part, device, spec, params, accumulate=i > 0, deterministic=deterministic,
                                yielding=yielding)
                         for i, (part, (spec, params)) in enumerate(zip(storage.parts, chosen))])
    if name is not None and name not in NAMES:
        raise ValueError(f"executor must be one of {NAMES} or None, got {name!r}")
    allowed = ("cuda", "reference") if device == "cuda" else ("cpu", "reference")
    if name is not None and name not in allowed:
        raise ValueError(f"executor={name!r} does not run on device={device!r}; use one of {allowed}")
    if (kernel is not None or kernel_params) and name not in (None, "cuda"):
        raise ValueError(f"kernel= and kernel parameters need the cuda executor, not executor={name!r}")
    if device == "cuda":
        from . import cuda

        if name == "reference":
            from .reference import DeviceReference

            return DeviceReference(storage)
        return cuda.create(storage, kernel, kernel_params or {}, required=name == "cuda", accumulate=accumulate,
                           deterministic=deterministic, yielding=yielding)
    if name == "reference":
        from .reference import HostReference

        return HostReference(storage)
    from .cpu import CpuExecutor

    return CpuExecutor(storage)
