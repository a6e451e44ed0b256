"""Plots of benchmark records: GFLOP/s bars per matrix (Bell & Garland Fig. 27/31), the
performance profile (Flegar & Anzt Fig. 9) and the fraction of copy bandwidth reached.

Needs matplotlib (the ``bench`` extra); drawn off-screen to PNG files.  The four cuSPARSE
algorithms appear as ``cusparse-best``.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import CocktailError
from . import metrics
from .selection import summary_records


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise CocktailError("plots need matplotlib: pip install 'cocktail[bench]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _measured(records):
    return [r for r in summary_records(records) if metrics.time_us(r)]


def _rate(r) -> float:
    return metrics.gflops(int(r["nnz"]), metrics.time_us(r) * 1e-6)


def gflops_bars(records, path, title: str) -> Path:
    """Grouped bars: one group per matrix, one bar per method."""
    plt = _pyplot()
    rows = _measured(records)
    matrices = list(dict.fromkeys(r["matrix"] for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    rate = {(r["matrix"], r["method"]): _rate(r) for r in rows}
    width = 0.8 / max(len(methods), 1)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(matrices) + 3), 4.5))
    ax.set_prop_cycle(color=plt.cm.tab20.colors)
    for j, method in enumerate(methods):
        xs = [i + j * width for i in range(len(matrices))]
        ax.bar(xs, [rate.get((m, method), 0.0) for m in matrices], width, label=method)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(matrices))])
    ax.set_xticklabels(matrices, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("GFLOP/s")
    ax.set_title(title)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return _save(fig, plt, path)


def profile(records, path, title: str) -> Path:
    """Each method's slowdowns against the per-problem best, sorted (Flegar & Anzt Fig. 9)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 4.5))
    ax.set_prop_cycle(color=plt.cm.tab20.colors)
    for method, curve in metrics.performance_profile(_measured(records)).items():
        xs = [i / len(curve) for i in range(len(curve) + 1)]
        ax.step(xs, curve + curve[-1:], where="post", label=method)
    ax.set_xlabel("fraction of problems (each method's own order, by slowdown)")
    ax.set_ylabel("time / best time")
    ax.set_yscale("log")
    ax.set_title(title)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return _save(fig, plt, path)


def bandwidth(records, path, title: str) -> Path:
    """A matrix x method map of effective bandwidth, as a fraction of the copy bandwidth when measured."""
    plt = _pyplot()
    rows = [r for r in _measured(records) if r.get("gbps") is not None]
    matrices = list(dict.fromkeys(r["matrix"] for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    fractions = bool(rows) and all(r.get("copy_gbps") for r in rows)
    value = {(r["matrix"], r["method"]): r["gbps"] / r["copy_gbps"] if fractions else r["gbps"] for r in rows}
    grid = [[value.get((m, k), float("nan")) for k in methods] for m in matrices]
    fig, ax = plt.subplots(figsize=(max(5.0, 0.55 * len(methods) + 3), max(3.0, 0.35 * len(matrices) + 1.5)))
    image = ax.imshow(grid, aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(methods)))
    ax.set_xticklabels(methods, rotation=45, ha="right", fontsize=7)
    ax.set_yticks(range(len(matrices)))
    ax.set_yticklabels(matrices, fontsize=7)
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            if v == v:
                ax.text(j, i, f"{v:.2f}" if fractions else f"{v:.0f}", ha="center", va="center", fontsize=5,
                        color="white")
    fig.colorbar(image, ax=ax, label="fraction of copy bandwidth" if fractions else "effective GB/s")
    ax.set_title(title)
    return _save(fig, plt, path)


def _save(fig, plt, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_all(records, directory) -> list[Path]:
    """PNG files in ``directory``: GFLOP/s bars per suite and dtype, a profile and a bandwidth map per dtype."""
    directory = Path(directory)
    paths = []
    for dtype in dict.fromkeys(r["dtype"] for r in records):
        of_dtype = [r for r in records if r["dtype"] == dtype]
        for suite in dict.fromkeys(r.get("suite", "") for r in of_dtype):
            part = [r for r in of_dtype if r.get("suite", "") == suite]
            if _measured(part):
                name = f"gflops_{suite}_{dtype}.png" if suite else f"gflops_{dtype}.png"
                paths.append(gflops_bars(part, directory / name, f"SpMV GFLOP/s, {suite or 'matrices'}, {dtype}"))
        if _measured(of_dtype):
            paths.append(profile(of_dtype, directory / f"profile_{dtype}.png",
                                 f"Performance profile, {dtype}: slowdown against the best method"))
            paths.append(bandwidth(of_dtype, directory / f"bandwidth_{dtype}.png", f"Effective bandwidth, {dtype}"))
    return paths
