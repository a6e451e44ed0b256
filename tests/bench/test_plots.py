"""The plots on hand-made records: one colour per method everywhere, the profile's axes and curves,
and the bandwidth map's labels for methods that did not run."""

from __future__ import annotations

import re

import pytest

from cocktail.bench.output import plots

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def rec(matrix, method, us, note="", gbps=None, suite="s"):
    return {"suite": suite, "matrix": matrix, "dtype": "float64", "method": method, "kernel_us": us, "nnz": 1000,
            "note": note, "gbps": gbps if us else None, "copy_gbps": 100.0}


RECORDS = [
    rec("a", "cocktail-auto", 1.0, gbps=80.0), rec("a", "cusparse-best", 2.0, gbps=40.0),
    rec("a", "csr_vector", 4.0, gbps=20.0), rec("a", "dia", None, note="refused: fill 30.0 > max_fill 20"),
    rec("b", "cocktail-auto", 3.0, gbps=30.0), rec("b", "cusparse-best", 1.0, gbps=90.0),
    rec("b", "dia", None, note="error: RuntimeError: boom"),
    # csr_vector has no record on b; a cuSPARSE algorithm never appears on its own
    rec("b", "cusparse-csr-alg1", 1.0, gbps=90.0),
]
WELL_KNOWN = ["cocktail-auto", "cocktail-measured", "best-single", "cusparse-best", "cupyx", "torch", "scipy",
              "csr", "csr_scalar", "csr_vector", "csr_merge", "csr_stream", "coo", "coo_segmented", "coo_atomic",
              "dia", "dia_vi", "bdia", "bdia_direct", "ell", "sell", "hyb", "pkt", "bcsr", "bell", "sbell"]


def rgb(hex_colour):
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def test_colours_are_fixed_and_distinct():
    colours = [plots.colour(m) for m in WELL_KNOWN]
    assert all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in colours)
    assert len(set(colours)) == len(colours)
    assert plots.colour("cocktail-auto") == "#d62728" and plots.colour("cusparse-best") == "#1f4e9c"
    ours, cusparse = rgb(plots.colour("cocktail-auto")), rgb(plots.colour("cusparse-best"))
    assert sum((a - b) ** 2 for a, b in zip(ours, cusparse)) ** 0.5 > 200  # red against blue
    # a name not known gets a colour from its name alone, not from its place in a plot
    assert plots.colour("my-kernel") == plots.colour("my-kernel") != plots.colour("my-other-kernel")
    assert re.fullmatch(r"#[0-9a-f]{6}", plots.colour("my-kernel"))


def test_method_order_puts_baselines_first_and_is_independent_of_input_order():
    order = plots.method_order(["zeta", "sell", "cupyx", "csr_vector", "cocktail-auto", "alpha", "sell"])
    assert order == ["cocktail-auto", "cupyx", "csr_vector", "sell", "alpha", "zeta"]
    assert plots.method_order(reversed(order)) == order


def test_ours_stands_out_in_the_profile():
    ours, cusparse, kernel = (plots.line_style(m) for m in ("cocktail-auto", "cusparse-best", "csr_merge"))
    assert ours["linewidth"] > cusparse["linewidth"] > kernel["linewidth"]
    assert ours["zorder"] > cusparse["zorder"] > kernel["zorder"]
    assert plots.line_style("csr_vector")["linestyle"] != plots.line_style("csr_scalar")["linestyle"]


def artists_by_label(figure):
    """``{legend label: colour}`` of a figure's bars or lines, and its axes."""
    from matplotlib.colors import to_hex

    ax = figure.axes[0]
    out = {}
    for container in ax.containers:  # bars
        out[container.get_label()] = to_hex(container.patches[0].get_facecolor())
    for line in ax.get_lines():
        if not line.get_label().startswith("_"):
            out[line.get_label()] = to_hex(line.get_color())
    return out, ax


@pytest.fixture
def figures():
    """Closes the figures a test draws."""
    import matplotlib.pyplot as plt

    drawn = []
    yield drawn
    for fig in drawn:
        plt.close(fig)


def draw(figures, make, records):
    figures.append(make(records, "T"))
    return figures[-1]


SPEEDUP_RECORDS = RECORDS + [rec("a", "best-single", 4.0), rec("b", "best-single", 0.5), rec("a", "cocktail-auto-own", 2.0)]


def test_the_speedup_plot_shows_our_answers_over_the_baseline_in_their_colours(figures):
    baseline, matrices, series = plots.speedup_data(SPEEDUP_RECORDS)
    assert baseline == "cusparse-best" and matrices == ["a", "b"]
    # its time over ours; own kernels have no record on b; csr_vector and dia are not shown
    assert series == {"cocktail-auto": [2.0, 1 / 3], "cocktail-auto-own": [1.0, None], "best-single": [0.5, 2.0]}
    markers, ax = artists_by_label(draw(figures, plots.speedup_figure, SPEEDUP_RECORDS))
    lines, _ = artists_by_label(draw(figures, plots.profile_figure, SPEEDUP_RECORDS))
    assert ax.get_yscale() == "log" and "speedup over cusparse-best" in ax.get_ylabel()
    assert set(markers) == {"cusparse-best (1: as fast)", "cocktail-auto", "cocktail-auto-own", "best-single"}
    for method in ("cocktail-auto", "cocktail-auto-own", "best-single"):
        assert markers[method] == lines[method] == plots.colour(method)  # one colour per method in every plot
    dots = {line.get_label(): list(line.get_ydata()) for line in ax.get_lines()}
    assert dots["cocktail-auto"] == [2.0, 1 / 3] and dots["cocktail-auto-own"] == [1.0]
    cpu = [rec("a", "cocktail-auto", 2.0), rec("a", "scipy", 3.0), rec("a", "csr", 1.0)]
    assert plots.speedup_data(cpu) == ("scipy", ["a"], {"cocktail-auto": [1.5]})  # on the CPU: over SciPy


