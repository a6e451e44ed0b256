"""Plots of benchmark records: Cocktail's speedup over the baseline (cuSPARSE's best, else cupyx,
else SciPy) per matrix, the performance profile (Dolan & More, as Flegar & Anzt Fig. 9 use it) and
the fraction of copy bandwidth reached.

Needs matplotlib (the ``bench`` extra); drawn off-screen to PNG files.  The four cuSPARSE
algorithms appear as ``cusparse-best``.  Every method has one colour in every plot (:func:`colour`)
and one place in every legend (:func:`method_order`).
"""

from __future__ import annotations

import colorsys
import functools
import hashlib
import math
from pathlib import Path

from ...errors import CocktailError
from ..records import metrics
from ..records.selection import spmm_records, summary_records
from ..records.wrong import is_wrong, usable

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


_DASHES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1)))


def _kernel_families() -> tuple:
    """Formats and kernels by family, in legend order: a family is the formats of one ``family`` (their classes'
    words), each followed by the kernels whose first format it is, in the registries' order; each member with its
    colour (the class's or the spec's ``colour``).  A family shares a hue; its members differ in shade and (in the
    profile) line style."""
    from ... import formats, kernels

    return _families(tuple(formats.names()), tuple(kernels.names()))


@functools.lru_cache(maxsize=4)
def _families(format_names: tuple, kernel_names: tuple) -> tuple:
    from ... import formats, kernels

    specs = [kernels.get(n) for n in kernel_names]
    families: dict = {}
    for name in format_names:
        cls = formats.get(name)
        members = [(name, cls.colour)] + [(s.name, s.colour) for s in specs if s.formats[0] == name]
        families.setdefault(cls.family or name, []).extend((n, c) for n, c in members if c)
    return tuple(tuple(f) for f in families.values() if f)


def kernel_colours() -> dict:
    """Every format's and kernel's colour (plug-ins registered since included), in legend order."""
    return {name: c for family in _kernel_families() for name, c in family}


def _kernel_dash(method: str):
    return next((_DASHES[i % len(_DASHES)] for family in _kernel_families() for i, (name, _) in enumerate(family)
                 if name == method), "-")


#: Heatmap cells without a value: a wrong answer (its own colour, a pale red), a record that says why the method
#: did not run, or none at all.
MISSING_COLOURS = {"wrong": "#f2b8b5", "refused": "#c8c8c8", "error": "#c8c8c8", "n/a": "#ececec"}


