"""The planner decides as recorded: every candidate, prediction and rival of tests/data/planner_golden.json.gz.

The record (tests/data/make_planner_golden.py, which regenerates it on purpose) holds the planner's output on
45 matrices of every class it separates, in float32 and float64, deterministic or not, with and without the
vendor's kernels, on the shipped H200 profile (and on a subset, the H100's and a modelled one).  A change
meant to make the planner faster, not to change a decision, must leave all of it as it is: the candidates
and their order, each prediction to 1e-9 relative, the candidates before the coded cut, and the rivals.
"""

from __future__ import annotations

import importlib.util
import gzip
import json
import math
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"  # tests/data


def _recorder():
    spec = importlib.util.spec_from_file_location("make_planner_golden", DATA / "make_planner_golden.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def recorded():
    doc = json.loads(gzip.decompress((DATA / "planner_golden.json.gz").read_bytes()))
    return doc["details"], doc["plannings"]


@pytest.fixture(scope="module")
def planned():
    """``{key: summary}`` of today's planner on the recorded cases, details named as strings."""
    golden = _recorder()
    out = {}
    for key, planning in golden.plannings():
        names = {}
        summary = golden.summarise(planning, names)
        out[key] = (list(names), summary)
    return out


def _named(details, summary: dict) -> dict:
    """``summary`` with each detail's index replaced by the detail."""
    out = {}
    for k, v in summary.items():
        if k in ("candidates", "uncut"):
            out[k] = [(details[i], us) for i, us in v]
        else:
            out[k] = [details[i] for i in v]
    return out


def test_the_planner_decides_as_recorded(recorded, planned):
    details, plannings = recorded
    assert set(planned) == set(plannings)
    assert len({k.split("/")[1] for k in plannings}) >= 30
    for key, want in plannings.items():
        names, summary = planned[key]
        got, want = _named(names, summary), _named(details, want)
        for field in ("candidates", "uncut"):
            assert [d for d, _ in got[field]] == [d for d, _ in want[field]], f"{key}: {field}"
            for (d, a), (_, b) in zip(got[field], want[field]):
                assert math.isclose(a, b, rel_tol=1e-9), f"{key}: {field} {d}: {a} != {b}"
        for field in want:
            if field not in ("candidates", "uncut"):
                assert got[field] == want[field], f"{key}: {field}"
