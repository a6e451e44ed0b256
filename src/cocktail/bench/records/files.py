"""Reading the files a benchmark kept, gzipped or not.

The records and console outputs under ``docs/`` are kept gzipped where large (``default.json.gz``,
``probe.txt.gz``: ``gzip -9 -n``); everything that reads them (``cocktail report``, the plots, the scripts
that table a run) opens them here, so a path works the same whether its file is compressed or not.
Whether a file is gzipped is read from its first two bytes, not from its name.
"""

from __future__ import annotations

import gzip
import json

#: The first two bytes of every gzip file.
GZIP_MAGIC = b"\x1f\x8b"


def open_text(path):
    """``path`` opened for reading as UTF-8 text, decompressed if it is gzipped."""
    with open(path, "rb") as fh:
        gzipped = fh.read(2) == GZIP_MAGIC
    return gzip.open(path, "rt", encoding="utf-8") if gzipped else open(path, encoding="utf-8")


def load_json(path):
    """The JSON in ``path`` (``.json`` or ``.json.gz``): for ``cocktail bench --json``'s, its list of records."""
    with open_text(path) as fh:
        return json.load(fh)
