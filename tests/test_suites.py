"""Benchmark suites: shapes and nonzero counts, and the on-disk cache."""

from __future__ import annotations

import pytest
import scipy.sparse as sp

from cocktail.bench import suites

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
    with pytest.raises(ValueError, match="unknown suite 'nope'; suites: structured, williams, cocktail, default"):
        suites.get("nope")


def test_suite_membership():
    assert len(suites.get("williams")) == 14 and len(suites.get("cocktail")) == 6
    names = [m.name for s in ("structured", "williams", "cocktail") for m in suites.get(s)]
    assert len(names) == len(set(names)) == 25
    default = {m.name for m in suites.get("default")}
    assert default <= set(names)
    for s in ("structured", "williams", "cocktail"):  # the quick subset spans all three
        assert default & {m.name for m in suites.get(s)}
