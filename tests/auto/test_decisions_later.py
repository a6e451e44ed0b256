"""Decisions stored off the construction path (decisions.store_later): written by a thread of their own, to the file
named when they were given, and seen by the next lookup."""

from __future__ import annotations

import json
import threading

import numpy as np

from cocktail.auto import decisions, planner


def _plan(us=1.0):
    return planner.Plan((planner.Part("csr_scalar", ("rest",), 5, 5, us),), us)


def _key(i):
    return decisions.key(f"{i:032d}", "dev", np.float64, np.int32, tune="auto", profile_digest="d")


def test_a_later_decision_is_written_aside_and_seen_by_the_next_lookup(tmp_path, monkeypatch):
    where = tmp_path / "decisions.json"
    monkeypatch.setenv("COCKTAIL_DECISIONS", str(where))
    gate, writers = threading.Event(), []
    real = decisions._write

    def slow(*args):
        writers.append(threading.current_thread().name)
        gate.wait(5)  # the write takes a while: the caller does not wait for it
        real(*args)

    monkeypatch.setattr(decisions, "_write", slow)
    decisions.store_later(_key(1), _plan(2.0))
    assert not where.exists()  # returned before the file was written
    gate.set()
    got = decisions.lookup(_key(1))  # waits for the pending write
    assert got is not None and got.predicted_us == 2.0
    assert writers and writers[0].startswith("cocktail-decisions")
    assert _key(1) in json.loads(where.read_text())


def test_a_later_decision_goes_to_the_file_named_when_it_was_given(tmp_path, monkeypatch):
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    monkeypatch.setenv("COCKTAIL_DECISIONS", str(first))
    decisions.store_later(_key(2), _plan())
    monkeypatch.setenv("COCKTAIL_DECISIONS", str(second))
    decisions.flush()
    assert _key(2) in json.loads(first.read_text()) and not second.exists()
    monkeypatch.setenv("COCKTAIL_DECISIONS", decisions.OFF)
    decisions.store_later(_key(3), _plan())  # the cache off: nothing is written anywhere
    decisions.flush()
    assert _key(3) not in json.loads(first.read_text()) and not second.exists()