def test_profile_axes_are_tau_and_fraction(figures):
    _, ax = artists_by_label(draw(figures, plots.profile_figure, RECORDS))
    assert ax.get_xscale() == "log" and ax.get_xlim()[0] == 1.0
    assert ax.get_xlabel().startswith("τ") and "fraction of problems" in ax.get_ylabel()
    curves = {line.get_label(): line for line in ax.get_lines()}
    assert max(curves["cocktail-auto"].get_ydata()) == 1.0  # within 3x on both problems
    assert max(curves["csr_vector"].get_ydata()) == 0.5  # no record on b
    assert max(curves["dia"].get_ydata()) == 0.0  # refused on a, failed on b
    assert "2 problems" in ax.get_title()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "5"]  # plain numbers, not 2x10^0


def test_tau_ticks():
    assert plots.tau_ticks(30.0) == [1, 2, 5, 10, 20]
    assert plots.tau_ticks(3000.0) == [1, 10, 100, 1000]
    assert plots.tau_ticks(2.0) == [1, 2]


def test_bandwidth_cells_label_methods_that_did_not_run():
    matrices, methods, cells, fractions = plots.bandwidth_cells(RECORDS)
    a, b = ("s", "a"), ("s", "b")
    assert matrices == [a, b] and methods == ["cocktail-auto", "cusparse-best", "csr_vector", "dia"]
    assert fractions and cells[a, "cocktail-auto"] == pytest.approx(0.8)
    assert cells[a, "dia"] == "refused" and cells[b, "dia"] == "error" and cells[b, "csr_vector"] == "n/a"
    twice = RECORDS + [rec("a", "cocktail-auto", 1.0, gbps=50.0, suite="t")]  # the same name in a second suite
    matrices, _, cells, _ = plots.bandwidth_cells(twice)
    assert matrices == [a, b, ("t", "a")] and cells[("t", "a"), "cocktail-auto"] == pytest.approx(0.5)
    assert cells[a, "cocktail-auto"] == pytest.approx(0.8) and cells[("t", "a"), "dia"] == "n/a"
    assert plots.cell_label(None) == "n/a"
    assert plots.cell_number(0.004, True) == "<0.01" and plots.cell_number(1.234, True) == "1.23"
    assert plots.cell_number(1234.4, False) == "1234" and plots.cell_number(0.2747, False) == "0.27"
    assert plots.cell_number(12.34, False) == "12.3"


def test_a_wrong_answer_is_labelled_wrong_in_its_own_colour(figures):
    wrong = RECORDS + [{**rec("c", "cocktail-auto", 1.0, gbps=80.0), "note": "WRONG: relative error 1.00e-06"},
                       {**rec("c", "csr_vector", 2.0, gbps=40.0), "rel_err": 1e-6}]  # past float64's bound, no note
    _, _, cells, _ = plots.bandwidth_cells(wrong)
    assert cells[("s", "c"), "cocktail-auto"] == "wrong" and cells[("s", "c"), "csr_vector"] == "wrong"
    assert plots.MISSING_COLOURS["wrong"] not in (plots.MISSING_COLOURS["refused"], plots.MISSING_COLOURS["n/a"])
    ax = draw(figures, plots.bandwidth_figure, wrong).axes[0]
    assert "wrong" in {t.get_text() for t in ax.texts} and "red: wrong answer" in ax.get_title()


def test_bandwidth_map_writes_labels_readably(figures):
    ax = draw(figures, plots.bandwidth_figure, RECORDS).axes[0]
    texts = {(round(t.get_position()[0]), round(t.get_position()[1])): t for t in ax.texts}
    assert texts[3, 0].get_text() == "refused" and texts[3, 1].get_text() == "error"
    assert texts[2, 1].get_text() == "n/a" and texts[0, 0].get_text() == "0.80"
    assert all(t.get_fontsize() >= 7 for t in texts.values())
    # the brightest cell (0.90 of the copy bandwidth, yellow) has dark text, the darkest white text
    assert texts[1, 1].get_color() == "black" and texts[2, 0].get_color() == "white"


def test_plots_are_written_as_png(tmp_path):
    paths = plots.write_all(RECORDS, tmp_path)
    assert sorted(p.name for p in paths) == ["bandwidth_float64.png", "profile_float64.png", "speedup_s_float64.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in paths)


def _block(matrix, method, k, us):
    return {"section": "spmm", "suite": "s", "matrix": matrix, "dtype": "float32", "method": method, "k": k,
            "kernel_us": us, "nnz": 10, "params": {}, "note": ""}


def test_the_block_plot_shows_speedups_and_gains_against_k(tmp_path):
    records = [_block("a", "cocktail-auto", 4, 10.0), _block("a", "cusparse-spmm-best", 4, 30.0),
               _block("a", "cocktail-auto-spmvs", 4, 20.0), _block("a", "cocktail-auto", 16, 40.0),
               _block("a", "cusparse-spmm-best", 16, 20.0), _block("b", "cocktail-auto", 4, 5.0)]
    ks, speedups, gains = plots.block_data(records, "float32")
    assert ks == [4, 16]
    assert speedups == {"a": [3.0, 0.5], "b": [None, None]}
    assert gains == {"a": [2.0, None], "b": [None, None]}
    paths = plots.write_all(records, tmp_path)
    assert [p.name for p in paths] == ["blocks_float32.png"] and paths[0].stat().st_size > 0
    assert plots.block_data(records, "float64") == ([], {}, {})
