"""A two-layer graph convolutional network, forward and backward: ``torch.sparse`` against Cocktail.

The model is Kipf & Welling's GCN on a power-law graph (an R-MAT graph of 2**--scale vertices,
``cocktail.bench.problems.holdout.rmat``, made undirected, with self loops):

    H1 = relu(Â X W1),   Z = Â H1 W2,   loss = cross_entropy(Z, labels)

with ``Â = D^-1/2 (A + I) D^-1/2`` the symmetric-normalised adjacency, random features ``X`` and random
labels.  One training step (forward, ``loss.backward()``, float32) is timed two ways, with the same weights:

- torch.sparse: ``Â`` as a ``torch.sparse_csr_tensor``, products by ``torch.sparse.mm``;
- Cocktail: ``Â`` as a ``cocktail.SparseMatrix``, products written ``Â @ H`` on torch tensors: no copies,
  on torch's current stream, recorded by autograd (the backward product is ``Â.H @ grad``, its transpose
  built once on first use).

It checks that the logits, the loss and the gradients of W1 and W2 agree (allclose with float32
tolerances) and reports the time per step and the speedup.  It needs PyTorch (a CUDA build for
--device cuda); without it, it says so and exits 0.

Run on a GPU (2**19 vertices, about 16M nonzeros in Â, 128 features, 64 hidden, 16 classes):
    python examples/gcn.py --json gcn.json
CPU-sized (seconds):
    python examples/gcn.py --small --device cpu
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import scipy.sparse as sp

import _common
from _common import cocktail, seconds


def normalized_adjacency(W) -> sp.csr_array:
    """``D^-1/2 (A + I) D^-1/2`` (float32) of the undirected, unweighted graph under ``W``'s pattern."""
    n = W.shape[0]
    r, c = W.nonzero()
    keep = r != c
    r, c = r[keep], c[keep]
    loops = np.arange(n)
    rows = np.concatenate((r, c, loops))
    cols = np.concatenate((c, r, loops))
    A = sp.csr_array((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    A.sum_duplicates()
    A.data[:] = 1.0
    scale = 1.0 / np.sqrt(np.asarray(A.sum(axis=1)).ravel())
    A = sp.csr_array(sp.diags_array(scale) @ A @ sp.diags_array(scale))
    A.sum_duplicates()
    A.sort_indices()
    return A.astype(np.float32)


def main(argv=None):
    p = _common.parser(__doc__)
    p.add_argument("--scale", type=int, default=None, help="2**scale vertices (default 19; 12 with --small)")
    p.add_argument("--edge-factor", type=int, default=16, help="edges drawn per vertex (default 16)")
    p.add_argument("--features", type=int, default=None, help="input features (default 128; 32 with --small)")
    p.add_argument("--hidden", type=int, default=None, help="hidden units (default 64; 16 with --small)")
    p.add_argument("--classes", type=int, default=None, help="classes (default 16; 8 with --small)")
    args = p.parse_args(argv)
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        _common.needs("PyTorch", "pip install torch", "gcn.py")
    device = _common.Device(args.device)
    if device.gpu and not torch.cuda.is_available():
        _common.needs("a CUDA build of PyTorch", "this torch sees no GPU; try --device cpu", "gcn.py --device cuda")
    warnings.filterwarnings("ignore", message=".*[Ss]parse CSR tensor support is in beta.*")
    repeat = _common.repeats(args)
    report = _common.Report("gcn", device, args)
    report.data["machine"]["torch"] = torch.__version__

    from cocktail.bench.problems.holdout import rmat

    scale = args.scale or (12 if args.small else 19)
    features = args.features or (32 if args.small else 128)
    hidden = args.hidden or (16 if args.small else 64)
    classes = args.classes or (8 if args.small else 16)
    S = normalized_adjacency(rmat(scale, args.edge_factor, seed=103 + args.seed))
    n = S.shape[0]
    report.data["problem"] = {"graph": f"rmat scale {scale}, edge factor {args.edge_factor}, undirected + self loops",
                              "vertices": n, "nnz": int(S.nnz), "features": features, "hidden": hidden,
                              "classes": classes, "dtype": "float32"}

    dev = torch.device("cuda" if device.gpu else "cpu")
    g = torch.Generator().manual_seed(args.seed)
    X = torch.randn(n, features, generator=g).to(dev)
    labels = torch.randint(classes, (n,), generator=g).to(dev)
    W1_init = (torch.randn(features, hidden, generator=g) * (2.0 / (features + hidden)) ** 0.5).to(dev)
    W2_init = (torch.randn(hidden, classes, generator=g) * (2.0 / (hidden + classes)) ** 0.5).to(dev)

    def step_with(spmm):
        """One training step of the GCN with the sparse product ``spmm(Â, H) = Â @ H``, on its own copy of the
        weights."""
        W1 = W1_init.clone().requires_grad_(True)
        W2 = W2_init.clone().requires_grad_(True)

        def step(Ahat):
            W1.grad = W2.grad = None
            H1 = torch.relu(spmm(Ahat, X @ W1))
            Z = spmm(Ahat, H1 @ W2)
            loss = F.cross_entropy(Z, labels)
            loss.backward()
            return Z.detach(), loss.detach(), W1.grad, W2.grad

        return step

    def torch_csr():
        crow, col, values = (torch.from_numpy(a).to(dev) for a in (S.indptr.astype(np.int64),
                                                                   S.indices.astype(np.int64), S.data))
        return torch.sparse_csr_tensor(crow, col, values, size=S.shape, check_invariants=False)

    # measure() hands each step the matrix its setup built
    timings = {}
    timings["torch.sparse"], _, (Z_u, loss_u, g1_u, g2_u) = _common.measure(
        device, torch_csr, step_with(lambda At, H: torch.sparse.mm(At, H)), repeat)
    timings["cocktail"], A, (Z_c, loss_c, g1_c, g2_c) = _common.measure(
        device, lambda: cocktail.SparseMatrix(S, device=device.name), step_with(lambda A, H: A @ H), repeat)

    timings["torch.sparse"]["way"] = f"torch.sparse.mm (CSR, torch {torch.__version__})"
    timings["cocktail"].update(way=f"cocktail {A.format}: A @ H (autograd)", format=A.format, kernel=A.kernel,
                               transpose_format=A.H.format)
    for t in timings.values():
        t["speedup"] = timings["torch.sparse"]["median_s"] / t["median_s"]
    report.data["results"] = timings
    report.data["speedup"] = timings["cocktail"]["speedup"]
    report.data["loss"] = {"torch.sparse": float(loss_u), "cocktail": float(loss_c)}

    def agree(name, ours, theirs, rtol):
        """float32 tolerances: the two sum each row of Â in their own order (hub rows hold thousands of terms), so
        an entry may differ by ``rtol`` of itself plus ``rtol / 10`` of the largest entry."""
        scale = float(theirs.abs().max())
        diff = float((ours - theirs).abs().max())
        ok = bool(torch.allclose(ours, theirs, rtol=rtol, atol=rtol * 0.1 * max(scale, 1e-30)))
        report.check(name, ok, max_abs_difference=diff, max_abs_value=scale, rtol=rtol)

    agree("logits", Z_c, Z_u, 1e-3)
    agree("loss", loss_c, loss_u, 1e-5)
    agree("grad W1", g1_c, g1_u, 1e-3)
    agree("grad W2", g2_c, g2_u, 1e-3)

    rows = [[t["way"], seconds(t["setup_s"]), seconds(t["warmup_s"]), seconds(t["median_s"]), seconds(t["best_s"]),
             f"{t['speedup']:.2f}x"] for t in timings.values()]
    report.finish(f"GCN forward + backward ({device.name}): {repeat} timed steps",
                  ["way", "setup", "first step", "median", "best", "speedup"], rows,
                  notes=["setup: Â on the device (Cocktail's includes planning; the transpose for backward is built "
                         "in the first step); speedup: torch.sparse's median over each way's"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
