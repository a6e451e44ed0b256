"""Benchmark suites: shapes and nonzero counts, and the on-disk cache."""

from __future__ import annotations

import time
import zipfile

import pytest
import scipy.sparse as sp

from cocktail.bench.problems import suites

# Bell & Garland Table 3: (rows, nonzeros)
TABLE3 = {
    "laplace3_1000000": (1_000_000, 2_999_998),
    "laplace5_1000": (1_000_000, 4_996_000),
    "laplace9_1000": (1_000_000, 8_988_004),
    "laplace7_100": (1_000_000, 6_940_000),
    "laplace27_100": (1_000_000, 26_463_592),
}


@pytest.mark.parametrize("matrix", suites.get("structured"), ids=lambda m: m.name)
def test_structured_suite_matches_table3(matrix, tmp_path, monkeypatch):
    monkeypatch.setenv("COCKTAIL_CACHE", str(tmp_path))
    A = suites.load(matrix)
    rows, nnz = TABLE3[matrix.name]
    assert A.shape == (rows, rows) and A.nnz == nnz
    assert matrix.kind.startswith("structured")


def test_cache_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKTAIL_CACHE", str(tmp_path))
    built = []
    m = suites.SuiteMatrix("tiny", "test", lambda: built.append(1) or sp.eye_array(3, format="csr"))
    first = suites.load(m)
    second = suites.load(m)
    assert built == [1]  # generated once, then read from the cache
    assert (first != second).nnz == 0
    assert [p.name for p in tmp_path.iterdir()] == [f"tiny.v{suites.GENERATOR_VERSION}.npz"]


def test_unknown_suite():
    with pytest.raises(ValueError, match="unknown suite 'nope'; suites: structured, williams, cocktail, default, "
                                         "default-cpu, holdout, holdout-cpu$"):
        suites.get("nope")


def test_suite_membership():
    assert len(suites.get("williams")) == 14 and len(suites.get("cocktail")) == 6
    names = [m.name for s in ("structured", "williams", "cocktail") for m in suites.get(s)]
    assert len(names) == len(set(names)) == 25
    default = {m.name for m in suites.get("default")}
    assert default <= set(names)
    for s in ("structured", "williams", "cocktail"):  # the quick subset spans all three
        assert default & {m.name for m in suites.get(s)}


# default-cpu name -> (default counterpart, its rows, its nonzeros), from the generators' docstrings
CPU_COUNTERPARTS = {
    "laplace7_40": ("laplace7_100", 1_000_000, 6_940_000),
    "laplace27_40": ("laplace27_100", 1_000_000, 26_463_592),
    "fem_spheres_small": ("fem_spheres", 83_334, 6_010_480),
    "circuit_small": ("circuit", 170_998, 958_936),
    "webbase_small": ("webbase", 1_000_005, 3_105_536),
    "lp_small": ("lp", 4_284, 11_279_748),
    "mip1_small": ("mip1", 66_463, 10_400_000),
    "in2004_small": ("in2004", 1_382_908, 16_900_000),
}


@pytest.fixture(scope="module")
def cpu_suite():
    """The default-cpu matrices, built once, and the seconds that took."""
    start = time.perf_counter()
    built = {m.name: m.build() for m in suites.get("default-cpu")}
    return built, time.perf_counter() - start


def test_cpu_suite_members():
    cpu = suites.get("default-cpu")
    assert [m.name for m in cpu] == list(CPU_COUNTERPARTS)
    default = {m.name: m for m in suites.get("default")}
    assert [CPU_COUNTERPARTS[m.name][0] for m in cpu] == list(default)  # one each, in the same order
    for m in cpu:
        assert m.kind == default[CPU_COUNTERPARTS[m.name][0]].kind + " (CPU size)"


def test_cpu_suite_is_fast(cpu_suite):
    _, seconds = cpu_suite
    assert seconds < 10


@pytest.mark.parametrize("name", list(CPU_COUNTERPARTS))
def test_cpu_suite_sizes(name, cpu_suite):
    A = cpu_suite[0][name]
    _, rows, nnz = CPU_COUNTERPARTS[name]
    assert rows / 25 <= A.shape[0] <= rows / 5, (A.shape, rows)
    assert abs(A.nnz / A.shape[0] - nnz / rows) <= 0.35 * nnz / rows, (A.nnz / A.shape[0], nnz / rows)


def test_cache_is_uncompressed(tmp_path, monkeypatch):
    """Cached matrices are stored, not deflated: compressing was slower than generating."""
    monkeypatch.setenv("COCKTAIL_CACHE", str(tmp_path))
    m = next(m for m in suites.get("default-cpu") if m.name == "circuit_small")
    first = suites.load(m)
    (path,) = tmp_path.iterdir()
    with zipfile.ZipFile(path) as z:
        assert {i.compress_type for i in z.infolist()} == {zipfile.ZIP_STORED}
    second = suites.load(m)
    assert first.shape == second.shape and (first != second).nnz == 0


def test_every_suite_matrix_has_a_family():
    from cocktail.bench.problems.families import FAMILIES, POWER_LAW, REGULAR

    for name in suites.names():
        for m in suites.get(name):
            assert m.family in FAMILIES, (name, m.name, m.family)
    family = {m.name: m.family for s in ("structured", "williams", "cocktail", "holdout") for m in suites.get(s)}
    assert {family[n] for n in family if n.startswith(("laplace", "fem_")) or n in ("qcd", "dense")} == {REGULAR}
    assert {family[n] for n in ("webbase", "circuit", "circuit5m", "eu2005", "in2004", "holdout_rmat")} == {POWER_LAW}
    default = {m.name: m.family for m in suites.get("default")}
    for m in suites.get("default-cpu"):  # a CPU-size matrix keeps its counterpart's family
        assert m.family == default[CPU_COUNTERPARTS[m.name][0]]
    assert [m.family for m in suites.get("holdout-cpu")] == [m.family for m in suites.get("holdout")]