def colour(method: str) -> str:
    """The method's colour (``#rrggbb``), the same in every plot; a name not known gets one from its hash."""
    known = BASELINE_COLOURS.get(method) or kernel_colours().get(method)
    if known:
        return known
    hue = int(hashlib.sha1(method.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    r, g, b = colorsys.hsv_to_rgb(hue, 0.55, 0.7)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def method_order(methods) -> list[str]:
    """``methods`` in legend order: baselines, then formats and kernels by family, then others by name."""
    known = {m: i for i, m in enumerate(list(BASELINE_COLOURS) + list(kernel_colours()))}
    return sorted(dict.fromkeys(methods), key=lambda m: (known.get(m, len(known)), m))


def line_style(method: str) -> dict:
    """Keyword arguments for a method's line: ours thickest and on top, kernels thin and dashed by family."""
    if method == "cocktail-auto":
        return {"color": colour(method), "linewidth": 2.8, "linestyle": "-", "zorder": 10}
    if method in BASELINE_COLOURS:
        return {"color": colour(method), "linewidth": 1.8, "linestyle": "-", "zorder": 8}
    return {"color": colour(method), "linewidth": 1.1, "linestyle": _kernel_dash(method), "zorder": 5}


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


#: The baselines a speedup plot measures against, first present first: the vendor's best on the GPU,
#: else cupyx, else SciPy (a CPU run).
SPEEDUP_BASELINES = ("cusparse-best", "cupyx", "scipy")
#: The methods a speedup plot shows, where the records have them: Cocktail's answers and the best of
#: our single formats.
SPEEDUP_METHODS = ("cocktail-auto", "cocktail-auto-own", "cocktail-measured", "best-single")
_MARKERS = {"cocktail-auto": "o", "cocktail-auto-own": "s", "cocktail-measured": "D", "best-single": "^"}


def speedup_data(records) -> tuple[str | None, list[str], dict]:
    """``(baseline, matrices, {method: [speedup or None per matrix]})``: the baseline's kernel time over
    each method's (above 1: faster than the baseline), for the methods of :data:`SPEEDUP_METHODS`."""
    rows = _measured(records)
    present = {r["method"] for r in rows}
    baseline = next((b for b in SPEEDUP_BASELINES if b in present), None)
    matrices = list(dict.fromkeys(r["matrix"] for r in rows))
    time = {(r["matrix"], r["method"]): metrics.time_us(r) for r in rows}
    out = {}
    for method in (m for m in SPEEDUP_METHODS if m in present and m != baseline):
        out[method] = [time[m, baseline] / time[m, method] if (m, baseline) in time and (m, method) in time
                       else None for m in matrices]
    return baseline, matrices, out


def speedup(records, path, title: str) -> Path:
    """Per matrix, each of Cocktail's answers as a speedup over the baseline (log axis; 1: as fast)."""
    return _save(speedup_figure(records, title), path)


def speedup_figure(records, title: str):
    """The figure :func:`speedup` writes: one marker per matrix and method, in the method's colour."""
    plt = _pyplot()
    from matplotlib.ticker import FuncFormatter, NullFormatter

    baseline, matrices, series = speedup_data(records)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.42 * len(matrices) + 3.0), 4.6))
    values = [v for ys in series.values() for v in ys if v]
    low, high = min(values + [1.0]) / 1.15, max(values + [1.0]) * 1.15
    ax.axhline(1.0, color=colour(baseline or ""), linewidth=1.4, zorder=2, label=f"{baseline} (1: as fast)")
    offsets = {m: (i - (len(series) - 1) / 2) * 0.12 for i, m in enumerate(series)}
    for method, ys in series.items():
        xs = [i + offsets[method] for i, y in enumerate(ys) if y]
        ax.plot(xs, [y for y in ys if y], linestyle="none", marker=_MARKERS.get(method, "o"), markersize=6,
                color=colour(method), markeredgecolor="black" if method == "cocktail-auto" else "none",
                markeredgewidth=0.6, label=method, zorder=10 if method == "cocktail-auto" else 6)
    ax.set_yscale("log")
    ax.set_ylim(low, high)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_yticks([t for t in (0.25, 0.5, 0.7, 1, 1.5, 2, 3, 5, 10, 20) if low <= t <= high])
    ax.set_xticks(range(len(matrices)))
    ax.set_xticklabels(matrices, rotation=35, ha="right", fontsize=9)
    ax.set_xlim(-0.6, len(matrices) - 0.4)
    ax.set_ylabel(f"speedup over {baseline}: its time / ours (log)")
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
    """What a bandwidth cell without a value says: ``n/a`` without a record, ``wrong`` for a wrong answer
    (:func:`~..records.wrong.is_wrong`), ``error`` or ``refused`` by its note."""
    if record is None:
        return "n/a"
    if is_wrong(record):
        return "wrong"
    if metrics.time_us(record):
        return "n/a"  # a time without a bandwidth
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
    ax.set_title(f"{title}\n(model bytes / kernel time; red: wrong answer, grey: refused or failed, light grey: n/a)",
                 fontsize=11)
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


