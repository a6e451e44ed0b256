"""Plots of benchmark records: GFLOP/s bars per matrix (Bell & Garland Fig. 27/31), the
performance profile (Dolan & More, as Flegar & Anzt Fig. 9 use it) and the fraction of copy
bandwidth reached.

Needs matplotlib (the ``bench`` extra); drawn off-screen to PNG files.  The four cuSPARSE
algorithms appear as ``cusparse-best``.  Every method has one colour in every plot (:func:`colour`)
and one place in every legend (:func:`method_order`).
"""

from __future__ import annotations

import colorsys
import hashlib
import math
from pathlib import Path

from ..errors import CocktailError
from . import metrics
from .selection import summary_records

#: The methods a reader compares, in legend order, with their colours: ours in a strong red,
#: cuSPARSE in blue, the other libraries apart from both.
BASELINE_COLOURS = {
    "cocktail-auto": "#d62728",
    "cocktail-measured": "#ff7f0e",
    "cocktail-auto-own": "#9467bd",
    "best-single": "#222222",
    "cusparse-best": "#1f4e9c",
    "cusparse-coo-alg1": "#4f7fc7",
    "cusparse-csr-alg1": "#6f9bd9",
    "cusparse-csr-alg2": "#8fb3e3",
    "cusparse-coo-alg2": "#aecbee",
    "cupyx": "#17becf",
    "torch": "#e377c2",
    "scipy": "#8c564b",
}

#: Formats and kernels by family, in legend order: a family shares a hue, its members differ in
#: shade and (in the profile) line style.
_KERNEL_FAMILIES = (
    (("csr", "#2ca02c"), ("csr_scalar", "#1b5e20"), ("csr_vector", "#43a047"), ("csr_merge", "#7cb342"),
     ("csr_stream", "#00897b")),
    (("coo", "#9e9d24"), ("coo_segmented", "#827717"), ("coo_atomic", "#c0ca33")),
    (("dia", "#6a1b9a"), ("dia_vi", "#8e24aa"), ("bdia", "#ba68c8"), ("bdia_direct", "#4a148c")),
    (("ell", "#b8860b"), ("sell", "#daa520"), ("hyb", "#8d6e63"), ("pkt", "#5d4037")),
    (("bcsr", "#546e7a"), ("bell", "#90a4ae"), ("sbell", "#37474f"), ("cocktail", "#795548")),
)
KERNEL_COLOURS = {name: c for family in _KERNEL_FAMILIES for name, c in family}
_DASHES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1)))
_KERNEL_DASHES = {name: _DASHES[i % len(_DASHES)] for family in _KERNEL_FAMILIES for i, (name, _) in
                  enumerate(family)}

#: Heatmap cells without a value: a record that says why the method did not run, or none at all.
MISSING_COLOURS = {"refused": "#c8c8c8", "error": "#c8c8c8", "n/a": "#ececec"}


