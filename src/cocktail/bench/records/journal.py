"""Records kept as they are measured: a benchmark run that is killed keeps what it finished.

``cocktail bench --json F`` appends each record, as soon as it is measured, to the companion file
``F.partial.jsonl`` (one JSON line per record, flushed to disk).  When the run ends, ``F`` is
written whole and the companion removed.  After an interruption, ``--resume`` reads the companion
back and measures only what it lacks; a run without ``--resume`` keeps an earlier companion aside
(``F.partial.jsonl.old``) rather than overwrite it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .record import Record
from .wrong import is_wrong

SUFFIX = ".partial.jsonl"


def companion(json_path) -> Path:
    """The journal of the run that writes ``json_path``."""
    path = Path(json_path)
    return path.with_name(path.name + SUFFIX)


class Journal:
    """The companion file of one run: records appended as measured, keyed by (suite, matrix, dtype, method).

    ``wrong`` counts the records it holds that answered wrong (:func:`~.wrong.is_wrong`), resumed ones too.
    """

    def __init__(self, json_path, resume: bool = False):
        self.path = companion(json_path)
        self.done: dict[tuple, Record] = {}
        self.kept_aside: Path | None = None
        if resume:
            self.done = self._read()
        elif self.path.exists():
            self.kept_aside = self.path.with_name(self.path.name + ".old")
            self.path.replace(self.kept_aside)
        self.wrong = sum(map(is_wrong, self.done.values()))
        self._fh = open(self.path, "a")

    def _read(self) -> dict:
        done = {}
        if not self.path.exists():
            return done
        with open(self.path) as fh:
            for line in fh:
                try:
                    entry = json.loads(line)
                    done[tuple(entry["key"])] = Record.from_dict(entry["record"])
                except (ValueError, KeyError, TypeError):
                    continue  # the line a kill cut short
        return done

    def append(self, key: tuple, record: Record) -> None:
        """Keep ``record``, measured for ``key``, on disk now."""
        self._fh.write(json.dumps({"key": list(key), "record": record.as_dict()}) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self.wrong += is_wrong(record)

    def close(self, finished: bool) -> None:
        """Close the file; a ``finished`` run removes it (its records are in the JSON now)."""
        self._fh.close()
        if finished:
            self.path.unlink(missing_ok=True)
