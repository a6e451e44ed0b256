"""csr_merge's rule: merge items per thread (when it runs: :mod:`..row_rules`' ``long_tailed``)."""

from __future__ import annotations

#: Merge items (row ends + nonzeros) per thread (Merrill & Garland use 7 on Maxwell-class GPUs).
MERGE_ITEMS_PER_THREAD = 7
