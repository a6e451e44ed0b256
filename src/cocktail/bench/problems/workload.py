"""The workload of the workload target: 50 different matrices, a mix of classes, 1-10M nonzeros each.

``cocktail bench --workload`` (:mod:`..measuring.workload`) builds each of them from the host and runs 20
products with it, one after the other, as a user with many matrices does.  The list is fixed: every matrix
comes from a generator the suites use (:mod:`.generators`, :mod:`.holdout`, :mod:`.williams`,
:mod:`.clspmv`), called with its own size and its own seed, and the order of the list is a fixed shuffle
(seed 43), so that the classes alternate.

Held out: none of the 50 is a matrix of a suite.  Every seeded generator is called with a seed of 4001 to
4099, each used once, where the suites use the generators' defaults or seeds below 1,000; no Laplacian has the
stencil and grid side of a suite Laplacian.  The sizes were fixed once, as round numbers spreading the
nonzeros over 1-10M, before any timing; none may be changed to make a method look good or bad, and no
planner threshold may be fitted to these matrices (as for :mod:`.holdout`).

Each entry states its nonzeros at full size (``nnz``, counted when the list was fixed), so that its size can
be checked without building it.  :func:`matrices` gives the list at a size divided by ``shrink`` (rows
divided by it, about the same nonzeros per row): :data:`~.suites.CPU_SHRINK` for the CPU variant (names
ending ``_small``, as the suites' CPU versions), any other for a test.  :func:`load` caches a generated
matrix as :func:`.suites.load` does, under a name of its own (``workload_...``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.sparse as sp

from . import clspmv, holdout, williams
from .families import POWER_LAW, REGULAR
from .generators import laplacian

#: The generators' version, part of each cached matrix's file name (as :data:`.suites.GENERATOR_VERSION`).
GENERATOR_VERSION = 1
#: The seed of the fixed shuffle that orders the list.
ORDER_SEED = 43

#: The classes the workload mixes (an entry's ``group``).
STENCIL, BANDED, BLOCK, FEM, MESH, GRAPH, WEB, CIRCUIT, KNN, RECTANGULAR, SPARSE_ROWS, SADDLE, OPTIMISATION = (
    "stencil", "banded", "block", "fem", "mesh", "graph", "web", "circuit", "knn", "rectangular", "sparse rows",
    "saddle", "optimisation")


@dataclass(frozen=True)
class WorkloadMatrix:
    """One matrix of the workload: its name, class (``group``) and the class in words (``kind``), family,
    nonzeros at full size, seed (None for a Laplacian, which has none) and ``make(shrink, seed)``, its
    generator called at 1/``shrink`` of the rows."""

    name: str
    group: str
    kind: str
    family: str
    nnz: int
    seed: int | None
    make: Callable[[int, int | None], sp.csr_array]

    def build(self, shrink: int = 1) -> sp.csr_array:
        """The matrix at 1/``shrink`` of the rows, from its own seed."""
        return self.make(shrink, self.seed)


def _div(n: int, shrink: int, least: int) -> int:
    """``n`` divided by ``shrink``, at least ``least``."""
    return max(least, round(n / shrink))


def _side(k: int, shrink: int, dims: int, least: int) -> int:
    """A grid side ``k`` shrunk so that its ``dims``-D grid has about 1/``shrink`` of the points."""
    return max(least, round(k / shrink ** (1 / dims)))


def _scale(k: int, shrink: int) -> int:
    """An R-MAT scale (log2 of the vertices) shrunk so that the graph has about 1/``shrink`` of them."""
    return max(6, k - round(math.log2(shrink)))


def _laplace(points: int, k: int, nnz: int) -> WorkloadMatrix:
    dims = {3: 1, 5: 2, 9: 2, 7: 3, 27: 3}[points]
    return WorkloadMatrix(f"wl_laplace{points}_{k}", STENCIL, f"stencil: {points}-point Laplacian", REGULAR, nnz,
                          None, lambda s, seed: laplacian(points, _side(k, s, dims, 3)))


def _kind(group: str, kind: str, family: str):
    """An entry maker of one class: ``(name, nnz, seed, make) -> WorkloadMatrix``."""
    return lambda name, nnz, seed, make: WorkloadMatrix(f"wl_{name}", group, kind, family, nnz, seed, make)


def _entries() -> list[WorkloadMatrix]:
    """The 50 entries in the order written (by class); :data:`MATRICES` is them shuffled."""
    banded = _kind(BANDED, "banded: half-width drifting between 2 and 40", REGULAR)
    blocks = _kind(BLOCK, "block-diagonal: blocks of 1-64, dense or half-dense", REGULAR)
    fem = _kind(FEM, "FEM: 3-D elasticity, 3x3 blocks", REGULAR)
    mesh2d = _kind(MESH, "mesh: 2-D Delaunay triangles, P1 pattern", REGULAR)
    mesh3d = _kind(MESH, "mesh: 3-D Delaunay tetrahedra, 3x3 blocks", REGULAR)
    rmat = _kind(GRAPH, "graph: Kronecker (R-MAT), power-law degrees", POWER_LAW)
    attach = _kind(GRAPH, "graph: preferential attachment, hubs first", POWER_LAW)
    webbase = _kind(WEB, "web graph: power-law rows", POWER_LAW)
    in2004 = _kind(WEB, "web graph: dense navigation blocks, power-law rows", POWER_LAW)
    circuit = _kind(CIRCUIT, "circuit: short rows, a few dense rows and columns", POWER_LAW)
    knn = _kind(KNN, "graph: nearest neighbours in the plane, Z-order numbering", REGULAR)
    tall = _kind(RECTANGULAR, "tall rectangle: rows 27 or 17 x cols, uneven rows", POWER_LAW)
    wide = _kind(RECTANGULAR, "wide rectangle: cols 25 or 17 x rows, uneven rows", POWER_LAW)
    bipartite = _kind(RECTANGULAR, "bipartite rectangle: uneven rows, popular columns", POWER_LAW)
    lp = _kind(RECTANGULAR, "LP: wide, very uneven rows", POWER_LAW)
    empty = _kind(SPARSE_ROWS, "mostly-empty rows: 94% empty, heavy-tailed lengths", POWER_LAW)
    saddle = _kind(SADDLE, "saddle point: 2-D stencil with coarse constraints, zero block", REGULAR)
    mip1 = _kind(OPTIMISATION, "optimisation: dense blocks, band, full rows", POWER_LAW)
    return [
        _laplace(3, 600_000, 1_799_998),
        _laplace(3, 2_500_000, 7_499_998),
        _laplace(5, 550, 1_510_300),
        _laplace(5, 1300, 8_444_800),
        _laplace(9, 480, 2_067_844),
        _laplace(9, 800, 5_750_404),
        _laplace(7, 64, 1_810_432),
        _laplace(7, 110, 9_244_400),
        _laplace(27, 36, 1_191_016),
        _laplace(27, 52, 3_652_264),
        banded("banded_30k", 1_310_558, 4001, lambda s, seed: holdout.banded(_div(30_000, s, 200), seed)),
        banded("banded_90k", 3_944_733, 4002, lambda s, seed: holdout.banded(_div(90_000, s, 200), seed)),
        banded("banded_190k", 8_092_944, 4003, lambda s, seed: holdout.banded(_div(190_000, s, 200), seed)),
        blocks("blockdiag_45k", 1_497_507, 4004, lambda s, seed: holdout.blockdiag(_div(45_000, s, 200), seed)),
        blocks("blockdiag_110k", 3_569_539, 4006, lambda s, seed: holdout.blockdiag(_div(110_000, s, 200), seed)),
        blocks("blockdiag_250k", 8_090_941, 4008, lambda s, seed: holdout.blockdiag(_div(250_000, s, 200), seed)),
        fem("fem_30k", 1_552_644, 4010,
            lambda s, seed: williams.fem(_div(30_000, s, 96), _div(1_600_000, s, 2_000), (2, 1, 1), seed)),
        fem("fem_60k", 2_843_343, 4011,
            lambda s, seed: williams.fem(_div(60_000, s, 96), _div(3_000_000, s, 2_000), (1, 1, 1), seed)),
        fem("fem_100k", 5_403_996, 4012,
            lambda s, seed: williams.fem(_div(100_000, s, 96), _div(5_500_000, s, 2_000), (1, 2, 3), seed)),
        fem("fem_160k", 8_848_530, 4013,
            lambda s, seed: williams.fem(_div(160_000, s, 96), _div(9_000_000, s, 2_000), (6, 1, 1), seed)),
        mesh2d("mesh2d_500", 1_749_928, 4014, lambda s, seed: holdout.mesh2d(_side(500, s, 2, 4), seed)),
        mesh2d("mesh2d_800", 4_479_928, 4015, lambda s, seed: holdout.mesh2d(_side(800, s, 2, 4), seed)),
        mesh3d("mesh3d_b3_22", 1_555_236, 4016, lambda s, seed: holdout.mesh3d_b3(_side(22, s, 3, 3), seed)),
        mesh3d("mesh3d_b3_32", 4_811_022, 4017, lambda s, seed: holdout.mesh3d_b3(_side(32, s, 3, 3), seed)),
        rmat("rmat_17", 1_943_466, 4018, lambda s, seed: holdout.rmat(_scale(17, s), 16, seed)),
        rmat("rmat_18", 3_939_737, 4019, lambda s, seed: holdout.rmat(_scale(18, s), 16, seed)),
        rmat("rmat_19", 7_968_087, 4020, lambda s, seed: holdout.rmat(_scale(19, s), 16, seed)),
        attach("preferential_150k", 1_199_652, 4021,
               lambda s, seed: holdout.preferential(_div(150_000, s, 50), 4, seed)),
        attach("preferential_500k", 5_999_044, 4022,
               lambda s, seed: holdout.preferential(_div(500_000, s, 50), 6, seed)),
        webbase("webbase_600k", 1_971_574, 4023, lambda s, seed: williams.webbase(seed, _div(600_000, s, 2_000))),
        webbase("webbase_2200k", 7_087_394, 4024, lambda s, seed: williams.webbase(seed, _div(2_200_000, s, 2_000))),
        in2004("in2004_120k", 1_387_801, 4025, lambda s, seed: clspmv.in2004(seed, _div(120_000, s, 2_000))),
        in2004("in2004_500k", 5_929_184, 4026, lambda s, seed: clspmv.in2004(seed, _div(500_000, s, 2_000))),
        circuit("circuit_300k", 1_632_462, 4027, lambda s, seed: williams.circuit(seed, _div(300_000, s, 500))),
        circuit("circuit_1200k", 6_056_162, 4028, lambda s, seed: williams.circuit(seed, _div(1_200_000, s, 500))),
        knn("knn6_200k", 1_611_200, 4029, lambda s, seed: holdout.knn_geometric(_div(200_000, s, 50), 6, seed)),
        knn("knn12_300k", 4_352_776, 4030, lambda s, seed: holdout.knn_geometric(_div(300_000, s, 50), 12, seed)),
        knn("knn10_550k", 6_806_108, 4031, lambda s, seed: holdout.knn_geometric(_div(550_000, s, 50), 10, seed)),
        tall("tall_500k", 2_030_785, 4032,
             lambda s, seed: holdout.tall(_div(500_000, s, 400), _div(30_000, s, 24), seed)),
        tall("tall_1600k", 6_495_881, 4033,
             lambda s, seed: holdout.tall(_div(1_600_000, s, 400), _div(60_000, s, 24), seed)),
        wide("wide_15k", 1_212_506, 4034,
             lambda s, seed: holdout.wide(_div(15_000, s, 24), _div(250_000, s, 400), seed)),
        wide("wide_60k", 4_805_038, 4035,
             lambda s, seed: holdout.wide(_div(60_000, s, 24), _div(1_500_000, s, 400), seed)),
        bipartite("bipartite_250k", 1_491_868, 4036,
                  lambda s, seed: holdout.bipartite(_div(250_000, s, 300), _div(70_000, s, 100), seed)),
        bipartite("bipartite_900k", 5_368_466, 4037,
                  lambda s, seed: holdout.bipartite(_div(900_000, s, 300), _div(300_000, s, 100), seed)),
        lp("lp_3000", 4_999_130, 4038,
           lambda s, seed: williams.lp(seed, _div(3_000, s, 20), _div(700_000, s, 2_000), _div(5_000_000, s, 4_000))),
        empty("sparse_rows_2500k", 3_593_654, 4039,
              lambda s, seed: holdout.sparse_rows(_div(2_500_000, s, 2_000), seed=seed)),
        saddle("saddle_450", 1_415_700, 4040, lambda s, seed: holdout.saddle(_side(450, s, 2, 4), seed)),
        saddle("saddle_950", 6_313_700, 4041, lambda s, seed: holdout.saddle(_side(950, s, 2, 4), seed)),
        mip1("mip1_12k", 1_942_650, 4042, lambda s, seed: clspmv.mip1(seed, _div(12_000, s, 400))),
        mip1("mip1_40k", 6_005_564, 4043, lambda s, seed: clspmv.mip1(seed, _div(40_000, s, 400))),
    ]


def _shuffled(entries: list[WorkloadMatrix]) -> tuple[WorkloadMatrix, ...]:
    order = np.random.default_rng(ORDER_SEED).permutation(len(entries))
    return tuple(entries[i] for i in order)


#: The workload at full size, in its fixed order.
MATRICES = _shuffled(_entries())


@dataclass(frozen=True)
class Sized:
    """A workload matrix at one size: its name at that size (``_small`` at CPU size, ``_s<shrink>``
    otherwise), its class in words and ``build()``."""

    name: str
    kind: str
    family: str
    build: Callable[[], sp.csr_array]
    entry: WorkloadMatrix


def matrices(shrink: int = 1, count: int | None = None) -> list[Sized]:
    """The workload's matrices (the first ``count`` of them; all by default) at 1/``shrink`` of the rows."""
    from .suites import CPU_SHRINK

    out = []
    for m in MATRICES[:count]:
        suffix = "" if shrink == 1 else "_small" if shrink == CPU_SHRINK else f"_s{shrink}"
        kind = m.kind + ("" if shrink == 1 else " (CPU size)" if shrink == CPU_SHRINK else f" (1/{shrink})")
        out.append(Sized(m.name + suffix, kind, m.family, (lambda m=m: m.build(shrink)), m))
    return out


def group_of(name: str) -> str | None:
    """The class (``group``) of a workload matrix from its name at any size, None for a name not in the list."""
    base = re.sub(r"_(small|s\d+)$", "", name)
    return next((m.group for m in MATRICES if m.name == base), None)


def load(matrix: Sized) -> sp.csr_array:
    """The matrix, from the cache when present, else generated and cached (as :func:`.suites.load`, under
    ``workload_<name>``)."""
    from .suites import cached

    return cached(f"workload_{matrix.name}", matrix.build, GENERATOR_VERSION)