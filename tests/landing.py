"""Markers for tests of the SparseMatrix API that is landing on main in parallel (``executor=``,
``A.executor``, ``A.bind``): they skip until it is there, then run."""

from __future__ import annotations

import inspect

import pytest

from cocktail import SparseMatrix

HAS_EXECUTOR = "executor" in inspect.signature(SparseMatrix).parameters
HAS_BIND = hasattr(SparseMatrix, "bind")

needs_executor = pytest.mark.skipif(not HAS_EXECUTOR, reason="needs SparseMatrix(executor=...) (landing on main)")
needs_bind = pytest.mark.skipif(not HAS_BIND, reason="needs SparseMatrix.bind (landing on main)")
