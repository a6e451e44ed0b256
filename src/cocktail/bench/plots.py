"""Plots of benchmark records: GFLOP/s bars per matrix (Bell & Garland Fig. 27/31), the
performance profile (Flegar & Anzt Fig. 9) and effective-bandwidth fractions.

Needs matplotlib (the ``bench`` extra); drawn off-screen to PNG files.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import CocktailError
from . import metrics


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise CocktailError("plots need matplotlib: pip install 'cocktail[bench]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _measured(records):
    return [r for r in records if r.get("kernel_us", r.get("time_us")) is not None]


def gflops_bars(records, path, title: str = "SpMV GFLOP/s by matrix and method") -> Path:
    """Grouped bars: one group per (matrix, dtype), one bar per method."""
    plt = _pyplot()
    rows = _measured(records)
    problems = list(dict.fromkeys((r["matrix"], r["dtype"]) for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    rate = {(r["matrix"], r["dtype"], r["method"]): metrics.gflops(int(r["nnz"]),
                                                                    float(r.get("kernel_us", r.get("time_us"))) * 1e-6)
            for r in rows}
    width = 0.8 / max(len(methods), 1)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(problems) + 2), 4.5))
    ax.set_prop_cycle(color=plt.cm.tab20.colors)
    for j, method in enumerate(methods):
        xs = [i + j * width for i in range(len(problems))]
        ax.bar(xs, [rate.get((m, d, method), 0.0) for m, d in problems], width, label=method)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(problems))])
    ax.set_xticklabels([f"{m}\n{d}" for m, d in problems], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("GFLOP/s")
    ax.set_title(title)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return _save(fig, plt, path)


def profile(records, path, title: str = "Performance profile: slowdown against the best method") -> Path:
    """Each method's slowdowns against the per-problem best, sorted (Flegar & Anzt Fig. 9)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
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


def bandwidth(records, path, title: str = "Effective bandwidth") -> Path:
    """Effective GB/s per (matrix, method), as a fraction of the copy bandwidth when records carry it."""
    plt = _pyplot()
    rows = [r for r in _measured(records) if r.get("gbps") is not None]
    fractions = all(r.get("copy_gbps") for r in rows) and rows
    labels = [f"{r['matrix']} {r['dtype']} {r['method']}" for r in rows]
    values = [r["gbps"] / r["copy_gbps"] if fractions else r["gbps"] for r in rows]
    fig, ax = plt.subplots(figsize=(7.0, max(3.0, 0.22 * len(rows) + 1)))
    ax.barh(range(len(rows)), values)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=6)
    ax.invert_yaxis()
    ax.set_xlabel("fraction of measured copy bandwidth" if fractions else "effective GB/s (bytes model / time)")
    ax.set_title(title)
    return _save(fig, plt, path)


def _save(fig, plt, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def write_all(records, directory) -> list[Path]:
    """The three plots as PNG files in ``directory``."""
    directory = Path(directory)
    return [gflops_bars(records, directory / "gflops.png"), profile(records, directory / "profile.png"),
            bandwidth(records, directory / "bandwidth.png")]
