"""Accepting GPU arrays from other libraries without copies."""

from __future__ import annotations

from .arrays import is_cupy_array


def as_device_array(obj, name: str):
    """A ``cupy.ndarray`` viewing ``obj``'s device memory (CuPy, ``__cuda_array_interface__`` or DLPack).

    NumPy arrays and other host objects are a ``TypeError``: Cocktail never copies silently.
    """
    if is_cupy_array(obj):
        return obj
    import cupy

    if hasattr(obj, "__cuda_array_interface__"):
        return cupy.asarray(obj)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        device_type, _ = obj.__dlpack_device__()
        if int(device_type) in (2, 13):  # kDLCUDA, kDLCUDAManaged
            return cupy.from_dlpack(obj)
    raise TypeError(
        f"{name} is a {type(obj).__module__}.{type(obj).__name__} in host memory but the matrix is on "
        "the GPU; pass a device array (cupy.asarray(x)): Cocktail never copies silently"
    )