def colour(method: str) -> str:
    """The method's colour (``#rrggbb``), the same in every plot; a name not known gets one from its hash."""
    known = BASELINE_COLOURS.get(method) or KERNEL_COLOURS.get(method)
    if known:
        return known
    hue = int(hashlib.sha1(method.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    r, g, b = colorsys.hsv_to_rgb(hue, 0.55, 0.7)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def method_order(methods) -> list[str]:
    """``methods`` in legend order: baselines, then formats and kernels by family, then others by name."""
    known = {m: i for i, m in enumerate(list(BASELINE_COLOURS) + list(KERNEL_COLOURS))}
    return sorted(dict.fromkeys(methods), key=lambda m: (known.get(m, len(known)), m))


def line_style(method: str) -> dict:
    """Keyword arguments for a method's line: ours thickest and on top, kernels thin and dashed by family."""
    if method == "cocktail-auto":
        return {"color": colour(method), "linewidth": 2.8, "linestyle": "-", "zorder": 10}
    if method in BASELINE_COLOURS:
        return {"color": colour(method), "linewidth": 1.8, "linestyle": "-", "zorder": 8}
    return {"color": colour(method), "linewidth": 1.1, "linestyle": _KERNEL_DASHES.get(method, "-"), "zorder": 5}


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


def _legend(ax):
    """A one-column legend right of the axes, outside the data."""
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False,
              title="method", title_fontsize=8)


def gflops_bars(records, path, title: str) -> Path:
    """Grouped bars: one group per matrix, one bar per method; a grey x marks a method that did not run."""
    return _save(gflops_bars_figure(records, title), path)


def gflops_bars_figure(records, title: str):
    """The figure :func:`gflops_bars` writes."""
    plt = _pyplot()
    rows = _measured(records)
    matrices = list(dict.fromkeys(r["matrix"] for r in rows))
    methods = method_order(r["method"] for r in rows)
    rate = {(r["matrix"], r["method"]): _rate(r) for r in rows}
    width = 0.85 / max(len(methods), 1)
    fig, ax = plt.subplots(figsize=(max(7.0, len(matrices) * (0.3 + 0.05 * len(methods)) + 2.5), 4.8))
    for j, method in enumerate(methods):
        xs = [i + (j - (len(methods) - 1) / 2) * width for i in range(len(matrices))]
        ours = method == "cocktail-auto"
        ax.bar(xs, [rate.get((m, method), 0.0) for m in matrices], width, label=method, color=colour(method),
               edgecolor="black" if ours else "none", linewidth=0.6 if ours else 0, zorder=3 if ours else 2)
        missing = [x for x, m in zip(xs, matrices) if (m, method) not in rate]
        ax.plot(missing, [0.0] * len(missing), "x", color="#777777", markersize=4, markeredgewidth=0.8, zorder=4,
                clip_on=False)
    ax.set_xticks(range(len(matrices)))
    ax.set_xticklabels(matrices, rotation=30, ha="right", fontsize=9)
    ax.set_xlim(-0.5, len(matrices) - 0.5)
    ax.set_ylabel("GFLOP/s  (2 nnz / kernel time)")
    ax.set_xlabel("matrix  (x: method refused or not run)")
    ax.yaxis.grid(True, color="#dddddd", zorder=0)
    ax.set_axisbelow(True)
    ax.set_title(title)
    _legend(ax)
    return fig


def profile(records, path, title: str) -> Path:
    """Dolan & More's performance profile: per method, the fraction of problems within a factor tau of the best.

    A method that did not run on a problem never counts as within tau there, so its curve stays below 1.
    """
    return _save(profile_figure(records, title), path)


def profile_figure(records, title: str):
    """The figure :func:`profile` writes."""
    plt = _pyplot()
    from matplotlib.ticker import FuncFormatter, NullFormatter

    rows = summary_records(records)
    ratios = metrics.performance_ratios(rows)
    finite = sorted({r for per in ratios.values() for r in per.values() if math.isfinite(r)} | {1.0})
    right = max(2.0, finite[-1] * 1.25)
    taus = finite + [right]
    rho = metrics.profile_of(ratios, taus)
    problems = len(next(iter(ratios.values()), {}))
    fig, ax = plt.subplots(figsize=(8.0, 5.0))
    for method in method_order(rho):
        ax.step(taus, rho[method], where="post", label=method, **line_style(method))
    ax.set_xscale("log")
    ax.set_xlim(1.0, right)
    ax.set_xticks(tau_ticks(right))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_ylim(-0.01, 1.02)
    ax.set_xlabel("τ: time / best time on the problem (log)")
    ax.set_ylabel("fraction of problems within τ of the best")
    ax.grid(True, which="major", color="#dddddd")
    ax.set_title(f"{title} ({problems} problems)")
    _legend(ax)
    return fig


def tau_ticks(right: float) -> list[float]:
    """Ticks for the profile's log tau axis up to ``right``: 1, 2, 5, 10, ... over two decades, else powers of 10."""
    steps = (1, 2, 5) if right <= 100 else (1,)
    ticks = [m * 10.0 ** e for e in range(int(math.log10(right)) + 1) for m in steps]
    return [t for t in ticks if t <= right]


def cell_label(record) -> str:
    """What a bandwidth cell without a value says: ``n/a`` without a record, ``error`` or ``refused`` by its note."""
    if record is None or metrics.time_us(record):
        return "n/a"  # no record, or a time without a bandwidth
    return "error" if str(record.get("note", "")).startswith("error") else "refused"


def bandwidth_cells(records) -> tuple[list, list, dict, bool]:
    """The bandwidth map's rows (``(suite, matrix)``: one name may be in two suites), columns (methods),
    cells and whether values are fractions.

    A cell is a number (the fraction of the copy bandwidth when every record has one, else GB/s) or
    the :func:`cell_label` of a method that has none on that matrix.
    """
    rows = summary_records(records)
    matrices = list(dict.fromkeys((r.get("suite", ""), r["matrix"]) for r in rows))
    methods = method_order(r["method"] for r in rows)
    by_cell = {((r.get("suite", ""), r["matrix"]), r["method"]): r for r in rows}
    measured = [r for r in rows if _has_bandwidth(r)]
    fractions = bool(measured) and all(r.get("copy_gbps") for r in measured)
    cells = {}
    for key in ((m, k) for m in matrices for k in methods):
        r = by_cell.get(key)
        if r is not None and _has_bandwidth(r):
            cells[key] = r["gbps"] / r["copy_gbps"] if fractions else r["gbps"]
        else:
            cells[key] = cell_label(r)
    return matrices, methods, cells, fractions


def _has_bandwidth(record) -> bool:
    return bool(metrics.time_us(record)) and record.get("gbps") is not None


def bandwidth(records, path, title: str) -> Path:
    """A matrix x method map of effective bandwidth, as a fraction of the copy bandwidth when measured."""
    return _save(bandwidth_figure(records, title), path)


def bandwidth_figure(records, title: str):
    """The figure :func:`bandwidth` writes; cells without a value say why (:func:`cell_label`)."""
    plt = _pyplot()
    from matplotlib.colors import Normalize, to_rgba

    matrices, methods, cells, fractions = bandwidth_cells(records)
    values = [v for v in cells.values() if not isinstance(v, str)]
    norm = Normalize(0.0, max(values, default=1.0))
    cmap = plt.get_cmap("viridis")
    rgba = [[cmap(norm(v)) if not isinstance(v, str) else to_rgba(MISSING_COLOURS[v])
             for v in (cells[m, k] for k in methods)] for m in matrices]
    fig, ax = plt.subplots(figsize=(0.58 * len(methods) + 3.2, 0.3 * len(matrices) + 2.4))
    ax.imshow(rgba, aspect="auto", interpolation="nearest")
    for i, m in enumerate(matrices):
        for j, k in enumerate(methods):
            _cell_text(ax, j, i, cells[m, k], rgba[i][j], fractions)
    _suite_separators(ax, matrices, len(methods))
    ax.set_xticks(range(len(methods)))
    ax.set_xticklabels(methods, rotation=45, ha="right", fontsize=9)
    ax.set_yticks(range(len(matrices)))
    ax.set_yticklabels([name for _, name in matrices], fontsize=9)
    ax.tick_params(length=0)
    ax.set_xlabel("method")
    ax.set_ylabel("matrix (grouped by suite)")
    label = "effective bandwidth / copy bandwidth" if fractions else "effective bandwidth (GB/s)"
    fig.colorbar(plt.cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, label=label, fraction=0.03, pad=0.02, aspect=50)
    ax.set_title(f"{title}\n(model bytes / kernel time; grey: refused or failed, light grey: n/a)", fontsize=11)
    return fig


def _cell_text(ax, x, y, value, rgba, fractions):
    """The cell's number or label, black on light cells and white on dark ones."""
    if isinstance(value, str):
        ax.text(x, y, value, ha="center", va="center", fontsize=7, color="#555555", style="italic")
        return
    r, g, b, _ = rgba
    luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
    ax.text(x, y, cell_number(value, fractions), ha="center", va="center", fontsize=7.5,
            color="black" if luminance > 0.45 else "white")


def cell_number(value: float, fractions: bool) -> str:
    """A bandwidth cell's number: two decimals of a fraction (``<0.01`` rather than a false 0.00), or GB/s
    to about three figures (a CPU's 0.27 GB/s as much as a GPU's 2559)."""
    if fractions:
        return "<0.01" if 0 < value < 0.005 else f"{value:.2f}"
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def _suite_separators(ax, matrices, width):
    """White lines between the matrices (``(suite, matrix)``) of different suites."""
    for i in range(1, len(matrices)):
        if matrices[i][0] != matrices[i - 1][0]:
            ax.plot([-0.5, width - 0.5], [i - 0.5, i - 0.5], color="white", linewidth=2.5)


def _save(fig, path) -> Path:
    """Write ``fig`` to ``path`` as PNG, legends outside the axes included, and free it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    _pyplot().close(fig)
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
            paths.append(profile(of_dtype, directory / f"profile_{dtype}.png", f"Performance profile, {dtype}"))
            paths.append(bandwidth(of_dtype, directory / f"bandwidth_{dtype}.png",
                                   f"Effective bandwidth, {dtype}"))
    return paths
