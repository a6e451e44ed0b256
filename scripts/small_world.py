"""A matrix class in no suite: the Watts-Strogatz small-world graph, saved as a SciPy .npz for ``cocktail bench``.

    python scripts/small_world.py OUT.npz [--nodes N] [--near K] [--rewire P] [--seed S]

Every node links to its K nearest ring neighbours on each side; each link's far end is moved to a uniform random
node with probability P; the adjacency is made symmetric (duplicates summed) and every entry set to 1 (the bench's
``--values`` chooses the values).  Most entries lie in a band of width 2K, the rewired ones anywhere: a banded
matrix with a random sprinkle, unlike every suite's classes.
"""

from __future__ import annotations

import argparse

import numpy as np
import scipy.sparse as sp


def small_world(nodes: int, near: int, rewire: float, seed: int) -> sp.csr_matrix:
    """The symmetric Watts-Strogatz adjacency (CSR, float64 ones, no diagonal)."""
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(nodes, dtype=np.int64), near)
    cols = (rows + np.tile(np.arange(1, near + 1), nodes)) % nodes
    moved = rng.random(rows.size) < rewire
    cols[moved] = rng.integers(0, nodes, int(moved.sum()))
    keep = rows != cols
    rows, cols = rows[keep], cols[keep]
    a = sp.coo_matrix((np.ones(rows.size), (rows, cols)), shape=(nodes, nodes)).tocsr()
    a = (a + a.T).tocsr()
    a.data[:] = 1.0
    a.sort_indices()
    return a


def main() -> None:
    """Write the matrix to the named .npz."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--nodes", type=int, default=1 << 21)
    p.add_argument("--near", type=int, default=6)
    p.add_argument("--rewire", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=1127)
    a = p.parse_args()
    m = small_world(a.nodes, a.near, a.rewire, a.seed)
    sp.save_npz(a.out, m)
    print(f"{a.out}: {m.shape[0]:,} rows, {m.nnz:,} entries")


if __name__ == "__main__":
    main()
