"""scale_y: the launch that scales ``y`` by ``beta`` ahead of kernels that add into ``y`` (the COO kernels)."""

from __future__ import annotations

import numpy as np

from . import source
from .launch import BETA, Y, Launch
from .spec import precision_name

def bind(fmt, block: int, props) -> Launch:
    """``y = beta * y`` over the matrix's rows (``beta == 0`` writes zeros; ``beta == 1`` returns at once)."""
    m = fmt.shape[0]
    fn = source.helper("scale_y", f"scale_y<{precision_name(fmt.dtype)}>", props.id)
    return Launch.striding(fn, m, block, props, (np.int64(m), Y, BETA), fmt.dtype)