def block_data(records, dtype: str) -> tuple[list[int], dict, dict]:
    """``(ks, speedups, gains)`` of the block-product records of ``dtype``: per matrix, ``cocktail-auto``'s
    speedup over ``cusparse-spmm-best`` and its gain over k SpMVs of its plan (``cocktail-auto-spmvs``) at
    each block width ``k`` (None where a record is missing)."""
    rows = [r for r in spmm_records(records) if r["dtype"] == dtype and metrics.time_us(r) and usable(r)]
    time = {(r["matrix"], r["k"], r["method"]): metrics.time_us(r) for r in rows}
    ks = sorted({r["k"] for r in rows})
    matrices = list(dict.fromkeys(r["matrix"] for r in rows if r["method"] == "cocktail-auto"))

    def over(baseline: str) -> dict:
        return {m: [time[m, k, baseline] / time[m, k, "cocktail-auto"]
                    if (m, k, baseline) in time and (m, k, "cocktail-auto") in time else None for k in ks]
                for m in matrices}

    return ks, over("cusparse-spmm-best"), over("cocktail-auto-spmvs")


def blocks(records, dtype: str, path, title: str) -> Path:
    """Block products against the block width: cocktail-auto over cuSPARSE's best SpMM, and over k SpMVs."""
    return _save(blocks_figure(records, dtype, title), path)


def blocks_figure(records, dtype: str, title: str):
    """The figure :func:`blocks` writes: two panels, a line per matrix across the block widths (log axes)."""
    plt = _pyplot()
    from matplotlib.ticker import FuncFormatter, NullFormatter

    ks, speedups, gains = block_data(records, dtype)
    fig, axes = plt.subplots(1, 2, figsize=(11.0, 4.4), sharex=True)
    for ax, series, label in ((axes[0], speedups, "cocktail-auto over cusparse-spmm-best"),
                              (axes[1], gains, "cocktail-auto over k SpMVs of its plan")):
        ax.axhline(1.0, color="#444444", linewidth=1.2, zorder=2)
        for matrix, ys in series.items():
            points = [(k, y) for k, y in zip(ks, ys) if y]
            if points:
                ax.plot(*zip(*points), marker="o", markersize=4, color=colour(matrix), label=matrix, zorder=5)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(ks)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        low, high = ax.get_ylim()
        ax.set_yticks([t for t in (0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 5, 10) if low <= t <= high])
        ax.set_xlabel("k (columns of X)")
        ax.set_ylabel(f"{label} (log; 1: as fast)", fontsize=9)
        ax.yaxis.grid(True, color="#dddddd", zorder=0)
    axes[1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, title="matrix",
                   title_fontsize=8)
    fig.suptitle(title)
    return fig


def write_all(records, directory) -> list[Path]:
    """PNG files in ``directory``: speedups over the baseline per suite and dtype, a profile and a bandwidth map
    per dtype, and the block products against k per dtype (``cocktail bench --k``)."""
    directory = Path(directory)
    paths = []
    for dtype in dict.fromkeys(r["dtype"] for r in records):
        of_dtype = [r for r in records if r["dtype"] == dtype]
        for suite in dict.fromkeys(r.get("suite", "") for r in of_dtype):
            part = [r for r in of_dtype if r.get("suite", "") == suite]
            baseline, _, series = speedup_data(part)
            if baseline and series:
                name = f"speedup_{suite}_{dtype}.png" if suite else f"speedup_{dtype}.png"
                paths.append(speedup(part, directory / name,
                                     f"Speedup over {baseline}, {suite or 'matrices'}, {dtype} (kernel time)"))
        if _measured(of_dtype):
            paths.append(profile(of_dtype, directory / f"profile_{dtype}.png", f"Performance profile, {dtype}"))
            paths.append(bandwidth(of_dtype, directory / f"bandwidth_{dtype}.png",
                                   f"Effective bandwidth, {dtype}"))
        ks, speedups, _ = block_data(of_dtype, dtype)
        if ks and any(y for ys in speedups.values() for y in ys):
            paths.append(blocks(of_dtype, dtype, directory / f"blocks_{dtype}.png",
                                f"Block products A @ X, {dtype} (kernel time)"))
    return paths
