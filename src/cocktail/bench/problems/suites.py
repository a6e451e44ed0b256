"""Benchmark suites: named matrices generated on the fly with fixed seeds and cached on disk as ``.npz``.

Each matrix has a short name and the class of problems it stands for.  The cache lives in
``$COCKTAIL_CACHE`` (default ``~/.cache/cocktail``); a cached file is keyed by the matrix name
and ``GENERATOR_VERSION``, so changing a generator means bumping that number.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import scipy.sparse as sp

from . import clspmv as clspmv_matrices, holdout, williams
from .families import REGULAR
from .generators import laplacian

#: The suites' generators' version, part of each cached matrix's file name.  2: the FEM matrices are the grid
#: substitute in every install (version 1 built them with scikit-fem where it was installed).
GENERATOR_VERSION = 2


@dataclass(frozen=True)
class SuiteMatrix:
    """A benchmark matrix: its name, the class it stands for, how to build it, and its family
    (:mod:`.families`; empty when unstated)."""

    name: str
    kind: str
    build: Callable[[], sp.csr_array]
    family: str = ""


def _laplace(points: int, k: int) -> SuiteMatrix:
    return SuiteMatrix(f"laplace{points}_{k}", f"structured: {points}-point Laplacian",
                       lambda: laplacian(points, k), REGULAR)


#: Bell & Garland Table 3.
STRUCTURED = (
    _laplace(3, 1_000_000),
    _laplace(5, 1000),
    _laplace(9, 1000),
    _laplace(7, 100),
    _laplace(27, 100),
)

#: Bell & Garland Table 4: stand-ins for Williams et al.'s 14 unstructured matrices.
WILLIAMS = tuple(SuiteMatrix(name, kind, fn, williams.FAMILIES[name]) for name, kind, fn in williams.MATRICES)

#: Mixed-structure stand-ins for the six matrices clSpMV added.
COCKTAIL = tuple(SuiteMatrix(name, kind, fn, clspmv_matrices.FAMILIES[name])
                 for name, kind, fn in clspmv_matrices.MATRICES)

_BY_NAME = {m.name: m for m in STRUCTURED + WILLIAMS + COCKTAIL}

#: A quick subset across the three suites.
DEFAULT = tuple(_BY_NAME[n] for n in ("laplace7_100", "laplace27_100", "fem_spheres", "circuit", "webbase",
                                     "lp", "mip1", "in2004"))

#: How much smaller (in rows) the CPU-size matrices are than the default ones.
CPU_SHRINK = 15

#: Grid side of the CPU-size Laplacians: 40^3 = 100^3 / 15.6 rows.
_CPU_LAPLACE_K = 40


def _cpu(full: str, name: str, build: Callable[[], sp.csr_array]) -> SuiteMatrix:
    """A CPU-size version of the default matrix ``full``: same class and family, about 1/15 of the rows."""
    return SuiteMatrix(name, f"{_BY_NAME[full].kind} (CPU size)", build, _BY_NAME[full].family)


def _cpu_laplace(points: int) -> SuiteMatrix:
    k = _CPU_LAPLACE_K
    return _cpu(f"laplace{points}_100", f"laplace{points}_{k}", lambda: laplacian(points, k))


#: The default subset shrunk to CPU size (a few seconds to generate in all): each matrix has
#: about 1/15 of its counterpart's rows and about the same nonzeros per row and structure.
DEFAULT_CPU = (
    _cpu_laplace(7),
    _cpu_laplace(27),
    _cpu("fem_spheres", "fem_spheres_small",
         lambda: williams.fem(83_334 // CPU_SHRINK, 6_010_480 // CPU_SHRINK, (1, 1, 1), seed=3)),
    _cpu("circuit", "circuit_small", lambda: williams.circuit(n=170_998 // CPU_SHRINK)),
    _cpu("webbase", "webbase_small", lambda: williams.webbase(n=1_000_005 // CPU_SHRINK)),
    _cpu("lp", "lp_small", lambda: williams.lp(m=4284 // CPU_SHRINK, n=1_092_610 // CPU_SHRINK,
                                             nnz=11_279_748 // CPU_SHRINK)),
    _cpu("mip1", "mip1_small", lambda: clspmv_matrices.mip1(n=66_463 // CPU_SHRINK)),
    _cpu("in2004", "in2004_small", lambda: clspmv_matrices.in2004(n=1_382_908 // CPU_SHRINK)),
)

#: Held out: classes the format planner is judged on and never tuned on (see :mod:`.holdout`).
HOLDOUT = tuple(SuiteMatrix(name, kind, fn, holdout.family(name)) for name, kind, fn in holdout.MATRICES)

#: The held-out suite at CPU size (about 1/15 of the rows).
HOLDOUT_CPU = tuple(SuiteMatrix(name, kind, fn, holdout.family(name))
                    for name, kind, fn in holdout.matrices(CPU_SHRINK))

SUITES: dict[str, tuple[SuiteMatrix, ...]] = {
    "structured": STRUCTURED,
    "williams": WILLIAMS,
    "cocktail": COCKTAIL,
    "default": DEFAULT,
    "default-cpu": DEFAULT_CPU,
    "holdout": HOLDOUT,
    "holdout-cpu": HOLDOUT_CPU,
}


def names() -> list[str]:
    """Names of the registered suites."""
    return list(SUITES)


def get(name: str) -> tuple[SuiteMatrix, ...]:
    """The matrices of suite ``name``; ``ValueError`` listing the suites otherwise."""
    try:
        return SUITES[name]
    except KeyError:
        raise ValueError(f"unknown suite {name!r}; suites: {', '.join(names())}") from None


def cache_dir() -> Path:
    """Where generated matrices are cached (the user cache directory, see :mod:`cocktail._cache`)."""
    from ..._cache import cache_dir as user_cache

    return user_cache()


def load(matrix: SuiteMatrix) -> sp.csr_array:
    """The matrix, from the cache when present, else generated and cached."""
    return cached(matrix.name, matrix.build)


def cached(name: str, build: Callable[[], sp.spmatrix], version: int = GENERATOR_VERSION) -> sp.csr_array:
    """The matrix cached as ``name`` by generators of ``version``, else ``build()``'s, cached."""
    path = cache_dir() / f"{name}.v{version}.npz"
    if path.exists():
        return sp.csr_array(sp.load_npz(path))
    A = sp.csr_array(build())
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    sp.save_npz(tmp, A, compressed=False)  # compressing took several times longer than generating
    tmp.replace(path)  # atomic: a killed run never leaves a truncated cache file
    return A
