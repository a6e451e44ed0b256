"""Shared test configuration: GPU tests skip themselves when no CUDA GPU is present, and the exhaustive tier runs
only when asked for.

Two tiers.  Plain ``pytest`` runs the default tier, a few minutes on two cores: every format, kernel, registry,
planner rule and user-facing behaviour at least once.  ``pytest --exhaustive`` adds the tests marked ``exhaustive``
(CI runs it): the conformance zoo over every format, value and index dtype, every kernel instantiation's compile
check, the kernels' host emulations (g++), the long sweeps.  A test marked ``gpu`` is chosen by that marker alone:
it runs wherever a GPU is present, exhaustive or not (``pytest -m gpu`` is every GPU test).

``COCKTAIL_TEST_HIDE=ml_dtypes,torch`` runs the tests as in an install without those optional packages: each named
module is hidden before Cocktail is imported (``import ml_dtypes`` raises ImportError), so one environment can test
what every install gives (tests/test_optional_packages.py does so).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
# tests/ mirrors src/cocktail/ (tests/formats/, tests/kernels/, tests/auto/, ...).  Its shared helpers (oracle.py,
# zoo.py, configs.py, ...) live in tests/ and a test imports another test's helpers by module name
# (``from test_planner import model_profile``), so tests/ and each of its folders of tests go on sys.path here:
# the same imports work under plain ``pytest``, ``pytest tests/auto`` and ``pytest tests/auto/test_planner.py``.
# Test files' basenames are unique across the tree (pytest's default "prepend" import mode, no __init__.py).
sys.path[:0] = [str(TESTS)] + sorted(str(folder) for folder in TESTS.iterdir()
                                     if folder.is_dir() and any(folder.glob("test_*.py")))

from hide_packages import hide_from_environment

hide_from_environment()


from cocktail.arrays import cuda_available


EXHAUSTIVE_OPTION = "--exhaustive"
_exhaustive_cut = pytest.StashKey[int]()  # how many tests the default tier deselected


def pytest_addoption(parser):
    parser.addoption(EXHAUSTIVE_OPTION, action="store_true", default=False,
                     help="also run the exhaustive tier (tests marked 'exhaustive'; CI runs it): the conformance zoo "
                          "over every dtype, every kernel instantiation's compile check, the host emulations")


def pytest_configure(config):
    # Under compute-sanitizer, CuPy's memory pool would hide out-of-bounds accesses inside pooled blocks.
    if os.environ.get("COCKTAIL_NO_CUPY_POOL") and cuda_available():
        import cupy

        cupy.cuda.set_allocator(None)
        cupy.cuda.set_pinned_memory_allocator(None)


def pytest_collection_modifyitems(config, items):
    _keep_tier(config, items)
    _keep_shard(config, items)
    if cuda_available():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU (CuPy missing or no device)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def _keep_tier(config, items):
    """Without ``--exhaustive``, deselect the tests marked ``exhaustive`` (but not those marked ``gpu``); a ``-m``
    expression naming the marker (``-m exhaustive``) chooses by itself."""
    if config.getoption(EXHAUSTIVE_OPTION) or "exhaustive" in (config.option.markexpr or ""):
        return
    cut = [item for item in items if "exhaustive" in item.keywords and "gpu" not in item.keywords]
    if cut:
        config.hook.pytest_deselected(items=cut)
        left = set(map(id, cut))
        items[:] = [item for item in items if id(item) not in left]
    config.stash[_exhaustive_cut] = len(cut)


def pytest_terminal_summary(terminalreporter, config):
    cut = config.stash.get(_exhaustive_cut, 0)
    if cut:
        terminalreporter.write_line(f"exhaustive tier: {cut} tests deselected; `pytest {EXHAUSTIVE_OPTION}` runs every "
                                    f"tier, as CI does")


def _keep_shard(config, items):
    """With ``COCKTAIL_SHARD=i/N``, keep every N-th test from the i-th (scripts/sanitize.sh runs N side by side)."""
    shard = os.environ.get("COCKTAIL_SHARD")
    if not shard:
        return
    index, count = (int(v) for v in shard.split("/"))
    if not 0 <= index < count:
        raise pytest.UsageError(f"COCKTAIL_SHARD={shard!r}: expected i/N with 0 <= i < N")
    kept = [item for k, item in enumerate(items) if k % count == index]
    config.hook.pytest_deselected(items=[item for k, item in enumerate(items) if k % count != index])
    items[:] = kept


@pytest.fixture(autouse=True)
def _own_decision_cache(request, tmp_path_factory, monkeypatch):
    """Every test starts with an empty decision cache of its own: a plan another test stored (or the
    user's ``~/.cache``) is never reused, and tests of the cache see only their own entries."""
    base = tmp_path_factory.getbasetemp() / "decisions"
    base.mkdir(exist_ok=True)
    monkeypatch.setenv("COCKTAIL_DECISIONS", str(base / f"{abs(hash(request.node.nodeid))}.json"))


@pytest.fixture
def modelled(monkeypatch, tmp_path):
    """The planner reads the modelled profile of tests/auto/test_planner.py (a bandwidth model, no GPU samples)."""
    from cocktail.auto import profile
    from test_planner import model_profile

    monkeypatch.setenv("COCKTAIL_CACHE", str(tmp_path))
    prof = model_profile()
    monkeypatch.setattr(profile, "for_device", lambda device: prof)
    return prof
